"""A recording HTTP/1.1 test server for TaskerHTTPTests (standard library only).

Usage: python3 http_test_server.py [CERT KEY]
Listens on 127.0.0.1 with a port the kernel picks and prints "PORT <n>" as its
first line; with CERT and KEY it speaks TLS. It exits when its standard input
closes. Each connection carries one request, answered by path:
  /echo          200, the body is the exact bytes of the request received
  /redirect      302 to /echo
  /count         200, the body is the number of requests received before this one
  /big?n=N       200 with Content-Length N and N bytes
  /stream?n=N    200 without Content-Length: N bytes, then the connection closes
  /stall         no answer at all (the client must time out)
  /bad-header    200 with a header value holding a bare CR
"""

import os
import socket
import ssl
import sys
import threading
import time

requests = []
lock = threading.Lock()


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > 1 << 20:
            return None
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def respond(conn, status, body=b"", extra=b"", length=True):
    head = b"HTTP/1.1 " + status + b"\r\nConnection: close\r\n" + extra
    if length:
        head += b"Content-Length: " + str(len(body)).encode() + b"\r\n"
    conn.sendall(head + b"\r\n" + body)


def serve(conn, context):
    try:
        if context is not None:
            conn = context.wrap_socket(conn, server_side=True)
        raw = read_request(conn)
        if raw is None:
            return
        with lock:
            before = len(requests)
            requests.append(raw)
        target = raw.split(b" ", 2)[1].decode()
        path, _, query = target.partition("?")
        size = int(query[2:]) if query.startswith("n=") else 0
        if path == "/echo":
            respond(conn, b"200 OK", raw, b"Content-Type: application/octet-stream\r\n")
        elif path == "/redirect":
            respond(conn, b"302 Found", b"", b"Location: /echo\r\n")
        elif path == "/count":
            respond(conn, b"200 OK", str(before).encode())
        elif path == "/big":
            respond(conn, b"200 OK", b"x" * size)
        elif path == "/stream":
            respond(conn, b"200 OK", b"", length=False)
            for _ in range(size // 16384):
                conn.sendall(b"y" * 16384)
        elif path == "/fail":
            respond(conn, b"500 Internal Server Error", b"e" * size)
        elif path == "/stall":
            time.sleep(30)
        elif path == "/bad-header":
            respond(conn, b"200 OK", b"", b"X-Bad: a\rb\r\n")
        else:
            respond(conn, b"404 Not Found")
    except (OSError, ssl.SSLError):
        pass
    finally:
        try:
            conn.close()
        except OSError:
            pass


def main():
    context = None
    if len(sys.argv) == 3:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[1], sys.argv[2])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    print("PORT", listener.getsockname()[1], flush=True)
    threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, context), daemon=True).start()


main()
