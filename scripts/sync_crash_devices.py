"""The devices of the Layer-1 sync crash sweep (scripts/sync-crashtest.py):
A, B and C, which sync, and D, which has their keys but joins only to check
that a fresh device converges; running tasker and taskkey on each, the
template they start every run from, putting it back, and reading a device's
state to compare.
"""
import hashlib
import json
import os
import shutil
from concurrent.futures import ThreadPoolExecutor

import crashtest

PASSPHRASES = {"a": "amber quiver lantern 52", "b": "cobalt meadow tandem 38", "c": "ember thistle quarry 71",
               "d": "garnet willow sextant 64"}
DEVICES = "abcd"
SYNCED = "abc"  # D is set up only by the fresh-device check


class Devices:
    """Devices A to D under one root: homes, vaults, one storage folder."""

    def __init__(self, tasker, taskkey, root):
        self.tasker = tasker
        self.taskkey = taskkey
        self.root = root
        self.store = os.path.join(root, "store")
        self.homes = {d: os.path.join(root, "tasker-" + d) for d in DEVICES}
        self.vaults = {d: os.path.join(root, "keys-" + d) for d in DEVICES}
        self.template = os.path.join(root, "template")
        for device, text in PASSPHRASES.items():
            path = self.passfile(device)
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as handle:
                handle.write(text + "\n")

    def passfile(self, device):
        return os.path.join(self.root, "pass-" + device)

    def environment(self, device):
        return {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC", "HOME": self.root,
                "TASKER_HOME": self.homes[device], "TASKKEY_HOME": self.vaults[device]}

    def run(self, device, binary, arguments, stdin=b"", strace=None):
        # crashtest.py's runner: a session of its own, a hang killed with its tracer and reported as -1.
        return crashtest.run([binary] + arguments, self.environment(device), stdin, strace, name="sync-crashtest")

    def tk(self, device, arguments, stdin=b""):
        return self.run(device, self.tasker, arguments, stdin)

    def must(self, device, binary, arguments, stdin=b""):
        code, out, err = self.run(device, binary, arguments, stdin)
        if code != 0:
            raise SystemExit(f"sync-crashtest: set-up step on {device} {arguments} failed with {code}: {err}")
        return out

    def must_tasker(self, device, arguments, stdin=b""):
        return self.must(device, self.tasker, arguments, stdin)

    def task_id(self, device, title):
        tasks = json.loads(self.must_tasker(device, ["list", "--all", "--json"]))["tasks"]
        found = [t["id"] for t in tasks if t["title"] == title]
        if len(found) != 1:
            raise SystemExit(f"sync-crashtest: set-up: {title!r} found {len(found)} times on {device}")
        return found[0]

    def page_id(self, device, title):
        pages = json.loads(self.must_tasker(device, ["page", "list", "--json"]))["pages"]
        return [p["id"] for p in pages if p["title"] == title][0]

    def sync(self, device):
        out = self.must_tasker(device, ["sync", "now", "--json"])
        result = json.loads(out)
        if result.get("refused"):
            raise SystemExit(f"sync-crashtest: set-up sync on {device} refused: {result['refused']}")
        return result

    # The template (see the docstring).
    def make_template(self):
        for device in DEVICES:
            os.makedirs(self.homes[device], mode=0o700)
        os.makedirs(self.store, mode=0o700)
        tk = self.taskkey
        self.must("a", tk, ["init", "--kdf", "fast-test-only", "--passphrase-file", self.passfile("a"),
                            "--accept-weak-passphrase"])
        self.must("a", tk, ["unlock", "--passphrase-file", self.passfile("a")])
        self.must_tasker("a", ["sync", "setup", self.store, "--name", "a"])
        priorities = ["none", "low", "medium", "high"]
        for n in range(1, 21):
            arguments = ["add", f"A task {n:02d}", "--priority", priorities[n % 4],
                         "--contexts", f"@a{n % 3} #batch"]
            if n % 2 == 0:
                arguments += ["--due", f"2027-01-{n:02d}"]
            if n % 5 == 0:
                arguments += ["--estimate", str(n * 3), "--energy", "high"]
            stdin = b""
            if n % 4 != 3:  # 15 of the 20 with a note
                arguments += ["--notes", "-"]
                stdin = f"Note of A task {n:02d}\nline two: {'x' * n}\n".encode()
            self.must_tasker("a", arguments, stdin)
        self.must_tasker("a", ["page", "new", "A page one", "--body", "-"], b"Agenda\n- first\n- second\n")
        self.must_tasker("a", ["page", "new", "A page two", "--body", "-"], b"Second page body\n")
        # An attachment A removes once B and C have it: its blob waits for their acknowledgements.
        self.attach("a", "A task 09", "old.bin", 3000)
        self.sync("a")
        self.deleted_blob = os.listdir(os.path.join(self.store, "tasker-sync", "a", self.device_id("a")))[0]
        bundle = os.path.join(self.root, "bundle.tksync")
        self.must("a", tk, ["sync", "export", "--out", bundle, "--passphrase-file", self.passfile("a")])

        for device in "bcd":
            self.must(device, tk, ["init", "--kdf", "fast-test-only", "--passphrase-file", self.passfile(device),
                                   "--accept-weak-passphrase"])
            self.must(device, tk, ["unlock", "--passphrase-file", self.passfile(device)])
            self.must(device, tk, ["sync", "import", bundle, "--passphrase-file", self.passfile("a")])
        # B and C join (their first objects, with their box keys, carry no records); A reads them, so it
        # knows both, then removes old.bin.
        for device in "bc":
            self.must_tasker(device, ["sync", "setup", self.store, "--name", device])
            self.sync(device)
        self.sync("a")
        attachment = json.loads(self.must_tasker("a", ["attach", "list", "--json"]))["attachments"][0]["id"]
        self.must_tasker("a", ["attach", "remove", attachment])
        self.sync("a")
        for n in range(1, 11):
            arguments = ["add", f"B task {n:02d}", "--priority", priorities[(n + 1) % 4], "--contexts", "@b"]
            stdin = b""
            if n % 2 == 1:
                arguments += ["--notes", "-"]
                stdin = f"Note of B task {n:02d}\n".encode()
            self.must_tasker("b", arguments, stdin)
        self.must_tasker("b", ["edit", self.task_id("b", "A task 03"), "--title", "A task 03 (renamed by B)"])
        self.must_tasker("b", ["done", self.task_id("b", "A task 04")])
        self.sync("b")  # B's first objects, which A has not read
        self.must_tasker("b", ["edit", self.task_id("b", "B task 02"), "--due", "2027-03-01"])
        self.must_tasker("b", ["edit", self.task_id("b", "A task 06"), "--notes", "-"], b"B's note for A task 06\n")
        self.sync("b")  # a second object A has not read; it acknowledges the removal of old.bin
        self.sync("c")  # C applies the removal and B's objects and acknowledges them: an object A has not read
        # B's pending changes, not synced.
        self.must_tasker("b", ["done", self.task_id("b", "B task 05")])
        self.must_tasker("b", ["delete", self.task_id("b", "B task 07")])
        self.must_tasker("b", ["edit", self.task_id("b", "A task 10"), "--notes", "-"], b"B edits A task 10\n")
        self.must_tasker("b", ["add", "B task 11 (pending)", "--notes", "-"], b"pending note of B\n")
        # A's pending changes, not synced.
        self.must_tasker("a", ["edit", self.task_id("a", "A task 01"), "--title", "A task 01 (edited)",
                               "--priority", "high", "--due", "2027-02-02"])
        self.must_tasker("a", ["edit", self.task_id("a", "A task 02"), "--contexts", "@moved"])
        self.must_tasker("a", ["done", self.task_id("a", "A task 05")])
        self.must_tasker("a", ["delete", self.task_id("a", "A task 08")])
        self.must_tasker("a", ["edit", self.task_id("a", "A task 07"), "--notes", "-"], b"A's new note on 07\n")
        self.must_tasker("a", ["edit", self.task_id("a", "A task 10"), "--notes", "-"], b"A edits A task 10\n")
        self.must_tasker("a", ["page", "edit", self.page_id("a", "A page two"), "--body", "-"], b"Edited body\n")
        self.must_tasker("a", ["add", "A task 21 (pending)", "--due", "2027-04-04"])
        # An attachment of A's, not synced: a killed sync also stops while its blob is sealed and written.
        self.attach("a", "A task 03", "report.bin", 40000)
        self.ids = {d: self.device_id(d) for d in SYNCED}
        for name, path in self.paths().items():
            shutil.copytree(path, os.path.join(self.template, name), symlinks=True)
        self.template_titles = sorted(t["title"] for t in self.tasks("a") + self.tasks("b"))

    def attach(self, device, title, name, size):
        path = os.path.join(self.root, name)
        with open(path, "wb") as file:
            file.write(bytes((n * 31 + n // 251) % 256 for n in range(size)))
        self.must_tasker(device, ["attach", "add", "--task", self.task_id(device, title), path])

    def device_id(self, device):
        return json.loads(self.must_tasker(device, ["sync", "status", "--json"]))["device"]

    # The homes, the vaults (a removal writes A's keyring) and the storage.
    def paths(self):
        found = {"store": self.store}
        for device in DEVICES:
            found["tasker-" + device] = self.homes[device]
            found["keys-" + device] = self.vaults[device]
        return found

    # The vault records the database by its canonical path: put the homes
    # back at the same paths. The vault files come back byte for byte, so
    # the unlock session (bound to the vault's header) still opens them.
    def restore(self):
        for name, path in self.paths().items():
            template = os.path.join(self.template, name)
            if name.startswith("keys-"):
                # The vault directory itself stays: its inode names the unlock session's key file.
                for entry in os.listdir(path):
                    child = os.path.join(path, entry)
                    if os.path.isdir(child) and not os.path.islink(child):
                        shutil.rmtree(child)
                    else:
                        os.unlink(child)
                for entry in os.listdir(template):
                    source = os.path.join(template, entry)
                    if os.path.isdir(source) and not os.path.islink(source):
                        shutil.copytree(source, os.path.join(path, entry), symlinks=True)
                    else:
                        shutil.copy2(source, os.path.join(path, entry), follow_symlinks=False)
                continue
            shutil.rmtree(path, ignore_errors=True)
            shutil.copytree(template, path, symlinks=True)

    def tasks(self, device):
        code, out, err = self.tk(device, ["list", "--all", "--json"])
        if code != 0:
            raise RuntimeError(f"list on {device} exits {code}: {err[:200]}")
        return json.loads(out)["tasks"]

    # A device's state without local ids: tasks with their notes, pages with
    # their bodies, and the conflicts.
    def state(self, device):
        tasks = self.tasks(device)
        code, out, err = self.tk(device, ["page", "list", "--json"])
        if code != 0:
            raise RuntimeError(f"page list on {device} exits {code}: {err[:200]}")
        pages = json.loads(out)["pages"]

        def show(arguments):
            code, out, err = self.tk(device, arguments)
            if code != 0:
                raise RuntimeError(f"{' '.join(arguments)} on {device} exits {code}: {err[:200]}")
            return json.loads(out)

        with ThreadPoolExecutor(8) as pool:
            shown = list(pool.map(show, [["show", t["id"], "--json"] for t in tasks]))
            bodies = list(pool.map(show, [["page", "show", p["id"], "--json"] for p in pages]))
        rows = sorted(json.dumps({k: t.get(k) for k in ("title", "status", "due", "priority", "contexts",
                                                        "energy", "estimate_minutes", "notes")}, sort_keys=True)
                      for t in shown)
        page_rows = sorted(json.dumps({"title": p["title"], "body": p["body"]}, sort_keys=True) for p in bodies)
        code, out, err = self.tk(device, ["conflicts", "--json"])
        if code != 0:
            raise RuntimeError(f"conflicts on {device} exits {code}: {err[:200]}")
        conflicts = sorted(json.dumps({"kind": c.get("kind"), "title": c.get("title"),
                                       "texts": sorted(x.get("text") or "" for x in c.get("texts", []))},
                                      sort_keys=True) for c in json.loads(out)["conflicts"])
        code, out, err = self.tk(device, ["attach", "list", "--json"])
        if code != 0:
            raise RuntimeError(f"attach list on {device} exits {code}: {err[:200]}")
        attachments = []
        for attachment in json.loads(out)["attachments"]:
            # Read whole (fetched from the storage the first time on a device that did not add it).
            code, content, err = self.run(device, self.tasker, ["attach", "get", attachment["id"]])
            if code != 0:
                raise RuntimeError(f"attach get on {device} exits {code}: {err[:200]}")
            attachments.append(json.dumps({"name": attachment["name"], "bytes": attachment["byte_count"],
                                           "sha256": hashlib.sha256(content).hexdigest()}, sort_keys=True))
        return {"tasks": rows, "pages": page_rows, "conflicts": conflicts, "attachments": sorted(attachments)}

    def objects(self):
        found = {}
        base = os.path.join(self.store, "tasker-sync", "d")
        for device in sorted(os.listdir(base)):
            found[device] = sorted(os.listdir(os.path.join(base, device)))
        return found

    def blobs(self, device):
        folder = os.path.join(self.store, "tasker-sync", "a", device)
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def temporaries(self):
        folder = os.path.join(self.store, "tasker-sync", "t")
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []

    def vault_digest(self):
        digest = hashlib.sha256()
        for device in DEVICES:
            for folder, _, files in sorted(os.walk(self.vaults[device])):
                for name in sorted(files):
                    path = os.path.join(folder, name)
                    digest.update(path.encode())
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
        return digest.hexdigest()

    def status(self, device):
        code, out, err = self.tk(device, ["sync", "status", "--json"])
        if code != 0:
            raise RuntimeError(f"sync status on {device} exits {code}: {err[:200]}")
        return json.loads(out)



def describe_difference(left, right, left_name, right_name):
    lines = []
    for part in ("tasks", "pages", "conflicts"):
        only_left = sorted(set(left[part]) - set(right[part]))
        only_right = sorted(set(right[part]) - set(left[part]))
        for row in only_left:
            lines.append(f"    {part} only on {left_name}: {row}")
        for row in only_right:
            lines.append(f"    {part} only on {right_name}: {row}")
        if not only_left and not only_right and left[part] != right[part]:
            lines.append(f"    {part}: the same rows, but {len(left[part])} on {left_name} and "
                         f"{len(right[part])} on {right_name} (a row twice)")
    return "\n".join(lines[:40])
