#!/usr/bin/env python3
"""make pair-bench: the CPU time of a whole pairing on 127.0.0.1, each side
its own `taskkey` process, beside the floor of the same group operations
in C (taskkey-bench --cpace) and beside a `taskkey` command that does no
pairing (`taskkey keys`, process start and vault read).

Each side's CPU is the user+system time of its process (wait4's rusage);
the joiner's includes writing its vault with the fast test KDF, so the
passphrase KDF (about 0.5 s when calibrated) is not what is measured.
Goal (issue 26): under 50 ms of CPU on each side.

    python3 scripts/pairing-bench.py TASKKEY TASKKEY_BENCH [ROUNDS]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def cpu_of(arguments, env, stdin=None, after_start=None):
    process = subprocess.Popen(arguments, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    result = after_start(process) if after_start else None
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return (usage.ru_utime + usage.ru_stime) * 1000, process, result


def write_private(path, text):
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
        handle.write(text)


def main():
    taskkey, bench = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    root = tempfile.mkdtemp(prefix="pair-bench-")
    secret = os.path.join(root, "pass")
    write_private(secret, "correct horse battery\n")
    offering = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": os.path.join(root, "offering")}
    subprocess.run([taskkey, "init", "--kdf", "fast-test-only", "--passphrase-file", secret,
                    "--accept-weak-passphrase"], env=offering, check=True, capture_output=True)
    offers, joins, baseline = [], [], []
    for index in range(rounds):
        joining = dict(offering, TASKKEY_HOME=os.path.join(root, f"joining-{index}"))
        code_file = os.path.join(root, f"code-{index}")

        def join(offer):
            first = json.loads(offer.stdout.readline())
            write_private(code_file, first["code"] + "\n")
            cpu, joiner, _ = cpu_of([taskkey, "pair", "join", first["addresses"][0], "--code-file", code_file,
                                     "--passphrase-file", secret, "--kdf", "fast-test-only",
                                     "--accept-weak-passphrase", "--json"], joining)
            return cpu, joiner.returncode

        cpu, offer, (join_cpu, join_status) = cpu_of(
            [taskkey, "pair", "offer", "--json", "--listen", "127.0.0.1:0"], offering, after_start=join)
        assert offer.returncode == 0 and join_status == 0, "a pairing failed"
        offers.append(cpu)
        joins.append(join_cpu)
        baseline.append(cpu_of([taskkey, "keys"], offering)[0])
        subprocess.run([taskkey, "lock"], env=joining, capture_output=True)
    floor = subprocess.run([bench, "--cpace"], capture_output=True, text=True)
    print(f"pairing on 127.0.0.1, {rounds} rounds, CPU per process (median, max):")
    for name, values in (("offer", offers), ("join", joins), ("keys (no pairing)", baseline)):
        print(f"  {name:18} {statistics.median(values):6.1f} ms  {max(values):6.1f} ms")
    print("the same group operations, one exchange both sides (taskkey-bench --cpace):")
    print("  " + (floor.stdout.strip() or floor.stderr.strip()).replace("\n", "\n  "))
    goal = max(statistics.median(offers), statistics.median(joins)) < 50
    print(f"goal: under 50 ms of CPU on each side: {'met' if goal else 'MISSED'}")
    subprocess.run([taskkey, "lock"], env=offering, capture_output=True)
    sys.exit(0 if goal else 1)


if __name__ == "__main__":
    main()
