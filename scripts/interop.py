#!/usr/bin/env python3
"""Independent cross-check of TaskKey against SECURITY.md, in Python.

Written from SECURITY.md alone (not from the Swift code): it re-derives every
vector it knows in Vectors/ with the `cryptography` package, and runs the
real `taskkey` binary both ways (Python seals, taskkey opens; taskkey seals,
Python opens). Tasker's planning vectors in Apps/Tasker/Vectors/ are read by
scripts/plan-reader.py (standard library only). It makes its own virtual
environment on first run.

    python3 scripts/interop.py PATH/TO/taskkey        (what `make interop` runs)
"""
import base64
import json
import os
import re
import secrets
import stat
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV = os.path.join(ROOT, ".build", "interop-venv")
# pynacl: libsodium's crypto_box_seal, for the sealed boxes of sync epoch keys
# (scripts/sync-reader.py).
REQUIREMENTS = ["cryptography", "argon2-cffi", "pynacl"]
IMPORTS = "import cryptography, argon2, nacl"


def ensure_venv():
    """Re-run this script inside a virtual environment with the packages
    (installed again when a venv made before a package was added lacks it)."""
    if os.environ.get("TASKKEY_INTEROP_VENV") == "1":
        return
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
    if subprocess.run([python, "-c", IMPORTS], capture_output=True).returncode != 0:
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *REQUIREMENTS],
                       check=True)
    env = dict(os.environ, TASKKEY_INTEROP_VENV="1")
    os.execve(python, [python, *sys.argv], env)


ensure_venv()

from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: E402
from cryptography.exceptions import InvalidTag  # noqa: E402

passed = 0
failed = 0


def report(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")


# --- SECURITY.md §6: the sealed-value reader, step by step -----------------

MARKER = re.compile(rb"^tc([1-9][0-9]*)\.([0-9a-f]{8}):")
B64 = re.compile(rb"^[A-Za-z0-9+/]*={0,2}$")
MAX_SEALED = 22_369_673


class SealedError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def canonical_b64decode(text):
    if len(text) % 4 != 0 or not B64.match(text):
        raise SealedError("invalid_base64")
    try:
        raw = base64.b64decode(text, validate=True)
    except Exception:
        raise SealedError("invalid_base64")
    if base64.b64encode(raw) != text:  # rejects non-zero trailing bits
        raise SealedError("invalid_base64")
    return raw


def open_sealed(value, keys, context, as_text):
    """Returns ('plain', value) or ('valid', plaintext); raises SealedError."""
    m = MARKER.match(value)
    if not m:
        return "plain", value
    if m.group(1) != b"1":
        raise SealedError("unsupported_version")
    if len(value) > MAX_SEALED:
        raise SealedError("too_large")
    payload = canonical_b64decode(value[m.end():])
    if len(payload) < 28:
        raise SealedError("truncated")
    kid = m.group(2).decode()
    if kid not in keys:
        raise SealedError("unknown_key_id")
    nonce, body = payload[:12], payload[12:]
    try:
        plaintext = AESGCM(keys[kid]).decrypt(nonce, body, m.group(0) + context)
    except InvalidTag:
        raise SealedError("authentication_failed")
    if as_text:
        try:
            plaintext.decode("utf-8")
        except UnicodeDecodeError:
            raise SealedError("invalid_utf8")
    return "valid", plaintext


def seal(plaintext, kid, key, context, nonce=None):
    nonce = nonce if nonce is not None else secrets.token_bytes(12)
    marker = f"tc1.{kid}:".encode()
    return marker + base64.b64encode(nonce + AESGCM(key).encrypt(nonce, plaintext, marker + context))


# --- Vectors/ ---------------------------------------------------------------

def check_sealed_value(doc, name):
    keys = {k["kid"]: bytes.fromhex(k["key"]) for k in doc["keys"]}
    for t in doc["tests"]:
        what = f"{name} case {t['id']} ({t['comment']})"
        value, context = t["value"].encode(), t["context"].encode()
        try:
            result, out = open_sealed(value, keys, context, t["open_as"] == "text")
            if result == "plain":
                ok = t["result"] == "plain" and out == value
            else:
                ok = t["result"] == "valid" and out.hex() == t["plaintext"]
        except SealedError as e:
            ok = t["result"] == "invalid" and e.code == t["error"]
        report(ok, what)
        if t["result"] == "valid":
            kid = MARKER.match(value).group(2).decode()
            again = seal(bytes.fromhex(t["plaintext"]), kid, keys[kid], context, bytes.fromhex(t["nonce"]))
            report(again == value, f"{what}: sealing with the listed nonce reproduces the value")


KEY_FILE_HEX = re.compile(rb"^[0-9a-f]{8}:[0-9a-f]{64}$")


def key_file_outcome(content, mode):
    """docs/formats/key-file.md: the mode first, then the exact grammar."""
    if mode & 0o077:
        return "unsafe_permissions", None
    line = content[:-1] if len(content) == 74 and content[73:] == b"\n" else content
    if not KEY_FILE_HEX.match(line) or len(line) != 73:
        return "malformed_key_file", None
    return None, (line[:8].decode(), line[9:].decode())


def check_key_file(doc, name, taskkey=None):
    """Each case by the Python reader, and through the binary: 'open --key-file'
    of a plain value must exit 0, 65 or 77 as the case's outcome says."""
    exits = {None: 0, "malformed_key_file": 65, "unsafe_permissions": 77}
    with tempfile.TemporaryDirectory() as home:
        for t in doc["tests"]:
            content, mode = bytes.fromhex(t["content"]), int(t["mode"], 8)
            error, parsed = key_file_outcome(content, mode)
            ok = error == t.get("error") and (error or parsed == (t["kid"], t["key"]))
            report(ok, f"{name} case {t['id']} ({t['comment']})")
            if taskkey:
                path = os.path.join(home, f"case-{t['id']}.key")
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                os.write(fd, content)
                os.close(fd)
                os.chmod(path, mode)
                r = run(taskkey, ["open", "--key-file", path], b"a plain note\n")
                report(r.returncode == exits[t.get("error")], f"taskkey open --key-file, {name} case {t['id']}")


def sync_merge(local, bundle, choice):
    """docs/formats/sync-bundle.md, "Import": the merged store, or the error.
    `choice` is "adopt" (--adopt-primary), "keep" (--keep-primary) or
    "automatic" (neither option)."""
    keys, primary = dict(local["keys"]), local["primary"]
    retired = set(local["retired"]) | set(bundle["retired"])
    if choice == "automatic":  # a primary new here and retired nowhere
        adopt = bundle["primary"] not in keys and bundle["primary"] not in retired
    else:
        adopt = choice == "adopt"
    for kid, key in bundle["keys"].items():
        if kid in retired:
            continue
        if kid in keys and keys[kid] != key:
            return "key_conflict"
        keys[kid] = key
    if adopt:
        if bundle["primary"] in retired:
            return "retired_key"
        primary = bundle["primary"]
    for kid in bundle["retired"]:  # after an adoption
        if kid in keys:
            if kid == primary:
                return "retired_key"
            del keys[kid]
    items = {i["name"]: i for i in local["items"]}
    for item in bundle["items"]:
        if item["name"] in local.get("device_only_items", []):
            continue
        if item["name"] not in items or item["modified"] > items[item["name"]]["modified"]:
            items[item["name"]] = item
    return {"keys": keys, "primary": primary, "retired": sorted(retired),
            "items": [items[n] for n in sorted(items, key=lambda n: n.encode())]}


def check_sync_import(doc, name):
    for t in doc["tests"]:
        choice = {(True, False): "adopt", (False, True): "keep", (False, False): "automatic"}.get(
            (t["adopt_primary"], t.get("keep_primary", False)))
        got = sync_merge(t["local"], t["bundle"], choice) if choice else "both options"
        want = t.get("error") if t["result"] == "invalid" else dict(t["expected"], **{"device_only_items": []})
        if isinstance(got, dict):
            got["device_only_items"] = []
            want = {k: v for k, v in want.items()}
            want.setdefault("device_only_items", [])
        report(got == want, f"{name} case {t['id']} ({t['comment']})")


def check_vault(doc, name):
    """The vault reader written from SECURITY.md's vault section, with
    argon2-cffi for Argon2id (scripts/vault-reader.py)."""
    reader = os.path.join(ROOT, "scripts", "vault-reader.py")
    r = subprocess.run([sys.executable, reader, "--check", os.path.join(ROOT, name)], capture_output=True, text=True)
    for line in r.stdout.splitlines():
        report(line.startswith("ok"), f"{name}: {line}")
    report(r.returncode == 0 and r.stdout.strip() != "", f"{name}: vault-reader.py --check exit {r.returncode}")


_assistant_result = None


def check_assistant(doc, name):
    """The assistant-key files are re-derived by one stdlib-only reader
    written from docs/formats/ (scripts/check_assistant_vectors.py); it runs
    once and its verdict counts for each file."""
    global _assistant_result
    if _assistant_result is None:
        reader = os.path.join(ROOT, "scripts", "check_assistant_vectors.py")
        _assistant_result = subprocess.run([sys.executable, reader, os.path.join(ROOT, "Vectors")],
                                           capture_output=True, text=True)
    r = _assistant_result
    report(r.returncode == 0 and "cases agree" in r.stdout, f"{name}: {r.stdout.strip().splitlines()[-1:]}")


CHECKERS = {
    ("sealed-value", 1): check_sealed_value,
    ("vault", 1): check_vault,
    ("backup", 1): check_vault,
    ("assistant-key", 1): check_assistant,
    ("assistant-last-used", 1): check_assistant,
    ("assistant-last-used", 2): check_assistant,
    ("key-file", 1): check_key_file,
    ("sync-import", 1): check_sync_import,
    ("assistant-registry", 1): check_assistant,
    ("assistant-registry", 2): check_assistant,
}


def load_script(name):
    """Loads one of the independent readers beside this script as a module."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name.replace("-", "_")[:-3], os.path.join(ROOT, "scripts", name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Attachments (docs/formats/attachment.md): scripts/attachment-reader.py, and
# the standard's published Cobblestone vectors through the same reader.
ATTACHMENTS = load_script("attachment-reader.py")
CHECKERS[("attachment", 1)] = lambda doc, name: ATTACHMENTS.check_vectors(doc, name, report)

# The unlock session (docs/formats/unlock-session.md): scripts/session-reader.py.
SESSIONS = load_script("session-reader.py")
CHECKERS[("unlock-session", 2)] = lambda doc, name: SESSIONS.check_vectors(doc, name, report)

# AES-256-GCM, Argon2id, and Wycheproof's AES-GCM, HMAC-SHA256 and
# HKDF-SHA-512 files: scripts/primitives-reader.py.
PRIMITIVES = load_script("primitives-reader.py")
CHECKERS[("aes-256-gcm", 1)] = lambda doc, name: PRIMITIVES.check_aes_gcm(doc, name, report)
CHECKERS[("argon2id", 1)] = lambda doc, name: PRIMITIVES.check_argon2id(doc, name, report)
WYCHEPROOF = {
    "AES-GCM": PRIMITIVES.check_wycheproof_aead,
    "HMACSHA256": PRIMITIVES.check_wycheproof_mac,
    "HKDF-SHA-512": PRIMITIVES.check_wycheproof_hkdf,
}

# Passphrase bytes (docs/formats/vault-file.md): scripts/passphrase-reader.py.
PASSPHRASES = load_script("passphrase-reader.py")
CHECKERS[("passphrase-bytes", 1)] = lambda doc, name: PASSPHRASES.check_vectors(doc, name, report)

# CPace (docs/formats/cpace.md): scripts/cpace-reader.py, standard library
# only (ristretto255 with integers), over the draft's vectors and TaskKey's.
CPACE = load_script("cpace-reader.py")
CHECKERS[("cpace-ristretto255-sha512", 1)] = lambda doc, name: CPACE.check_vectors(doc, name, report)


def check_cpace_drift():
    """The project cases are what scripts/cpace-vectors.py makes (make vectors)."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "cpace-vectors.py"), "--check"],
                       capture_output=True, text=True)
    report(r.returncode == 0, f"Vectors/cpace-ristretto255-sha512-v1.json: {r.stdout.strip()}")

# Tasker's planning formats (docs/formats/provider-record.md, plan-request.md,
# plan-answer.md): scripts/plan-reader.py, standard library only, over its
# three files in Apps/Tasker/Vectors/ (which check_vectors does not walk).
PLANS = load_script("plan-reader.py")

# Tasker sync storage (docs/formats/sync-storage.md): scripts/sync-reader.py, over
# Apps/Tasker/Vectors/sync-storage-v1.json (which check_vectors does not walk).
SYNC = load_script("sync-reader.py")

# Pairing (docs/formats/pairing.md): scripts/pairing-peer.py, with CPace from
# scripts/cpace-reader.py, pairs live with the binary as joiner and as offerer.
PAIRING = load_script("pairing-peer.py")
CHECKERS[("pairing", 1)] = lambda doc, name: PAIRING.check_vectors(doc, name, report)


def check_vectors():
    unchecked = []
    for directory, _, files in sorted(os.walk(os.path.join(ROOT, "Vectors"))):
        for file in sorted(f for f in files if f.endswith(".json")):
            path = os.path.join(directory, file)
            name = os.path.relpath(path, ROOT)
            doc = json.load(open(path, encoding="utf-8"))
            checker = CHECKERS.get((doc.get("format"), doc.get("version")))
            if doc.get("algorithm") in WYCHEPROOF and "testGroups" in doc:
                checker = lambda doc, name: WYCHEPROOF[doc["algorithm"]](doc, name, report)  # noqa: E731
            if doc.get("schema") == "c2sp_chunked_encryption_schema.json":
                checker = lambda doc, name: ATTACHMENTS.check_cobblestone(doc, name, report)  # noqa: E731
            if checker:
                checker(doc, name)
            else:
                unchecked.append(name)
    return unchecked


# --- the real binary, both ways --------------------------------------------

def run(taskkey, args, data):
    return subprocess.run([taskkey, *args], input=data, capture_output=True)


def check_binary(taskkey):
    with tempfile.TemporaryDirectory() as home:
        kid, key = secrets.token_hex(4), secrets.token_bytes(32)
        key_file = os.path.join(home, "python.key")
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        os.write(fd, f"{kid}:{key.hex()}\n".encode())  # SECURITY.md §7
        os.close(fd)
        keys = {kid: key}
        for size in (0, 1, 15, 16, 17, 100, 1000, 65536):
            plaintext = secrets.token_bytes(size)
            context = f"note/{secrets.randbelow(10**6)}/body".encode()
            sealed = seal(plaintext, kid, key, context)
            r = run(taskkey, ["open", "--exact", "--key-file", key_file, "--context", context.decode()], sealed + b"\n")
            report(r.returncode == 0 and r.stdout == plaintext, f"taskkey opens a Python-sealed value of {size} bytes")
            r = run(taskkey, ["seal", "--exact", "--key-file", key_file, "--context", context.decode()], plaintext)
            try:
                result, out = open_sealed(r.stdout.rstrip(b"\n"), keys, context, False)
                ok = r.returncode == 0 and result == "valid" and out == plaintext
            except SealedError:
                ok = False
            report(ok, f"Python opens a taskkey-sealed value of {size} bytes")
            tampered = bytearray(base64.b64decode(sealed[13:]))
            tampered[-1] ^= 1
            bad = sealed[:13] + base64.b64encode(bytes(tampered))
            r = run(taskkey, ["open", "--key-file", key_file, "--context", context.decode()], bad)
            report(r.returncode == 10 and r.stdout == b"", f"taskkey refuses a tampered value of {size} bytes (exit 10)")


def check_backup_binary(taskkey):
    """taskkey writes a backup of a fresh vault; the independent reader
    (scripts/vault-reader.py, from SECURITY.md §10.4) opens it and finds the
    synchronisable item but no device-only one."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("vault_reader", os.path.join(ROOT, "scripts", "vault-reader.py"))
    reader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reader)
    with tempfile.TemporaryDirectory() as home:
        env = dict(os.environ, TASKKEY_HOME=os.path.join(home, "keys"))
        pass_file = os.path.join(home, "pass")
        fd = os.open(pass_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        os.write(fd, b"interop passphrase\n")
        os.close(fd)

        def tk(args, data=b""):
            return subprocess.run([taskkey, *args], input=data, capture_output=True, env=env)

        steps = [tk(["init", "--kdf", "fast-test-only", "--passphrase-file", pass_file]),
                 tk(["unlock", "--passphrase-file", pass_file]),
                 tk(["item", "set", "sync/one"], b"synchronisable"),
                 tk(["item", "set", "device/one", "--device-only"], b"DEVICE-ONLY-INTEROP"),
                 tk(["backup", "create", "--out", os.path.join(home, "b.tkbackup")])]
        tk(["lock"])
        report(all(r.returncode == 0 for r in steps), "taskkey makes a vault and a backup of it")
        data = open(os.path.join(home, "b.tkbackup"), "rb").read()
        try:
            result = reader.read_backup(data, b"interop passphrase")
            names = [i["name"] for i in result["store1"]["items"]]
            ok = names == ["sync/one"] and b"DEVICE-ONLY-INTEROP" not in data
        except reader.Outcome as outcome:
            ok = False
            print("backup:", outcome.args[0])
        report(ok, "Python opens a taskkey backup: the synchronisable item only, no device-only item")


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(64)
    unchecked = check_vectors()
    PLANS.check_all(report)
    SYNC.check_all(report)
    check_cpace_drift()
    check_key_file(json.load(open(os.path.join(ROOT, "Vectors", "key-file-v1.json"), encoding="utf-8")),
                   "Vectors/key-file-v1.json", sys.argv[1])
    check_binary(sys.argv[1])
    check_backup_binary(sys.argv[1])
    ATTACHMENTS.check_binary(sys.argv[1], report)
    global passed, failed
    paired, unpaired = PAIRING.run(sys.argv[1], lambda kid, key, text, context: seal(text, f"{kid:08x}", key, context))
    passed, failed = passed + paired, failed + unpaired
    for name in unchecked:
        print(f"not cross-checked (no independent reader here yet): {name}")
    print(f"interop: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
