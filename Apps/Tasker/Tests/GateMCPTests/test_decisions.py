"""Budgets, quiet hours, the approval queue and undo, driven through the
official MCP client and the `tasker` commands."""

import asyncio
import datetime
import json
import unittest

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from harness import TASKER, GateTestCase


def stdio(env):
    return Client(StdioServerParameters(command=TASKER, args=["mcp"], env=env))


class DecisionTests(GateTestCase):
    def test_the_budget_refuses_actions_once_used_up(self):
        key, key_id = self.home.mint("busy", grants=["tasks:write"])
        self.home.tasker("gate", "budget", "2", "--key", key_id)
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                await client.call_tool("add_task", {"title": "one"})
                await client.call_tool("add_task", {"title": "two"})
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": "three"})
                self.assertEqual(raised.exception.code, -32001)
                self.assertIn("budget", raised.exception.message)
                listed = await client.call_tool("list_tasks", {})
                self.assertEqual(len(listed.structured_content["tasks"]), 2, "reads have a budget of their own")
        asyncio.run(scenario())
        decisions = [r["decision"] for r in json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]]
        # The read is folded into one aggregated receipt when receipts are listed (schema 8).
        self.assertEqual(decisions, ["read", "refuse:budget-exhausted", "allow", "allow"])

    def test_a_risky_call_is_queued_then_approved_then_executed(self):
        key, key_id = self.home.mint("cleaner", grants=["tasks:write"])
        self.home.tasker("add", "Old errand")
        task_id = int(json.loads(self.home.tasker("list", "--json").stdout)["tasks"][0]["id"])
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                queued = await client.call_tool("delete_task", {"id": task_id})
                self.assertFalse(queued.is_error)
                self.assertEqual(queued.structured_content["status"], "queued")
                self.assertEqual(queued.structured_content["reason"], "risky")
                return queued.structured_content["approval"]
        approval = asyncio.run(scenario())
        self.assertEqual(len(json.loads(self.home.tasker("list", "--json").stdout)["tasks"]), 1, "nothing ran yet")
        pending = json.loads(self.home.tasker("approvals", "list", "--json").stdout)["approvals"]
        self.assertEqual([(int(a["id"]), a["tool"], a["key_id"], a["status"]) for a in pending],
                         [(approval, "delete_task", key_id, "pending")])
        self.assertIn("Old errand", pending[0]["summary"])
        self.home.tasker("approvals", "approve", str(approval))
        self.assertEqual(json.loads(self.home.tasker("list", "--json").stdout)["tasks"], [])
        again = self.home.tasker("approvals", "approve", str(approval), check=False)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("already", again.stderr)
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual([(r["tool"], r["decision"]) for r in receipts],
                         [("delete_task", "approved"), ("delete_task", "ask:risky")])

    def test_a_denied_call_never_runs(self):
        key, _ = self.home.mint("cleaner", grants=["tasks:write"])
        self.home.tasker("add", "Keep me")
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                queued = await client.call_tool("delete_task", {"id": 1})
                return queued.structured_content["approval"]
        approval = asyncio.run(scenario())
        self.home.tasker("approvals", "deny", str(approval))
        self.assertEqual(len(json.loads(self.home.tasker("list", "--json").stdout)["tasks"]), 1)
        self.assertEqual(json.loads(self.home.tasker("approvals", "list", "--json").stdout)["approvals"], [])

    def test_quiet_hours_queue_acting_calls_and_never_run_them(self):
        key, _ = self.home.mint("night", grants=["tasks:write"])
        now = datetime.datetime.now()
        start = (now - datetime.timedelta(hours=1)).strftime("%H:%M")
        end = (now + datetime.timedelta(hours=1)).strftime("%H:%M")
        self.home.tasker("gate", "quiet-hours", f"{start}-{end}")
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                queued = await client.call_tool("add_task", {"title": "at night"})
                self.assertEqual(queued.structured_content["status"], "queued")
                self.assertEqual(queued.structured_content["reason"], "quiet-hours")
                listed = await client.call_tool("list_tasks", {})
                self.assertEqual(listed.structured_content["tasks"], [], "reads still answer; nothing was added")
        asyncio.run(scenario())
        self.home.tasker("gate", "quiet-hours", "off")

    def test_undo_from_a_receipt_reverses_an_addition_and_a_completion(self):
        key, _ = self.home.mint("helper", grants=["tasks:write"])
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                added = await client.call_tool("add_task", {"title": "Buy milk"})
                kept = await client.call_tool("add_task", {"title": "Pay rent"})
                done = await client.call_tool("complete_task", {"id": kept.structured_content["task"]["id"]})
                return added.structured_content["receipt"], done.structured_content["receipt"]
        added_receipt, done_receipt = asyncio.run(scenario())
        self.home.tasker("undo", added_receipt)
        self.home.tasker("undo", done_receipt)
        tasks = json.loads(self.home.tasker("list", "--json").stdout)["tasks"]
        self.assertEqual([(t["title"], t["status"]) for t in tasks], [("Pay rent", "open")])
        twice = self.home.tasker("undo", added_receipt, check=False)
        self.assertNotEqual(twice.returncode, 0)
        self.assertIn("already undone", twice.stderr)
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual([r["decision"] for r in receipts[:2]], ["undone", "undone"])


if __name__ == "__main__":
    unittest.main()
