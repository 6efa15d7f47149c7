#!/usr/bin/env python3
"""Times `tasker sync` over WebDAV with 10^4 tasks beside curl's floors.

    sync_bench.py --tasker BIN --taskkey BIN [--rounds N] [--tasks N]

Starts Debian's Apache with mod_dav on 127.0.0.1 (plain HTTP, Basic
authentication from an htpasswd file made with bcrypt, as the WebDAV tests
do; sync_bench_servers.py), in its own process group, stopped with the
group whatever happens.
Its access log records, per request, the method, the path, the status,
the bytes received and sent on the connection (mod_logio's %I and %O,
headers included), the connection's keep-alive count, when it began and
how long it took, so the bytes and requests below are counted at the
server, and each tasker run's time splits into serving its requests and
the client's work between them (printed after the table).

Each round makes fresh homes and vaults (the fast test KDF) and fresh
collections, then:

1. device A: one task through `tasker add` (so Tasker makes the schema),
   9,999 more with SQLite's shell in one statement, each with a 1 KiB
   note; `sync setup` (not timed), then the first `tasker sync now`. Floor:
   one curl process PUTting the object files that sync left at the storage
   to a fresh collection on the same server (its folders made beforehand),
   one PUT per object, the same number of PUTs (tasker's few MKCOL,
   PROPFIND and GET requests are counted in its own time); curl reads them
   from a --config file of url and upload-file pairs, so it keeps one
   connection alive;
2. device B (its own vault, the keys through `taskkey sync export` and
   `taskkey sync import`, as the end-to-end tests join): `sync setup`,
   then its first `tasker sync now`, which pulls everything. Floor: one
   curl process GETting the same objects, one GET each, to /dev/null;
3. one task edited on A and `tasker sync now`, beside the same on device C
   whose home holds 10 tasks;
4. the peak resident set (ru_maxrss from wait4) of every tasker run,
   and of A's `tasker sync compact` at the end of the round (its fold
   writes every record again, as a sync does by itself after 512
   objects; last, so that nothing above reads a folded log);
5. the bytes the server received and sent during A's first sync and B's
   pull, beside the total size of the objects moved;
6. for context (no goal): SQLite's shell writing, into a copy of the
   database as it was before, the rows that A's first sync wrote (its
   states, and the objects as outbox rows, in one transaction, then the
   outbox emptied in a second) and the rows that B's pull wrote (every
   task and every state, in one transaction; and only the tasks, into
   an emptied copy, row 2c), with the settings a sync
   runs with (WAL, synchronous FULL, the same page cache); rows 1b and 2b
   set tasker beside curl's time and the shell's together, what any
   client that keeps the data in SQLite must at least spend.

The table gives the median of N rounds after one warm-up round (peak RSS:
the largest of those rounds). Exits 1 when a goal is missed (each is
named): first sync and pull within 2x their floors, one change with 10^4
tasks within 1.5x of one with 10, every tasker run under 64 MiB, the bytes
on the wire at most 1.3x the objects; or when a command fails.
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from sync_bench_servers import Apache, Device, Failure, curl_header, curl_timed

TASKS = 10_000
SMALL_TASKS = 10
# TaskStore.syncCacheKiB: the page cache a sync runs with.
SYNC_CACHE_KIB = 8192
GOALS = {"upload": 2.0, "pull": 2.0, "change": 1.5, "wire": 1.3, "rss_mib": 64.0}


def database_copy(device, path):
    """A copy of `device`'s database as it stands, its log folded in first (a file the shell can write to)."""
    database = f"{device.root}/tasker/tasker.db"
    subprocess.run(["sqlite3", "-batch", database, "PRAGMA wal_checkpoint(TRUNCATE)"], check=True,
                   capture_output=True)
    shutil.copyfile(database, path)
    return path


def sqlite_timed(database, script):
    """Wall ms of one sqlite3 shell running `script` on `database`, with the settings a sync runs with
    (WAL, synchronous FULL, the same page cache, temporary data in memory)."""
    prelude = f"PRAGMA synchronous = FULL; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -{SYNC_CACHE_KIB};\n"
    start = time.perf_counter()
    result = subprocess.run(["sqlite3", "-batch", "-bail", database], input=(prelude + script).encode(),
                            capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        raise Failure(f"sqlite3 {database} exited {result.returncode}: {result.stderr.decode()}")
    return elapsed


def sqlite_literal(text):
    return "'" + text.replace("'", "''") + "'"


def objects(entries, method, status, collection):
    """The object paths (…/tasker-sync/d/<device>/<seq>) among `entries` with `method` and `status`."""
    prefix = f"/{collection}/tasker-sync/d/"
    return [path for verb, path, code, *_ in entries
            if verb == method and code == status and path.startswith(prefix) and not path.endswith("/")]


def census(entries):
    """`PUT 6, PROPFIND 3, … on 2 connections`: the requests of one command by method, and the
    connections they came on (a request with a keep-alive count of 0 opened one)."""
    counts = {}
    for method, *_ in entries:
        counts[method] = counts.get(method, 0) + 1
    methods = ", ".join(f"{method} {count}" for method, count in sorted(counts.items(), key=lambda item: -item[1]))
    return f"{methods} on {sum(1 for entry in entries if entry[5] == 0)} connection(s)"


def wire(entries):
    """The bytes the server received and sent for `entries`, headers included."""
    return sum(received + sent for _, _, _, received, sent, *_ in entries)


def timeline(entries, started, elapsed):
    """Where a command's `elapsed` ms went as the server saw it: before its first request, serving
    its requests, the longest wait between two of them (the client working), after the last."""
    begins = [entry[6] / 1000 - started * 1000 for entry in entries]
    ends = [begin + entry[7] / 1000 for begin, entry in zip(begins, entries)]
    gaps = [(begins[i + 1] - ends[i], entries[i + 1]) for i in range(len(entries) - 1)]
    gap, before = max(gaps)
    return (f"{begins[0]:.0f} ms before the first request, {sum(entry[7] for entry in entries) / 1000:.0f} ms "
            f"serving {len(entries)} requests, {sum(wait for wait, _ in gaps):.0f} ms between them, the longest "
            f"{gap:.0f} ms (before {before[0]} "
            f"…/{os.path.basename(before[1].rstrip('/'))}), {elapsed - ends[-1]:.0f} ms after the last")


def one_round(number, root, apache, tasker, taskkey):
    """Every figure of one round, with fresh homes and collections."""
    figures = {}
    work = f"{root}/round-{number}"
    os.mkdir(work, 0o700)
    devices = []
    try:
        a = Device(work, "a", tasker, taskkey, "alice")
        devices.append(a)
        a.make_vault()
        a.fill(TASKS)
        url = apache.collection(f"r{number}")
        a.set_up(url)

        # 1. The first sync of 10^4 tasks, beside curl PUTting the same objects.
        a_before = database_copy(a, f"{work}/a-before.db")
        mark = apache.log_mark()
        figures["upload_ms"], figures["rss_upload"] = a.timed([tasker, "sync", "now"])
        entries = apache.requests_since(mark)
        sent = objects(entries, "PUT", 201, f"r{number}")
        if not sent:
            raise Failure(f"the first sync PUT no object: {census(entries)}")
        files = [f"{apache.directory}/root{path}" for path in sent]
        figures["objects"] = len(sent)
        figures["object_bytes"] = sum(os.path.getsize(file) for file in files)
        figures["upload_wire"] = wire(entries)
        figures["upload_requests"] = census(entries)
        figures["upload_timeline"] = timeline(entries, a.started, figures["upload_ms"])
        floor_url = apache.collection(f"r{number}-floor")
        device_folder = os.path.dirname(sent[0]).removeprefix(f"/r{number}/")
        # The floor PUTs into folders made beforehand, as tasker's were by `sync setup` and its MKCOLs.
        for part in ["tasker-sync", "tasker-sync/d", device_folder]:
            folder = f"{apache.directory}/root/r{number}-floor/{part}"
            os.makedirs(folder, 0o755, exist_ok=True)
            apache.own(folder)
        lines = curl_header("alice")
        for path, file in zip(sent, files):
            lines += [f'url = "{floor_url}/{device_folder}/{os.path.basename(path)}"', f'upload-file = "{file}"',
                      'output = "/dev/null"']
        mark = apache.log_mark()
        figures["upload_floor_ms"], codes = curl_timed(lines, work, "put")
        floor_entries = apache.requests_since(mark)
        if codes != [201] * len(sent):
            raise Failure(f"the curl PUTs answered {codes}")
        figures["upload_floor_wire"] = wire(floor_entries)
        figures["upload_floor_requests"] = census(floor_entries)
        # The database floor: SQLite's shell writing what that sync wrote, in as many transactions (the
        # states and the outbox with the objects, then the outbox emptied once they are uploaded).
        a_after = database_copy(a, f"{work}/a-after.db")
        outbox = "".join(f"INSERT INTO main.sync_outbox (seq, object) VALUES "
                         f"({int(os.path.basename(path), 16)}, readfile({sqlite_literal(file)}));\n"
                         for path, file in zip(sent, files))
        figures["upload_sqlite_ms"] = sqlite_timed(a_before, f"""ATTACH {sqlite_literal(a_after)} AS s;
            BEGIN IMMEDIATE; INSERT INTO main.sync_records SELECT * FROM s.sync_records;
            {outbox} DELETE FROM main.sync_dirty; COMMIT;
            BEGIN IMMEDIATE; DELETE FROM main.sync_outbox; COMMIT;""")

        # 3. One change with 10^4 tasks.
        a.run([tasker, "edit", "1", "--priority", "low"])
        figures["change_ms"], figures["rss_change"] = a.timed([tasker, "sync", "now"])

        # 2. A fresh device pulls everything, beside curl GETting the same objects.
        b = Device(work, "b", tasker, taskkey, "bob")
        devices.append(b)
        b.make_vault()
        b.join_keys(a)
        b.set_up(url)
        b_before = database_copy(b, f"{work}/b-before.db")
        mark = apache.log_mark()
        figures["pull_ms"], figures["rss_pull"] = b.timed([tasker, "sync", "now"])
        entries = apache.requests_since(mark)
        fetched = objects(entries, "GET", 200, f"r{number}")
        figures["pulled"] = len(fetched)
        figures["pulled_bytes"] = sum(os.path.getsize(f"{apache.directory}/root{path}") for path in fetched)
        figures["pull_wire"] = wire(entries)
        figures["pull_requests"] = census(entries)
        figures["pull_timeline"] = timeline(entries, b.started, figures["pull_ms"])
        count = b.run(["sqlite3", "-batch", f"{b.root}/tasker/tasker.db", "SELECT count(*) FROM tasks"])
        if int(count) != TASKS:
            raise Failure(f"device b holds {int(count)} tasks after its pull, not {TASKS}")
        lines = curl_header("bob")
        for path in fetched:
            lines += [f'url = "http://127.0.0.1:{apache.port}{path}"', 'output = "/dev/null"']
        mark = apache.log_mark()
        figures["pull_floor_ms"], codes = curl_timed(lines, work, "get")
        floor_entries = apache.requests_since(mark)
        if codes != [200] * len(fetched):
            raise Failure(f"the curl GETs answered {codes}")
        figures["pull_floor_wire"] = wire(floor_entries)
        figures["pull_floor_requests"] = census(floor_entries)
        # The database floor: SQLite's shell writing the rows the pull wrote (every task with its sealed
        # note, every state) in one transaction.
        b_after = database_copy(b, f"{work}/b-after.db")
        figures["pull_sqlite_ms"] = sqlite_timed(b_before, f"""ATTACH {sqlite_literal(b_after)} AS s;
            BEGIN IMMEDIATE; INSERT INTO main.tasks SELECT * FROM s.tasks;
            INSERT INTO main.sync_records SELECT * FROM s.sync_records; DELETE FROM main.sync_dirty; COMMIT;""")
        # And only the tasks, as any client that keeps the pulled tasks in SQLite must write them.
        b_tasks = database_copy(b, f"{work}/b-tasks.db")
        subprocess.run(["sqlite3", "-batch", b_tasks, "DELETE FROM tasks; DELETE FROM sync_records; "
                        "DELETE FROM sync_dirty; VACUUM"], check=True, capture_output=True)
        figures["pull_tasks_sqlite_ms"] = sqlite_timed(b_tasks, f"""ATTACH {sqlite_literal(b_after)} AS s;
            BEGIN IMMEDIATE; INSERT INTO main.tasks SELECT * FROM s.tasks; DELETE FROM main.sync_dirty; COMMIT;""")

        # 3. The same one change with 10 tasks.
        c = Device(work, "c", tasker, taskkey, "carol")
        devices.append(c)
        c.make_vault()
        c.fill(SMALL_TASKS)
        c.set_up(apache.collection(f"r{number}-small"))
        figures["small_first_ms"], figures["rss_small_first"] = c.timed([tasker, "sync", "now"])
        c.run([tasker, "edit", "1", "--priority", "low"])
        figures["small_change_ms"], figures["rss_small_change"] = c.timed([tasker, "sync", "now"])

        # 4. A's compaction (last, so that no figure above reads a folded log): the fold writes every
        # record again, as a sync does by itself after 512 objects.
        figures["compact_ms"], figures["rss_compact"] = a.timed([tasker, "sync", "compact"])
        return figures
    finally:
        for device in devices:
            device.lock()
        shutil.rmtree(work, ignore_errors=True)


def report(rounds):
    """Prints the table; returns the goals missed."""
    median = lambda name: statistics.median(figures[name] for figures in rounds)
    peak = lambda name: max(figures[name] for figures in rounds) / 1024
    last = rounds[-1]
    upload, upload_floor = median("upload_ms"), median("upload_floor_ms")
    pull, pull_floor = median("pull_ms"), median("pull_floor_ms")
    change, small_change = median("change_ms"), median("small_change_ms")
    payload, pulled = median("object_bytes"), median("pulled_bytes")
    upload_wire, pull_wire = median("upload_wire"), median("pull_wire")
    print(f"{TASKS} tasks with 1 KiB notes, WebDAV (Apache mod_dav, http on 127.0.0.1, Basic), "
          f"{len(rounds)} rounds after one warm-up, medians:\n")
    print("| figure | tasker | floor | ratio | goal |")
    print("|---|---|---|---|---|")
    print(f"| 1. first `sync now`, {last['objects']} objects, {payload / 2**20:.2f} MiB "
          f"| {upload:.0f} ms | {upload_floor:.0f} ms (one curl --config, {last['objects']} PUTs) "
          f"| {upload / upload_floor:.2f}x | ≤ {GOALS['upload']}x |")
    print(f"| 2. fresh device's first `sync now` (pull), {last['pulled']} objects, {pulled / 2**20:.2f} MiB "
          f"| {pull:.0f} ms | {pull_floor:.0f} ms (one curl --config, {last['pulled']} GETs) "
          f"| {pull / pull_floor:.2f}x | ≤ {GOALS['pull']}x |")
    print(f"| 3. `sync now` after one edit, {TASKS} tasks vs {SMALL_TASKS} | {change:.0f} ms | {small_change:.0f} ms "
          f"| {change / small_change:.2f}x | ≤ {GOALS['change']}x |")
    print(f"| 5. bytes the server received + sent, first sync | {upload_wire:,.0f} B | {payload:,.0f} B of objects "
          f"(curl's PUTs: {median('upload_floor_wire'):,.0f} B) | {upload_wire / payload:.3f}x | ≤ {GOALS['wire']}x |")
    print(f"| 5. bytes the server received + sent, pull | {pull_wire:,.0f} B | {pulled:,.0f} B of objects "
          f"(curl's GETs: {median('pull_floor_wire'):,.0f} B) | {pull_wire / pulled:.3f}x | ≤ {GOALS['wire']}x |")
    upload_sqlite, pull_sqlite = median("upload_sqlite_ms"), median("pull_sqlite_ms")
    print(f"| 1b. the same, beside curl's PUTs and SQLite's shell writing that sync's rows "
          f"({upload_sqlite:.0f} ms) | {upload:.0f} ms | {upload_floor + upload_sqlite:.0f} ms "
          f"| {upload / (upload_floor + upload_sqlite):.2f}x | (context) |")
    print(f"| 2b. the same, beside curl's GETs and SQLite's shell writing the pulled rows "
          f"({pull_sqlite:.0f} ms) | {pull:.0f} ms | {pull_floor + pull_sqlite:.0f} ms "
          f"| {pull / (pull_floor + pull_sqlite):.2f}x | (context) |")
    print(f"| 2c. SQLite's shell writing only the pulled tasks, their sealed notes included | "
          f"{median('pull_tasks_sqlite_ms'):.0f} ms | {pull_floor:.0f} ms (curl's GETs) "
          f"| {median('pull_tasks_sqlite_ms') / pull_floor:.2f}x | (context) |")
    runs = [(f"first sync, {TASKS}", "rss_upload"), (f"one change, {TASKS}", "rss_change"),
            (f"pull, {TASKS}", "rss_pull"), (f"`sync compact` (the fold), {TASKS}", "rss_compact"),
            ("first sync, 10", "rss_small_first"), ("one change, 10", "rss_small_change")]
    for label, name in runs:
        print(f"| 4. peak RSS, {label} | {peak(name):.1f} MiB | | | < {GOALS['rss_mib']:.0f} MiB |")
    print(f"\nRequests at the server, last round: first sync {last['upload_requests']}, "
          f"curl {last['upload_floor_requests']}; pull {last['pull_requests']}, curl {last['pull_floor_requests']}.")
    print(f"Timeline of the last round's first sync: {last['upload_timeline']}.")
    print(f"Timeline of the last round's pull: {last['pull_timeline']}.")
    print(f"First sync of {SMALL_TASKS} tasks: {median('small_first_ms'):.0f} ms.")
    missed = []
    if upload > GOALS["upload"] * upload_floor:
        missed.append(f"first sync {upload:.0f} ms is {upload / upload_floor:.2f}x curl's {upload_floor:.0f} ms "
                      f"(goal {GOALS['upload']}x)")
    if pull > GOALS["pull"] * pull_floor:
        missed.append(f"pull {pull:.0f} ms is {pull / pull_floor:.2f}x curl's {pull_floor:.0f} ms "
                      f"(goal {GOALS['pull']}x)")
    if change > GOALS["change"] * small_change:
        missed.append(f"one change with {TASKS} tasks {change:.0f} ms is {change / small_change:.2f}x "
                      f"the {small_change:.0f} ms with {SMALL_TASKS} (goal {GOALS['change']}x)")
    for label, name in runs:
        if peak(name) >= GOALS["rss_mib"]:
            missed.append(f"peak RSS of {label} is {peak(name):.1f} MiB (goal under {GOALS['rss_mib']:.0f} MiB)")
    if upload_wire > GOALS["wire"] * payload:
        missed.append(f"first sync moved {upload_wire / payload:.3f}x its objects' bytes (goal {GOALS['wire']}x)")
    if pull_wire > GOALS["wire"] * pulled:
        missed.append(f"pull moved {pull_wire / pulled:.3f}x its objects' bytes (goal {GOALS['wire']}x)")
    return missed


def main() -> int:
    global TASKS
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasker", required=True)
    parser.add_argument("--taskkey", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=TASKS,
                        help="tasks on device A (10^4 for the goals; more shows whether peak RSS stays flat)")
    options = parser.parse_args()
    TASKS = options.tasks
    tasker, taskkey = os.path.abspath(options.tasker), os.path.abspath(options.taskkey)
    for binary in [tasker, taskkey, shutil.which("curl"), shutil.which("sqlite3"), shutil.which("htpasswd")]:
        if binary is None or not os.access(binary, os.X_OK):
            print(f"sync_bench: {binary or 'curl, sqlite3 or htpasswd'} is not an executable "
                  "(make deps test-servers)", file=sys.stderr)
            return 1
    # A SIGTERM (make interrupted) unwinds through the finally blocks below.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    root = tempfile.mkdtemp(prefix="tasker-sync-bench-")
    os.chmod(root, 0o755)  # Apache's children (nobody) reach the DAV root through it
    apache = None
    try:
        os.mkdir(f"{root}/apache", 0o755)
        apache = Apache(f"{root}/apache")
        apache.start()
        rounds = []
        for number in range(options.rounds + 1):
            figures = one_round(number, root, apache, tasker, taskkey)
            if number > 0:
                rounds.append(figures)
        missed = report(rounds)
    except Failure as failure:
        print(f"sync_bench: {failure}", file=sys.stderr)
        return 1
    finally:
        if apache is not None:
            apache.stop()
        shutil.rmtree(root, ignore_errors=True)
    for miss in missed:
        print(f"sync_bench: goal missed: {miss}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
