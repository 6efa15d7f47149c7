"""Forged `allow` receipts can only make the gate refuse more, never act
more (SECURITY.md 8.6): a writer of the database who appends receipts with
the real `sqlite3` shell (triggers dropped) uses up a key's budget, the gate
(stdio, the official MCP client) refuses with the budget used up and never
runs past it, and `tasker doctor` reports the forged rows as
`receipts_tampered`."""

import asyncio
import json
import os
import unittest

from mcp.shared.exceptions import MCPError

from harness import GateTestCase
from test_decisions import stdio

DROP_TRIGGERS = (
    "DROP TRIGGER gate_receipts_append_only_update; DROP TRIGGER gate_receipts_append_only_delete; "
    "DROP TRIGGER gate_receipts_append_only_insert; "
)


class ForgedBudgetTests(GateTestCase):
    def sqlite(self, sql):
        database = os.path.join(self.home.env["TASKER_HOME"], "tasker.db")
        return self.home.run("sqlite3", "-batch", database, sql).stdout.strip()

    def test_forged_allow_receipts_exhaust_the_budget_and_doctor_finds_them(self):
        key, key_id = self.home.mint("forgery", grants=["tasks:write"])
        self.home.tasker("gate", "budget", "3", "--key", key_id)

        async def first_call():
            async with stdio(self.home.env_with_key(key)) as client:
                added = await client.call_tool("add_task", {"title": "real one"})
                self.assertFalse(added.is_error)
        asyncio.run(first_call())
        self.assertEqual(self.sqlite("SELECT count(*) FROM gate_receipts"), "1")

        # Two receipts saying this key's calls ran today: r2 and r3, no chain.
        forged = ", ".join(
            f"(strftime('%s', 'now'), 'assistant', '{key_id}', 'forgery', 'complete_task', 'allow', "
            f"'task/{n}', 'completed task {n}')"
            for n in (7, 8)
        )
        self.sqlite(DROP_TRIGGERS + "INSERT INTO gate_receipts (at, actor, key_id, assistant, tool, decision, "
                    f"target, summary) VALUES {forged}")

        async def refused():
            async with stdio(self.home.env_with_key(key)) as client:
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": "past the forged budget"})
                self.assertEqual(raised.exception.code, -32001)
                self.assertIn("budget of actions for today is used up", raised.exception.message)
        asyncio.run(refused())
        titles = [t["title"] for t in json.loads(self.home.tasker("list", "--json").stdout)["tasks"]]
        self.assertEqual(titles, ["real one"], "refused, not run: the forged rows made it act less, never more")
        decisions = self.sqlite(f"SELECT group_concat(decision, ',') FROM gate_receipts WHERE key_id = '{key_id}'")
        self.assertEqual(decisions, "allow,allow,allow,refuse:budget-exhausted", "exhausted, never exceeded")

        doctor = self.home.tasker("doctor", "--json", check=False)
        self.assertEqual(doctor.returncode, 18, doctor.stderr)
        findings = [f for f in json.loads(doctor.stdout)["findings"] if f["code"].startswith("receipt")]
        self.assertEqual([(f["code"], f["severity"], f["subject"]) for f in findings],
                         [("receipts_tampered", "error", "r2")], findings)
        self.assertTrue(findings[0]["message"].startswith("missing_chain: "), findings)
        verify = self.home.tasker("receipts", "--verify", "--json", check=False)
        self.assertEqual(verify.returncode, 15)
        self.assertEqual(json.loads(verify.stdout)["verification"]["broken"], "r2")


if __name__ == "__main__":
    unittest.main()
