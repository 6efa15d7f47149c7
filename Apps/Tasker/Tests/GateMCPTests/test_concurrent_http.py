"""One HTTP gate answers many sessions at once (issue 23, speed): 12
sessions of 12 keys on their own keep-alive connections call at the same
time; every answer is the session's own (its JSON-RPC id, its key's tools,
the task it added), and 8 sessions of one key racing add_task on one server
never act more often than the key's budget."""

import http.client
import json
import threading
import unittest

from harness import GateTestCase

HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
WRITE_TOOLS = {"add_task", "edit_task", "complete_task", "delete_task", "add_page"}


class Session:
    """One MCP session on its own keep-alive connection."""

    def __init__(self, port, key):
        self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.headers = dict(HEADERS, Authorization=f"Bearer {key}")
        self.next_id = 0
        reply, headers = self.post("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                  "clientInfo": {"name": "concurrent", "version": "1"}})
        self.headers["Mcp-Session-Id"] = headers["mcp-session-id"]
        self.headers["MCP-Protocol-Version"] = reply["result"]["protocolVersion"]
        self.connection.request("POST", "/mcp", body=json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                                headers=self.headers)
        response = self.connection.getresponse()
        response.read()
        assert response.status == 202, response.status

    def post(self, method, params):
        self.next_id += 1
        sent = self.next_id
        self.connection.request("POST", "/mcp", headers=self.headers,
                                body=json.dumps({"jsonrpc": "2.0", "id": sent, "method": method, "params": params}))
        response = self.connection.getresponse()
        reply = json.loads(response.read())
        assert reply["id"] == sent, f"answer {reply['id']} to request {sent}"
        return reply, {name.lower(): value for name, value in response.getheaders()}

    def call(self, tool, arguments):
        return self.post("tools/call", {"name": tool, "arguments": arguments})[0]

    def close(self):
        self.connection.close()


class ConcurrentHTTPTests(GateTestCase):
    def run_at_once(self, sessions, work):
        barrier = threading.Barrier(len(sessions))
        failures, done = [], []

        def run(index, session):
            try:
                barrier.wait()
                done.append(work(index, session))
            except Exception as error:  # noqa: BLE001 - reported below
                failures.append(f"session {index}: {error!r}")

        threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate(sessions)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        self.assertEqual(failures, [])
        self.assertEqual(len(done), len(sessions), "every session finished")
        return done

    def test_every_session_gets_its_own_answers(self):
        for index in range(5):
            self.home.tasker("add", f"Shared {index}")
        server = self.home.http_server()
        keys = [self.home.mint(f"s{i}", grants=["tasks:write"] if i % 2 == 0 else [])[0] for i in range(12)]
        sessions = [Session(server.port, key) for key in keys]

        def work(index, session):
            writer = index % 2 == 0
            for round_ in range(15):
                names = {tool["name"] for tool in session.post("tools/list", {})[0]["result"]["tools"]}
                assert bool(names & WRITE_TOOLS) == writer, f"tools of the wrong key: {sorted(names)}"
                if writer:
                    title = f"own {index}-{round_}"
                    added = session.call("add_task", {"title": title})["result"]
                    assert not added["isError"], added
                    task_id = added["structuredContent"]["task"]["id"]
                    shown = session.call("show_task", {"id": task_id})["result"]
                    assert shown["structuredContent"]["task"]["title"] == title, shown
                listed = session.call("list_tasks", {"limit": 200})["result"]
                assert not listed["isError"], listed
                titles = {task["title"] for task in listed["structuredContent"]["tasks"]}
                assert {f"Shared {i}" for i in range(5)} <= titles, titles
                if writer:
                    assert f"own {index}-{round_}" in titles, "a session's own write is read back"
            return index

        self.run_at_once(sessions, work)
        for session in sessions:
            session.close()
        listed = json.loads(self.home.tasker("list", "--json").stdout)
        tasks = listed["tasks"] if isinstance(listed, dict) else listed
        self.assertEqual(len(tasks), 5 + 6 * 15, "every add ran exactly once")

    def test_sessions_of_one_key_never_exceed_its_budget(self):
        key, key_id = self.home.mint("racer", grants=["tasks:write"])
        self.home.tasker("gate", "budget", "10", "--key", key_id)
        server = self.home.http_server()
        sessions = [Session(server.port, key) for _ in range(8)]

        def work(index, session):
            allowed = 0
            for n in range(4):
                reply = session.call("add_task", {"title": f"race {index}-{n}"})
                if "result" in reply and not reply["result"]["isError"]:
                    allowed += 1
                else:
                    assert "budget" in reply["error"]["message"], reply
            return allowed

        acted = sum(self.run_at_once(sessions, work))
        for session in sessions:
            session.close()
        receipts = json.loads(self.home.tasker("receipts", "--json", "--limit", "1000").stdout)["receipts"]
        allowed = sum(1 for r in receipts if r["key_id"] == key_id and r["decision"] == "allow")
        self.assertEqual(acted, 10, "32 attempts against a budget of 10 act exactly 10 times")
        self.assertEqual(allowed, 10)


if __name__ == "__main__":
    unittest.main()
