"""`tasker mcp` over stdio with the official MCP Python SDK as the client."""

import asyncio
import json
import os
import subprocess
import unittest

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from harness import TASKER, GateHome, GateTestCase

TOOLS = {"list_tasks", "search_tasks", "show_task", "add_task", "edit_task", "complete_task", "delete_task",
         "add_page", "read_note"}


def stdio(env):
    return Client(StdioServerParameters(command=TASKER, args=["mcp"], env=env))


class StdioTests(GateTestCase):
    def test_trusted_mode_initializes_lists_tools_and_acts(self):
        async def scenario():
            async with stdio(self.home.env) as client:
                self.assertIn(client.protocol_version, ("2025-11-25", "2025-06-18"))
                self.assertEqual(client.server_info.name, "tasker")
                tools = (await client.list_tools()).tools
                self.assertEqual({tool.name for tool in tools}, TOOLS)
                add = next(tool for tool in tools if tool.name == "add_task")
                self.assertEqual(add.input_schema["required"], ["title"])
                self.assertFalse(add.input_schema["additionalProperties"])
                added = await client.call_tool("add_task", {"title": "Call the bank", "notes": "mortgage 42"})
                self.assertFalse(added.is_error)
                task = added.structured_content["task"]
                self.assertEqual(task["title"], "Call the bank")
                self.assertNotIn("notes", task, "planning fields only")
                note = await client.call_tool("read_note", {"id": task["id"]})
                self.assertEqual(note.structured_content["notes"], "mortgage 42")
                listed = await client.call_tool("list_tasks", {})
                self.assertEqual([t["title"] for t in listed.structured_content["tasks"]], ["Call the bank"])
                self.assertEqual(
                    set(listed.structured_content["tasks"][0]),
                    {"id", "status", "title", "estimate_minutes", "due", "priority", "energy", "overdue"},
                )
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": ""})
                self.assertEqual(raised.exception.code, -32602)
                self.assertIn("'title' must not be empty", raised.exception.message)
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("no_such_tool", {})
                self.assertEqual(raised.exception.code, -32602)
                missing = await client.call_tool("show_task", {"id": 999})
                self.assertTrue(missing.is_error)
                self.assertIn("no task with id 999", missing.content[0].text)
        asyncio.run(scenario())
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual([(r["actor"], r["tool"], r["decision"]) for r in receipts], [("trusted", "add_task", "allow")])

    def test_a_key_runs_as_that_assistant_within_its_grants(self):
        key, key_id = self.home.mint("planner", grants=["tasks:write"])
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                added = await client.call_tool("add_task", {"title": "Water plants", "notes": "secret canary"})
                task_id = added.structured_content["task"]["id"]
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("read_note", {"id": task_id})
                self.assertEqual(raised.exception.code, -32003)
                self.assertIn("notes:read", raised.exception.message)
                with self.assertRaises(MCPError):
                    await client.call_tool("list_tasks", {"include_notes": True})
                listed = await client.call_tool("list_tasks", {})
                self.assertNotIn("secret canary", json.dumps(listed.structured_content))
                self.assertNotIn("secret canary", listed.content[0].text)
        asyncio.run(scenario())
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual(receipts[0]["key_id"], key_id)
        self.assertEqual(receipts[0]["assistant"], "planner")
        self.assertEqual(receipts[0]["actor"], "assistant")

    def test_a_key_revoked_mid_session_fails_the_next_call_and_never_falls_back(self):
        key, key_id = self.home.mint("planner", grants=["tasks:write"])
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                await client.call_tool("list_tasks", {})
                self.home.taskkey("revoke", key_id)
                with self.assertRaises(MCPError) as raised:
                    await client.call_tool("add_task", {"title": "after revocation"})
                self.assertEqual(raised.exception.code, -32002)
                self.assertIn("revoked", raised.exception.message)
        asyncio.run(scenario())
        self.assertEqual(json.loads(self.home.tasker("list", "--json").stdout)["tasks"], [])

    def refused_start(self, key, expected):
        initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
        result = subprocess.run([TASKER, "mcp"], env=self.home.env_with_key(key), input=initialize + "\n",
                                capture_output=True, text=True, timeout=60)
        self.assertNotEqual(result.returncode, 0, expected)
        self.assertEqual(result.stdout, "", "nothing is served before the key is checked")
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertIn(expected, lines[0])
        self.assertNotIn(key, result.stderr, "the key is never repeated")
        return result.returncode

    def test_a_bad_key_exits_with_one_line_before_serving_anything(self):
        good, good_id = self.home.mint("planner")
        revoked, revoked_id = self.home.mint("old")
        self.home.taskkey("revoke", revoked_id)
        self.assertEqual(self.refused_start("tk_short", "malformed"), 20)
        self.assertEqual(self.refused_start(good[:-1] + ("A" if good[-1] != "A" else "B"), "checksum"), 21)
        elsewhere = GateHome()
        try:
            unknown, _ = elsewhere.mint("stranger")
        finally:
            elsewhere.close()
        self.assertEqual(self.refused_start(unknown, "unknown"), 22)
        self.assertEqual(self.refused_start(revoked, "revoked"), 23)
        self.home.lock()
        self.assertEqual(self.refused_start(good, "locked"), 14)
        self.home.unlock()
        registry = os.path.join(self.home.env["TASKKEY_HOME"], "device-only", "assistant-keys.registry")
        with open(registry, "r+b") as handle:
            data = bytearray(handle.read())
            data[40] ^= 0x01  # in the header (its count): every key is refused
            handle.seek(0)
            handle.write(data)
        self.assertEqual(self.refused_start(good, "registry"), 15)

    def test_an_expired_key_is_refused(self):
        key, _ = self.home.mint("brief", expires="1s")
        import time
        time.sleep(2.2)
        self.assertEqual(self.refused_start(key, "expired"), 24)


if __name__ == "__main__":
    unittest.main()
