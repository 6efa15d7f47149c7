"""The head key kept in the gate's memory is used only while the vault
stays unlocked as it was when read: in one long-running `tasker mcp`
process, a receipt written after `taskkey lock` does not move
receipts.head, and one written after `taskkey unlock` does."""

import os
import unittest

from harness import GateTestCase
from test_budget_race import Gate


class HeadLockTests(GateTestCase):
    def head_id(self):
        with open(os.path.join(self.home.env["TASKER_HOME"], "receipts.head")) as handle:
            return int(handle.read().split(" ")[2])

    def test_a_receipt_after_lock_does_not_move_the_head_in_the_same_process(self):
        gate = Gate(self.home.env)
        try:
            for title in ["a", "b"]:
                self.assertFalse(gate.call("add_task", {"title": title})["result"]["isError"])
            self.assertEqual(self.head_id(), 2, "signed with the key read once and kept")
            self.home.lock()
            self.assertFalse(gate.call("add_task", {"title": "c"})["result"]["isError"], "no note: runs locked")
            self.assertEqual(self.head_id(), 2, "the kept key is not used once the vault was locked")
            self.home.unlock()
            self.assertFalse(gate.call("add_task", {"title": "d"})["result"]["isError"])
            self.assertEqual(self.head_id(), 4, "read again after unlock")
        finally:
            gate.close()


if __name__ == "__main__":
    unittest.main()
