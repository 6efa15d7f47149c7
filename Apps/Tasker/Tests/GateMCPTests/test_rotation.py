"""A long-running gate across `taskkey rotate` → `tasker rewrap` →
`tasker keys --check OLD` → `taskkey retire OLD` (issue 22, break 2): every
write it acknowledges afterwards opens, and queued calls can be approved
or denied, driven by the official MCP Python SDK over stdio and HTTP."""

import asyncio
import json
import unittest

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness import TASKER, GateTestCase


def stdio(env):
    return Client(StdioServerParameters(command=TASKER, args=["mcp"], env=env))


def http(url, key):
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=client))


class RotationTests(GateTestCase):
    def keys_in_use(self):
        return [usage["key_id"] for usage in json.loads(self.home.tasker("keys", "--json").stdout)["keys"]]

    def rotate_rewrap_retire(self):
        """The documented rotation; returns the old and the new primary key id."""
        [old] = self.keys_in_use()
        self.home.taskkey("rotate")
        self.home.tasker("rewrap")
        self.home.tasker("keys", "--check", old)
        values = self.home.tasker("keys", "--values").stdout
        self.home.taskkey("retire", old, "--input", "-", "--field", "value", stdin=values)
        [new] = self.keys_in_use()
        self.assertNotEqual(old, new)
        return old, new

    def sealed_key(self, sql):
        stored = self.home.run("sqlite3", "-batch", self.home.env["TASKER_HOME"] + "/tasker.db", sql).stdout
        self.assertTrue(stored.startswith("tc1."), stored)
        return stored[4:12]

    def test_a_trusted_stdio_session_seals_under_the_new_key_after_a_retire(self):
        async def scenario():
            async with stdio(self.home.env) as client:
                first = await client.call_tool("add_task", {"title": "before", "notes": "first note"})
                self.assertFalse(first.is_error)
                old, new = self.rotate_rewrap_retire()
                added = await client.call_tool("add_task", {"title": "after", "notes": "acknowledged after retire"})
                self.assertFalse(added.is_error)
                task_id = added.structured_content["task"]["id"]
                note = await client.call_tool("read_note", {"id": 1})
                self.assertEqual(note.structured_content["notes"], "first note")
                return old, new, task_id
        old, new, task_id = asyncio.run(scenario())
        self.assertEqual(self.sealed_key(f"SELECT notes FROM tasks WHERE id = {task_id}"), new)
        shown = self.home.tasker("show", str(task_id))
        self.assertTrue(shown.stdout.endswith("\nacknowledged after retire\n"), shown.stdout)
        self.home.tasker("keys", "--check", old)

    def test_an_http_gate_seals_under_the_new_key_after_a_retire(self):
        key, _ = self.home.mint("desktop", grants=["tasks:write", "notes:read", "pages:write"])
        server = self.home.http_server()
        async def scenario():
            async with http(server.url, key) as client:
                seed = await client.call_tool("add_task", {"title": "seed", "notes": "seed note"})
                self.assertFalse(seed.is_error, seed.content)
                old, new = self.rotate_rewrap_retire()
                page = await client.call_tool("add_page", {"title": "p", "body": "page after retire"})
                self.assertFalse(page.is_error, page.content)
                return new, page.structured_content["page"]["id"]
        new, page_id = asyncio.run(scenario())
        self.assertEqual(self.sealed_key(f"SELECT body FROM pages WHERE id = {page_id}"), new)
        self.assertTrue(self.home.tasker("page", "show", str(page_id)).stdout.endswith("\npage after retire\n"))

    def test_queued_calls_survive_the_rotation_and_can_be_approved_or_denied(self):
        key, _ = self.home.mint("planner", trust="restricted", grants=["tasks:write"])
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                for title in ("approve me", "deny me"):
                    queued = await client.call_tool("add_task", {"title": title, "notes": f"queued {title}"})
                    self.assertEqual(queued.structured_content["status"], "queued")
        asyncio.run(scenario())
        self.rotate_rewrap_retire()
        self.home.tasker("approvals", "approve", "1")
        self.assertTrue(self.home.tasker("show", "1").stdout.endswith("\nqueued approve me\n"))
        self.home.tasker("approvals", "deny", "2")
        self.assertEqual(json.loads(self.home.tasker("approvals", "list", "--json").stdout)["approvals"], [])


if __name__ == "__main__":
    unittest.main()
