#!/usr/bin/env python3
"""The crash sweep for Layer-1 sync (SECURITY.md chapter 18): SIGKILLs
`tasker sync now` at each of its file-system calls, with strace's fault
injection, and proves after every kill that nothing was lost, nothing was
applied twice, and that the next syncs carry on.

    sync-crashtest.py TASKER TASKKEY [--quick] [--json FILE]

The template: devices A and B set up on one folder. A has 20 tasks (most
with notes) and two pages, B has 10 tasks; both have local changes not yet
synced (edits, a completion, a delete, a new note, a page edit, a note
edited on both), and B has uploaded objects A has not applied yet. So one
`tasker sync now` on A does every step: capture into its outbox (SQLite
writes), upload (a temporary, a link, fsyncs in the folder), read B's
objects and apply them (SQLite writes).

For each call kind and each occurrence N of it in one un-faulted `sync now`
on A (--quick: about eight evenly spaced N per kind, plus the first and the
last), the template is put back and A's sync is run under
`strace -e inject=CALL:signal=KILL:when=N`; then

  1. `tasker sync now` on A exits 0 (a leftover temporary or outbox object
     does not block it);
  2. B, A and B sync once more, each exiting 0;
  3. A and B show the same tasks (title, status, due, priority, contexts,
     energy, estimate), the same notes, pages and page bodies, and the same
     conflicts;
  4. that state is the one an un-faulted run of the same four syncs gives:
     every task of the template there exactly once, none twice, none lost;
  5. no sync names an object refused;
  6. `tasker doctor` exits 0 on both devices.

Exits 0 when every check held, 1 when one failed (each failure is printed
with its CALL and N), 77 when strace is missing.
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

CALLS = ["openat", "write", "pwrite64", "fsync", "fdatasync", "rename", "renameat", "renameat2", "link",
         "linkat", "unlink", "unlinkat", "mkdir", "mkdirat", "close", "ftruncate", "flock"]
PASSPHRASES = {"a": "amber quiver lantern 52", "b": "cobalt meadow tandem 38"}
SYNC_LOOP = ["a", "b", "a", "b"]  # after the faulted run: A, then B, A, B


class Harness:
    def __init__(self, tasker, taskkey, root):
        self.tasker = tasker
        self.taskkey = taskkey
        self.root = root
        self.store = os.path.join(root, "store")
        self.homes = {d: os.path.join(root, "tasker-" + d) for d in "ab"}
        self.vaults = {d: os.path.join(root, "keys-" + d) for d in "ab"}
        self.template = os.path.join(root, "template")
        self.failures = []
        self.runs = 0
        self.killed = 0
        self.not_killed = []
        self.leftovers = []
        self.calls = {}
        for device, text in PASSPHRASES.items():
            path = self.passfile(device)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
                handle.write(text + "\n")

    def passfile(self, device):
        return os.path.join(self.root, "pass-" + device)

    def environment(self, device):
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "HOME": self.root,
                "TASKER_HOME": self.homes[device], "TASKKEY_HOME": self.vaults[device]}

    def run(self, device, binary, arguments, stdin=b"", strace=None, timeout=60):
        command = [binary] + arguments
        if strace:
            command = ["strace", "-f", "-qq"] + strace + command
        # A session of its own, so a hang is killed with its tracer; a hang
        # is reported as exit -1.
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=self.environment(device), start_new_session=True)
        try:
            out, err = process.communicate(stdin, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            return -1, out, f"sync-crashtest: hung for over {timeout} s: {' '.join(arguments)}"
        return process.returncode, out, err.decode("utf-8", "replace")

    def tk(self, device, arguments, stdin=b""):
        return self.run(device, self.tasker, arguments, stdin)

    def must(self, device, binary, arguments, stdin=b""):
        code, out, err = self.run(device, binary, arguments, stdin)
        if code != 0:
            raise SystemExit(f"sync-crashtest: set-up step on {device} {arguments} failed with {code}: {err}")
        return out

    def must_tasker(self, device, arguments, stdin=b""):
        return self.must(device, self.tasker, arguments, stdin)

    def task_id(self, device, title):
        tasks = json.loads(self.must_tasker(device, ["list", "--all", "--json"]))["tasks"]
        found = [t["id"] for t in tasks if t["title"] == title]
        if len(found) != 1:
            raise SystemExit(f"sync-crashtest: set-up: {title!r} found {len(found)} times on {device}")
        return found[0]

    def page_id(self, device, title):
        pages = json.loads(self.must_tasker(device, ["page", "list", "--json"]))["pages"]
        return [p["id"] for p in pages if p["title"] == title][0]

    def sync(self, device):
        out = self.must_tasker(device, ["sync", "now", "--json"])
        result = json.loads(out)
        if result.get("refused"):
            raise SystemExit(f"sync-crashtest: set-up sync on {device} refused: {result['refused']}")
        return result

    # The template (see the docstring).
    def make_template(self):
        for device in "ab":
            os.makedirs(self.homes[device], mode=0o700)
        os.makedirs(self.store, mode=0o700)
        tk = self.taskkey
        self.must("a", tk, ["init", "--kdf", "fast-test-only", "--passphrase-file", self.passfile("a"),
                            "--accept-weak-passphrase"])
        self.must("a", tk, ["unlock", "--passphrase-file", self.passfile("a")])
        self.must_tasker("a", ["sync", "setup", self.store, "--name", "a"])
        priorities = ["none", "low", "medium", "high"]
        for n in range(1, 21):
            arguments = ["add", f"A task {n:02d}", "--priority", priorities[n % 4],
                         "--contexts", f"@a{n % 3} #batch"]
            if n % 2 == 0:
                arguments += ["--due", f"2027-01-{n:02d}"]
            if n % 5 == 0:
                arguments += ["--estimate", str(n * 3), "--energy", "high"]
            stdin = b""
            if n % 4 != 3:  # 15 of the 20 with a note
                arguments += ["--notes", "-"]
                stdin = f"Note of A task {n:02d}\nline two: {'x' * n}\n".encode()
            self.must_tasker("a", arguments, stdin)
        self.must_tasker("a", ["page", "new", "A page one", "--body", "-"], b"Agenda\n- first\n- second\n")
        self.must_tasker("a", ["page", "new", "A page two", "--body", "-"], b"Second page body\n")
        self.sync("a")
        bundle = os.path.join(self.root, "bundle.tksync")
        self.must("a", tk, ["sync", "export", "--out", bundle, "--passphrase-file", self.passfile("a")])

        self.must("b", tk, ["init", "--kdf", "fast-test-only", "--passphrase-file", self.passfile("b"),
                            "--accept-weak-passphrase"])
        self.must("b", tk, ["unlock", "--passphrase-file", self.passfile("b")])
        self.must("b", tk, ["sync", "import", bundle, "--passphrase-file", self.passfile("a")])
        self.must_tasker("b", ["sync", "setup", self.store, "--name", "b"])
        self.sync("b")  # B takes A's tasks
        for n in range(1, 11):
            arguments = ["add", f"B task {n:02d}", "--priority", priorities[(n + 1) % 4], "--contexts", "@b"]
            stdin = b""
            if n % 2 == 1:
                arguments += ["--notes", "-"]
                stdin = f"Note of B task {n:02d}\n".encode()
            self.must_tasker("b", arguments, stdin)
        self.must_tasker("b", ["edit", self.task_id("b", "A task 03"), "--title", "A task 03 (renamed by B)"])
        self.must_tasker("b", ["done", self.task_id("b", "A task 04")])
        self.sync("b")  # B's first objects, which A has not read
        self.must_tasker("b", ["edit", self.task_id("b", "B task 02"), "--due", "2027-03-01"])
        self.must_tasker("b", ["edit", self.task_id("b", "A task 06"), "--notes", "-"], b"B's note for A task 06\n")
        self.sync("b")  # a second object A has not read
        # B's pending changes, not synced.
        self.must_tasker("b", ["done", self.task_id("b", "B task 05")])
        self.must_tasker("b", ["delete", self.task_id("b", "B task 07")])
        self.must_tasker("b", ["edit", self.task_id("b", "A task 10"), "--notes", "-"], b"B edits A task 10\n")
        self.must_tasker("b", ["add", "B task 11 (pending)", "--notes", "-"], b"pending note of B\n")
        # A's pending changes, not synced.
        self.must_tasker("a", ["edit", self.task_id("a", "A task 01"), "--title", "A task 01 (edited)",
                               "--priority", "high", "--due", "2027-02-02"])
        self.must_tasker("a", ["edit", self.task_id("a", "A task 02"), "--contexts", "@moved"])
        self.must_tasker("a", ["done", self.task_id("a", "A task 05")])
        self.must_tasker("a", ["delete", self.task_id("a", "A task 08")])
        self.must_tasker("a", ["edit", self.task_id("a", "A task 07"), "--notes", "-"], b"A's new note on 07\n")
        self.must_tasker("a", ["edit", self.task_id("a", "A task 10"), "--notes", "-"], b"A edits A task 10\n")
        self.must_tasker("a", ["page", "edit", self.page_id("a", "A page two"), "--body", "-"], b"Edited body\n")
        self.must_tasker("a", ["add", "A task 21 (pending)", "--due", "2027-04-04"])
        for name, path in self.paths().items():
            shutil.copytree(path, os.path.join(self.template, name), symlinks=True)
        self.template_titles = sorted(t["title"] for t in self.tasks("a") + self.tasks("b"))

    def paths(self):
        return {"tasker-a": self.homes["a"], "tasker-b": self.homes["b"], "store": self.store}

    # The vault records the database by its canonical path: put the homes
    # back at the same paths.
    def restore(self):
        for name, path in self.paths().items():
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(os.path.join(self.template, name), path, symlinks=True)

    def tasks(self, device):
        code, out, err = self.tk(device, ["list", "--all", "--json"])
        if code != 0:
            raise RuntimeError(f"list on {device} exits {code}: {err[:200]}")
        return json.loads(out)["tasks"]

    # A device's state without local ids: tasks with their notes, pages with
    # their bodies, and the conflicts.
    def state(self, device):
        tasks = self.tasks(device)
        code, out, err = self.tk(device, ["page", "list", "--json"])
        if code != 0:
            raise RuntimeError(f"page list on {device} exits {code}: {err[:200]}")
        pages = json.loads(out)["pages"]

        def show(arguments):
            code, out, err = self.tk(device, arguments)
            if code != 0:
                raise RuntimeError(f"{' '.join(arguments)} on {device} exits {code}: {err[:200]}")
            return json.loads(out)

        with ThreadPoolExecutor(8) as pool:
            shown = list(pool.map(show, [["show", t["id"], "--json"] for t in tasks]))
            bodies = list(pool.map(show, [["page", "show", p["id"], "--json"] for p in pages]))
        rows = sorted(json.dumps({k: t.get(k) for k in ("title", "status", "due", "priority", "contexts",
                                                        "energy", "estimate_minutes", "notes")}, sort_keys=True)
                      for t in shown)
        page_rows = sorted(json.dumps({"title": p["title"], "body": p["body"]}, sort_keys=True) for p in bodies)
        code, out, err = self.tk(device, ["conflicts", "--json"])
        if code != 0:
            raise RuntimeError(f"conflicts on {device} exits {code}: {err[:200]}")
        conflicts = sorted(json.dumps({"kind": c.get("kind"), "title": c.get("title"),
                                       "texts": sorted(x.get("text") or "" for x in c.get("texts", []))},
                                      sort_keys=True) for c in json.loads(out)["conflicts"])
        return {"tasks": rows, "pages": page_rows, "conflicts": conflicts}

    def objects(self):
        found = {}
        base = os.path.join(self.store, "tasker-sync", "d")
        for device in sorted(os.listdir(base)):
            found[device] = sorted(os.listdir(os.path.join(base, device)))
        return found

    def temporaries(self):
        folder = os.path.join(self.store, "tasker-sync", "t")
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def vault_digest(self):
        digest = hashlib.sha256()
        for device in "ab":
            for folder, _, files in sorted(os.walk(self.vaults[device])):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    digest.update(path.encode())
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
        return digest.hexdigest()

    # The four syncs after the first one on A (un-faulted or faulted);
    # returns the failed checks as strings.
    def carry_on(self):
        problems = []
        for step, device in enumerate(SYNC_LOOP):
            code, out, err = self.tk(device, ["sync", "now", "--json"])
            label = f"sync {step + 1} ({device.upper()}) after the run"
            if code != 0:
                problems.append(f"check 1/2: {label} exits {code}: {err.strip()[:300]}")
                return problems
            try:
                result = json.loads(out)
            except ValueError:
                problems.append(f"{label}: output is not JSON: {out[:200]!r}")
                continue
            if result.get("refused"):
                problems.append(f"check 5: {label} refused objects: {result['refused']}")
        return problems

    def expected_state(self):
        self.restore()
        before = self.vault_digest()
        code, out, err = self.tk("a", ["sync", "now", "--json"])
        if code != 0:
            raise SystemExit(f"sync-crashtest: the un-faulted sync on A failed with {code}: {err}")
        self.first = json.loads(out)
        self.vault_changes = self.vault_digest() != before
        problems = self.carry_on()
        if problems:
            raise SystemExit("sync-crashtest: the un-faulted scenario fails: " + "; ".join(problems))
        self.expected = self.state("a")
        other = self.state("b")
        if other != self.expected:
            raise SystemExit("sync-crashtest: without any fault, A and B differ:\n"
                             + describe_difference(self.expected, other, "A", "B"))
        self.expected_objects = {d: len(s) for d, s in self.objects().items()}
        titles = [json.loads(r)["title"] for r in self.expected["tasks"]]
        if len(titles) != len(set(titles)):
            raise SystemExit("sync-crashtest: without any fault, a title shows twice")
        print(f"sync-crashtest: un-faulted: the first sync on A uploaded {self.first.get('uploaded')}, "
              f"applied {self.first.get('applied')}, changed {self.first.get('records_changed')} records; "
              f"after four more syncs: {len(self.expected['tasks'])} tasks, {len(self.expected['pages'])} pages, "
              f"{len(self.expected['conflicts'])} conflicts; objects per device {sorted(self.expected_objects.values())}"
              + ("; the vault changed during the sync" if self.vault_changes else ""), flush=True)

    # One un-faulted `sync now` on A under strace: the indices of each call
    # kind, from the first call on a home or the storage on.
    def count_calls(self):
        self.restore()
        log = os.path.join(self.root, "calls.log")
        code, _, err = self.run("a", self.tasker, ["sync", "now", "--json"],
                                strace=["-o", log, "-e", "trace=" + ",".join(CALLS)])
        if code != 0:
            raise SystemExit(f"sync-crashtest: the counted sync failed with {code}: {err}")
        counts = {}
        seen = {}
        started = False
        marks = (self.homes["a"], self.store)
        for line in open(log, encoding="utf-8", errors="replace"):
            fields = line.split(None, 1)
            if len(fields) < 2 or "resumed>" in fields[1] or fields[1].startswith("+++") \
                    or fields[1].startswith("---"):
                continue
            call = fields[1].split("(", 1)[0]
            if call not in CALLS:
                continue
            # strace counts per thread: keep the index of every call of each
            # kind, but start at the first call on a home or the storage
            # (the loader and the runtime before it touch neither).
            index = counts.get((fields[0], call), 0) + 1
            counts[(fields[0], call)] = index
            if not started and any(mark in fields[1] for mark in marks):
                started = True
            if started:
                seen.setdefault(call, set()).add(index)
        self.calls = {call: sorted(indices) for call, indices in sorted(seen.items())}
        total = {call: max(indices) for call, indices in self.calls.items()}
        print("sync-crashtest: calls in one sync on A (from the first on a home or the storage; highest index "
              "per thread): " + ", ".join(f"{c} {len(i)} (#{i[0]}..#{i[-1]})" for c, i in self.calls.items()),
              flush=True)
        return total

    def fail(self, label, message):
        self.failures.append(f"{label}: {message}")
        print(f"FAIL {label}: {message}", flush=True)

    def trial(self, call, index):
        label = f"{call} #{index}"
        self.restore()
        strace = ["-o", "/dev/null", "-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={index}"]
        code, out, err = self.run("a", self.tasker, ["sync", "now", "--json"], strace=strace)
        self.runs += 1
        if code == -signal.SIGKILL:
            self.killed += 1
        elif code == -1:
            self.fail(label, err)
            return
        elif code == 0:
            # The kill did not land: this run made fewer calls of the kind.
            self.not_killed.append(label)
            try:
                if json.loads(out).get("refused"):
                    self.fail(label, f"check 5: the run itself refused objects: {json.loads(out)['refused']}")
            except ValueError:
                self.fail(label, f"exit 0 but the output is not JSON: {out[:200]!r}")
        else:
            self.fail(label, f"the faulted run exits {code} rather than being killed: {err.strip()[:300]}")
        for problem in self.carry_on():
            self.fail(label, problem)
            return
        try:
            a = self.state("a")
            b = self.state("b")
        except RuntimeError as error:
            self.fail(label, f"check 3: reading the state failed: {error}")
            return
        if a != b:
            self.fail(label, "check 3: A and B differ after the syncs:\n" + describe_difference(a, b, "A", "B"))
        if a != self.expected:
            self.fail(label, "check 4: A differs from the un-faulted run:\n"
                      + describe_difference(self.expected, a, "expected", "A"))
        titles = [json.loads(r)["title"] for r in a["tasks"]]
        twice = sorted({t for t in titles if titles.count(t) > 1})
        if twice:
            self.fail(label, f"check 4: tasks there more than once on A: {twice}")
        for device in "ab":
            code, out, err = self.tk(device, ["doctor"])
            if code != 0:
                errors = [line for line in out.decode("utf-8", "replace").splitlines()
                          if not line.startswith(("ok\t", "info\t", "note\t", "warning\t", "encryption\t",
                                                  "key\t", "approvals\t"))]
                self.fail(label, f"check 6: doctor on {device.upper()} exits {code}: {errors[:5]} {err.strip()[:200]}")
        objects = self.objects()
        for device, names in objects.items():
            if [int(n, 16) for n in names] != list(range(1, len(names) + 1)):
                self.fail(label, f"device {device} has objects out of sequence: {names}")
        left = self.temporaries()
        if left:
            # Not a failure (readers ignore t/), but reported: nothing removes them.
            self.leftovers.append(f"{label}: {left}")

    def sweep(self, quick):
        started = time.time()
        self.chosen = {}
        for call, indices in self.calls.items():
            chosen = indices
            if quick and len(indices) > 10:
                step = (len(indices) - 1) / 9
                chosen = sorted({indices[round(i * step)] for i in range(10)})
            self.chosen[call] = chosen
            for index in chosen:
                self.trial(call, index)
            print(f"sync-crashtest: {call}: {len(chosen)} of {len(indices)} calls killed; {self.runs} runs, "
                  f"{len(self.failures)} failed checks, {time.time() - started:.0f} s", flush=True)
        if self.runs and self.killed < (self.runs - len(self.not_killed)) * 0.9:
            self.fail("sweep", f"only {self.killed} of {self.runs} injected SIGKILLs ended the command: "
                      "the fault injection is not taking effect")
        if self.runs and len(self.not_killed) > self.runs * 0.2:
            self.fail("sweep", f"{len(self.not_killed)} of {self.runs} runs were never killed: "
                      f"the call counts do not match the runs ({self.not_killed[:10]})")


def describe_difference(left, right, left_name, right_name):
    lines = []
    for part in ("tasks", "pages", "conflicts"):
        only_left = sorted(set(left[part]) - set(right[part]))
        only_right = sorted(set(right[part]) - set(left[part]))
        for row in only_left:
            lines.append(f"    {part} only on {left_name}: {row}")
        for row in only_right:
            lines.append(f"    {part} only on {right_name}: {row}")
        if not only_left and not only_right and left[part] != right[part]:
            lines.append(f"    {part}: the same rows, but {len(left[part])} on {left_name} and "
                         f"{len(right[part])} on {right_name} (a row twice)")
    return "\n".join(lines[:40])


def main():
    arguments = sys.argv[1:]
    quick = "--quick" in arguments
    report = None
    if "--json" in arguments:
        report = arguments[arguments.index("--json") + 1]
    binaries = [a for a in arguments if not a.startswith("--") and a != report]
    if len(binaries) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    if shutil.which("strace") is None:
        print("sync-crashtest: strace is not installed (apt-get install strace); skipping", file=sys.stderr)
        return 77
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="tasker-sync-crash-") as root:
        os.chmod(root, 0o700)
        root = os.path.realpath(root)
        # Private copies: a rebuild meanwhile must not change the binaries under test.
        copies = []
        for binary, name in zip(binaries, ("tasker", "taskkey")):
            copy = os.path.join(root, name)
            shutil.copy2(os.path.abspath(binary), copy)
            copies.append(copy)
        harness = Harness(copies[0], copies[1], root)
        try:
            harness.make_template()
            harness.expected_state()
            harness.count_calls()
            harness.sweep(quick)
        finally:
            for device in "ab":
                harness.run(device, harness.taskkey, ["lock"])
    seconds = time.time() - started
    summary = {"mode": "quick" if quick else "full", "runs": harness.runs, "killed": harness.killed,
               "not_killed": harness.not_killed, "failures": harness.failures,
               "temporaries_left": harness.leftovers, "seconds": round(seconds, 1),
               "calls": {c: len(i) for c, i in harness.calls.items()},
               "chosen": getattr(harness, "chosen", {})}
    print(f"sync-crashtest: {harness.runs} faulted runs ({summary['mode']}), {harness.killed} killed, "
          f"{len(harness.failures)} failed checks, {seconds:.0f} s"
          + (f"; {len(harness.leftovers)} runs left a temporary in t/ after the next syncs" if harness.leftovers else ""))
    for line in harness.leftovers:
        print(f"sync-crashtest: temporary left in t/ after {line}")
    if report:
        with open(report, "w") as handle:
            json.dump(summary, handle, indent=2, sort_keys=True)
    return 1 if harness.failures else 0


if __name__ == "__main__":
    sys.exit(main())
