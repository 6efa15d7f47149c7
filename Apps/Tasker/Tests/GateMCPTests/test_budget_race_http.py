"""Budgets hold across HTTP servers (issue 23, break 3): two real
`tasker mcp --http` servers on one database, each with several sessions of
one key, race their `add_task` calls; no trial lets the key act more often
than its budget."""

import http.client
import json
import threading
import time
import unittest

from harness import GateTestCase
from test_budget_race import BUDGET_STEP, TRIALS, ran

SERVERS = 2
CLIENTS_PER_SERVER = 3
CALLS_PER_CLIENT = 2
# 20 trials × 2 servers × 3 sessions × 2 calls: about 5 s (TRIALS from
# GATE_RACE_TRIALS, as the stdio race: `make gate-race` runs 100).
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


class Session:
    """One MCP session on one server, initialized."""

    def __init__(self, server, key):
        self.port = server.port
        self.headers = dict(HEADERS, Authorization=f"Bearer {key}")
        reply, headers = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "clientInfo": {"name": "race", "version": "1"}}})
        self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = reply["result"]["protocolVersion"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            connection.request("POST", "/mcp", body=json.dumps(message), headers=self.headers)
            response = connection.getresponse()
            body = response.read()
            headers = {name.lower(): value for name, value in response.getheaders()}
            return (json.loads(body) if body else None), headers
        finally:
            connection.close()

    def race(self, barrier, trial, results):
        barrier.wait()
        allowed = 0
        for n in range(CALLS_PER_CLIENT):
            reply, _ = self.post({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                                  "params": {"name": "add_task", "arguments": {"title": f"t{trial}-{n}"}}})
            if "result" in reply and not reply["result"].get("isError"):
                allowed += 1
            else:
                assert "budget" in reply["error"]["message"], reply
        results.append(allowed)


class HTTPBudgetRaceTests(GateTestCase):
    def test_two_http_servers_never_exceed_the_budget(self):
        key, key_id = self.home.mint("racer", grants=["tasks:write"])
        servers = [self.home.http_server() for _ in range(SERVERS)]
        sessions = [Session(server, key) for server in servers for _ in range(CLIENTS_PER_SERVER)]
        acted = []
        started = time.monotonic()
        for trial in range(TRIALS):
            self.home.tasker("gate", "budget", str(ran(self.home, key_id) + BUDGET_STEP), "--key", key_id)
            barrier = threading.Barrier(len(sessions))
            results = []
            threads = [threading.Thread(target=s.race, args=(barrier, trial, results)) for s in sessions]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            self.assertEqual(len(results), len(sessions), "every session answered every call")
            acted.append(sum(results))
        print(f"\n{TRIALS} trials, {SERVERS} servers x {CLIENTS_PER_SERVER} sessions x {CALLS_PER_CLIENT} calls, "
              f"budget room {BUDGET_STEP}: max {max(acted)} actions in a trial, {time.monotonic() - started:.1f} s; "
              f"acted {acted}", flush=True)
        self.assertEqual(max(acted) - BUDGET_STEP, 0, f"actions per trial: {acted}")
        self.assertEqual(acted, [BUDGET_STEP] * TRIALS)


if __name__ == "__main__":
    unittest.main()
