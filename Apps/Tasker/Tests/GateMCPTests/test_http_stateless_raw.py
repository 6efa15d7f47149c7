"""MCP 2026-07-28 over raw HTTP: stateless requests whose routing headers
must match the body, the version carried per request, and server/discover
behind the key."""

import json
import unittest

from harness import GateTestCase
import test_raw_http as raw


class StatelessRevisionTests(GateTestCase):
    """MCP 2026-07-28 raw: the routing headers must match the body (else 400
    and nothing runs), the version is carried per request, and
    `server/discover` is no way around the key."""

    META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}

    def setUp(self):
        super().setUp()
        self.server = self.home.http_server()
        self.key, _ = self.home.mint("stateless", grants=["tasks:write"])

    def post(self, body, key=True, **headers):
        sent = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": body.get("method", "")}
        if "params" in body and "name" in body["params"]:
            sent["Mcp-Name"] = body["params"]["name"]
        if key:
            sent["Authorization"] = f"Bearer {self.key}"
        sent.update({name.replace("_", "-"): value for name, value in headers.items()})
        sent = {name: value for name, value in sent.items() if value is not None}
        return raw.ResourceMetadataTests.fetch(self, self.server.url, "POST", sent, json.dumps(body).encode())

    def add(self, title, meta=None):
        return {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                "params": {"name": "add_task", "arguments": {"title": title}, "_meta": meta or self.META}}

    def titles(self):
        return [task["title"] for task in json.loads(self.home.tasker("list", "--json").stdout)["tasks"]]

    def refused(self, response, status, code):
        self.assertEqual(response[0], status, response[2])
        self.assertEqual(json.loads(response[2])["error"]["code"], code)

    def test_a_stateless_call_runs_with_no_session_and_says_its_result_type(self):
        status, headers, body = self.post(self.add("no session"))
        self.assertEqual(status, 200, body)
        self.assertNotIn("Mcp-Session-Id", headers)
        self.assertEqual(json.loads(body)["result"]["resultType"], "complete")
        self.assertEqual(self.titles(), ["no session"])

    def test_headers_that_disagree_with_the_body_are_400_and_nothing_runs(self):
        for headers in [{"Mcp_Method": "tools/list"}, {"Mcp_Name": "delete_task"}, {"Mcp_Name": None},
                        {"MCP_Protocol_Version": "2025-11-25"}, {"Mcp_Method": "TOOLS/CALL"}]:
            self.refused(self.post(self.add("mismatch"), **headers), 400, -32020)
        body = self.add("body says old", {**self.META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"})
        self.refused(self.post(body), 400, -32020)
        self.refused(self.post(self.add("no version header"), MCP_Protocol_Version=None), 400, -32020)
        self.assertEqual(self.titles(), [])

    def test_a_missing_mcp_method_is_400_and_nothing_runs(self):
        status, _, body = self.post(self.add("no method header"), Mcp_Method=None)
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], -32020)
        self.assertIn("Mcp-Method", json.loads(body)["error"]["message"])
        self.assertEqual(self.titles(), [])

    def test_two_mcp_method_or_mcp_name_headers_are_400(self):
        for name in ["Mcp-Method", "Mcp-Name"]:
            value = "tools/call" if name == "Mcp-Method" else "add_task"
            head = (f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.server.port}\r\n"
                    f"Authorization: Bearer {self.key}\r\nContent-Type: application/json\r\n"
                    f"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add_task\r\n"
                    f"{name}: {value}\r\nConnection: close\r\n")
            body = json.dumps(self.add("twice")).encode()
            received = raw.raw_exchange(self.server.port, (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body)
            self.assertEqual(raw.statuses(received), [400], name)
        self.assertEqual(self.titles(), [])

    def test_the_version_is_carried_per_request_and_an_unserved_one_is_named(self):
        meta = {**self.META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        status, _, body = self.post(self.add("future", meta), MCP_Protocol_Version="2099-01-01")
        self.assertEqual(status, 400)
        error = json.loads(body)["error"]
        self.assertEqual(error["code"], -32022)
        self.assertEqual(error["data"], {"supported": ["2026-07-28"], "requested": "2099-01-01"})
        no_meta = self.add("no meta")
        del no_meta["params"]["_meta"]
        self.refused(self.post(no_meta), 400, -32602)
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2026-07-28", "capabilities": {}, "_meta": self.META}}
        self.refused(self.post(initialize), 404, -32601)
        self.assertEqual(self.titles(), [])

    def test_server_discover_answers_the_versions_with_a_key_and_401_without(self):
        discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": self.META}}
        status, headers, body = self.post(discover, key=False)
        self.assertEqual(status, 401)
        self.assertIn('resource_metadata="http://127.0.0.1:', headers["WWW-Authenticate"])
        self.assertIn('/.well-known/oauth-protected-resource/mcp"', headers["WWW-Authenticate"])
        self.assertEqual(json.loads(body)["error"]["code"], -32002)
        status, headers, body = self.post(discover, Authorization="Bearer tk_nope")
        self.assertEqual(status, 401)
        self.assertIn("resource_metadata=", headers["WWW-Authenticate"])
        status, headers, body = self.post(discover)
        self.assertEqual(status, 200, body)
        result = json.loads(body)["result"]
        self.assertEqual(result["supportedVersions"], ["2026-07-28"])
        self.assertEqual((result["resultType"], result["cacheScope"], result["ttlMs"]), ("complete", "private", 0))
        self.assertEqual(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "tasker")
        self.assertNotIn("Mcp-Session-Id", headers)


if __name__ == "__main__":
    unittest.main()
