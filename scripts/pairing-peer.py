#!/usr/bin/env python3
"""An independent pairing peer, written from docs/formats/pairing.md and
docs/formats/store-contents.md (not from the Swift code): CPace comes from
scripts/cpace-reader.py (pure Python ristretto255), HKDF and AES-GCM from
the `cryptography` package. It pairs live with the real `taskkey` in both
roles over 127.0.0.1:

- as the joiner, against `taskkey pair offer`: it proves the code, opens the
  store record, checks the store's keyring against the offerer's
  `taskkey keys --json`, and says done;
- as the offerer, against `taskkey pair join`: it sends a store it made
  itself (one note key it chose), and the new vault then opens a value
  sealed under that key;

and checks a wrong code fails on both sides. Used by scripts/interop.py
(`make interop`); prints one line per check and returns the counts.
"""
import hashlib
import importlib.util
import json
import os
import secrets
import socket
import subprocess
import tempfile
import threading

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("cpace_reader", os.path.join(ROOT, "scripts", "cpace-reader.py"))
cpace = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cpace)

MAGIC = b"TKPAIR"
WORDS_SHA256 = "2d446cee9ce11910e4bcaf7ec518452dad08eb081963a3e9ff578113fd63f539"
ORDER = 2**252 + 27742317777372353535851937790883648493
ADA, ADB = b"TKPAIR1 joiner", b"TKPAIR1 offerer"


def words():
    with open(os.path.join(ROOT, "Vectors", "pairing-words-v1.txt"), encoding="utf-8") as handle:
        listed = [line.strip() for line in handle if line.strip() and not line.startswith("#")]
    assert hashlib.sha256(" ".join(listed).encode()).hexdigest() == WORDS_SHA256, "word list differs from the spec"
    return listed


WORDS = words()


def prs_of(code):
    parts = [part for part in code.lower().replace("-", " ").split() if part]
    assert len(parts) == 4
    return b"".join(WORDS.index(part).to_bytes(2, "big") for part in parts)


def endpoint(address):
    host, port = address[0], address[1]
    return (f"[{host.split('%')[0]}]:{port}" if ":" in host else f"{host}:{port}").encode()


def channel_identifier(offerer, joiner):
    return cpace.lv_cat(b"TKPAIR1 channel", endpoint(offerer), endpoint(joiner))


def hkdf(isk, info, length):
    return HKDF(algorithm=hashes.SHA512(), length=length, salt=None, info=info).derive(isk)


def recv_exact(sock, count):
    data = b""
    while len(data) < count:
        chunk = sock.recv(count - len(data))
        if not chunk:
            raise ConnectionError(f"peer closed after {len(data)} of {count} bytes")
        data += chunk
    return data


def read_message(sock, expected):
    header = recv_exact(sock, 8)
    assert header[:6] == MAGIC and header[6] == 1, f"bad header {header!r}"
    kind = header[7]
    if kind == 0x7F:
        raise PeerAborted(recv_exact(sock, 1)[0])
    assert kind == expected, f"type {kind} where {expected} was expected"
    fixed = {0x01: 48, 0x02: 96, 0x03: 64}.get(kind)
    if fixed is not None:
        return header, recv_exact(sock, fixed)
    length = recv_exact(sock, 4)
    size = int.from_bytes(length, "big")
    assert 28 <= size <= 28 + (8 << 20)
    return header + length, recv_exact(sock, size)


class PeerAborted(Exception):
    pass


def seal(key, kind, sequence, plaintext):
    length = (12 + len(plaintext) + 16).to_bytes(4, "big")
    prefix = MAGIC + bytes([1, kind]) + length
    nonce = secrets.token_bytes(12)
    return prefix + nonce + AESGCM(key).encrypt(nonce, plaintext, prefix + sequence.to_bytes(8, "big"))


def open_record(key, prefix, body, sequence):
    return AESGCM(key).decrypt(body[:12], body[12:], prefix + sequence.to_bytes(8, "big"))


def party(prs, ci, sid):
    generator = cpace.from_hash(hashlib.sha512(cpace.generator_string(prs, ci, sid)).digest())
    scalar = (secrets.randbelow(ORDER - 1) + 1).to_bytes(32, "little")
    return scalar, cpace.encode(cpace.multiply(int.from_bytes(scalar, "little"), generator))


def keys_from(scalar, sid, ya, yb, peer):
    error, k = cpace.scalar_mult_vfy(scalar, peer)
    if error:
        raise ValueError(error)
    isk = cpace.isk(sid, k, cpace.transcript_ir(ya, ADA, yb, ADB))
    _, ta, tb = cpace.confirmation(sid, isk, ya, ADA, yb, ADB)
    return isk, ta, tb


def verification(isk):
    value = int.from_bytes(hkdf(isk, b"TKPAIR1 verification", 4), "big") % 1_000_000
    text = f"{value:06d}"
    return f"{text[:3]} {text[3:]}"


def join(address, code):
    """The joiner's side against a live offer; returns (store plaintext, verification)."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host.strip("[]"), int(port)), timeout=30) as sock:
        ci = channel_identifier(sock.getpeername(), sock.getsockname())
        sid = secrets.token_bytes(16)
        scalar, ya = party(prs_of(code), ci, sid)
        sock.sendall(MAGIC + bytes([1, 0x01]) + sid + ya)
        _, body = read_message(sock, 0x02)
        yb, tb = body[:32], body[32:]
        isk, ta, expected_tb = keys_from(scalar, sid, ya, yb, yb)
        if not secrets.compare_digest(tb, expected_tb):
            sock.sendall(MAGIC + bytes([1, 0x7F, 1]))
            raise ValueError("confirmation failed")
        sock.sendall(MAGIC + bytes([1, 0x03]) + ta)
        prefix, body = read_message(sock, 0x10)
        store = open_record(hkdf(isk, b"TKPAIR1 offerer to joiner", 32), prefix, body, 0)
        sock.sendall(seal(hkdf(isk, b"TKPAIR1 joiner to offerer", 32), 0x11, 0, b""))
        return store, verification(isk)


def offer(listener, code, store):
    """The offerer's side for one connection on `listener`; returns the verification string."""
    sock, _ = listener.accept()
    listener.close()
    with sock:
        sock.settimeout(30)
        ci = channel_identifier(sock.getsockname(), sock.getpeername())
        _, body = read_message(sock, 0x01)
        sid, ya = body[:16], body[16:]
        scalar, yb = party(prs_of(code), ci, sid)
        isk, expected_ta, tb = keys_from(scalar, sid, ya, yb, ya)
        sock.sendall(MAGIC + bytes([1, 0x02]) + yb + tb)
        _, ta = read_message(sock, 0x03)
        if not secrets.compare_digest(ta, expected_ta):
            sock.sendall(MAGIC + bytes([1, 0x7F, 1]))
            raise ValueError("confirmation failed")
        sock.sendall(seal(hkdf(isk, b"TKPAIR1 offerer to joiner", 32), 0x10, 0, store))
        prefix, body = read_message(sock, 0x11)
        assert open_record(hkdf(isk, b"TKPAIR1 joiner to offerer", 32), prefix, body, 0) == b""
        return verification(isk)


def store_plaintext(key_id, key):
    """A synchronisable store per store-contents.md: one key, no items, zero padding to 512."""
    body = (1).to_bytes(4, "big") + key_id.to_bytes(4, "big") + key_id.to_bytes(4, "big") + key
    body += (0).to_bytes(4, "big")
    return body + bytes(-len(body) % 512)


def keyring_of(store):
    count = int.from_bytes(store[:4], "big")
    primary = int.from_bytes(store[4:8], "big")
    ids = [int.from_bytes(store[8 + 36 * i:12 + 36 * i], "big") for i in range(count)]
    return f"{primary:08x}", [f"{i:08x}" for i in ids]


def run(taskkey, seal_value):
    """Live checks against the binary; returns (passed, failed)."""
    passed = failed = 0

    def report(ok, what):
        nonlocal passed, failed
        passed, failed = passed + bool(ok), failed + (not ok)
        if not ok:
            print(f"FAIL pairing: {what}")

    with tempfile.TemporaryDirectory() as root:
        home = os.path.join(root, "offering")
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TASKKEY_HOME": home}
        secret = os.path.join(root, "pass")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
            handle.write("correct horse battery\n")
        subprocess.run([taskkey, "init", "--kdf", "fast-test-only", "--passphrase-file", secret,
                        "--accept-weak-passphrase"], env=env, check=True, capture_output=True)
        keys = json.loads(subprocess.run([taskkey, "keys", "--json"], env=env, check=True,
                                         capture_output=True).stdout)

        # Python joins a Swift offer.
        for wrong in (False, True):
            process = subprocess.Popen([taskkey, "pair", "offer", "--json", "--listen", "127.0.0.1:0"], env=env,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            first = json.loads(process.stdout.readline())
            code = first["code"]
            if wrong:
                parts = code.split()
                parts[0] = WORDS[(WORDS.index(parts[0]) + 1) % len(WORDS)]
                code = " ".join(parts)
            try:
                store, shown = join(first["addresses"][0], code)
                outcome = "paired"
            except ValueError:
                store, shown, outcome = None, None, "confirmation failed"
            out, err = process.communicate(timeout=60)
            events = [json.loads(line) for line in out.splitlines()]
            if wrong:
                report(outcome == "confirmation failed" and process.returncode == 26,
                       f"a wrong code as joiner: {outcome}, offer exit {process.returncode}")
            else:
                primary, ids = keyring_of(store)
                report(process.returncode == 0 and primary == keys["primary"],
                       f"python joins taskkey: exit {process.returncode}, primary {primary} {err.decode()}")
                report(events[-1].get("verification") == shown, "the same verification string as joiner")

        # Swift joins a Python offer, and opens what Python sealed under the key it sent.
        for wrong in (False, True):
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.bind(("127.0.0.1", 0))
            listener.listen(1)
            address = "127.0.0.1:%d" % listener.getsockname()[1]
            code = " ".join(secrets.choice(WORDS) for _ in range(4))
            key_id, key = secrets.randbits(32) | 1, secrets.token_bytes(32)
            result = {}
            thread = threading.Thread(target=lambda: result.update(v=_offer_safely(listener, code, key_id, key)))
            thread.start()
            joining = os.path.join(root, f"joining-{int(wrong)}")
            code_file = os.path.join(root, f"code-{int(wrong)}")
            with open(os.open(code_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as handle:
                typed = code if not wrong else " ".join(code.split()[:3] + [WORDS[0] if code.split()[3] != WORDS[0]
                                                                           else WORDS[1]])
                handle.write(typed + "\n")
            jenv = dict(env, TASKKEY_HOME=joining)
            joined = subprocess.run([taskkey, "pair", "join", address, "--code-file", code_file, "--passphrase-file",
                                     secret, "--kdf", "fast-test-only", "--accept-weak-passphrase", "--json"],
                                    env=jenv, capture_output=True, timeout=60)
            thread.join(60)
            if wrong:
                report(joined.returncode == 26 and result.get("v") == "confirmation failed"
                       and not os.path.exists(os.path.join(joining, "vault.tkv")),
                       f"a wrong code as offerer: join exit {joined.returncode}, {result.get('v')}")
                continue
            report(joined.returncode == 0, f"taskkey joins python: {joined.stderr.decode()}")
            if joined.returncode == 0:
                report(json.loads(joined.stdout)["verification"] == result.get("v"),
                       "the same verification string as offerer")
                sealed = seal_value(key_id, key, b"from python", b"task/7/notes")
                opened = subprocess.run([taskkey, "open", "--context", "task/7/notes", "--exact"], env=jenv,
                                        input=sealed, capture_output=True)
                report(opened.stdout == b"from python", f"the joined vault opens python's value: {opened.stderr}")
    print(f"pairing with the live binary (python as joiner and as offerer): {passed} passed, {failed} failed")
    return passed, failed


def _offer_safely(listener, code, key_id, key):
    try:
        return offer(listener, code, store_plaintext(key_id, key))
    except (ValueError, PeerAborted, ConnectionError, AssertionError):
        return "confirmation failed"


# --- Vectors/pairing-v1.json: written by `pairing-peer.py --write-vectors`,
# checked by `taskkey vectors check` (Swift) and by check_vectors below. ---

def fixed_seal(key, kind, sequence, plaintext, nonce):
    length = (12 + len(plaintext) + 16).to_bytes(4, "big")
    prefix = MAGIC + bytes([1, kind]) + length
    return prefix + nonce + AESGCM(key).encrypt(nonce, plaintext, prefix + sequence.to_bytes(8, "big"))


def exchange_case(code, offerer, joiner, sid, ya_scalar, yb_scalar, store, nonces):
    """Every byte of one pairing from its inputs (pairing.md, "The exchange")."""
    prs = prs_of(code)
    ci = channel_identifier(offerer, joiner)
    generator = cpace.from_hash(hashlib.sha512(cpace.generator_string(prs, ci, sid)).digest())
    ya = cpace.encode(cpace.multiply(int.from_bytes(ya_scalar, "little"), generator))
    yb = cpace.encode(cpace.multiply(int.from_bytes(yb_scalar, "little"), generator))
    isk, ta, tb = keys_from(ya_scalar, sid, ya, yb, yb)
    k_oj, k_jo = hkdf(isk, b"TKPAIR1 offerer to joiner", 32), hkdf(isk, b"TKPAIR1 joiner to offerer", 32)
    return {
        "code": code, "offerer": endpoint(offerer).decode(), "joiner": endpoint(joiner).decode(), "sid": sid.hex(),
        "ya": ya_scalar.hex(), "yb": yb_scalar.hex(), "prs": prs.hex(), "ci": ci.hex(),
        "start": (MAGIC + bytes([1, 1]) + sid + ya).hex(), "response": (MAGIC + bytes([1, 2]) + yb + tb).hex(),
        "confirm": (MAGIC + bytes([1, 3]) + ta).hex(), "isk": isk.hex(), "key_offerer_to_joiner": k_oj.hex(),
        "key_joiner_to_offerer": k_jo.hex(), "verification": verification(isk), "store": store.hex(),
        "store_record": fixed_seal(k_oj, 0x10, 0, store, nonces[0]).hex(),
        "done_record": fixed_seal(k_jo, 0x11, 0, b"", nonces[1]).hex(),
    }


def write_vectors(path):
    tests = []

    def add(kind, comment, **fields):
        tests.append({"id": len(tests) + 1, "comment": comment, "kind": kind, **fields})

    for text in ["acid acorn zone zoom", "ACID-acorn\tzone  zoom", "plank snare woozy gecko", "yoyo yoyo yoyo yoyo"]:
        add("code", "a code that reads, whatever the spelling", text=text, prs=prs_of(text).hex(), outcome="valid")
    for text, why in [("acid acorn zone", "three words"), ("acid acorn zone zoom acre", "five words"),
                      ("acid acorn zone zoomm", "a word not in the list"), ("acid acorn zone yo-yo", "a hyphen splits"),
                      ("acid acorn zone zoöm", "a letter outside a-z"), ("", "nothing")]:
        add("code", f"refused before anything is sent: {why}", text=text, outcome="code_not_read")
    store = store_plaintext(0x0A1B2C3D, bytes(range(32)))
    runs = [
        ("acid acorn zone zoom", ("192.168.1.20", 41733), ("192.168.1.30", 40222)),
        ("plank snare woozy gecko", ("fe80::1%2", 5000), ("fe80::2%7", 6000)),
    ]
    first = None
    for number, (code, offerer, joiner) in enumerate(runs):
        seed = hashlib.sha512(f"pairing vector {number}".encode()).digest()
        ya_scalar = (int.from_bytes(seed[:32], "little") % ORDER).to_bytes(32, "little")
        yb_scalar = (int.from_bytes(seed[32:], "little") % ORDER).to_bytes(32, "little")
        case = exchange_case(code, offerer, joiner, seed[:16], ya_scalar, yb_scalar, store, [seed[16:28], seed[28:40]])
        add("exchange", f"a whole pairing over {'IPv4' if number == 0 else 'IPv6 link-local (zones left out of CI)'}",
            outcome="valid", **case)
        if first is None:
            first, first_id = case, tests[-1]["id"]
    key = bytes.fromhex(first["key_offerer_to_joiner"])
    record = bytes.fromhex(first["store_record"])
    flip = lambda data, at: data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]  # noqa: E731
    add("record", "the store record as sent", key=key.hex(), sequence=0, record=record.hex(), outcome="valid",
        plaintext=first["store"])
    add("record", "a ciphertext bit changed", key=key.hex(), sequence=0, record=flip(record, 40).hex(),
        outcome="channel_tampered")
    add("record", "the header's type changed to done", key=key.hex(), sequence=0,
        record=(record[:7] + b"\x11" + record[8:]).hex(), outcome="channel_tampered")
    add("record", "replayed as the second record (sequence 1)", key=key.hex(), sequence=1, record=record.hex(),
        outcome="channel_tampered")
    add("record", "opened with the other direction's key", key=first["key_joiner_to_offerer"], sequence=0,
        record=record.hex(), outcome="channel_tampered")
    response = bytes.fromhex(first["response"])
    add("confirmation", "the response as sent: Tb verifies", case=first_id, response=response.hex(), outcome="valid")
    add("confirmation", "Tb with one bit changed", case=first_id, response=flip(response, 70).hex(),
        outcome="confirmation_failed")
    add("confirmation", "Yb with one bit changed", case=first_id, response=flip(response, 10).hex(),
        outcome="confirmation_failed")
    add("confirmation", "Yb the identity", case=first_id, response=(response[:8] + bytes(32) + response[40:]).hex(),
        outcome="confirmation_failed")
    for step, data, outcome, why in [
        ("start", b"GET / HT", "protocol_violation", "not the TKPAIR magic"),
        ("start", MAGIC + b"\x02\x01", "unsupported_version", "version 2"),
        ("start", MAGIC + b"\x01\x03", "protocol_violation", "confirm where start was expected"),
        ("start", MAGIC + b"\x01\x7f", "peer_aborted", "an abort is always allowed"),
        ("response", MAGIC + b"\x01\x02", "valid", "the type allowed at this step"),
        ("store", MAGIC + b"\x01\x10", "valid", "a record header"),
        ("store", MAGIC + b"\x01\x42", "protocol_violation", "a type no version 1 message has"),
    ]:
        add("header", f"{step}: {why}", step=step, header=data.hex(), outcome=outcome)
    for length, outcome in [(27, "protocol_violation"), (28, "valid"), (28 + (8 << 20), "valid"),
                            (29 + (8 << 20), "protocol_violation")]:
        add("record_length", f"a record length of {length}", length=length, outcome=outcome)
    document = {
        "format": "pairing", "version": 1,
        "description": "taskkey pair (docs/formats/pairing.md): codes and their PRS, whole exchanges with every "
                       "message, key and record, and refused records, tags, headers and lengths. Written by "
                       "scripts/pairing-peer.py --write-vectors; checked by taskkey vectors check.",
        "tests": tests,
    }
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


STEP_TYPES = {"start": 0x01, "response": 0x02, "confirm": 0x03, "store": 0x10, "done": 0x11}


def header_outcome(step, header):
    if header[:6] != MAGIC:
        return "protocol_violation"
    if header[6] != 1:
        return "unsupported_version"
    if header[7] == 0x7F:
        return "peer_aborted"
    return "valid" if header[7] == STEP_TYPES[step] else "protocol_violation"


def check_vectors(document, name, report):
    """Reproduces every case of Vectors/pairing-v1.json from pairing.md."""
    cases = {case["id"]: case for case in document["tests"]}
    for case in document["tests"]:
        what = f"{name} case {case['id']} ({case['comment']})"
        kind, outcome = case["kind"], case["outcome"]
        try:
            if kind == "code":
                try:
                    got = prs_of(case["text"]).hex()
                    ok = outcome == "valid" and got == case["prs"]
                except (AssertionError, ValueError):
                    ok = outcome == "code_not_read"
            elif kind == "exchange":
                def parse(text):
                    host, port = text.rsplit(":", 1)
                    return host.strip("[]"), int(port)
                h = lambda key: bytes.fromhex(case[key])  # noqa: E731
                store_record = h("store_record")
                again = exchange_case(case["code"], parse(case["offerer"]), parse(case["joiner"]), h("sid"), h("ya"),
                                      h("yb"), h("store"), [store_record[12:24], h("done_record")[12:24]])
                ok = all(again[key] == case[key] for key in again)
            elif kind == "record":
                record = bytes.fromhex(case["record"])
                try:
                    plain = open_record(bytes.fromhex(case["key"]), record[:12], record[12:], case["sequence"])
                    ok = outcome == "valid" and plain.hex() == case["plaintext"]
                except Exception:  # noqa: BLE001 (cryptography's InvalidTag)
                    ok = outcome == "channel_tampered"
            elif kind == "confirmation":
                run = cases[case["case"]]
                response = bytes.fromhex(case["response"])
                yb, tb = response[8:40], response[40:]
                sid, start = bytes.fromhex(run["sid"]), bytes.fromhex(run["start"])
                try:
                    _, _, expected_tb = keys_from(bytes.fromhex(run["ya"]), sid, start[24:], yb, yb)
                    ok = (secrets.compare_digest(tb, expected_tb)) == (outcome == "valid")
                except ValueError:
                    ok = outcome == "confirmation_failed"
            elif kind == "header":
                ok = header_outcome(case["step"], bytes.fromhex(case["header"])) == outcome
            elif kind == "record_length":
                ok = (28 <= case["length"] <= 28 + (8 << 20)) == (outcome == "valid")
            else:
                ok = False
        except (KeyError, ValueError) as error:
            ok = False
            print(f"{what}: {error!r}")
        report(ok, what)


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["--write-vectors"]:
        write_vectors(os.path.join(ROOT, "Vectors", "pairing-v1.json"))
