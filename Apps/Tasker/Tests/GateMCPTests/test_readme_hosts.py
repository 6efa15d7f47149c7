"""The README's `mcpServers` entries, tested as printed: each JSON block of
Apps/Tasker/README.md's "Wiring an assistant host" is read from the file,
the example paths, port and key are replaced by a test home's, and the
official MCP Python SDK drives the gate through exactly that entry."""

import asyncio
import json
import os
import re
import unittest

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from harness import TASKER, GateTestCase

README = os.path.join(os.path.dirname(__file__), "..", "..", "README.md")
WRITE_TOOLS = ["list_tasks", "search_tasks", "show_task", "add_task", "edit_task", "complete_task", "delete_task"]


def host_entries():
    """The `mcpServers` JSON blocks of the section, in order."""
    text = open(README, encoding="utf-8").read()
    section = text.split("### Wiring an assistant host", 1)[1].split("\n### ", 1)[0].split("\nTools: ", 1)[0]
    blocks = re.findall(r"```json\n(.*?)\n```", section, re.S)
    return [json.loads(block)["mcpServers"]["tasker"] for block in blocks]


class ReadmeHostTests(GateTestCase):
    def setUp(self):
        super().setUp()
        self.stdio_entry, self.http_entry = host_entries()
        self.key, _ = self.home.mint("desktop", grants=["tasks:write"])

    def test_the_readme_has_exactly_the_two_entries(self):
        self.assertEqual(self.stdio_entry["args"], ["mcp"])
        self.assertEqual(set(self.stdio_entry["env"]), {"TASKER_HOME", "TASKKEY_HOME", "TASKER_ASSISTANT_KEY_FILE"})
        self.assertNotIn("TASKER_ASSISTANT_KEY", self.stdio_entry["env"], "the key is read from a file, not the JSON")
        self.assertEqual(self.http_entry["type"], "http")
        self.assertEqual(self.http_entry["headers"], {"Authorization": "Bearer tk_…"})

    def replaced(self, value):
        """An example path of the entry, as this test home's."""
        return {
            "/usr/local/bin/tasker": TASKER,
            "/home/you/.local/share/tasker": self.home.env["TASKER_HOME"],
            "/home/you/.local/share/tasker/keys": self.home.env["TASKKEY_HOME"],
            "/home/you/.config/tasker/assistant.key": self.key_file,
        }[value]

    def test_the_stdio_entry_reaches_the_right_home_as_the_keys_assistant(self):
        self.key_file = os.path.join(self.home.root, "assistant.key")
        with open(os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(self.key + "\n")
        entry = self.stdio_entry
        env = {name: self.replaced(value) for name, value in entry["env"].items()}
        # The SDK adds only its safe default variables (HOME, PATH, …) to `env`, as a real host does.
        parameters = StdioServerParameters(command=self.replaced(entry["command"]), args=entry["args"], env=env)

        async def scenario():
            async with Client(parameters) as client:
                tools = [tool.name for tool in (await client.list_tools()).tools]
                self.assertEqual(tools, WRITE_TOOLS)
                added = await client.call_tool("add_task", {"title": "Wired from the README"})
                self.assertFalse(added.is_error, added)
        asyncio.run(scenario())
        listed = json.loads(self.home.tasker("list", "--json").stdout)["tasks"]
        self.assertEqual([task["title"] for task in listed], ["Wired from the README"])
        receipts = json.loads(self.home.tasker("receipts", "--json").stdout)["receipts"]
        self.assertEqual([(r["actor"], r["assistant"]) for r in receipts], [("assistant", "desktop")])

    def test_the_http_entry_with_its_bearer_header(self):
        server = self.home.http_server()
        entry = self.http_entry
        url = entry["url"].replace(":8765/", f":{server.port}/")
        self.assertNotEqual(url, entry["url"])
        headers = {name: value.replace("tk_…", self.key) for name, value in entry["headers"].items()}

        async def scenario():
            client = httpx2.AsyncClient(headers=headers, timeout=30)
            async with Client(streamable_http_client(url, http_client=client)) as session:
                tools = [tool.name for tool in (await session.list_tools()).tools]
                self.assertEqual(tools, WRITE_TOOLS)
                added = await session.call_tool("add_task", {"title": "Over HTTP from the README"})
                self.assertFalse(added.is_error, added)
        asyncio.run(scenario())
        listed = json.loads(self.home.tasker("list", "--json").stdout)["tasks"]
        self.assertEqual([task["title"] for task in listed], ["Over HTTP from the README"])


if __name__ == "__main__":
    unittest.main()
