"""Limits in bytes and errors without paths (issue 23, break 4), over a
real `tasker mcp` stdio session: note, title and query limits count bytes
of UTF-8, not characters, and a store failure never names a path to the
assistant."""

import os
import unittest

from harness import GateTestCase
from test_budget_race import Gate

KIB = 1024


class LimitTests(GateTestCase):
    def setUp(self):
        super().setUp()
        key, _ = self.home.mint("writer", grants=["tasks:write", "notes:read"])
        self.gate = Gate(self.home.env_with_key(key))

    def tearDown(self):
        self.gate.close()
        super().tearDown()

    def refused(self, reply, words):
        self.assertIn("error", reply, reply)
        self.assertEqual(reply["error"]["code"], -32602)
        self.assertIn(words, reply["error"]["message"])

    def test_a_note_over_256_kib_of_utf8_is_refused_though_it_has_fewer_characters(self):
        # 204,800 × "é" is 409,600 bytes: fewer characters than the limit, more bytes.
        reply = self.gate.call("add_task", {"title": "big", "notes": "é" * (200 * KIB)})
        self.refused(reply, "'notes' is longer than 262144 bytes of UTF-8")
        within = self.gate.call("add_task", {"title": "fits", "notes": "é" * (128 * KIB)})
        self.assertFalse(within["result"].get("isError"), within)

    def test_a_one_grapheme_title_of_800001_bytes_is_refused(self):
        title = "e" + "\u0301" * 400_000  # one grapheme cluster, 800,001 bytes
        self.refused(self.gate.call("add_task", {"title": title}), "'title' is longer than 500 bytes of UTF-8")
        self.refused(self.gate.call("add_task", {"title": "é" * 251}), "'title' is longer than 500 bytes")
        self.assertFalse(self.gate.call("add_task", {"title": "é" * 250})["result"].get("isError"))

    def test_a_huge_query_is_a_typed_refusal_not_a_database_error(self):
        query = "a" + "\u0301" * 100_000  # one grapheme, 200,001 bytes
        reply = self.gate.call("search_tasks", {"query": query})
        self.refused(reply, "'query' is longer than 200 bytes of UTF-8")
        self.assertNotIn(self.home.env["TASKER_HOME"], str(reply))

    def test_a_store_error_never_names_the_database_path(self):
        database = os.path.join(self.home.env["TASKER_HOME"], "tasker.db")
        self.home.run("sqlite3", "-batch", database,
                      "CREATE TRIGGER boom BEFORE INSERT ON tasks BEGIN SELECT RAISE(ABORT, 'boom'); END;")
        reply = self.gate.call("add_task", {"title": "fails"})
        self.assertTrue(reply["result"]["isError"], reply)
        text = str(reply)
        self.assertNotIn(self.home.root, text)
        self.assertNotIn("tasker.db", text)
        self.assertIn("could not complete the call", text)


if __name__ == "__main__":
    unittest.main()
