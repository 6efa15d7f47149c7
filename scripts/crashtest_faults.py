"""The crash harness's other faults, run after the sweep of
scripts/crashtest.py in both its modes, on the same `Harness` (its fixture,
its commands and their checks):

  - a full disk: the vault on a small tmpfs, filled so that only a few bytes
    are left, for each write command (skipped, saying why, without mount);
  - signals: TERM, INT, HUP and KILL sent to each write command at a range
    of delays while it runs (quick: SIGKILL once per command).
"""
import os
import shutil
import signal
import subprocess
import time


def disk_full(harness, quick):
    """A full disk: the vault on a small tmpfs, filled so that only `room`
    bytes are left, for each write command and a range of rooms."""
    mount = os.path.join(harness.root, "small")
    os.mkdir(mount, 0o700)
    size = 2 << 20
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", mount],
                          capture_output=True, text=True)
    if done.returncode != 0:
        reason = done.stderr.strip() or "mount failed"
        print(f"crashtest: disk-full test skipped: cannot mount a small tmpfs ({reason}); "
              "it needs root or CAP_SYS_ADMIN", flush=True)
        harness.skipped.append(f"disk-full: {reason}")
        return
    started = time.time()
    try:
        rooms = [0] if quick else list(range(0, 40960 + 1, 4096))
        for name, arguments, stdin, effect in harness.commands():
            for room in rooms:
                label = f"{name} / disk full with {room} bytes free"
                home = os.path.join(mount, "home")
                shutil.rmtree(home, ignore_errors=True)
                filler = os.path.join(mount, "filler")
                if os.path.exists(filler):
                    os.unlink(filler)
                if name != "restore":
                    # A copy has its own session (another directory
                    # inode): unlocked as the sweep's homes are.
                    shutil.copytree(harness.template, home, symlinks=True)
                    harness.run(home, ["lock"])
                    if name != "unlock":
                        harness.must(home, ["unlock", "--passphrase-file", harness.passfile("old")])
                free = os.statvfs(mount)
                with open(filler, "wb") as handle:
                    handle.write(b"\0" * max(0, free.f_bavail * free.f_frsize - room))
                code, _, err = harness.run(home, arguments, stdin)
                harness.runs += 1
                os.unlink(filler)
                harness.check(label, name, home, code, err, effect)
            harness.progress("disk-full", name, started)
    finally:
        for home in ("home",):
            harness.run(os.path.join(mount, home), ["lock"])
        subprocess.run(["umount", mount], capture_output=True)

def signals(harness, quick):
    """Signals against a running command: TERM, INT, HUP and KILL at a range
    of delays while it runs."""
    delays = [0.02] if quick else [0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12]
    kinds = (signal.SIGKILL,) if quick else (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL)
    started = time.time()
    for name, arguments, stdin, effect in harness.commands():
        empty = name == "restore"
        for signal_number in kinds:
            for delay in delays:
                label = f"{name} / {signal.Signals(signal_number).name} after {delay * 1000:.0f} ms"
                home = harness.fresh_home("trial", empty=empty)
                if name == "unlock":
                    harness.run(home, ["lock"])
                environment = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": home}
                process = subprocess.Popen([harness.binary] + arguments, stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
                time.sleep(delay)
                process.send_signal(signal_number)
                out, err = process.communicate(stdin, timeout=60)
                harness.runs += 1
                code = process.returncode
                # Killed by the signal: like a crash, nothing was acknowledged.
                harness.check(label, name, home, code if code >= 0 else -9, err.decode("utf-8", "replace"), effect)
        harness.progress("signals", name, started)
