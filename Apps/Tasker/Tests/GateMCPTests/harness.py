"""Shared set-up for the gate's end-to-end tests: a throwaway vault and
Tasker home, the real `taskkey` and `tasker` binaries, assistant keys minted
through `taskkey mint`, and a `tasker mcp --http` server on 127.0.0.1."""

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import warnings

# httpx2 and anyio report sockets the MCP client closes late; they are not the server's.
warnings.simplefilter("ignore", ResourceWarning)

TASKER = os.environ["TASKER_BIN"]
TASKKEY = os.environ["TASKKEY_BIN"]
PASSPHRASE = "gate test passphrase"


class GateHome:
    """A vault (fast KDF, unlocked) and a Tasker home in a temp directory."""

    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="gate-test-")
        os.chmod(self.root, 0o700)
        self.env = dict(os.environ)
        self.env["TASKKEY_HOME"] = os.path.join(self.root, "keys")
        self.env["TASKER_HOME"] = os.path.join(self.root, "tasker")
        self.env.pop("TASKER_ASSISTANT_KEY", None)
        self.passphrase_file = os.path.join(self.root, "passphrase")
        with open(os.open(self.passphrase_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(PASSPHRASE + "\n")
        self.taskkey("init", "--kdf", "fast-test-only", "--passphrase-file", self.passphrase_file)
        self.unlock()
        self.servers = []

    def close(self):
        for server in self.servers:
            server.stop()
        subprocess.run([TASKKEY, "lock"], env=self.env, capture_output=True, timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)

    def unlock(self):
        self.taskkey("unlock", "--passphrase-file", self.passphrase_file)

    def lock(self):
        self.taskkey("lock")

    def run(self, binary, *arguments, check=True, env=None, stdin=None, timeout=60):
        result = subprocess.run(
            [binary, *arguments], env=env or self.env, capture_output=True, text=True, input=stdin, timeout=timeout
        )
        if check and result.returncode != 0:
            raise AssertionError(f"{os.path.basename(binary)} {' '.join(arguments)} exited {result.returncode}: {result.stderr}")
        return result

    def taskkey(self, *arguments, **options):
        return self.run(TASKKEY, *arguments, **options)

    def tasker(self, *arguments, **options):
        return self.run(TASKER, *arguments, **options)

    def mint(self, name, trust="standard", grants=(), expires=None):
        arguments = ["mint", "--name", name, "--trust", trust, "--json"]
        for grant in grants:
            arguments += ["--grant", grant]
        if expires:
            arguments += ["--expires", expires]
        minted = json.loads(self.taskkey(*arguments).stdout)
        return minted["key"], minted["id"]

    def env_with_key(self, key):
        env = dict(self.env)
        env["TASKER_ASSISTANT_KEY"] = key
        return env

    def http_server(self, port=None):
        server = HTTPServer(self, port)
        self.servers.append(server)
        return server


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class HTTPServer:
    """`tasker mcp --http 127.0.0.1:PORT`, waited for until it accepts."""

    def __init__(self, home, port=None):
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [TASKER, "mcp", "--http", f"127.0.0.1:{self.port}"],
            env=home.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"the server exited {self.process.returncode}: {self.process.stderr.read()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("the server did not start listening in 30 s")

    def open_descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def stop(self):
        if self.process.stdout.closed:
            return
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.output = (self.process.stdout.read(), self.process.stderr.read())
        self.process.stdout.close()
        self.process.stderr.close()


class GateTestCase(unittest.TestCase):
    def setUp(self):
        self.home = GateHome()

    def tearDown(self):
        self.home.close()
