"""The HTTP binding with raw requests (curl and a socket): no header, a wrong
scheme, a 10 MB body, a slowloris connection, malformed JSON-RPC."""

import json
import os
import socket
import subprocess
import tempfile
import time
import unittest

from harness import GateTestCase


class RawHTTPTests(GateTestCase):
    def setUp(self):
        super().setUp()
        self.server = self.home.http_server()
        self.key, _ = self.home.mint("raw", grants=["tasks:write"])

    def curl(self, *arguments):
        result = subprocess.run(
            ["curl", "-sS", "--max-time", "20", "-o", "-", "-D", "/dev/stderr", "-w", "\n%{http_code}",
             *arguments, self.server.url],
            capture_output=True, text=True, timeout=60)
        body, _, status = result.stdout.rpartition("\n")
        return int(status), result.stderr, body

    def initialize(self):
        status, headers, _ = self.curl(
            "-H", f"Authorization: Bearer {self.key}", "-H", "Content-Type: application/json",
            "-H", "Accept: application/json, text/event-stream",
            "--data", json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                  "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}))
        self.assertEqual(status, 200)
        return next(line.split(":", 1)[1].strip() for line in headers.splitlines()
                    if line.lower().startswith("mcp-session-id:"))

    def test_no_authorization_header_is_401_with_a_bearer_challenge(self):
        status, headers, body = self.curl("-H", "Content-Type: application/json", "--data", "{}")
        self.assertEqual(status, 401)
        self.assertIn('www-authenticate: bearer realm="tasker"', headers.lower())
        self.assertEqual(json.loads(body)["error"]["code"], -32002)

    def test_a_wrong_scheme_is_401(self):
        for value in ["Basic dXNlcjpwYXNz", f"Token {self.key}", f"Bearer  {self.key}"]:
            status, headers, _ = self.curl("-H", f"Authorization: {value}", "-H", "Content-Type: application/json",
                                           "--data", "{}")
            self.assertEqual(status, 401, value)
            self.assertIn('error="invalid_request"', headers)

    def test_a_10_mb_body_is_refused_with_413_and_the_server_lives_on(self):
        with tempfile.NamedTemporaryFile() as big:
            big.write(b"{" + b" " * (10 * 1024 * 1024) + b"}")
            big.flush()
            status, _, _ = self.curl("-H", f"Authorization: Bearer {self.key}", "-H", "Content-Type: application/json",
                                     "--data-binary", f"@{big.name}")
        self.assertEqual(status, 413)
        self.initialize()

    def test_a_slowloris_connection_is_closed_and_others_are_served_meanwhile(self):
        slow = socket.create_connection(("127.0.0.1", self.server.port))
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        self.initialize()  # another client is served while the slow one hangs
        slow.settimeout(15)
        closed = slow.recv(4096)
        waited = time.monotonic() - started
        slow.close()
        self.assertLess(waited, 12, "the idle connection was closed within the timeout")
        self.assertIn(closed[:12], (b"", b"HTTP/1.1 408"), closed[:40])

    def test_malformed_json_rpc_gets_a_json_rpc_error(self):
        session = self.initialize()
        common = ["-H", f"Authorization: Bearer {self.key}", "-H", "Content-Type: application/json",
                  "-H", "Accept: application/json, text/event-stream", "-H", f"Mcp-Session-Id: {session}"]
        status, _, body = self.curl(*common, "--data", "{not json")
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], -32700)
        status, _, body = self.curl(*common, "--data", json.dumps({"jsonrpc": "2.0", "id": 2, "method": 7}))
        self.assertEqual(status, 400)
        self.assertEqual(json.loads(body)["error"]["code"], -32600)
        status, _, body = self.curl(*common, "--data", json.dumps([{"jsonrpc": "2.0", "id": 3, "method": "ping"}]))
        self.assertEqual(status, 400)
        self.assertIn("batches", json.loads(body)["error"]["message"])
        status, _, body = self.curl(*common, "--data", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        self.assertEqual((status, body), (202, ""))
        status, headers, _ = self.curl("-X", "GET", *common[:2], "-H", f"Mcp-Session-Id: {session}")
        self.assertEqual(status, 405)
        self.assertIn("allow: post, delete", headers.lower())


class ServerLimitTests(GateTestCase):
    def test_connections_beyond_the_limit_are_refused_until_others_close(self):
        server = self.home.http_server()
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(64)]
        try:
            time.sleep(0.5)
            extra = socket.create_connection(("127.0.0.1", server.port))
            extra.settimeout(3)
            extra.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            try:
                answer = extra.recv(64)
            except (ConnectionResetError, socket.timeout):
                answer = b""
            extra.close()
            self.assertEqual(answer, b"", "the 65th connection is closed unanswered")
        finally:
            for connection in idle:
                connection.close()
        time.sleep(0.5)
        status = subprocess.run(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", server.url],
                                capture_output=True, text=True, timeout=30).stdout
        self.assertEqual(status, "401", "served again once the idle connections are gone")

    def test_a_bad_address_or_a_taken_port_ends_the_command_with_one_line(self):
        bad = self.home.tasker("mcp", "--http", "localhost:80", check=False)
        self.assertEqual(bad.returncode, 64)
        self.assertIn("invalid listen address", bad.stderr)
        server = self.home.http_server()
        taken = self.home.tasker("mcp", "--http", f"127.0.0.1:{server.port}", check=False, timeout=30)
        self.assertEqual(taken.returncode, 69)
        self.assertEqual(len(taken.stderr.splitlines()), 1, taken.stderr)
        self.assertIn("could not listen", taken.stderr)


if __name__ == "__main__":
    unittest.main()
