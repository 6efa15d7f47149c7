"""An allowed call that fails in the store changes nothing and leaves a
`failed` receipt naming the failure's class (no such task, a locked vault),
never a path or SQLite text. Driven through the official MCP client."""

import asyncio
import json
import unittest

from mcp import Client, StdioServerParameters

from harness import TASKER, GateTestCase


class FailedCallTests(GateTestCase):
    def test_failed_calls_leave_failed_receipts_and_change_nothing(self):
        self.home.tasker("add", "Keep me")

        async def call(name, arguments):
            async with Client(StdioServerParameters(command=TASKER, args=["mcp"], env=self.home.env)) as client:
                return await client.call_tool(name, arguments)

        missing = asyncio.run(call("complete_task", {"id": 42}))
        self.assertTrue(missing.is_error)
        self.home.lock()
        locked = asyncio.run(call("add_task", {"title": "sealed", "notes": "would be sealed"}))
        self.assertTrue(locked.is_error)
        self.assertIn("locked", locked.content[0].text)
        self.home.unlock()
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual(
            [(r["actor"], r["tool"], r["decision"], r["target"], r["summary"], r["undo"]) for r in receipts],
            [("trusted", "add_task", "failed", "", "failed: the vault is locked", None),
             ("trusted", "complete_task", "failed", "task/42", "failed: no such task", None)])
        for receipt in receipts:
            self.assertNotIn("/", receipt["summary"])
            self.assertNotIn("SQL", receipt["summary"])
        tasks = json.loads(self.home.tasker("list", "--json").stdout)["tasks"]
        self.assertEqual([t["title"] for t in tasks], ["Keep me"], "nothing was changed")
        self.assertTrue(json.loads(self.home.tasker("receipts", "--verify", "--json").stdout)["verification"]["intact"])


if __name__ == "__main__":
    unittest.main()
