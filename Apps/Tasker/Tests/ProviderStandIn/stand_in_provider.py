"""A stand-in OpenAI-compatible chat-completions server for Tasker's tests.

Standard library only. Usage:

    python3 stand_in_provider.py LOG (--mode MODE | --mode-file FILE)

It listens on 127.0.0.1 with a port the kernel picks and prints that port,
alone, as its first line on standard output. It exits when its standard
input closes (so it dies with the test that started it).

LOG gets one JSON line per event, appended under a lock and flushed at once:
  {"event":"connection","listener":L,"port":P}   a TCP connection accepted
  {"event":"request","listener":L,"port":P,"mode":M,
   "request_line":B64,"headers":B64,"body":B64}   a whole request, read
The three base64 fields are the exact bytes received: the request line with
its CRLF, the raw header lines up to and including the empty line, and the
body (chunked bodies are kept as sent). Their concatenation is the request.
L is "main", or "redirect-target" for the second listener that `redirect`
points to (so a test sees whether a redirect was followed).

The mode is MODE, or the member "mode" of the JSON object in FILE, read again
on each request (a test rewrites FILE to change it). FILE may also hold
"sleep" (seconds, for `slow`; default 10). Every request on the main
listener is answered by the mode, whatever its path:
  ok                  200, content "ok" (for `tasker provider test`)
  plan-reverse        200, a valid plan: every candidate id of the request's
                      user message (JSON with "candidates"), in reverse
                      order, each with the reason "reason for tK"
  plan-unknown-id     like plan-reverse, the first id replaced by t(N+1)
  plan-repeated-id    the first candidate twice
  plan-not-json       content that is prose, not JSON
  plan-extra-member   each plan entry also has "action":"delete"
  plan-control-chars  one reason holds ESC[31m and U+202E
  plan-truncated      finish_reason "length", the content cut off
  ask-text            text holding ESC[31m ... ESC[0m and a newline
  status-401          401 with an OpenAI-style error body
  status-429          429 with Retry-After: 20
  status-500          500 with an error body
  redirect            302 to the same path on the redirect-target listener
  huge                200 with a body of 2 MiB (valid JSON): past the client's cap
  slow                sleeps "sleep" seconds, then answers like plan-reverse
An unknown mode is answered 400. The redirect-target listener answers 200
with a valid plan (it must never be reached).
"""

import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ESC_TEXT = "Start with \x1b[31mthe report\x1b[0m.\nThen call the bank."
HOSTILE_REASON = "urgent \x1b[31mred\x1b[0m \u202eesrever"


class Recorder:
    """Wraps the request stream and keeps every byte read from it."""

    def __init__(self, stream):
        self.stream = stream
        self.data = bytearray()

    def readline(self, limit=-1):
        line = self.stream.readline(limit)
        self.data += line
        return line

    def read(self, size=-1):
        chunk = self.stream.read(size)
        self.data += chunk
        return chunk

    def take(self):
        taken = bytes(self.data)
        self.data.clear()
        return taken

    def __getattr__(self, name):
        return getattr(self.stream, name)


def candidate_ids(body):
    """The candidate ids of the request's user message, in order."""
    try:
        request = json.loads(body)
        for message in request.get("messages", []):
            if message.get("role") == "user":
                user = json.loads(message["content"])
                return [c["id"] for c in user.get("candidates", [])]
    except (ValueError, TypeError, KeyError, AttributeError):
        pass
    return []


def completion(content, finish_reason="stop", extra=None):
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}
    answer = {"id": "chatcmpl-stand-in", "object": "chat.completion", "created": int(time.time()),
              "model": "stand-in", "choices": [choice], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}
    answer.update(extra or {})
    return answer


def plan(entries):
    return completion(json.dumps({"plan": entries}))


def reverse_plan(ids):
    return [{"id": i, "reason": "reason for " + i} for i in reversed(ids)]


def error(message, kind, code):
    return {"error": {"message": message, "type": kind, "code": code}}


def answer(mode, body, redirect_port, path):
    """(status, extra headers, JSON value or raw bytes) for one request."""
    ids = candidate_ids(body)
    if mode == "ok":
        return 200, [], completion("ok")
    if mode in ("plan-reverse", "slow"):
        return 200, [], plan(reverse_plan(ids))
    if mode == "plan-unknown-id":
        entries = reverse_plan(ids) or [{"id": "t1", "reason": "none given"}]
        entries[0]["id"] = "t%d" % (len(ids) + 1)
        return 200, [], plan(entries)
    if mode == "plan-repeated-id":
        first = (ids or ["t1"])[0]
        return 200, [], plan([{"id": first, "reason": "first"}, {"id": first, "reason": "again"}])
    if mode == "plan-not-json":
        return 200, [], completion("Here is your plan: do the first task, then the second.")
    if mode == "plan-extra-member":
        entries = [dict(e, action="delete") for e in reverse_plan(ids)]
        return 200, [], plan(entries)
    if mode == "plan-control-chars":
        entries = reverse_plan(ids) or [{"id": "t1", "reason": ""}]
        entries[0]["reason"] = HOSTILE_REASON
        return 200, [], plan(entries)
    if mode == "plan-truncated":
        content = json.dumps({"plan": reverse_plan(ids)})
        return 200, [], completion(content[: len(content) // 2], finish_reason="length")
    if mode == "ask-text":
        return 200, [], completion(ESC_TEXT)
    if mode == "status-401":
        return 401, [], error("Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
    if mode == "status-429":
        return 429, [("Retry-After", "20")], error("Rate limit reached.", "requests", "rate_limit_exceeded")
    if mode == "status-500":
        return 500, [], error("The server had an error.", "server_error", None)
    if mode == "redirect":
        return 302, [("Location", "http://127.0.0.1:%d%s" % (redirect_port, path))], b""
    if mode == "huge":
        return 200, [], completion("ok", extra={"padding": "x" * (2 << 20)})
    return 400, [], error("unknown stand-in mode %r" % mode, "stand_in", None)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "StandIn/1"

    def setup(self):
        super().setup()
        self.rfile = Recorder(self.rfile)
        self.server.state.record({"event": "connection", "listener": self.server.name, "port": self.server.port})

    def read_body(self):
        """The body, de-chunked; the recorder keeps the bytes as sent."""
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length", "0")))
        body = b""
        while True:
            size = int(self.rfile.readline(65537).split(b";")[0], 16)
            body += self.rfile.read(size + 2)[:size]
            if size == 0:  # "0" CRLF CRLF: no trailers are sent by libcurl
                return body

    def handle_one_request(self):
        self.rfile.take()
        super().handle_one_request()

    def do_POST(self):
        head = self.rfile.take()
        body = self.read_body()
        raw_body = self.rfile.take()
        line_end = head.index(b"\n") + 1
        state = self.server.state
        mode, sleep = state.mode()
        encoded = [base64.b64encode(b).decode() for b in (head[:line_end], head[line_end:], raw_body)]
        state.record(dict(zip(("request_line", "headers", "body"), encoded), event="request",
                          listener=self.server.name, port=self.server.port, mode=mode))
        if self.server.name != "main":
            mode = "plan-reverse"
        elif mode == "slow":
            time.sleep(sleep)
        status, headers, value = answer(mode, body, state.redirect_port, self.path)
        payload = value if isinstance(value, bytes) else json.dumps(value).encode()
        try:
            self.send_response(status)
            for name, text in headers:
                self.send_header(name, text)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
        except OSError:
            pass  # the client gave up (a timeout test)
        self.close_connection = True

    do_GET = do_PUT = do_POST

    def log_message(self, *args):
        pass


class State:
    def __init__(self, log, mode, mode_file):
        self.log = log
        self.fixed_mode = mode
        self.mode_file = mode_file
        self.lock = threading.Lock()
        self.redirect_port = 0

    def mode(self):
        if self.fixed_mode is not None:
            return self.fixed_mode, 10
        with open(self.mode_file, "rb") as f:
            settings = json.load(f)
        return settings.get("mode"), settings.get("sleep", 10)

    def record(self, event):
        line = json.dumps(event, sort_keys=True) + "\n"
        with self.lock, open(self.log, "a", encoding="utf-8") as f:
            f.write(line)
            f.flush()


def listen(name, state):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.name = name
    server.port = server.server_address[1]
    server.state = state
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main(argv):
    if len(argv) != 3 or argv[1] not in ("--mode", "--mode-file"):
        sys.exit("usage: stand_in_provider.py LOG (--mode MODE | --mode-file FILE)")
    log, option, value = argv
    state = State(log, value if option == "--mode" else None, value if option == "--mode-file" else None)
    open(log, "a").close()
    state.redirect_port = listen("redirect-target", state).port
    print(listen("main", state).port, flush=True)
    sys.stdin.read()


if __name__ == "__main__":
    main(sys.argv[1:])
