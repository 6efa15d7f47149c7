"""The stdio reader is bounded (issue 23, part A): a line past the 4 MiB
message limit is answered with an invalid-request error (-32600) and
dropped as it is read, never buffered, and the session goes on at the next
line; a line that is not UTF-8 is a parse error (-32700), never repaired."""

import json
import unittest

from harness import GateTestCase
from test_budget_race import Gate

MIB = 1 << 20


def high_water_mark_kib(pid):
    """The process's peak resident set (VmHWM) in KiB, from /proc."""
    with open(f"/proc/{pid}/status") as status:
        for entry in status:
            if entry.startswith("VmHWM:"):
                return int(entry.split()[1])
    raise AssertionError("no VmHWM in /proc status")


class StdioBoundTests(GateTestCase):
    def setUp(self):
        super().setUp()
        key, _ = self.home.mint("writer", grants=["tasks:write"])
        self.gate = Gate(self.home.env_with_key(key))

    def tearDown(self):
        self.gate.close()
        super().tearDown()

    def send(self, data):
        self.gate.process.stdin.write(data)
        self.gate.process.stdin.flush()

    def reply(self):
        return json.loads(self.gate.process.stdout.readline())

    def test_300_mib_without_a_newline_is_refused_unbuffered_and_the_next_line_is_served(self):
        chunk = b"a" * MIB
        for _ in range(300):
            self.send(chunk)
        # The writes returned, so the gate has read all but one pipe's worth.
        peak = high_water_mark_kib(self.gate.process.pid)
        self.assertLess(peak, 64 * 1024, f"VmHWM {peak} KiB after 300 MiB of one line")
        self.send(b"\n")
        refused = self.reply()
        self.assertEqual(refused["id"], None)
        self.assertEqual(refused["error"]["code"], -32600, refused)
        self.assertIn("longer than 4194304 bytes", refused["error"]["message"])
        added = self.gate.call("add_task", {"title": "after the long line"})
        self.assertFalse(added["result"].get("isError"), added)
        self.assertEqual(added["result"]["structuredContent"]["task"]["title"], "after the long line")
        self.assertLess(high_water_mark_kib(self.gate.process.pid), 64 * 1024)

    def test_lines_just_past_the_limit_are_refused_one_each_and_the_next_line_is_served(self):
        # The newline arrives with the bytes that pass the limit, and in a later read.
        self.send(b"b" * (4 * MIB + 1) + b"\n" + b"c" * (4 * MIB + 1) + b"\n")
        for _ in range(2):
            self.assertEqual(self.reply()["error"]["code"], -32600)
        added = self.gate.call("add_task", {"title": "fits"})
        self.assertFalse(added["result"].get("isError"), added)

    def test_a_line_that_is_not_utf8_is_a_parse_error_and_the_session_goes_on(self):
        self.send(b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add_task",'
                  b'"arguments":{"title":"\xc3\x28"}}}\n')
        refused = self.reply()
        self.assertEqual(refused["id"], None)
        self.assertEqual(refused["error"]["code"], -32700, refused)
        self.assertIn("not valid UTF-8", refused["error"]["message"])
        added = self.gate.call("add_task", {"title": "clean"})
        self.assertFalse(added["result"].get("isError"), added)
        titles = [task["title"] for task in self.gate.call("list_tasks", {})["result"]["structuredContent"]["tasks"]]
        self.assertEqual(titles, ["clean"], "nothing of the bad line was stored")


if __name__ == "__main__":
    unittest.main()
