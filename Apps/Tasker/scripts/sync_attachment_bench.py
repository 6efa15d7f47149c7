#!/usr/bin/env python3
"""Times a 1 GiB attachment through `tasker sync` over WebDAV beside curl.

    sync_attachment_bench.py --tasker BIN --taskkey BIN [--mib N]

The same Apache mod_dav on 127.0.0.1 as sync_bench.py (its Apache and
Device come from sync_bench_servers.py). Device A attaches a file of N MiB (1024 by
default) to a task and runs `tasker sync now`, which streams the blob
with one PUT while a second thread seals it; device B joins and runs
`tasker attach get ID --out FILE`, which streams the blob with one GET
through its checks into the kept file, then writes FILE. Floors, in the
same run: one curl PUT of the same blob bytes to another collection, one
curl GET of the blob to /dev/null, and one into a file then fsynced (what
keeping one copy durably costs; tasker keeps its copy and writes FILE,
two). Printed: each time beside its floor and the peak RSS (ru_maxrss) of
every tasker run. Exits 1 when a
run's peak RSS reaches 64 MiB (the issue's goal), when the content B
wrote differs from A's, or when a command fails. Not part of `make
test` (the Makefile's sync-bench runs it after sync_bench.py).
"""
import argparse
import hashlib
import json
import os
import shutil
import signal
import sys
import tempfile
import time

import sync_bench_servers as BENCH
RSS_GOAL_MIB = 64.0


def write_content(path, mib):
    """N MiB that do not compress, and their SHA-256."""
    digest = hashlib.sha256()
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
        for _ in range(mib):
            chunk = os.urandom(1 << 20)
            digest.update(chunk)
            file.write(chunk)
    return digest.hexdigest()


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def run(root, apache, tasker, taskkey, mib):
    figures = {}
    a = BENCH.Device(root, "a", tasker, taskkey, "alice")
    b = BENCH.Device(root, "b", tasker, taskkey, "bob")
    try:
        a.make_vault()
        a.run([tasker, "add", "owner"])
        url = apache.collection("attachments")
        a.set_up(url)
        source = f"{root}/content.bin"
        expected = write_content(source, mib)
        figures["add_ms"], figures["rss_add"] = a.timed([tasker, "attach", "add", "--task", "1", source])
        figures["sync_ms"], figures["rss_sync"] = a.timed([tasker, "sync", "now"])
        blobs = []
        for folder, _, names in os.walk(f"{apache.directory}/root/attachments/tasker-sync/a"):
            blobs += [f"{folder}/{name}" for name in names]
        if len(blobs) != 1:
            raise BENCH.Failure(f"expected one blob at the storage, found {blobs}")
        blob = blobs[0]
        figures["blob_bytes"] = os.path.getsize(blob)

        floor = apache.collection("attachments-floor")
        header = BENCH.curl_header("alice")
        figures["put_floor_ms"], codes = BENCH.curl_timed(
            header + [f'url = "{floor}/blob"', f'upload-file = "{blob}"', 'output = "/dev/null"'], root, "put")
        if codes != [201]:
            raise BENCH.Failure(f"curl PUT answered {codes}")
        relative = os.path.relpath(blob, f"{apache.directory}/root")
        figures["get_floor_ms"], codes = BENCH.curl_timed(
            BENCH.curl_header("bob") + [f'url = "http://127.0.0.1:{apache.port}/{relative}"', 'output = "/dev/null"'],
            root, "get")
        if codes != [200]:
            raise BENCH.Failure(f"curl GET answered {codes}")
        # And into a file made durable (fsync), as tasker keeps what it fetched and writes --out FILE.
        kept = f"{root}/floor-get.bin"
        ms, codes = BENCH.curl_timed(
            BENCH.curl_header("bob") + [f'url = "http://127.0.0.1:{apache.port}/{relative}"', f'output = "{kept}"'],
            root, "get-file")
        if codes != [200]:
            raise BENCH.Failure(f"curl GET answered {codes}")
        started = time.perf_counter()
        descriptor = os.open(kept, os.O_RDONLY)
        os.fsync(descriptor)
        os.close(descriptor)
        figures["get_file_floor_ms"] = ms + (time.perf_counter() - started) * 1000
        os.unlink(kept)

        b.make_vault()
        b.join_keys(a)
        b.set_up(url)
        b.run([tasker, "sync", "now"])
        listed = json.loads(b.run([tasker, "attach", "list", "--json"]))["attachments"]
        if len(listed) != 1 or not listed[0]["remote"]:
            raise BENCH.Failure(f"B lists {listed}")
        out = f"{root}/fetched.bin"
        figures["fetch_ms"], figures["rss_fetch"] = b.timed(
            [tasker, "attach", "get", listed[0]["id"], "--out", out])
        figures["same_content"] = sha256_of(out) == expected
        return figures
    finally:
        a.lock()
        b.lock()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasker", required=True)
    parser.add_argument("--taskkey", required=True)
    parser.add_argument("--mib", type=int, default=1024)
    options = parser.parse_args()
    tasker, taskkey = os.path.abspath(options.tasker), os.path.abspath(options.taskkey)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    root = tempfile.mkdtemp(prefix="tasker-attachment-bench-")
    os.chmod(root, 0o755)
    apache = None
    try:
        os.mkdir(f"{root}/apache", 0o755)
        apache = BENCH.Apache(f"{root}/apache")
        apache.start()
        figures = run(root, apache, tasker, taskkey, options.mib)
    except BENCH.Failure as failure:
        print(f"sync_attachment_bench: {failure}", file=sys.stderr)
        return 1
    finally:
        if apache is not None:
            apache.stop()
        shutil.rmtree(root, ignore_errors=True)
    mib = options.mib
    print(f"attachment of {mib} MiB, blob of {figures['blob_bytes']:,} bytes at the storage")
    print("| step | tasker | floor (curl, same bytes) | ratio | peak RSS |")
    print("| --- | --- | --- | --- | --- |")
    print(f"| attach add (local copy) | {figures['add_ms']:.0f} ms | | | {figures['rss_add'] / 1024:.1f} MiB |")
    print(f"| sync now (seal + PUT) | {figures['sync_ms']:.0f} ms | {figures['put_floor_ms']:.0f} ms | "
          f"{figures['sync_ms'] / figures['put_floor_ms']:.2f}x | {figures['rss_sync'] / 1024:.1f} MiB |")
    print(f"| attach get on B (GET + check + keep) | {figures['fetch_ms']:.0f} ms | {figures['get_floor_ms']:.0f} ms"
          f" | {figures['fetch_ms'] / figures['get_floor_ms']:.2f}x | {figures['rss_fetch'] / 1024:.1f} MiB |")
    print(f"| the same, beside curl's GET into a file, fsynced | {figures['fetch_ms']:.0f} ms | "
          f"{figures['get_file_floor_ms']:.0f} ms | {figures['fetch_ms'] / figures['get_file_floor_ms']:.2f}x | |")
    missed = [f"peak RSS of {name} {figures[key] / 1024:.1f} MiB" for name, key in
              (("attach add", "rss_add"), ("sync now", "rss_sync"), ("attach get", "rss_fetch"))
              if figures[key] / 1024 >= RSS_GOAL_MIB]
    if not figures["same_content"]:
        missed.append("the fetched content differs")
    for miss in missed:
        print(f"sync_attachment_bench: goal missed: {miss}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
