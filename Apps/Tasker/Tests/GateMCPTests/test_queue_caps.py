"""The approval queue's per-key caps end to end (issue 23): a restricted
key's writes wait for approval until its queue holds 20 calls, or 2 MiB of
arguments as stored (large notes), and every call past a cap is refused
with MCP error -32001 and `data.cap`, over a real `tasker mcp` stdio
session and the official MCP client; the refused calls store nothing, so
the database grows no further."""

import asyncio
import json
import os
import unittest

from mcp.shared.exceptions import MCPError

from harness import GateTestCase
from test_decisions import stdio

COUNT_CAP = 20
BYTE_CAP = 2 * 1024 * 1024
BIG_NOTE = "n" * (250 * 1024)  # under the 256 KiB limit of a note; about 333 KiB sealed


class QueueCapTests(GateTestCase):
    def setUp(self):
        super().setUp()
        self.key, self.key_id = self.home.mint("queuer", trust="restricted", grants=["tasks:write"])
        self.database = os.path.join(self.home.env["TASKER_HOME"], "tasker.db")

    def sqlite(self, sql):
        return self.home.run("sqlite3", "-batch", self.database, sql).stdout.strip()

    def queue_load(self):
        """The key's waiting approvals and the bytes their stored arguments hold."""
        return self.sqlite("SELECT count(*) || ' ' || coalesce(sum(length(CAST(arguments AS BLOB))), 0) "
                           f"FROM gate_approvals WHERE key_id = '{self.key_id}' AND status = 'pending'")

    def stored_bytes(self):
        """The database's size as SQLite sees it (its pages, the log's committed ones included)."""
        return int(self.sqlite("SELECT page_count * page_size FROM pragma_page_count, pragma_page_size"))

    async def add_until_refused(self, client, notes, most):
        """Queues add_task calls until one is refused: (queued, the refusal)."""
        queued = 0
        for n in range(most):
            arguments = {"title": f"errand {n}", **({"notes": notes} if notes else {})}
            try:
                result = await client.call_tool("add_task", arguments)
            except MCPError as refusal:
                return queued, refusal
            self.assertEqual(result.structured_content["status"], "queued", result)
            queued += 1
        self.fail(f"{most} calls were queued without a refusal")

    def test_the_count_cap_refuses_the_21st_call_and_stores_nothing(self):
        async def scenario():
            async with stdio(self.home.env_with_key(self.key)) as client:
                queued, refusal = await self.add_until_refused(client, None, COUNT_CAP + 5)
                self.assertEqual(queued, COUNT_CAP)
                self.assertEqual(refusal.code, -32001)
                self.assertEqual(refusal.data, {"cap": "pending-approvals", "limit": COUNT_CAP})
                load, size = self.queue_load(), self.stored_bytes()
                for n in range(5):
                    with self.assertRaises(MCPError) as again:
                        await client.call_tool("add_task", {"title": f"more {n}", "notes": BIG_NOTE})
                    self.assertEqual(again.exception.data["cap"], "pending-approvals")
                self.assertEqual(self.queue_load(), load, "nothing more queued")
                self.assertLess(self.stored_bytes() - size, 64 * 1024, "five 250 KiB notes refused, not stored")
        asyncio.run(scenario())
        self.assertEqual(self.queue_load().split()[0], str(COUNT_CAP))
        self.assertEqual(self.sqlite("SELECT count(*) FROM tasks"), "0", "nothing ran")

    def test_the_byte_cap_refuses_large_notes_past_2_mib_and_stores_nothing(self):
        async def scenario():
            async with stdio(self.home.env_with_key(self.key)) as client:
                queued, refusal = await self.add_until_refused(client, BIG_NOTE, COUNT_CAP)
                self.assertTrue(2 <= queued < COUNT_CAP, f"the bytes, not the count, filled it: {queued}")
                self.assertEqual(refusal.code, -32001)
                self.assertEqual(refusal.data, {"cap": "pending-argument-bytes", "limit": BYTE_CAP})
                count, stored = map(int, self.queue_load().split())
                self.assertEqual(count, queued)
                self.assertLessEqual(stored, BYTE_CAP)
                self.assertGreater(stored + len(BIG_NOTE), BYTE_CAP, "the next big note would not have fit")
                size = self.stored_bytes()
                for n in range(5):
                    with self.assertRaises(MCPError) as again:
                        await client.call_tool("add_task", {"title": f"more {n}", "notes": BIG_NOTE})
                    self.assertEqual(again.exception.data["cap"], "pending-argument-bytes")
                self.assertEqual(self.queue_load(), f"{count} {stored}", "nothing more queued")
                self.assertLess(self.stored_bytes() - size, 64 * 1024, "the refused notes were not stored")
        asyncio.run(scenario())
        shown = json.loads(self.home.tasker("gate", "show", "--json").stdout)
        row = next(row for row in shown["keys"] if row["key_id"] == self.key_id)
        self.assertLessEqual(row["pending_bytes"], BYTE_CAP)
        refusals = [r for r in json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
                    if r["decision"] == "refuse:queue-full"]
        self.assertEqual(len(refusals), 6, "each refusal leaves its receipt, without the note")
        self.assertTrue(json.loads(self.home.tasker("receipts", "--verify", "--json").stdout)["verification"]["intact"])


if __name__ == "__main__":
    unittest.main()
