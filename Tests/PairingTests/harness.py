"""Drives the real `taskkey pair offer` and `taskkey pair join` for the
pairing tests: homes made with the fast test KDF, the offer's JSON lines
read as they come, the joiner's code given in a 0600 file."""

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time

TASKKEY = os.environ.get("TASKKEY_BIN", "taskkey")
PASSPHRASE = "correct horse battery"


def clean_env(home, extra=None):
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": home}
    env.update(extra or {})
    return env


class Home:
    """A TASKKEY_HOME in a temporary directory, with a passphrase file."""

    def __init__(self, initialise=True):
        self.root = tempfile.mkdtemp(prefix="pairing-")
        self.keys = os.path.join(self.root, "keys")
        self.passphrase_file = os.path.join(self.root, "pass")
        write_private(self.passphrase_file, PASSPHRASE + "\n")
        if initialise:
            self.run("init", "--kdf", "fast-test-only", "--passphrase-file", self.passphrase_file,
                     "--accept-weak-passphrase", check=True)

    def run(self, *arguments, check=False, timeout=60, prefix=(), input_text=None, input_bytes=None):
        data = input_bytes if input_bytes is not None else (input_text or "").encode()
        done = subprocess.run([*prefix, TASKKEY, *arguments], env=clean_env(self.keys), capture_output=True,
                              timeout=timeout, input=data)
        if check and done.returncode != 0:
            raise AssertionError(f"taskkey {' '.join(arguments)}: {done.returncode} {done.stderr.decode()}")
        return done

    def json(self, *arguments, prefix=()):
        done = self.run(*arguments, "--json", check=True, prefix=prefix)
        return json.loads(done.stdout)

    def tree(self):
        """Every file under the home with its bytes: what 'nothing changed' compares."""
        found = {}
        for directory, _, files in os.walk(self.root):
            for name in files:
                path = os.path.join(directory, name)
                with open(path, "rb") as handle:
                    found[os.path.relpath(path, self.root)] = handle.read()
        return found

    def has_vault(self):
        return os.path.exists(os.path.join(self.keys, "vault.tkv"))

    def close(self):
        subprocess.run([TASKKEY, "lock"], env=clean_env(self.keys), capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)


def write_private(path, text):
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)


class Offer:
    """`taskkey pair offer --json` running; its events read line by line."""

    def __init__(self, home, *arguments, prefix=()):
        self.process = subprocess.Popen([*prefix, TASKKEY, "pair", "offer", "--json", *arguments],
                                        env=clean_env(home.keys), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.events = []
        self.first = self.next_event(20)
        if self.first is None or self.first.get("event") != "offer":
            self.process.kill()
            raise AssertionError(f"no offer event: {self.process.stderr.read().decode()}")
        self.code = self.first["code"]
        self.address = self.first["addresses"][0]

    def next_event(self, seconds=20):
        ready, _, _ = select.select([self.process.stdout], [], [], seconds)
        if not ready:
            return None
        line = self.process.stdout.readline()
        if not line:
            return None
        event = json.loads(line)
        self.events.append(event)
        return event

    def finish(self, seconds=60):
        out, err = self.process.communicate(timeout=seconds)
        for line in out.splitlines():
            self.events.append(json.loads(line))
        return self.process.returncode, err.decode()

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()


def join(home, address, code, *extra, timeout=60, prefix=(), wait=True):
    """Runs `taskkey pair join` with the code in a file; returns the result (or the process)."""
    code_file = os.path.join(home.root, f"code-{time.monotonic_ns()}")
    write_private(code_file, code + "\n")
    arguments = [*prefix, TASKKEY, "pair", "join", address, "--code-file", code_file, "--kdf", "fast-test-only",
                 "--passphrase-file", home.passphrase_file, "--accept-weak-passphrase", "--json", *extra]
    if not wait:
        return subprocess.Popen(arguments, env=clean_env(home.keys), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return subprocess.run(arguments, env=clean_env(home.keys), capture_output=True, timeout=timeout)


def wrong_code(code):
    """A code that reads but differs from `code` in its last word."""
    words = code.split()
    words[-1] = "acid" if words[-1] != "acid" else "acorn"
    return " ".join(words)


class Proxy:
    """A TCP relay between a joiner and an offer that passes, changes,
    drops, replays or reorders the pairing messages, one whole message at a
    time (it knows the framing of pairing.md)."""

    FIXED = {0x01: 48, 0x02: 96, 0x03: 64, 0x7F: 1}

    def __init__(self, target, rule):
        host, port = target.rsplit(":", 1)
        self.target = (host.strip("[]"), int(port))
        self.rule = rule  # (direction, index, message) -> list of messages to forward
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(1)
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @classmethod
    def read_message(cls, sock):
        header = recv_exact(sock, 8)
        if header is None:
            return None
        kind = header[7]
        if kind in cls.FIXED:
            body = recv_exact(sock, cls.FIXED[kind])
            return None if body is None else header + body
        length = recv_exact(sock, 4)
        if length is None:
            return None
        body = recv_exact(sock, int.from_bytes(length, "big"))
        return None if body is None else header + length + body

    def serve(self):
        try:
            joiner, _ = self.listener.accept()
            offerer = socket.create_connection(self.target, timeout=30)
        except OSError:
            return
        pipes = [(joiner, offerer, "to_offerer"), (offerer, joiner, "to_joiner")]
        threads = [threading.Thread(target=self.pump, args=pipe, daemon=True) for pipe in pipes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=150)
        for sock in (joiner, offerer):
            try:
                sock.close()
            except OSError:
                pass

    def pump(self, source, destination, direction):
        index = 0
        try:
            while True:
                message = self.read_message(source)
                if message is None:
                    break
                for out in self.rule(direction, index, message):
                    destination.sendall(out)
                index += 1
        except OSError:
            pass
        finally:
            try:
                destination.shutdown(socket.SHUT_WR)
            except OSError:
                pass

    def close(self):
        self.listener.close()


def recv_exact(sock, count):
    data = b""
    while len(data) < count:
        try:
            chunk = sock.recv(count - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return data


def kill_when(process, predicate, seconds=30):
    """Sends SIGKILL to `process` once predicate() holds (polled)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and process.poll() is None:
        if predicate():
            process.send_signal(signal.SIGKILL)
            return True
        time.sleep(0.001)
    return False
