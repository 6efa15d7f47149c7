#!/usr/bin/env python3
"""Times `tasker plan --dry-run` over 10^4 open tasks beside its floors.

    plan_bench.py --tasker BIN --taskkey BIN [--runs N]

Makes a fresh home and vault (the fast test KDF) in a temporary directory,
one task through `tasker add` (so Tasker makes the schema), then 9,999
more with SQLite's own shell in one statement, each with a 1 KiB note that
the plan context never reads, and a provider on 127.0.0.1 that is never
contacted (a dry run sends nothing). Each round runs every command once in
turn, standard output to /dev/null; the table gives the median and the
peak resident set (ru_maxrss from wait4) of N rounds after one warm-up.

Floors, the same run: `tasker --version` (starting the process) and the
sqlite3 shell running the plan context's own query with the same LIMIT.
Exits 1 when the 10^4-candidate dry run misses its goal (< 100 ms) or a
command fails.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_MS = 100.0
TASKS = 10_000
QUERY = ("SELECT title, estimate_minutes, due, priority, energy, id FROM tasks WHERE status = 'open' "
         "ORDER BY due IS NULL, due, priority DESC, id LIMIT {limit}")


def timed(command, environment):
    """Wall milliseconds and peak RSS (KiB) of one run."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = (time.perf_counter() - start) * 1000
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        sys.exit(f"plan_bench: {' '.join(command)} exited {process.returncode}: {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss


def setup(root, tasker, taskkey):
    environment = {"PATH": "/usr/bin:/bin", "TASKER_HOME": f"{root}/tasker", "TASKKEY_HOME": f"{root}/keys",
                   "LANG": "C.UTF-8"}
    passphrase = f"{root}/pass"
    with open(os.open(passphrase, os.O_WRONLY | os.O_CREAT, 0o600), "w") as file:
        file.write("bench passphrase for planning\n")
    run = lambda command, **extra: subprocess.run(command, env=environment, check=True, capture_output=True, **extra)
    run([taskkey, "init", "--kdf", "fast-test-only", "--passphrase-file", passphrase])
    run([tasker, "add", "seed task", "--due", "2026-12-01", "--estimate", "30", "--priority", "high"])
    run(["sqlite3", "-batch", f"{root}/tasker/tasker.db", f"""
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {TASKS - 1})
        INSERT INTO tasks (title, notes, due, estimate_minutes, priority, energy, status, created_at, contexts)
        SELECT 'task ' || i || ' with a title of ordinary length', hex(zeroblob(512)),
          CASE WHEN i % 3 = 0 THEN NULL ELSE date('2026-11-01', '+' || (i % 90) || ' days') END,
          CASE WHEN i % 4 = 0 THEN NULL ELSE (i % 12) * 10 END, i % 4,
          CASE WHEN i % 5 = 0 THEN NULL ELSE 1 + i % 3 END, 'open', 1764547200, '@home'
        FROM n;"""])
    run([tasker, "provider", "add", "local", "--url", "http://127.0.0.1:9/v1", "--model", "bench"])
    return environment


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasker", required=True)
    parser.add_argument("--taskkey", required=True)
    parser.add_argument("--runs", type=int, default=21)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tasker-plan-bench-") as root:
        environment = setup(root, options.tasker, options.taskkey)
        database = f"{root}/tasker/tasker.db"
        rows = [
            ("`tasker --version` (process start floor)", [options.tasker, "--version"]),
            ("`tasker plan --dry-run --limit 1`", [options.tasker, "plan", "--dry-run", "--limit", "1"]),
            ("`tasker plan --dry-run` (200 candidates)", [options.tasker, "plan", "--dry-run"]),
            ("`tasker plan --dry-run --limit 1000`", [options.tasker, "plan", "--dry-run", "--limit", "1000"]),
            ("`tasker plan --dry-run --limit 10000` (every task)",
             [options.tasker, "plan", "--dry-run", "--limit", str(TASKS)]),
            ("`sqlite3` shell, the same query, LIMIT 200 (floor)",
             ["sqlite3", "-batch", database, QUERY.format(limit=200)]),
            ("`sqlite3` shell, the same query, LIMIT 10000 (floor)",
             ["sqlite3", "-batch", database, QUERY.format(limit=TASKS)]),
        ]
        samples = {name: [] for name, _ in rows}
        peaks = {name: 0 for name, _ in rows}
        for round_number in range(options.runs + 1):
            for name, command in rows:
                elapsed, peak = timed(command, environment)
                if round_number > 0:
                    samples[name].append(elapsed)
                    peaks[name] = max(peaks[name], peak)
        print(f"{TASKS} open tasks, {options.runs} rounds after one warm-up, medians:\n")
        print("| command | median | peak RSS |")
        print("|---|---|---|")
        for name, _ in rows:
            print(f"| {name} | {statistics.median(samples[name]):.1f} ms | {peaks[name] / 1024:.1f} MiB |")
        every = statistics.median(samples[rows[4][0]])
        if every >= GOAL_MS:
            print(f"plan_bench: the dry run over {TASKS} candidates took {every:.1f} ms, over the {GOAL_MS:.0f} ms goal")
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
