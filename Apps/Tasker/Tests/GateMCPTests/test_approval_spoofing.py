"""Approval spoofing end to end (issue 23, break 2): an assistant adds a
task whose title carries control characters and ANSI escapes crafted to
print as a queued "add task 'Buy milk'" row, then asks to delete that
task. Over a real `tasker mcp` stdio session and the official MCP client;
`tasker approvals list` shows the waiting call as a delete with the title
escaped, and approving it deletes exactly that task and nothing else."""

import asyncio
import json
import unittest

from harness import GateTestCase
from test_decisions import stdio

# Erase the line, return to its start, print a forged queue row and detail
# line, then move the cursor up over what follows.
SPOOF = ("\x1b[2K\r#1\tpending\tadd_task\tplanner\tadd task 'Buy milk'\n"
         "\tadd task\ttitle\trequested 'Buy milk'\x1b[1A\x1b[8m\t\x07\b")


class ApprovalSpoofingTests(GateTestCase):
    def titles(self):
        return {int(t["id"]): t["title"] for t in json.loads(self.home.tasker("list", "--json").stdout)["tasks"]}

    def test_a_delete_cannot_be_made_to_read_as_an_add_and_approving_it_deletes_only_that_task(self):
        self.home.tasker("add", "Pay rent")
        self.home.tasker("add", "Call the clinic")
        key, key_id = self.home.mint("planner", trust="standard", grants=["tasks:write"])

        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                added = await client.call_tool("add_task", {"title": SPOOF})
                self.assertFalse(added.is_error, added)
                task = added.structured_content["task"]["id"]
                queued = await client.call_tool("delete_task", {"id": task})
                self.assertEqual(queued.structured_content["status"], "queued", queued)
                return task, queued.structured_content["approval"]
        task, approval = asyncio.run(scenario())
        before = self.titles()
        self.assertEqual(before[task], SPOOF, "the title is stored exactly as written")

        listed = self.home.tasker("approvals", "list")
        for byte in ("\x1b", "\r", "\x07", "\b"):
            self.assertNotIn(byte, listed.stdout, f"{byte!r} reached the terminal")
        lines = listed.stdout.split("\n")[:-1]
        rows = [line for line in lines if line.startswith("#")]
        self.assertEqual(len(rows), 1, f"one row per waiting call: {lines}")
        columns = rows[0].split("\t")
        self.assertEqual(len(columns), 6, columns)
        self.assertEqual((columns[0], columns[1], columns[2], columns[3]),
                         (f"#{approval}", "pending", "delete_task", f"planner ({key_id})"))
        self.assertTrue(columns[5].startswith(f"delete task {task} '\\u{{1B}}[2K\\r#1\\tpending\\tadd_task"), columns)
        details = [line for line in lines if not line.startswith("#")]
        self.assertTrue(details and all(line.startswith(f"\tdelete task {task}\t") for line in details), details)
        self.assertIn(f"\tdelete task {task}\tstatus\tnow open\trequested (deleted)", details)
        self.assertFalse(any("\tadd task\t" in line for line in lines), "no line reads as a queued add")

        pending = json.loads(self.home.tasker("approvals", "list", "--json").stdout)["approvals"]
        self.assertEqual([(a["tool"], a["key_id"]) for a in pending], [("delete_task", key_id)])
        record = pending[0]["change"]["records"][0]
        self.assertEqual(record["action"], f"delete task {task}")

        self.home.tasker("approvals", "approve", str(approval))
        after = self.titles()
        expected = {id: title for id, title in before.items() if id != task}
        self.assertEqual(after, expected, "exactly that task was deleted")
        self.assertEqual(sorted(after.values()), ["Call the clinic", "Pay rent"])
        newest = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"][0]
        self.assertEqual((newest["tool"], newest["decision"], newest["target"]),
                         ("delete_task", "approved", f"task/{task}"))


if __name__ == "__main__":
    unittest.main()
