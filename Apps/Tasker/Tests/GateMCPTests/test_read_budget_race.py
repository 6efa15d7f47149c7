"""Read budgets hold across processes (issue 23): several real `tasker mcp`
stdio gates with one key race their `list_tasks` calls, and no trial lets
the key read more often than its read budget; the reads then show in
`tasker receipts` as aggregated `read` receipts that count every admitted
call, and the chain verifies. Few trials: each costs a handful of gates."""

import json
import threading
import unittest

from harness import GateTestCase
from test_budget_race import CALLS_PER_GATE, Gate

GATES = 4
READ_STEP = 5
TRIALS = 5


class ReadBudgetRaceTests(GateTestCase):
    def reads_today(self, key_id):
        shown = json.loads(self.home.tasker("gate", "show", "--json").stdout)
        return next(row for row in shown["keys"] if row["key_id"] == key_id)["reads_today"]

    def test_racing_gates_never_exceed_the_read_budget_and_reads_are_receipted(self):
        key, key_id = self.home.mint("reader")
        env = self.home.env_with_key(key)
        admitted = []
        for trial in range(TRIALS):
            self.home.tasker("gate", "read-budget", str(self.reads_today(key_id) + READ_STEP), "--key", key_id)
            gates = [Gate(env) for _ in range(GATES)]
            barrier = threading.Barrier(GATES)
            results, refusals = [], []
            threads = [threading.Thread(target=gate.race, args=(barrier, trial, results, "list_tasks", refusals))
                       for gate in gates]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=60)
            for gate in gates:
                gate.close()
            self.assertEqual(len(results), GATES, "every gate answered every call")
            self.assertTrue(all(e["code"] == -32001 and e["data"]["budget"] == "reads" for e in refusals), refusals)
            admitted.append(sum(results))
        print(f"\n{TRIALS} trials, {GATES} gates x {CALLS_PER_GATE} reads, room {READ_STEP}: admitted {admitted}",
              flush=True)
        self.assertEqual(admitted, [READ_STEP] * TRIALS, "the read budget is used up and never passed")
        receipts = json.loads(self.home.tasker("receipts", "--json", "--limit", "100000").stdout)["receipts"]
        reads = [r for r in receipts if r["decision"] == "read"]
        self.assertTrue(reads, "reads leave receipts")
        self.assertTrue(all(r["tool"] == "list_tasks" and r["key_id"] == key_id for r in reads))
        self.assertEqual(sum(int(r["target"].split("/")[1]) for r in reads), READ_STEP * TRIALS,
                         "the aggregated receipts count every admitted read")
        refused = [r for r in receipts if r["decision"] == "refuse:read-budget-exhausted"]
        self.assertTrue(refused, "refused reads leave receipts")
        verified = self.home.tasker("receipts", "--verify", "--json")
        self.assertEqual(json.loads(verified.stdout)["verification"]["outcome"], "intact")


if __name__ == "__main__":
    unittest.main()
