"""Lock means locked (issue 23, break 5): a trusted stdio session (no key)
refuses every call that would read or seal a note on the next message
after `taskkey lock`, and serves them again after `taskkey unlock`."""

import unittest

from harness import GateTestCase
from test_budget_race import Gate

LOCKED = "the TaskKey vault is locked"


class LockTests(GateTestCase):
    def test_a_trusted_session_stops_reading_and_sealing_notes_once_the_vault_is_locked(self):
        gate = Gate(self.home.env)
        try:
            added = gate.call("add_task", {"title": "Call the bank", "notes": "mortgage 42"})
            task_id = added["result"]["structuredContent"]["task"]["id"]
            note = gate.call("read_note", {"id": task_id})
            self.assertEqual(note["result"]["structuredContent"]["notes"], "mortgage 42")
            self.home.lock()
            for name, arguments in [
                ("read_note", {"id": task_id}),
                ("show_task", {"id": task_id, "include_notes": True}),
                ("list_tasks", {"include_notes": True}),
                ("add_task", {"title": "sealed", "notes": "would be sealed"}),
                ("edit_task", {"ids": [task_id], "notes": "new"}),
                ("add_page", {"title": "p", "body": "body"}),
                ("delete_task", {"id": task_id}),
            ]:
                reply = gate.call(name, arguments)
                self.assertTrue(reply["result"]["isError"], (name, reply))
                self.assertIn(LOCKED, reply["result"]["content"][0]["text"], name)
            planning = gate.call("list_tasks", {})
            self.assertFalse(planning["result"]["isError"], "planning fields need no key")
            self.assertEqual(len(planning["result"]["structuredContent"]["tasks"]), 1, "nothing was changed")
            self.home.unlock()
            again = gate.call("read_note", {"id": task_id})
            self.assertEqual(again["result"]["structuredContent"]["notes"], "mortgage 42")
        finally:
            gate.close()


if __name__ == "__main__":
    unittest.main()
