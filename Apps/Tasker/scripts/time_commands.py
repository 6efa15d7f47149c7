#!/usr/bin/env python3
"""Times whole `tasker` commands the way a user runs them, beside floors.

    time_commands.py --home DIR --tasker BIN [--empty-dynamic BIN]
                     [--empty-static BIN] [--runs N] [--show-id ID]

DIR is a `tasker-bench --keep DIR` folder (DIR/tasker, DIR/keys: 10^5
tasks with sealed 1 KiB notes and an unlocked vault). Each round runs every
command once, in turn, with standard output to /dev/null (subprocess.run,
wall clock from before the fork to after the wait); the table gives the
median of N rounds after one warm-up round. `tasker list` (tens of
milliseconds) is timed after them, in its own 21 runs, so it does not
evict the caches the short commands run with. Exits 1 when `tasker show`
misses its goal (< 5 ms) or any command fails.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

SHOW_GOAL_MS = 5.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", required=True)
    parser.add_argument("--tasker", required=True)
    parser.add_argument("--empty-dynamic")
    parser.add_argument("--empty-static")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--show-id", default="50000")
    options = parser.parse_args()

    env = {
        "TASKER_HOME": os.path.join(options.home, "tasker"),
        "TASKKEY_HOME": os.path.join(options.home, "keys"),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }
    commands = [("`/bin/true`", ["/bin/true"])]
    if options.empty_dynamic:
        commands.append(("empty Swift main (dynamic runtime)", [options.empty_dynamic]))
    if options.empty_static:
        commands.append(("empty Swift main (static runtime)", [options.empty_static]))
    show = f"`tasker show {options.show_id}` (sealed note)"
    commands += [
        ("`tasker --version`", [options.tasker, "--version"]),
        (show, [options.tasker, "show", options.show_id]),
    ]
    listing = ("`tasker list` (10^5 tasks, 21 runs)", [options.tasker, "list"])
    times = {name: [] for name, _ in commands + [listing]}
    rounds = [(options.runs + 1, commands), (22, [listing])]
    for count, group in rounds:
        for round_index in range(count):
            for name, argv in group:
                start = time.perf_counter()
                result = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL)
                elapsed = time.perf_counter() - start
                if result.returncode != 0:
                    print(f"time_commands.py: {' '.join(argv)} exited {result.returncode}", file=sys.stderr)
                    return 1
                if round_index > 0:
                    times[name].append(elapsed)

    load = " ".join(open("/proc/loadavg").read().split()[:3])
    print(f"| whole command (median of {options.runs} rounds) | time |")
    print("| --- | --- |")
    for name, _ in commands + [listing]:
        print(f"| {name} | {statistics.median(times[name]) * 1000:.2f} ms |")
    show_ms = statistics.median(times[show]) * 1000
    verdict = "met" if show_ms < SHOW_GOAL_MS else "MISSED"
    print(f"\nshow < {SHOW_GOAL_MS:g} ms: {show_ms:.2f} ms {verdict}; {os.cpu_count()} CPUs, load average {load}")
    return 0 if show_ms < SHOW_GOAL_MS else 1


if __name__ == "__main__":
    sys.exit(main())
