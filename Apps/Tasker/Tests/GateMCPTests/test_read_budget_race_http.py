"""Read budgets hold across HTTP servers, which reserve reads in blocks
(SECURITY.md 8.6): two real `tasker mcp --http` servers on one database,
three sessions of one key on each, race their `list_tasks` calls against a
read budget of 37. Exactly 37 run and every other call is refused with the
read budget's error. Then, with room to spare, the blocks the servers
reserved and did not spend are given back by their timers once idle, so
the day's count is exactly the reads that ran."""

import json
import threading
import time
import unittest

from harness import GateTestCase
from test_budget_race_http import Session

SERVERS = 2
SESSIONS_PER_SERVER = 3
BUDGET = 37


def read_race(sessions, calls_per_session):
    """Every session calls list_tasks `calls_per_session` times at once; (ran, refusals)."""
    barrier = threading.Barrier(len(sessions))
    ran, refusals, lock = [], [], threading.Lock()

    def run(session, offset):
        barrier.wait()
        for n in range(calls_per_session):
            reply, _ = session.post({"jsonrpc": "2.0", "id": offset + n, "method": "tools/call",
                                     "params": {"name": "list_tasks", "arguments": {}}})
            with lock:
                if "result" in reply and not reply["result"].get("isError"):
                    ran.append(1)
                else:
                    refusals.append(reply["error"])

    threads = [threading.Thread(target=run, args=(s, 1000 * i)) for i, s in enumerate(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return len(ran), refusals


class HTTPReadBudgetRaceTests(GateTestCase):
    def reads_today(self, key_id):
        shown = json.loads(self.home.tasker("gate", "show", "--json").stdout)
        return next(row for row in shown["keys"] if row["key_id"] == key_id)["reads_today"]

    def settled_reads(self, key_id, expected):
        """The day's reads once the servers' sweeps (every 100 ms) gave back their idle blocks."""
        deadline = time.monotonic() + 5
        while True:
            seen = self.reads_today(key_id)
            if seen == expected or time.monotonic() > deadline:
                return seen
            time.sleep(0.1)

    def test_two_servers_run_exactly_the_read_budget_and_give_back_what_they_did_not_spend(self):
        self.home.tasker("add", "a task to list")
        key, key_id = self.home.mint("reader")
        self.home.tasker("gate", "read-budget", str(BUDGET), "--key", key_id)
        servers = [self.home.http_server() for _ in range(SERVERS)]
        sessions = [Session(server, key) for server in servers for _ in range(SESSIONS_PER_SERVER)]

        ran, refusals = read_race(sessions, 10)
        self.assertEqual(ran, BUDGET, "60 calls against a budget of 37")
        self.assertEqual(len(refusals), 60 - BUDGET)
        self.assertTrue(all(e["code"] == -32001 and e["data"]["budget"] == "reads" for e in refusals), refusals)
        self.assertEqual(self.settled_reads(key_id, BUDGET), BUDGET)

        # Room to spare: each server reserves blocks of 8 and more, spends
        # some, and gives the rest back once they sit idle.
        self.home.tasker("gate", "read-budget", "100000", "--key", key_id)
        ran, refusals = read_race(sessions, 5)
        self.assertEqual((ran, refusals), (30, []))
        self.assertEqual(self.settled_reads(key_id, BUDGET + 30), BUDGET + 30,
                         "unspent reads are given back: the count is the reads that ran")


if __name__ == "__main__":
    unittest.main()
