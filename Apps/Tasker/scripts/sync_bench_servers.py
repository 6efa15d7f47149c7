#!/usr/bin/env python3
"""What the sync benches share: Debian's Apache with mod_dav on 127.0.0.1,
a device (a home and a vault of its own, driven through the binaries) and
curl's floors.

Imported by sync_bench.py and sync_attachment_bench.py; not run by itself.
Apache starts in its own process group and is stopped with the group
whatever happens; its access log records, per request, the method, the
path, the status, the bytes received and sent on the connection (mod_logio's
%I and %O, headers included), the connection's keep-alive count, when it
began and how long it took.
"""
import grp
import os
import pwd
import signal
import socket
import subprocess
import tempfile
import time

MODULES = "/usr/lib/apache2/modules"
USERS = {"alice": "alice-bench-password", "bob": "bob-bench-password", "carol": "carol-bench-password"}


class Failure(Exception):
    """A command or the server failed; the message says which."""


def free_port():
    """A port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Apache:
    """Apache with mod_dav under `directory`, DAV root `directory/root`."""

    def __init__(self, directory):
        self.directory = directory
        self.process = None
        self.port = None
        self.as_root = os.getuid() == 0
        for folder in ["root", "lock", "run"]:
            os.mkdir(f"{directory}/{folder}", 0o755)
            if folder != "run":
                self.own(f"{directory}/{folder}")
        password_file = f"{directory}/htpasswd"
        for user, password in USERS.items():
            create = [] if os.path.exists(password_file) else ["-c"]
            subprocess.run(["htpasswd", *create, "-b", "-B", password_file, user, password],
                           check=True, capture_output=True)
        os.chmod(password_file, 0o644)

    def own(self, path):
        """Apache's children run as nobody when we are root: they must write the DAV root."""
        if self.as_root:
            os.chown(path, pwd.getpwnam("nobody").pw_uid, grp.getgrnam("nogroup").gr_gid)

    def configuration(self, port):
        root = self.directory
        modules = ["mpm_event", "authz_core", "authz_user", "authn_core", "authn_file", "auth_basic", "dav",
                   "dav_fs"]
        lines = [f"ServerRoot {root}", "ServerName 127.0.0.1", f"Listen 127.0.0.1:{port}"]
        lines += [f"LoadModule {name}_module {MODULES}/mod_{name}.so" for name in modules]
        if self.as_root:
            lines += ["User nobody", "Group nogroup"]
        lines += [
            f"DefaultRuntimeDir {root}/run", f"PidFile {root}/httpd.pid", f"ErrorLog {root}/error.log",
            "LogLevel warn", "StartServers 1", "ServerLimit 2", "ThreadsPerChild 16", "MaxRequestWorkers 32",
            "KeepAlive On", "MaxKeepAliveRequests 0", "KeepAliveTimeout 15",
            # mod_log_config and mod_logio are compiled into Debian's apache2 (apache2 -l).
            'LogFormat "%m %U %>s %I %O %k %{begin:usec}t %D" wire', f"CustomLog {root}/access.log wire",
            f"DavLockDB {root}/lock/DavLock", f"DocumentRoot {root}/root",
            f"<Directory {root}/root>", "  Dav On", "  AuthType Basic", '  AuthName "dav"',
            f"  AuthUserFile {root}/htpasswd", "  Require valid-user",
            # Apache's default cap (1 GiB) is below a 1 GiB attachment's blob (sync_attachment_bench.py).
            "  LimitRequestBody 0", "</Directory>",
        ]
        return "\n".join(lines) + "\n"

    def start(self):
        if not os.path.exists("/usr/sbin/apache2") or not os.path.exists(f"{MODULES}/mod_dav_fs.so"):
            raise Failure("apache2 with mod_dav is not installed (make test-servers)")
        for _ in range(5):
            port = free_port()
            with open(f"{self.directory}/httpd.conf", "w") as file:
                file.write(self.configuration(port))
            with open(f"{self.directory}/stderr.log", "w") as stderr:
                self.process = subprocess.Popen(
                    ["/usr/sbin/apache2", "-f", f"{self.directory}/httpd.conf", "-DFOREGROUND"],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True)
            if self.answering(port):
                self.port = port
                return
            self.stop()
        raise Failure("apache2 did not start: " + open(f"{self.directory}/stderr.log").read()
                      + (open(f"{self.directory}/error.log").read()
                         if os.path.exists(f"{self.directory}/error.log") else ""))

    def answering(self, port):
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
                    connection.sendall(b"OPTIONS / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    if connection.recv(16).startswith(b"HTTP/1."):
                        return True
            except OSError:
                pass
            time.sleep(0.05)
        return False

    def stop(self):
        """SIGTERM to the group, up to 10 s for the parent, then SIGKILL to the whole group."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()
        self.process = None

    def collection(self, name):
        """A fresh, empty collection; returns its URL."""
        os.mkdir(f"{self.directory}/root/{name}", 0o755)
        self.own(f"{self.directory}/root/{name}")
        return f"http://127.0.0.1:{self.port}/{name}"

    def log_mark(self):
        path = f"{self.directory}/access.log"
        return os.path.getsize(path) if os.path.exists(path) else 0

    def requests_since(self, mark):
        """(method, path, status, received, sent, keep-alive count, start in µs since 1970, µs taken)
        of each request logged after `mark`."""
        with open(f"{self.directory}/access.log", "rb") as log:
            log.seek(mark)
            lines = log.read().decode().splitlines()
        entries = []
        for line in lines:
            method, path, *numbers = line.split(" ")
            entries.append((method, path, *map(int, numbers)))
        return entries


class Device:
    """A home and a vault of its own, driven through the binaries."""

    def __init__(self, root, name, tasker, taskkey, user):
        self.root = f"{root}/{name}"
        os.mkdir(self.root, 0o700)
        self.tasker = tasker
        self.taskkey = taskkey
        self.user = user
        self.environment = {"PATH": "/usr/bin:/bin", "TASKER_HOME": f"{self.root}/tasker",
                            "TASKKEY_HOME": f"{self.root}/keys", "LANG": "C.UTF-8"}
        self.passphrase = self.secret_file("pass", f"bench passphrase of {name}")
        self.password = self.secret_file("dav-password", USERS[user])
        self.vault_made = False

    def secret_file(self, name, text):
        path = f"{self.root}/{name}"
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
            file.write(text + "\n")
        return path

    def run(self, command):
        result = subprocess.run(command, env=self.environment, capture_output=True)
        if result.returncode != 0:
            raise Failure(f"{' '.join(command)} exited {result.returncode}: {result.stderr.decode()}")
        return result.stdout

    def make_vault(self):
        self.run([self.taskkey, "init", "--kdf", "fast-test-only", "--passphrase-file", self.passphrase])
        self.vault_made = True

    def fill(self, tasks):
        """`tasks` tasks, the first through tasker, the rest with SQLite's shell, each with a 1 KiB note."""
        self.run([self.tasker, "add", "seed task", "--due", "2026-12-01", "--priority", "high"])
        self.run(["sqlite3", "-batch", f"{self.root}/tasker/tasker.db", f"""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {tasks - 1})
            INSERT INTO tasks (title, notes, due, estimate_minutes, priority, energy, status, created_at, contexts)
            SELECT 'task ' || i || ' with a title of ordinary length', lower(hex(randomblob(512))),
              CASE WHEN i % 3 = 0 THEN NULL ELSE date('2026-11-01', '+' || (i % 90) || ' days') END,
              CASE WHEN i % 4 = 0 THEN NULL ELSE (i % 12) * 10 END, i % 4,
              CASE WHEN i % 5 = 0 THEN NULL ELSE 1 + i % 3 END, 'open', 1764547200, '@home'
            FROM n;"""])

    def join_keys(self, source):
        """The sync keys of `source` through a sync bundle (SyncWebDAVTests.davJoin)."""
        bundle = f"{source.root}/keys-for-{os.path.basename(self.root)}.tksync"
        source.run([self.taskkey, "sync", "export", "--out", bundle, "--passphrase-file", source.passphrase])
        self.run([self.taskkey, "sync", "import", bundle, "--passphrase-file", source.passphrase])

    def set_up(self, url):
        self.run([self.tasker, "sync", "setup", url, "--user", self.user, "--password-file", self.password,
                  "--allow-http", "--name", os.path.basename(self.root)])

    def timed(self, command):
        """Wall milliseconds and peak RSS (KiB) of one run; stdout to /dev/null."""
        with tempfile.TemporaryFile() as stderr:
            self.started = time.time()
            start = time.perf_counter()
            process = subprocess.Popen(command, env=self.environment, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=stderr)
            _, status, usage = os.wait4(process.pid, 0)
            elapsed = (time.perf_counter() - start) * 1000
            code = os.waitstatus_to_exitcode(status)
            if code != 0:
                stderr.seek(0)
                raise Failure(f"{' '.join(command)} exited {code}: {stderr.read().decode()}")
        return elapsed, usage.ru_maxrss

    def lock(self):
        if self.vault_made:
            subprocess.run([self.taskkey, "lock"], env=self.environment, capture_output=True)


def curl_timed(config_lines, directory, name):
    """Runs one curl process over a --config file; wall ms and the status of each transfer."""
    path = f"{directory}/{name}.curl"
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as file:
        file.write("\n".join(config_lines) + "\n")
    start = time.perf_counter()
    result = subprocess.run(["curl", "--config", path], capture_output=True)
    elapsed = (time.perf_counter() - start) * 1000
    if result.returncode != 0:
        raise Failure(f"curl --config {path} exited {result.returncode}: {result.stderr.decode()}")
    return elapsed, [int(code) for code in result.stdout.split()]


def curl_header(user):
    return [f'user = "{user}:{USERS[user]}"', "silent", "show-error", 'write-out = "%{http_code}\\n"']
