"""Issue 23, item 6: `tasker mcp --http` speaks MCP 2026-07-28 (stateless:
no `initialize`, no `Mcp-Session-Id`, `server/discover`, the routing
headers) beside 2025-11-25, chosen per request. The official SDK drives it in
auto mode, pinned to 2026-07-28, and in the handshake mode (2025-11-25)."""

import asyncio
import json
import unittest

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from harness import GateTestCase

WRITER_TOOLS = ["list_tasks", "search_tasks", "show_task", "add_task", "edit_task", "complete_task", "delete_task"]


class ProtocolModeTests(GateTestCase):
    def setUp(self):
        super().setUp()
        self.server = self.home.http_server()
        self.key, self.key_id = self.home.mint("desktop", grants=["tasks:write"])
        self.sent = []

    async def record(self, request):
        body = json.loads(request.content) if request.content else {}
        self.sent.append((request.method, dict(request.headers), body))

    def client(self, mode):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {self.key}"}, timeout=30,
                                  event_hooks={"request": [self.record]})
        return Client(streamable_http_client(self.server.url, http_client=http), mode=mode)

    def list_and_call(self, mode, title):
        async def scenario():
            async with self.client(mode) as client:
                version = client.protocol_version
                tools = [tool.name for tool in (await client.list_tools()).tools]
                added = await client.call_tool("add_task", {"title": title})
                listed = await client.call_tool("list_tasks", {})
                return version, client, tools, added, listed
        return asyncio.run(scenario())

    def posted(self):
        return [(headers, body) for method, headers, body in self.sent if method == "POST"]

    def test_auto_mode_picks_2026_07_28_by_server_discover_without_falling_back(self):
        version, client, tools, added, listed = self.list_and_call("auto", "auto mode")
        self.assertEqual(version, "2026-07-28")
        self.assertEqual(tools, WRITER_TOOLS)
        self.assertEqual(added.structured_content["task"]["title"], "auto mode")
        self.assertEqual([task["title"] for task in listed.structured_content["tasks"]], ["auto mode"])
        methods = [body.get("method") for _, body in self.posted()]
        self.assertEqual(methods[0], "server/discover")
        self.assertNotIn("initialize", methods, "auto mode fell back to the handshake")
        for headers, body in self.posted():
            self.assertNotIn("mcp-session-id", headers)
            self.assertEqual(headers["mcp-protocol-version"], "2026-07-28")
            self.assertEqual(headers["mcp-method"], body["method"])
        self.assertEqual([headers.get("mcp-name") for headers, body in self.posted() if body["method"] == "tools/call"],
                         ["add_task", "list_tasks"])
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual(receipts[0]["key_id"], self.key_id)

    def test_pinned_to_2026_07_28_sends_no_handshake_and_no_discover(self):
        version, _, tools, added, _ = self.list_and_call("2026-07-28", "pinned new")
        self.assertEqual(version, "2026-07-28")
        self.assertEqual(tools, WRITER_TOOLS)
        self.assertFalse(added.is_error)
        methods = [body.get("method") for _, body in self.posted()]
        self.assertEqual(methods, ["tools/list", "tools/call", "tools/call"])
        self.assertTrue(all("mcp-session-id" not in headers for headers, _ in self.posted()))

    def test_pinned_to_2025_11_25_keeps_the_session_handshake(self):
        # The SDK pins the handshake era with mode="legacy": it offers 2025-11-25, its newest handshake revision.
        version, _, tools, added, _ = self.list_and_call("legacy", "pinned old")
        self.assertEqual(version, "2025-11-25")
        self.assertEqual(tools, WRITER_TOOLS)
        self.assertFalse(added.is_error)
        methods = [body.get("method") for _, body in self.posted()]
        self.assertEqual(methods[0], "initialize")
        self.assertNotIn("server/discover", methods)
        later = [headers for headers, body in self.posted() if body.get("method") in ("tools/list", "tools/call")]
        self.assertTrue(later and all(h["mcp-protocol-version"] == "2025-11-25" and "mcp-session-id" in h
                                      for h in later))

    def test_both_revisions_at_once_against_one_server(self):
        async def scenario():
            async with self.client("2026-07-28") as new, self.client("legacy") as old:
                await new.call_tool("add_task", {"title": "from new"})
                await old.call_tool("add_task", {"title": "from old"})
                seen_by_old = (await old.call_tool("list_tasks", {})).structured_content["tasks"]
                seen_by_new = (await new.call_tool("list_tasks", {})).structured_content["tasks"]
                return seen_by_old, seen_by_new
        seen_by_old, seen_by_new = asyncio.run(scenario())
        self.assertEqual(sorted(task["title"] for task in seen_by_old), ["from new", "from old"])
        self.assertEqual(seen_by_old, seen_by_new)

    def test_a_revoked_key_is_refused_on_the_next_stateless_request(self):
        async def scenario():
            async with self.client("2026-07-28") as client:
                await client.call_tool("add_task", {"title": "before"})
                self.home.taskkey("revoke", self.key_id)
                with self.assertRaises(Exception) as raised:
                    await client.call_tool("add_task", {"title": "after"})
                return raised.exception
        error = asyncio.run(scenario())
        self.assertIn("revoked", str(error))
        titles = [task["title"] for task in json.loads(self.home.tasker("list", "--json").stdout)["tasks"]]
        self.assertEqual(titles, ["before"])


if __name__ == "__main__":
    unittest.main()
