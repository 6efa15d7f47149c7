"""The crash harness's two fixed drills (issue 11 cases 3 and 4), run in
both the quick and the full mode of scripts/crashtest.py:

  - squatting: in a private mount namespace with an empty /dev/shm, another
    user (uid 65534) takes /dev/shm/taskkey-<uid> first, as a directory, a
    symlink and a file. unlock must still succeed, the vault must read, the
    squatter must be left alone (never written into or followed), and doctor
    must report it (exit 18, `runtime-dir`). Needs root (to act as the other
    user) and unshare; skipped, saying why, otherwise.
  - restore drill: a backup restored into a second home and unlocked and
    locked there leaves the live vault unlocked and readable.
"""
import os
import shutil
import subprocess

# Run inside `unshare --mount`: a fresh /dev/shm, the squatter, then the
# commands. Each step prints `step <name> <exit code>`.
SQUAT_SCRIPT = r'''
set -u
mount --make-rprivate / 2>/dev/null
mount -t tmpfs -o mode=1777,size=1m tmpfs /dev/shm || { echo "step mount 1"; exit 0; }
name=/dev/shm/taskkey-$(id -u)
case "$SQUAT" in
  directory) mkdir -m 0777 "$name" && chown 65534:65534 "$name" ;;
  symlink) mkdir -m 0777 /dev/shm/elsewhere && chown 65534:65534 /dev/shm/elsewhere &&
           ln -s /dev/shm/elsewhere "$name" ;;
  file) : > "$name" && chown 65534:65534 "$name" ;;
esac
echo "step mount 0"
"$TK" unlock --passphrase-file "$PASSFILE" >/dev/null 2>"$ROOT/squat.err"; echo "step unlock $?"
"$TK" item get keep/sync >"$ROOT/squat.out" 2>>"$ROOT/squat.err"; echo "step get $?"
"$TK" doctor >"$ROOT/squat.doctor" 2>>"$ROOT/squat.err"; echo "step doctor $?"
"$TK" lock >/dev/null 2>>"$ROOT/squat.err"; echo "step lock $?"
if [ -d /dev/shm/elsewhere ]; then echo "step untouched $(ls -A /dev/shm/elsewhere | wc -l)"; fi
if [ -d "$name" ] && [ ! -L "$name" ]; then echo "step untouched $(ls -A "$name" | wc -l)"; fi
'''


def squatting(harness):
    """Case 3: a squatted /dev/shm/taskkey-<uid> is routed around and reported."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        reason = "needs root (to squat as another user) and unshare"
        print(f"crashtest: squatting drill skipped: {reason}", flush=True)
        harness.skipped.append(f"squatting: {reason}")
        return
    for kind in ("directory", "symlink", "file"):
        label = f"squatting / /dev/shm/taskkey-<uid> is another user's {kind}"
        home = harness.fresh_home("squat")
        environment = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LANG": "C.UTF-8", "TASKKEY_HOME": home,
                       "TK": harness.binary, "PASSFILE": harness.passfile("old"), "ROOT": harness.root,
                       "SQUAT": kind}
        done = subprocess.run(["unshare", "--mount", "sh", "-c", SQUAT_SCRIPT], env=environment,
                              capture_output=True, text=True, timeout=120)
        harness.runs += 1
        steps = dict(line.split()[1:3] for line in done.stdout.splitlines() if line.startswith("step "))
        if steps.get("mount") != "0":
            reason = f"cannot mount a private /dev/shm ({done.stderr.strip()[:120] or done.returncode})"
            print(f"crashtest: squatting drill skipped: {reason}", flush=True)
            harness.skipped.append(f"squatting: {reason}")
            return
        errors = harness.read(os.path.join(harness.root, "squat.err")).decode("utf-8", "replace")
        doctor = harness.read(os.path.join(harness.root, "squat.doctor")).decode("utf-8", "replace")
        if steps.get("unlock") != "0":
            harness.fail(label, f"unlock exited {steps.get('unlock')}: {errors[:200]}")
        elif harness.read(os.path.join(harness.root, "squat.out")).rstrip(b"\n") != b"value-one":
            harness.fail(label, f"item get after unlock failed ({steps.get('get')}): {errors[:200]}")
        if steps.get("doctor") != "18" or "runtime-dir: /dev/shm/taskkey-" not in doctor:
            harness.fail(label, f"doctor did not report the squatter (exit {steps.get('doctor')}): {doctor[:300]}")
        if steps.get("lock") != "0":
            harness.fail(label, f"lock exited {steps.get('lock')}")
        if steps.get("untouched", "0") != "0":
            harness.fail(label, "the session key went into the squatter's directory")


def restore_drill(harness):
    """Case 4: unlocking and locking a restored copy leaves the live vault as it was."""
    label = "restore drill / a copy restored into a second home"
    live = harness.fresh_home("live")
    drill = os.path.join(harness.root, "drill")
    shutil.rmtree(drill, ignore_errors=True)
    harness.runs += 1
    restore = ["backup", "restore", harness.backup, "--passphrase-file", harness.passfile("old")]
    code, _, err = harness.run(drill, restore)
    if code != 0:
        harness.fail(label, f"restore exited {code}: {err[:200]}")
        return
    for step, expected in ((["unlock", "--passphrase-file", harness.passfile("old")], 0), (["lock"], 0)):
        code, _, err = harness.run(drill, step)
        if code != expected:
            harness.fail(label, f"{' '.join(step[:1])} of the copy exited {code}: {err[:200]}")
        if harness.item(live, "keep/sync") != b"value-one":
            harness.fail(label, f"after '{step[0]}' of the copy the live vault no longer reads")
    if harness.run(drill, ["item", "get", "keep/sync"])[0] != 14:
        harness.fail(label, "the locked copy still reads")
    harness.run(live, ["lock"])
