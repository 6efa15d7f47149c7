"""Read budgets hold across HTTP servers, which reserve reads in blocks
(SECURITY.md 8.6): two real `tasker mcp --http` servers on one database,
three sessions of one key on each, race their `list_tasks` calls against a
read budget of 37, in rounds of 60: no round passes the budget, every other
call is refused with the read budget's error, and the rounds use exactly 37.
Then, with room to spare, the blocks the servers
reserved and did not spend are given back by their timers once idle, so
the day's count is exactly the reads that ran; and a server stopped by
SIGTERM gives back what it reserved and did not spend."""

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

        # Rounds of 60 racing calls. A round may run fewer than the budget's
        # room: near the end, reads one server reserved and has not spent
        # refuse the other's until its sweep gives them back. Never more.
        total = 0
        for _ in range(10):
            ran, refusals = read_race(sessions, 10)
            self.assertEqual(ran + len(refusals), 60)
            self.assertTrue(all(e["code"] == -32001 and e["data"]["budget"] == "reads" for e in refusals), refusals)
            total += ran
            self.assertLessEqual(total, BUDGET, "no round passes the budget")
            self.assertEqual(self.settled_reads(key_id, total), total, "the count is the reads that ran")
            if total == BUDGET:
                break
        self.assertEqual(total, BUDGET, "the whole budget is used, and no more")

        # Room to spare: each server reserves blocks of 8 and more, spends
        # some, and gives the rest back once they sit idle.
        self.home.tasker("gate", "read-budget", "100000", "--key", key_id)
        ran, refusals = read_race(sessions, 5)
        self.assertEqual((ran, refusals), (30, []))
        self.assertEqual(self.settled_reads(key_id, BUDGET + 30), BUDGET + 30,
                         "unspent reads are given back: the count is the reads that ran")

    def test_a_server_stopped_by_sigterm_gives_back_its_unspent_reads(self):
        self.home.tasker("add", "a task to list")
        key, key_id = self.home.mint("reader")
        self.home.tasker("gate", "read-budget", "100000", "--key", key_id)
        server = self.home.http_server()
        session = Session(server, key)
        for n in range(5):
            reply, _ = session.post({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call",
                                     "params": {"name": "list_tasks", "arguments": {}}})
            self.assertFalse(reply["result"]["isError"], reply)
        # At once, before a sweep could give the block of 8 back.
        server.stop()
        self.assertEqual(server.process.returncode, 0, server.output[1])
        self.assertIn("tasker: stopped", server.output[1])
        self.assertEqual(self.reads_today(key_id), 5, "the 3 reads reserved and not spent were given back")


if __name__ == "__main__":
    unittest.main()
