#!/usr/bin/env python3
"""The crash sweep for Layer-1 sync (SECURITY.md chapter 18): SIGKILLs
`tasker sync now`, `tasker sync remove-device ID` and `tasker sync compact`
at each of their file-system calls, with strace's fault injection, and
proves after every kill that nothing was lost, nothing was applied twice,
and that the next commands carry on.

    sync-crashtest.py TASKER TASKKEY [--quick] [--only sync|remove|compact[,…]] [--json FILE]

The template: devices A, B and C set up on one folder, and D, which has
their keys and is not set up. A has 20 tasks (most with notes) and two
pages, B has 10 tasks, C has synced twice (so its box key is at the
storage); A added an attachment and removed it once B and C had read it,
and B and C have acknowledged that removal in objects A has not applied
yet, so A's next sync removes the blob; A and B have local changes not yet
synced (edits, a completion, a delete, a new note, a page edit, a note
edited on both, and on A a new attachment), and B and C have uploaded
objects A has not applied yet. So one command on A does every step:
capture into its outbox (SQLite writes), upload (a blob and an object: a
temporary, a link, fsyncs in the folder), read B's and C's objects and
apply them (SQLite writes), remove the blob; `remove-device C` then also
saves a new keyring entry to A's vault and writes the epoch change;
`compact` also folds A's log into new objects, uploads them and removes
A's objects B and C have acknowledged.

For each scenario, each call kind and each occurrence N of it in one
un-faulted run of the command on A (--quick: about ten evenly spaced N per
kind, the first and the last among them; for compact, only where it goes
beyond a sync: of fdatasync, link and unlink, the first and the last
call after the last one `sync now` makes), the template is put back
and the command is run under `strace -e inject=CALL:signal=KILL:when=N`;
then

  1. the command's recovery on A exits 0: `tasker sync now` for the sync
     scenario (a leftover temporary or outbox object does not block it),
     `tasker sync compact` again for compact; `tasker sync remove-device
     C` again for the removal (or exit 64 "no device" when the killed run
     had finished the removal: epoch 2 already);
  7. after that recovery no temporary of A (t/<A's id>-*) is left, nor any
     other: only A was killed;
  2. B, A and B sync once more, each exiting 0 (removal: then A adds a
     canary task and note, A and B sync);
  3. A and B show the same tasks (title, status, due, priority, contexts,
     energy, estimate), the same notes, pages and page bodies, the same
     conflicts and the same attachments (each read whole);
  4. that state is the one an un-faulted run of the same commands gives:
     every task of the template there exactly once, none twice, none lost;
  5. no sync names an object refused;
  6. `tasker doctor` exits 0 on A and B;
  8. removal only: A and B are at epoch 2; C's `sync now` exits 19
     (outside), C stays at epoch 1 and never shows the canary;
  9. every device's objects at the storage are in sequence (A's from its
     oldest kept one after a compact, every other from 1), the removed
     attachment's blob is gone and the new one's is there;
 10. compact only: D then sets up, syncs (nothing refused, reading past
     A's fold) and shows what A shows.

Exits 0 when every check held, 1 when one failed (each failure is printed
with its scenario, CALL and N), 77 when strace is missing.
"""
import json
import os
import shutil
import signal
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # nothing written beside the script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sync_crash_checks import CANARY, Checks  # noqa: E402
from sync_crash_devices import DEVICES, describe_difference  # noqa: E402

CALLS = ["openat", "write", "pwrite64", "fsync", "fdatasync", "rename", "renameat", "renameat2", "link",
         "linkat", "unlink", "unlinkat", "mkdir", "mkdirat", "close", "ftruncate", "flock"]
SYNC_LOOP = ["b", "a", "b"]  # after the recovery on A
# --quick kills compact only where it goes beyond a sync: of these kinds, the calls after the last one
# `sync now` makes, the first and the last (the fold's commit and the outbox's after its upload, the
# upload's link, the first object pruned and the blob's removal).
QUICK_COMPACT = ("fdatasync", "link", "unlink")


class Harness(Checks):
    """The scenarios and the sweep, on the devices and their checks."""

    def __init__(self, tasker, taskkey, root):
        super().__init__(tasker, taskkey, root)
        self.failures = []
        self.runs = 0
        self.killed = 0
        self.not_killed = []
        self.calls = {}
        self.chosen = {}
        self.expected = {}
        self.per_scenario = {}

    # What runs on A after the command (faulted or not), then the other
    # syncs; returns the failed checks as strings.
    def carry_on(self, scenario):
        if scenario == "sync":
            _, problems = self.checked("a", ["sync", "now", "--json"], "the recovery sync on A")
        elif scenario == "compact":
            _, problems = self.checked("a", ["sync", "compact", "--json"], "the recovery compact on A")
        else:
            # A killed run that had finished the removal (epoch 2, nothing pending) leaves nothing to finish:
            # the second remove-device says "no device" (64), and its sync sends what the outbox holds.
            try:
                finished = self.status("a").get("epoch") == 2
            except RuntimeError as error:
                return [f"check 1: {error}"]
            code, problems = self.checked("a", ["sync", "remove-device", self.ids["c"], "--json"],
                                          "the second remove-device on A", allowed=(0, 64) if finished else (0,))
            if code == 64:
                _, more = self.checked("a", ["sync", "now", "--json"], "the sync after it on A")
                problems += more
        if problems:
            return problems
        left = self.temporaries()
        if left:
            own = [name for name in left if name.startswith(self.ids["a"] + "-")]
            problems.append(f"check 7: after the recovery on A, temporaries remain in t/ "
                            f"({len(own)} of them A's): {left}")
        for step, device in enumerate(SYNC_LOOP):
            _, more = self.checked(device, ["sync", "now", "--json"], f"sync {step + 2} ({device.upper()})")
            problems += more
            if more and more[0].startswith("check 1/2"):
                return problems
        if scenario == "remove":
            self.must_tasker("a", ["add", "after removal", "--notes", "-"], CANARY.encode())
            for device in "ab":
                _, more = self.checked(device, ["sync", "now", "--json"], f"the canary's sync on {device.upper()}")
                problems += more
        return problems

    def command(self, scenario):
        if scenario == "sync":
            return ["sync", "now", "--json"]
        if scenario == "compact":
            return ["sync", "compact", "--json"]
        return ["sync", "remove-device", self.ids["c"], "--json"]

    def expected_state(self, scenario):
        self.restore()
        before = self.vault_digest()
        code, out, err = self.tk("a", self.command(scenario))
        if code != 0:
            raise SystemExit(f"sync-crashtest: the un-faulted {' '.join(self.command(scenario))} on A failed "
                             f"with {code}: {err}")
        first = json.loads(out)
        vault_changes = self.vault_digest() != before
        problems = self.carry_on(scenario)
        if scenario == "remove":
            problems += self.removal_checks()
        problems += self.storage_checks(scenario)
        expected = self.state("a")
        if scenario == "compact":
            if not first["compaction"]["folded"] or not first["compaction"]["removed"]:
                problems.append(f"the compact on A folded or removed nothing: {first['compaction']}")
            problems += self.fresh_device(expected)
        if problems:
            raise SystemExit(f"sync-crashtest: the un-faulted {scenario} scenario fails: " + "; ".join(problems))
        other = self.state("b")
        if other != expected:
            raise SystemExit("sync-crashtest: without any fault, A and B differ:\n"
                             + describe_difference(expected, other, "A", "B"))
        self.expected[scenario] = expected
        objects = {d: len(s) for d, s in self.objects().items()}
        titles = [json.loads(r)["title"] for r in expected["tasks"]]
        if len(titles) != len(set(titles)):
            raise SystemExit("sync-crashtest: without any fault, a title shows twice")
        print(f"sync-crashtest: un-faulted {scenario}: the command on A answered {first}; after the next "
              f"commands: {len(expected['tasks'])} tasks, {len(expected['pages'])} pages, "
              f"{len(expected['conflicts'])} conflicts; objects per device {sorted(objects.values())}"
              + ("; A's vault changed during the command" if vault_changes else ""), flush=True)

    # One un-faulted run of the command on A under strace: the indices of
    # each call kind, from the first call on a home or the storage on.
    def count_calls(self, scenario):
        self.restore()
        log = os.path.join(self.root, "calls.log")
        code, _, err = self.run("a", self.tasker, self.command(scenario),
                                strace=["-o", log, "-e", "trace=" + ",".join(CALLS)])
        if code != 0:
            raise SystemExit(f"sync-crashtest: the counted {scenario} failed with {code}: {err}")
        counts = {}
        seen = {}
        started = False
        marks = (self.homes["a"], self.vaults["a"], self.store)
        for line in open(log, encoding="utf-8", errors="replace"):
            fields = line.split(None, 1)
            if len(fields) < 2 or "resumed>" in fields[1] or fields[1].startswith("+++") \
                    or fields[1].startswith("---"):
                continue
            call = fields[1].split("(", 1)[0]
            if call not in CALLS:
                continue
            # strace counts per thread: keep the index of every call of each
            # kind, but start at the first call on a home, a vault or the
            # storage (the loader and the runtime before it touch none).
            index = counts.get((fields[0], call), 0) + 1
            counts[(fields[0], call)] = index
            if not started and any(mark in fields[1] for mark in marks):
                started = True
            if started:
                seen.setdefault(call, set()).add(index)
        calls = {call: sorted(indices) for call, indices in sorted(seen.items())}
        self.calls[scenario] = calls
        print(f"sync-crashtest: calls in one {scenario} on A (from the first on a home, a vault or the storage; "
              "highest index per thread): "
              + ", ".join(f"{c} {len(i)} (#{i[0]}..#{i[-1]})" for c, i in calls.items()), flush=True)

    def fail(self, label, message):
        self.failures.append(f"{label}: {message}")
        print(f"FAIL {label}: {message}", flush=True)

    def trial(self, scenario, call, index):
        label = f"{scenario} {call} #{index}"
        self.restore()
        strace = ["-o", "/dev/null", "-e", f"trace={call}", "-e", f"inject={call}:signal=KILL:when={index}"]
        code, out, err = self.run("a", self.tasker, self.command(scenario), strace=strace)
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
        try:
            problems = self.carry_on(scenario)
            if not any(p.startswith("check 1/2") for p in problems) and scenario == "remove":
                problems += self.removal_checks()
        except (RuntimeError, SystemExit) as error:
            problems = [f"check 1/2: {error}"]
        for problem in problems:
            self.fail(label, problem)
        if any(p.startswith("check 1/2") for p in problems):
            return
        try:
            a = self.state("a")
            b = self.state("b")
        except RuntimeError as error:
            self.fail(label, f"check 3: reading the state failed: {error}")
            return
        if a != b:
            self.fail(label, "check 3: A and B differ after the syncs:\n" + describe_difference(a, b, "A", "B"))
        if a != self.expected[scenario]:
            self.fail(label, "check 4: A differs from the un-faulted run:\n"
                      + describe_difference(self.expected[scenario], a, "expected", "A"))
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
        for problem in self.storage_checks(scenario):
            self.fail(label, problem)
        if scenario == "compact":
            for problem in self.fresh_device(a):
                self.fail(label, problem)

    def sweep(self, scenario, quick):
        started = time.time()
        runs, failures, not_killed, killed = self.runs, len(self.failures), len(self.not_killed), self.killed
        self.chosen[scenario] = {}
        for call, indices in self.calls[scenario].items():
            chosen = indices
            if quick and scenario == "compact":
                beyond = [i for i in indices if i > max(self.calls["sync"].get(call, [0]))]
                chosen = sorted({beyond[0], beyond[-1]}) if beyond and call in QUICK_COMPACT else []
            elif quick and len(indices) > 10:
                step = (len(indices) - 1) / 9
                chosen = sorted({indices[round(i * step)] for i in range(10)})
            if not chosen:
                continue
            self.chosen[scenario][call] = chosen
            for index in chosen:
                self.trial(scenario, call, index)
            print(f"sync-crashtest: {scenario} {call}: {len(chosen)} of {len(indices)} calls killed; "
                  f"{self.runs - runs} runs, {len(self.failures) - failures} failed checks, "
                  f"{time.time() - started:.0f} s", flush=True)
        made = self.runs - runs
        missed = len(self.not_killed) - not_killed
        killed = self.killed - killed
        if made and killed < (made - missed) * 0.9:
            self.fail(f"{scenario} sweep", f"only {killed} of {made} injected SIGKILLs ended the command: "
                      "the fault injection is not taking effect")
        # A run may make one call of a kind fewer than the counted run did (the checkpoint worker's
        # fdatasync lands before or after the end, 12-14 in one sync), so the kill at the last index
        # misses; one such miss is allowed even in the few runs of a quick compact sweep.
        if made and missed > max(1, made * 0.2):
            self.fail(f"{scenario} sweep", f"{missed} of {made} runs were never killed: "
                      f"the call counts do not match the runs ({self.not_killed[not_killed:][:10]})")
        self.per_scenario[scenario] = {"runs": made, "killed": killed, "not_killed": missed,
                                       "failed_checks": len(self.failures) - failures,
                                       "seconds": round(time.time() - started, 1)}


def main():
    arguments = sys.argv[1:]
    quick = "--quick" in arguments
    report = None
    if "--json" in arguments:
        report = arguments[arguments.index("--json") + 1]
    scenarios = ["sync", "remove", "compact"]
    only = None
    if "--only" in arguments:
        only = arguments[arguments.index("--only") + 1]
        if not only or any(name not in scenarios for name in only.split(",")):
            print(__doc__, file=sys.stderr)
            return 2
        scenarios = [name for name in scenarios if name in only.split(",")]
    binaries = [a for a in arguments if not a.startswith("--") and a not in (report, only)]
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
            for scenario in scenarios:
                harness.expected_state(scenario)
                harness.count_calls(scenario)
            if quick and "compact" in scenarios and "sync" not in scenarios:
                harness.count_calls("sync")  # what compact adds to a sync is what --quick samples
            for scenario in scenarios:
                harness.sweep(scenario, quick)
        finally:
            for device in DEVICES:
                harness.run(device, harness.taskkey, ["lock"])
    seconds = time.time() - started
    summary = {"mode": "quick" if quick else "full", "runs": harness.runs, "killed": harness.killed,
               "not_killed": harness.not_killed, "failures": harness.failures, "seconds": round(seconds, 1),
               "scenarios": harness.per_scenario,
               "calls": {s: {c: len(i) for c, i in calls.items()} for s, calls in harness.calls.items()},
               "chosen": harness.chosen}
    print(f"sync-crashtest: {harness.runs} faulted runs ({summary['mode']}), {harness.killed} killed, "
          f"{len(harness.failures)} failed checks, {seconds:.0f} s; "
          + "; ".join(f"{s}: {r['runs']} runs, {r['killed']} killed, {r['failed_checks']} failed checks"
                      for s, r in harness.per_scenario.items()))
    if report:
        with open(report, "w") as handle:
            json.dump(summary, handle, indent=2, sort_keys=True)
    return 1 if harness.failures else 0


if __name__ == "__main__":
    sys.exit(main())
