"""A bounded load test of `tasker mcp --http` on 127.0.0.1 (make gate-load):
5,000 tools/call requests from 16 concurrent keep-alive clients, each its
own MCP session with its own assistant key checked on every request.
Reports p50/p99 latency, errors and the server's open descriptors before
and after, then runs tasker-gate-bench for the per-request key check cost."""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

import httpx2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import GateHome  # noqa: E402

CLIENTS = 16
CALLS = 5_000
CALL = {"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "list_tasks", "arguments": {"limit": 20}}}


def client(url, key, count, latencies, errors):
    headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
    with httpx2.Client(headers=headers, timeout=30) as http:
        opened = http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                      "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
        headers = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        for number in range(1, count + 1):
            started = time.perf_counter()
            response = http.post(url, headers=headers, json={**CALL, "id": number})
            latencies.append(time.perf_counter() - started)
            body = response.json() if response.status_code == 200 else {}
            if response.status_code != 200 or "error" in body or body["result"]["isError"]:
                errors.append(response.status_code)


def main():
    home = GateHome()
    try:
        for index in range(20):
            home.tasker("add", f"Task {index}", "--due", "2026-12-24")
        keys = [home.mint(f"load{index}", grants=["tasks:write"])[0] for index in range(CLIENTS)]
        server = home.http_server()
        client(server.url, keys[0], 10, [], [])  # warm up: the registry and database are opened once
        time.sleep(0.5)
        before = server.open_descriptors()
        latencies, errors, threads = [], [], []
        started = time.perf_counter()
        for index in range(CLIENTS):
            count = CALLS // CLIENTS + (1 if index < CALLS % CLIENTS else 0)
            thread = threading.Thread(target=client, args=(server.url, keys[index], count, latencies, errors))
            threads.append(thread)
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        time.sleep(1.0)
        after = server.open_descriptors()
        latencies.sort()
        p50 = statistics.median(latencies) * 1000
        p99 = latencies[int(len(latencies) * 0.99) - 1] * 1000
        print(f"calls: {len(latencies)} from {CLIENTS} clients in {elapsed:.2f} s ({len(latencies) / elapsed:.0f}/s)")
        print(f"latency: p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {latencies[-1] * 1000:.2f} ms")
        print(f"errors: {len(errors)}")
        print(f"server descriptors: {before} before, {after} after ({after - before} leaked)")
        bench = subprocess.run([os.environ["BENCH_BIN"]], input=keys[0] + "\n", env=home.env, capture_output=True,
                               text=True, timeout=600)
        print(bench.stdout, end="")
        server.stop()
        failed = len(latencies) != CALLS or errors or after != before or bench.returncode != 0
        if failed:
            print(f"gate-load: FAILED {bench.stderr}", file=sys.stderr)
        return 1 if failed else 0
    finally:
        home.close()


if __name__ == "__main__":
    sys.exit(main())
