#!/usr/bin/env python3
"""A fault injector in front of a real WebDAV server (Python 3 standard library).

    fault_proxy.py UPSTREAM_PORT MODE_FILE [PORT]

Listens on 127.0.0.1:PORT (0, the default, picks a free port) and prints
"PORT <n>" on standard output once listening. Every request is forwarded
to http://127.0.0.1:UPSTREAM_PORT unchanged (method, path, headers, body),
and the answer is passed back, unless MODE_FILE (read afresh for every
request; missing or empty means "pass") says otherwise:

    pass          forward
    status:NNN    answer NNN with a short body instead of forwarding
    stall         read the request and never answer (until the client leaves)
    close         read the request and close the connection without a byte
    lose          forward, then close the connection without passing the
                  answer back (the server did it; the client never hears)

A mode may end with a space and a method ("status:507 PUT"): then only
requests of that method get the fault, the others are forwarded.

Each request is logged to standard error as "<mode> <METHOD> <path>" (and,
when forwarded, the upstream's status), and appended to MODE_FILE + ".log"
the same way, so a test can count what got through and what Apache said. It stops on SIGTERM or when its standard input closes.
"""

import http.client
import http.server
import os
import select
import socket
import sys
import threading
import time

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade",
    "proxy-authenticate", "proxy-authorization", "content-length", "expect",
}


def make_handler(upstream_port, mode_file):
    log_lock = threading.Lock()

    def current_mode(method):
        try:
            with open(mode_file, "r", encoding="utf-8") as handle:
                text = handle.read().strip()
        except FileNotFoundError:
            text = ""
        if not text:
            return "pass"
        mode, _, only = text.partition(" ")
        if only and only.strip().upper() != method:
            return "pass"
        return mode

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format, *args):  # noqa: A002 - the base class's name
            pass

        def read_body(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                body = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return body
                    body += self.rfile.read(size)
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def record(self, mode, status=None):
            line = f"{mode} {self.command} {self.path}" + ("" if status is None else f" {status}")
            with log_lock:
                print(line, file=sys.stderr, flush=True)
                with open(mode_file + ".log", "a", encoding="utf-8") as log:
                    log.write(line + "\n")

        def handle_any(self):
            mode = current_mode(self.command)
            body = self.read_body()
            if mode in ("pass", "lose"):
                self.forward(body, mode)
                return
            self.record(mode)
            if mode == "stall":
                self.close_connection = True
                deadline = time.monotonic() + 600
                while time.monotonic() < deadline:
                    readable, _, _ = select.select([self.connection], [], [], 0.5)
                    if readable:
                        try:
                            if not self.connection.recv(1, socket.MSG_PEEK):
                                return  # the client left
                        except OSError:
                            return
                        time.sleep(0.2)
                return
            if mode == "close":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if mode.startswith("status:"):
                status = int(mode.split(":", 1)[1])
                text = f"fault_proxy: {status}\n".encode()
                self.send_response(status)
                if status == 401:
                    self.send_header("WWW-Authenticate", 'Basic realm="dav"')
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(text)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(text)
                return
            self.forward(body, "pass")

        def forward(self, body, mode):
            upstream = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                headers["Content-Length"] = str(len(body))
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.record(mode, answer.status)
                if mode == "lose":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response_only(answer.status, answer.reason)
                for name, value in answer.getheaders():
                    if name.lower() not in HOP_BY_HOP:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
            finally:
                upstream.close()

        def __getattr__(self, name):
            # do_GET, do_PUT, do_MKCOL, do_PROPFIND, …: every method.
            if name.startswith("do_"):
                return self.handle_any
            raise AttributeError(name)

    return Handler


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    upstream_port = int(sys.argv[1])
    mode_file = sys.argv[2]
    port = int(sys.argv[3]) if len(sys.argv) == 4 else 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), make_handler(upstream_port, mode_file))
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)

    def watch_stdin():
        try:
            while os.read(0, 1024):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch_stdin, daemon=True).start()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
