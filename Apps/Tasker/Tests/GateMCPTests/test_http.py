"""`tasker mcp --http` with the official MCP Python SDK as the client: keys
checked on every request, revocation at once, grants as 403, a locked vault
refused."""

import asyncio
import json
import unittest

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from harness import GateTestCase


def http(url, key):
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=client))


class HTTPTests(GateTestCase):
    def setUp(self):
        super().setUp()
        self.server = self.home.http_server()

    def test_a_valid_key_initializes_lists_and_calls_tools(self):
        key, key_id = self.home.mint("desktop", grants=["tasks:write", "notes:read"])
        async def scenario():
            async with http(self.server.url, key) as client:
                self.assertEqual(client.server_info.name, "tasker")
                tools = (await client.list_tools()).tools
                # tools/list shows a key only the tools its grants allow: no add_page without pages:write.
                self.assertEqual(
                    [tool.name for tool in tools],
                    ["list_tasks", "search_tasks", "show_task", "add_task", "edit_task", "complete_task",
                     "delete_task", "read_note"])
                added = await client.call_tool("add_task", {"title": "Plan the week", "notes": "with Ana"})
                task_id = added.structured_content["task"]["id"]
                note = await client.call_tool("read_note", {"id": task_id})
                self.assertEqual(note.structured_content["notes"], "with Ana")
                shown = await client.call_tool("show_task", {"id": task_id, "include_notes": True})
                self.assertEqual(shown.structured_content["task"]["notes"], "with Ana")
        asyncio.run(scenario())
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual(receipts[0]["key_id"], key_id)
        self.server.stop()
        out, err = self.server.output
        self.assertNotIn(key, out + err, "the key is never logged")

    def test_a_revoked_key_gets_401_and_no_session(self):
        key, key_id = self.home.mint("old")
        self.home.taskkey("revoke", key_id)
        response = httpx2.post(self.server.url, headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
                               json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
        self.assertEqual(response.status_code, 401)
        self.assertTrue(response.headers["www-authenticate"].startswith("Bearer"))
        self.assertIn("invalid_token", response.headers["www-authenticate"])
        self.assertNotIn("mcp-session-id", response.headers)
        async def scenario():
            with self.assertRaises(Exception):
                async with http(self.server.url, key) as client:
                    await client.list_tools()
        asyncio.run(scenario())

    def test_a_key_revoked_mid_session_fails_on_the_next_call(self):
        key, key_id = self.home.mint("desktop", grants=["tasks:write"])
        async def scenario():
            async with http(self.server.url, key) as client:
                await client.call_tool("add_task", {"title": "before"})
                self.home.taskkey("revoke", key_id)
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": "after"})
                self.assertIn("revoked", raised.exception.message)
        asyncio.run(scenario())
        titles = [task["title"] for task in json.loads(self.home.tasker("list", "--json").stdout)["tasks"]]
        self.assertEqual(titles, ["before"])

    def test_a_missing_grant_is_403_insufficient_scope(self):
        key, _ = self.home.mint("reader")
        async def scenario():
            async with http(self.server.url, key) as client:
                added = await client.call_tool("list_tasks", {})
                self.assertEqual(added.structured_content["tasks"], [])
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": "no grant"})
                self.assertEqual(raised.exception.code, -32003)
                self.assertIn("tasks:write", raised.exception.message)
        asyncio.run(scenario())
        # The same call, raw: the status and challenge an OAuth-aware client reads.
        headers = {"Authorization": f"Bearer {key}", "Accept": "application/json, text/event-stream"}
        opened = httpx2.post(self.server.url, headers=headers, json={
            "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        refused = httpx2.post(self.server.url, headers=headers, json={
            "jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_note", "arguments": {"id": 1}}})
        self.assertEqual(refused.status_code, 403)
        self.assertIn('error="insufficient_scope"', refused.headers["www-authenticate"])
        self.assertIn('scope="notes:read"', refused.headers["www-authenticate"])
        self.assertEqual(json.loads(self.home.tasker("list", "--json").stdout)["tasks"], [])

    def test_a_locked_vault_is_refused_not_served(self):
        key, _ = self.home.mint("desktop", grants=["tasks:write"])
        async def scenario():
            async with http(self.server.url, key) as client:
                await client.call_tool("list_tasks", {})
                self.home.lock()
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": "while locked"})
                self.assertIn("cannot be checked", raised.exception.message)
                self.home.unlock()
                await client.call_tool("add_task", {"title": "after unlock"})
        asyncio.run(scenario())
        self.home.lock()
        response = httpx2.post(self.server.url, headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
                               json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                     "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
        self.assertEqual(response.status_code, 503)
        self.home.unlock()
        titles = [task["title"] for task in json.loads(self.home.tasker("list", "--json").stdout)["tasks"]]
        self.assertEqual(titles, ["after unlock"])


if __name__ == "__main__":
    unittest.main()
