"""Searching cannot read contexts without `notes:read` (issue 23): over a
real `tasker mcp` stdio session and the official MCP client, a key without
the grant that searches for every prefix of a task's contexts gets exactly
the answer a nonsense word gets, so the answers tell it nothing of them; a
key with the grant finds the task by the same words."""

import asyncio
import unittest

from harness import GateTestCase
from test_decisions import stdio

CONTEXTS = "@clinic hiv-followup"
NONSENSE = "qzxv-nonsense"


def answer(result):
    """Everything a tools/call result tells the caller."""
    return (result.is_error, result.structured_content, [block.model_dump() for block in result.content])


class ContextsOracleTests(GateTestCase):
    def setUp(self):
        super().setUp()
        self.home.tasker("add", "Book a slot", "--contexts", CONTEXTS)
        self.home.tasker("add", "Water the plants", "--contexts", "@home")

    def search(self, key, queries):
        async def scenario():
            async with stdio(self.home.env_with_key(key)) as client:
                return [answer(await client.call_tool("search_tasks", {"query": query})) for query in queries]
        return asyncio.run(scenario())

    def test_without_notes_read_every_prefix_of_the_contexts_answers_as_nonsense_does(self):
        key, _ = self.home.mint("searcher", grants=["tasks:write"])
        words = [CONTEXTS[:n] for n in range(1, len(CONTEXTS) + 1)] + ["clinic", "hiv", "followup", "HIV-FOLLOWUP"]
        answers = self.search(key, [NONSENSE] + words)
        nonsense = answers[0]
        self.assertEqual(nonsense[1], {"tasks": []}, nonsense)
        for word, got in zip(words, answers[1:]):
            self.assertEqual(got, nonsense, f"{word!r} answered otherwise than a nonsense word")
        by_title = self.search(key, ["slot"])[0]
        self.assertEqual([t["title"] for t in by_title[1]["tasks"]], ["Book a slot"], "titles are still searched")
        self.assertNotIn("contexts", by_title[1]["tasks"][0], "and the contexts are not shown")

    def test_with_notes_read_the_same_words_find_the_task(self):
        key, _ = self.home.mint("reader", grants=["tasks:write", "notes:read"])
        for word in ["@clinic", "@clinic hiv-followup", "hiv", "HIV-FOLLOWUP"]:
            found = self.search(key, [word])[0]
            self.assertEqual([t["title"] for t in found[1]["tasks"]], ["Book a slot"], word)
        self.assertEqual(self.search(key, [NONSENSE])[0][1], {"tasks": []})


if __name__ == "__main__":
    unittest.main()
