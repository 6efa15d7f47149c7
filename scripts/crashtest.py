#!/usr/bin/env python3
"""The crash-and-fault harness: kills or fails every write command of the
real taskkey binary at each of its file-system calls, with strace's fault
injection, and checks after every run that

  - the vault still opens (status exits 0, the passphrase still unlocks);
  - every write acknowledged with exit 0 survived, before and during the run;
  - a revoked assistant key stays revoked, also when the registry as it was
    before the revoke is put back in place;
  - a command that failed exited non-zero with a 'taskkey: error:' line, and
    the next command completes or refuses (it never accepts a revoked key);
  - no temporary file is left behind once the next write has run.

After the sweep, a full disk and signals (crashtest_faults.py), three fixed
drills run (crashtest_drills.py): a squatted /dev/shm/taskkey-<uid>, a restore
drill beside the live vault, and every write command with no inode left.

    crashtest.py BINARY [--quick] [--json FILE]

--quick (what `make test` runs) injects at the middle call of each kind
(killed or EIO in turn), fills the disk completely once and sends SIGKILL
once per command; the full sweep
(`make crashtest`) injects every fault at every call, at eleven levels of
free space and four signals at eight delays.
Exits 0 when every check held, 1 when one failed (each failure is printed),
77 when strace is missing.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import crashtest_drills
import crashtest_faults

CALLS = ["openat", "write", "fsync", "fdatasync", "rename", "renameat2", "link", "linkat", "unlink",
         "unlinkat", "mkdir", "close", "flock", "ftruncate"]
FAULTS = {"kill": "signal=KILL", "eio": "error=EIO", "enospc": "error=ENOSPC"}
PASS_OLD = "quartz lantern orbit meadow 41"
PASS_NEW = "violet harbour tandem ferry 17"


def run(command, environment, stdin=b"", strace=None, timeout=60, name="crashtest"):
    """Runs `command` with `environment` and `stdin`, under `strace -f -qq
    <strace...>` when given, in a session of its own, so that a command
    that hangs past `timeout` seconds is killed with its tracer rather than
    left behind. Returns the exit code (negative for a signal, -1 for a
    hang), stdout as bytes and stderr as text (for a hang, a line saying so
    under `name`)."""
    shown = " ".join(command)
    if strace:
        command = ["strace", "-f", "-qq"] + strace + command
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=environment, start_new_session=True)
    try:
        out, err = process.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return -1, out, f"{name}: hung for over {timeout} s: {shown}"
    return process.returncode, out, err.decode("utf-8", "replace")


class Harness:
    def __init__(self, binary, root):
        self.binary = binary
        self.root = root
        self.failures = []
        self.skipped = []
        self.runs = 0
        self.calls_seen = {}
        self.injected = {}
        self.killed = 0
        for name, text in (("old", PASS_OLD), ("new", PASS_NEW)):
            path = os.path.join(root, name)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
                handle.write(text + "\n")

    def passfile(self, which):
        return os.path.join(self.root, which)

    def run(self, home, arguments, stdin=b"", strace=None):
        environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": home}
        return run([self.binary] + arguments, environment, stdin, ["-o", "/dev/null"] + strace if strace else None)

    def must(self, home, arguments, stdin=b""):
        code, out, err = self.run(home, arguments, stdin)
        if code != 0:
            raise SystemExit(f"crashtest: set-up step {arguments} failed with {code}: {err}")
        return out

    # The fixture: a vault with acknowledged items, an active and a revoked
    # assistant key, and a bundle and a backup to import and restore.
    def make_fixture(self):
        self.template = os.path.join(self.root, "template")
        t = self.template
        self.must(t, ["init", "--kdf", "fast-test-only", "--passphrase-file", self.passfile("old")])
        self.must(t, ["unlock", "--passphrase-file", self.passfile("old")])
        self.must(t, ["item", "set", "keep/sync"], b"value-one")
        self.must(t, ["item", "set", "--device-only", "keep/device"], b"value-two")
        self.active = self.mint(t, "alpha")
        self.revoked = self.mint(t, "beta")
        self.must(t, ["revoke", self.revoked["id"]])
        other = os.path.join(self.root, "other")
        self.must(other, ["init", "--kdf", "fast-test-only", "--passphrase-file", self.passfile("old")])
        self.must(other, ["unlock", "--passphrase-file", self.passfile("old")])
        self.must(other, ["rotate"])
        self.bundle = os.path.join(self.root, "bundle.tksync")
        self.must(other, ["sync", "export", "--out", self.bundle, "--passphrase-file", self.passfile("old")])
        self.foreign_value = self.must(other, ["seal", "--context", "n/1"], b"from-other").strip()
        self.must(other, ["lock"])
        self.backup = os.path.join(self.root, "vault.tkbackup")
        self.must(t, ["backup", "create", "--out", self.backup])
        self.registry = self.read(os.path.join(t, "device-only", "assistant-keys.registry"))

    def mint(self, home, name):
        out = self.must(home, ["mint", "--name", name, "--json"])
        return json.loads(out)

    @staticmethod
    def read(path):
        with open(path, "rb") as handle:
            return handle.read()

    def fresh_home(self, name, empty=False):
        home = os.path.join(self.root, name)
        shutil.rmtree(home, ignore_errors=True)
        if not empty:
            shutil.copytree(self.template, home, symlinks=True)
            code, out, _ = self.run(home, ["status", "--json"])
            if code == 0 and b'"unlocked"' not in out and b'"locked"' in out:
                self.must(home, ["unlock", "--passphrase-file", self.passfile("old")])
        return home

    # The write commands: arguments, standard input, and the check that its
    # effect is there (run after an exit 0, and after a failure to learn
    # whether it took effect).
    def commands(self):
        a = self.active
        return [
            ("item set new", ["item", "set", "new/item"], b"fresh",
             lambda h: self.item(h, "new/item") == b"fresh"),
            ("item set replace", ["item", "set", "keep/sync"], b"changed",
             lambda h: self.item(h, "keep/sync") == b"changed"),
            ("item remove", ["item", "remove", "keep/device"], b"",
             lambda h: self.item(h, "keep/device") is None),
            ("passphrase", ["passphrase", "--passphrase-file", self.passfile("old"),
                            "--new-passphrase-file", self.passfile("new")], b"",
             lambda h: self.unlocks(h, "new")),
            ("sync import", ["sync", "import", self.bundle, "--passphrase-file", self.passfile("old")], b"",
             lambda h: self.opens(h, self.foreign_value) == b"from-other"),
            ("rotate", ["rotate"], b"", None),
            ("mint", ["mint", "--name", "gamma"], b"", None),
            ("revoke", ["revoke", a["id"]], b"", lambda h: self.verify(h, a["key"]) == 23),
            ("assistant rotate", ["rotate", "--assistant", "alpha"], b"",
             lambda h: self.verify(h, a["key"]) == 23),
            ("lock", ["lock"], b"", lambda h: self.run(h, ["item", "get", "keep/sync"])[0] == 14),
            ("unlock", ["unlock", "--passphrase-file", self.passfile("old")], b"",
             lambda h: self.item(h, "keep/sync") == b"value-one"),
            ("restore", ["backup", "restore", self.backup, "--passphrase-file", self.passfile("old")], b"",
             lambda h: self.run(h, ["status"])[0] == 0),
        ]

    def item(self, home, name):
        code, out, _ = self.run(home, ["item", "get", name])
        return out.rstrip(b"\n") if code == 0 else None

    def opens(self, home, value):
        code, out, _ = self.run(home, ["open", "--context", "n/1"], value + b"\n")
        return out.rstrip(b"\n") if code == 0 else None

    def verify(self, home, key):
        return self.run(home, ["verify"], key.encode() + b"\n")[0]

    def unlocks(self, home, which):
        return self.run(home, ["unlock", "--passphrase-file", self.passfile(which)])[0] == 0

    def fail(self, label, message):
        self.failures.append(f"{label}: {message}")
        print(f"FAIL {label}: {message}", flush=True)

    # The checks after one run.
    def check(self, label, name, home, code, err, effect):
        if code == -1:
            self.fail(label, err)
        elif code != 0 and code != -9 and not err.startswith("taskkey: error: "):
            self.fail(label, f"exit {code} without a 'taskkey: error:' line: {err[:200]!r}")
        if name == "restore" and code != 0 and not os.path.exists(os.path.join(home, "vault.tkv")):
            # A restore that did not finish: a plain retry must succeed.
            # (One that failed after the rename into place, say writing its
            # report, left the whole vault there: the checks below prove it.)
            retry, _, retry_err = self.run(home, ["backup", "restore", self.backup, "--passphrase-file",
                                                  self.passfile("old")])
            if retry != 0:
                self.fail(label, f"the retry of an interrupted restore failed with {retry}: {retry_err[:200]}")
                return
            code = 0
        status, _, status_err = self.run(home, ["status"])
        if status != 0:
            self.fail(label, f"the vault does not open afterwards: status exits {status}: {status_err[:200]}")
            return
        if code == 0 and effect and not effect(home):
            self.fail(label, "exit 0, but the acknowledged change is not there")
        if not (self.unlocks(home, "old") or self.unlocks(home, "new")):
            self.fail(label, "neither the old nor the new passphrase unlocks the vault")
            return
        if name != "item set replace" and self.item(home, "keep/sync") != b"value-one":
            self.fail(label, "the acknowledged item keep/sync was lost")
        if name not in ("item remove", "restore") and self.item(home, "keep/device") != b"value-two":
            self.fail(label, "the acknowledged device-only item keep/device was lost")
        # The next writes (one of each file) clean up what an interrupted
        # one left behind.
        for probe in (["item", "set", "probe/sync"], ["item", "set", "--device-only", "probe/device"],
                      ["mint", "--name", "probe"]):
            if self.run(home, probe, b"x")[0] != 0:
                self.fail(label, f"the next write after the run failed: {' '.join(probe)}")
        leftovers = [os.path.join(d, f) for d, _, files in os.walk(home) for f in files if f.endswith(".tmp")]
        if leftovers:
            self.fail(label, f"temporary files left after the next write: {leftovers}")
        # Last, as it puts an older registry back (after which writes refuse).
        if name != "restore":
            self.check_revocations(label, name, home, code)

    def check_revocations(self, label, name, home, code):
        if self.verify(home, self.revoked["key"]) == 0:
            self.fail(label, "a key revoked before the run verifies again")
        acknowledged = code == 0 and name in ("revoke", "assistant rotate")
        registry = os.path.join(home, "device-only", "assistant-keys.registry")
        # Put the registry back as it was before the run (an older copy).
        with open(os.open(registry + ".old", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(self.registry)
        os.replace(registry + ".old", registry)
        if self.verify(home, self.revoked["key"]) == 0:
            self.fail(label, "with the older registry put back, a key revoked before the run verifies again")
        if acknowledged and self.verify(home, self.active["key"]) == 0:
            self.fail(label, f"'{name}' exited 0, but with the older registry put back the key verifies again")

    def count_calls(self, name, arguments, stdin, empty):
        home = self.fresh_home("count", empty=empty)
        log = os.path.join(self.root, "calls.log")
        environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": home}
        subprocess.run(["strace", "-f", "-qq", "-o", log, "-e", "trace=" + ",".join(CALLS), self.binary]
                       + arguments, input=stdin, capture_output=True, env=environment, timeout=60)
        counts = {}
        started = False
        for line in open(log, encoding="utf-8", errors="replace"):
            fields = line.split(None, 1)
            if len(fields) < 2 or "resumed>" in fields[1]:
                continue
            call = fields[1].split("(", 1)[0]
            # Calls before the first one on the vault (the loader, the
            # runtime) cannot touch it: start counting there, but keep the
            # index of every call of each kind. strace counts per thread.
            index = counts.get((fields[0], call), 0) + 1
            counts[(fields[0], call)] = index
            if not started and (home in fields[1] or "/dev/shm" in fields[1]):
                started = True
                self.calls_seen.setdefault(name, {})
            if started:
                seen = self.calls_seen[name].setdefault(call, [])
                if index not in seen:
                    seen.append(index)
        return self.calls_seen.get(name, {})

    def progress(self, phase, name, started):
        print(f"crashtest: {phase}: {name} done; {self.runs} runs, {len(self.failures)} failed checks, "
              f"{time.time() - started:.0f} s", flush=True)

    def sweep(self, quick):
        started = time.time()
        for name, arguments, stdin, effect in self.commands():
            empty = name == "restore"
            calls = self.count_calls(name, arguments, stdin, empty)
            print(f"crashtest: {name}: {sum(len(v) for v in calls.values())} calls after the first on the vault",
                  flush=True)
            for kind, (call, indices) in enumerate(sorted(calls.items())):
                for number, (fault, action) in enumerate(FAULTS.items()):
                    # An injected error skips the call, but close(2) always
                    # releases the descriptor (and its lock), even when it
                    # reports EIO: only a kill at close is a real fault.
                    if call == "close" and fault != "kill":
                        continue
                    # Quick: the middle call of each kind, killed or failed
                    # with EIO in turn.
                    chosen = indices
                    if quick:
                        chosen = [indices[len(indices) // 2]] if number == kind % 2 else []
                    for index in chosen:
                        label = f"{name} / {call} #{index} / {fault}"
                        home = self.fresh_home("trial", empty=empty)
                        if name == "unlock":
                            self.run(home, ["lock"])
                        strace = ["-e", f"trace={call}", "-e", f"inject={call}:{action}:when={index}"]
                        code, _, err = self.run(home, arguments, stdin, strace=strace)
                        self.runs += 1
                        self.injected[fault] = self.injected.get(fault, 0) + 1
                        if fault == "kill" and code == -9:
                            self.killed += 1
                        self.check(label, name, home, code, err, effect)
            self.progress("sweep", name, started)
        # A harness whose faults never land proves nothing: strace injects
        # only into traced calls, so each run traces the call it faults.
        kills = self.injected.get("kill", 0)
        if kills and self.killed < kills * 0.9:
            self.fail("sweep", f"only {self.killed} of {kills} injected SIGKILLs ended the command: "
                      "the fault injection is not taking effect")


def main():
    arguments = sys.argv[1:]
    quick = "--quick" in arguments
    report = None
    if "--json" in arguments:
        report = arguments[arguments.index("--json") + 1]
    binary = os.path.abspath([a for a in arguments if not a.startswith("--") and a != report][0])
    if shutil.which("strace") is None:
        print("crashtest: strace is not installed (apt-get install strace); skipping", file=sys.stderr)
        return 77
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="taskkey-crash-") as root:
        os.chmod(root, 0o700)
        # A private copy: a rebuild meanwhile must not change the binary under test.
        copy = os.path.join(root, "taskkey")
        shutil.copy2(binary, copy)
        harness = Harness(copy, root)
        harness.make_fixture()
        harness.sweep(quick)
        crashtest_faults.disk_full(harness, quick)
        crashtest_faults.signals(harness, quick)
        crashtest_drills.squatting(harness)
        crashtest_drills.restore_drill(harness)
        crashtest_drills.no_inodes(harness)
        for home in ("template", "trial", "count", "squat", "live", "drill"):
            harness.run(os.path.join(root, home), ["lock"])
    seconds = time.time() - started
    summary = {"mode": "quick" if quick else "full", "runs": harness.runs, "failures": len(harness.failures),
               "skipped": harness.skipped,
               "seconds": round(seconds, 1), "injected": harness.injected, "killed": harness.killed,
               "calls": {name: sum(len(v) for v in calls.values()) for name, calls in harness.calls_seen.items()}}
    print(f"crashtest: {harness.runs} faulted runs ({summary['mode']}), {len(harness.failures)} failed checks, "
          f"{seconds:.0f} s" + (f"; skipped: {'; '.join(harness.skipped)}" if harness.skipped else ""))
    if report:
        with open(report, "w") as handle:
            json.dump(summary, handle, indent=2, sort_keys=True)
    return 1 if harness.failures else 0


if __name__ == "__main__":
    sys.exit(main())
