"""A key's budget follows it through `taskkey rotate --assistant` (issue
23, break 3): `tasker gate budget 1 --key OLD` still holds for the new key,
which has no setting of its own, instead of the default 100."""

import json
import unittest

from harness import GateTestCase
from test_budget_race import Gate


class BudgetRotationTests(GateTestCase):
    def test_the_budget_of_a_rotated_key_carries_over_to_the_new_key(self):
        _, old = self.home.mint("rotor", grants=["tasks:write"])
        self.home.tasker("gate", "budget", "1", "--key", old)
        rotated = json.loads(self.home.taskkey("rotate", "--assistant", "rotor", "--json").stdout)
        self.assertNotEqual(rotated["id"], old)
        gate = Gate(self.home.env_with_key(rotated["key"]))
        try:
            first = gate.call("add_task", {"title": "one"})
            self.assertFalse(first["result"]["isError"], first)
            second = gate.call("add_task", {"title": "two"})
            self.assertIn("error", second, "budget 1 carried over, not the default 100")
            self.assertIn("budget", second["error"]["message"])
        finally:
            gate.close()
        # The new key's own setting, once the user sets one, wins.
        self.home.tasker("gate", "budget", "3", "--key", rotated["id"])
        gate = Gate(self.home.env_with_key(rotated["key"]))
        try:
            self.assertFalse(gate.call("add_task", {"title": "three"})["result"]["isError"])
        finally:
            gate.close()

    def test_the_read_budget_of_a_rotated_key_carries_over_too(self):
        _, old = self.home.mint("reader")
        self.home.tasker("gate", "read-budget", "1", "--key", old)
        rotated = json.loads(self.home.taskkey("rotate", "--assistant", "reader", "--json").stdout)
        gate = Gate(self.home.env_with_key(rotated["key"]))
        try:
            self.assertFalse(gate.call("list_tasks", {})["result"]["isError"])
            second = gate.call("list_tasks", {})
            self.assertEqual(second["error"]["code"], -32001, "read budget 1 carried over, not the default 2000")
            self.assertEqual(second["error"]["data"], {"budget": "reads", "limit": 1})
        finally:
            gate.close()
        shown = json.loads(self.home.tasker("gate", "show", "--json").stdout)
        row = next(row for row in shown["keys"] if row["key_id"] == rotated["id"])
        self.assertEqual((row["read_budget"], row["reads_today"]), (1, 1))

    def test_another_assistant_s_budget_does_not_carry_over(self):
        _, other = self.home.mint("other", grants=["tasks:write"])
        self.home.tasker("gate", "budget", "0", "--key", other)
        key, _ = self.home.mint("fresh", grants=["tasks:write"])
        gate = Gate(self.home.env_with_key(key))
        try:
            self.assertFalse(gate.call("add_task", {"title": "mine"})["result"]["isError"])
        finally:
            gate.close()


if __name__ == "__main__":
    unittest.main()
