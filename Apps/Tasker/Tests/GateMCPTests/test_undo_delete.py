"""An assistant's delete_task keeps a copy like the user's own delete: the
task, its sealed note as stored and its attachment come back with
`tasker undo rN`, once. Driven through the official MCP client."""

import asyncio
import json
import os
import unittest

from mcp import Client, StdioServerParameters

from harness import TASKER, GateTestCase


class UndoDeleteTests(GateTestCase):
    def stored(self, sql):
        database = os.path.join(self.home.env["TASKER_HOME"], "tasker.db")
        return self.home.run("sqlite3", "-batch", database, sql).stdout

    def test_an_assistants_delete_is_undone_with_its_sealed_note_and_attachment(self):
        key, _ = self.home.mint("cleaner", trust="elevated", grants=["tasks:write"])  # a delete is always asked
        self.home.tasker("add", "Call the clinic", "--notes", "-", stdin="canary-note-text\n")
        attachment = os.path.join(self.home.root, "results.txt")
        with open(attachment, "wb") as handle:
            handle.write(b"attached bytes\n")
        self.home.tasker("attach", "add", "--task", "1", attachment)
        sealed = self.stored("SELECT notes FROM tasks WHERE id = 1")
        self.assertNotIn("canary-note-text", sealed, "the note is stored sealed")

        async def scenario():
            params = StdioServerParameters(command=TASKER, args=["mcp"], env=self.home.env_with_key(key))
            async with Client(params) as client:
                queued = await client.call_tool("delete_task", {"id": 1})
                self.assertFalse(queued.is_error)
                return queued.structured_content["approval"]
        approval = asyncio.run(scenario())
        self.home.tasker("approvals", "approve", str(approval))
        self.assertEqual(json.loads(self.home.tasker("list", "--json").stdout)["tasks"], [])
        listed = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"][0]
        self.assertEqual((listed["actor"], listed["decision"], listed["undo"]),
                         ("assistant", "approved", "restore-task:1"))
        receipt = listed['id']

        self.home.tasker("undo", receipt)
        self.assertEqual(self.stored("SELECT notes FROM tasks WHERE id = 1"), sealed, "back exactly as stored")
        shown = json.loads(self.home.tasker("show", "1", "--json").stdout)
        self.assertIn("canary-note-text", json.dumps(shown))
        out = os.path.join(self.home.root, "back.txt")
        self.home.tasker("attach", "get", "1", "--out", out)
        with open(out, "rb") as handle:
            self.assertEqual(handle.read(), b"attached bytes\n")
        twice = self.home.tasker("undo", receipt, check=False)
        self.assertEqual(twice.returncode, 53)
        self.assertIn("already undone", twice.stderr)
        self.assertTrue(json.loads(self.home.tasker("receipts", "--verify", "--json").stdout)["verification"]["intact"])


if __name__ == "__main__":
    unittest.main()
