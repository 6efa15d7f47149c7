"""The crash harness's fixed drills (issue 11 cases 3 and 4, issue 22), run
in both the quick and the full mode of scripts/crashtest.py:

  - squatting: in a private mount namespace with an empty /dev/shm, another
    user (uid 65534) takes /dev/shm/taskkey-<uid> first, as a directory, a
    symlink and a file. unlock must still succeed, the vault must read, the
    squatter must be left alone (never written into or followed), and doctor
    must report it (exit 18, `runtime-dir`). Needs root (to act as the other
    user) and unshare; skipped, saying why, otherwise.
  - restore drill: a backup restored into a second home and unlocked and
    locked there leaves the live vault unlocked and readable.
  - no inode left: every write command runs on a tmpfs whose inodes are all
    in use; one that fails must leave every file of the vault as it was
    (issue 22: a failed `passphrase` rewrote unlock.session). Needs mount;
    skipped, saying why, otherwise.
"""
import errno
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


def vault_files(home):
    """Every file under `home`: relative path -> (bytes, inode)."""
    files = {}
    for directory, _, names in os.walk(home):
        for name in names:
            path = os.path.join(directory, name)
            if os.path.isfile(path) and not os.path.islink(path):
                with open(path, "rb") as handle:
                    files[os.path.relpath(path, home)] = (handle.read(), os.lstat(path).st_ino)
    return files


def no_inodes(harness):
    mount = os.path.join(harness.root, "no-inodes")
    os.mkdir(mount, 0o700)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m,nr_inodes=400,mode=0700", "tmpfs", mount],
                          capture_output=True, text=True)
    if done.returncode != 0:
        reason = done.stderr.strip() or "mount failed"
        print(f"crashtest: no-inode drill skipped: cannot mount a tmpfs ({reason})", flush=True)
        harness.skipped.append(f"no-inodes: {reason}")
        return
    home, filler = os.path.join(mount, "home"), os.path.join(mount, "filler")
    try:
        for name, arguments, stdin, effect in harness.commands():
            label = f"{name} / no inode left"
            shutil.rmtree(home, ignore_errors=True)
            shutil.rmtree(filler, ignore_errors=True)
            if name != "restore":
                # A copy has its own session (another directory inode):
                # unlocked as the sweep's homes are, except for unlock.
                shutil.copytree(harness.template, home, symlinks=True)
                harness.run(home, ["lock"])
                if name != "unlock":
                    harness.must(home, ["unlock", "--passphrase-file", harness.passfile("old")])
            os.mkdir(filler)
            try:
                for index in range(100000):
                    open(os.path.join(filler, str(index)), "wb").close()
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
            before = vault_files(home)
            code, _, err = harness.run(home, arguments, stdin)
            harness.runs += 1
            after = vault_files(home)
            shutil.rmtree(filler)
            if code != 0 and after != before:
                changed = sorted(set(before) ^ set(after) | {n for n in before if before[n] != after.get(n)})
                harness.fail(label, f"failed (exit {code}) and changed {', '.join(changed)}")
            harness.check(label, name, home, code, err, effect)
    finally:
        harness.run(home, ["lock"])
        subprocess.run(["umount", mount], capture_output=True)
