#!/usr/bin/env python3
"""An independent reader of the assistant-key formats, written from
SECURITY.md ("Assistant keys") alone, with the Python standard library only.

It re-derives every case of Vectors/assistant-key-v1.json and
Vectors/assistant-registry-v1.json and exits non-zero on any difference, so
the specification and the Swift code are checked against each other.

    python3 scripts/check_assistant_vectors.py [VECTORS_DIR]
"""
import base64
import hashlib
import hmac
import json
import re
import sys
import zlib
from pathlib import Path

ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
HEADER = b"taskkey assistant-key registry v1"
HEADER_STEM = b"taskkey assistant-key registry v"
MAX_FILE = 16 << 20
MAX_KEYS = 10_000


def base62(value: int, width: int) -> str:
    digits = ""
    for _ in range(width):
        digits = ALPHABET[value % 62] + digits
        value //= 62
    assert value == 0
    return digits


def key_string(random: bytes) -> str:
    body = "tk_" + base62(int.from_bytes(random, "big"), 43)
    return body + base62(zlib.crc32(body.encode()), 6)


def check_key(text: str):
    """(result, error, reason, detail), in the order SECURITY.md gives."""
    raw = text.encode()
    if len(raw) != 52:
        return ("invalid", "malformed_key", "wrong_length", len(raw))
    if raw[:3] != b"tk_":
        return ("invalid", "malformed_key", "missing_prefix", None)
    for offset in range(3, 52):
        if chr(raw[offset]) not in ALPHABET:
            return ("invalid", "malformed_key", "invalid_character", offset)
    value = 0
    for char in text[3:46]:
        value = value * 62 + ALPHABET.index(char)
    if value >= 2**256:
        return ("invalid", "malformed_key", "body_out_of_range", None)
    if base62(zlib.crc32(raw[:46]), 6) != text[46:]:
        return ("invalid", "bad_checksum", None, None)
    return ("valid", None, None, None)


def public_id(digest: bytes) -> str:
    return "tkid_" + hashlib.sha256(b"tkid-v1:" + digest).hexdigest()[:16]


class Damaged(Exception):
    pass


NUMBER = r"(0|[1-9][0-9]{0,17})"
KEY_LINE = re.compile(
    r"key (tkid_[0-9a-f]{16}) ([0-9a-f]{64}) " + NUMBER + r" (-|" + NUMBER + r") "
    r"(-|until:" + NUMBER + r"|revoked:" + NUMBER + r") (restricted|standard|elevated) "
    r"([A-Za-z0-9][A-Za-z0-9._-]{0,63}) (-|[a-z][a-z0-9._:-]{0,63}(?:,[a-z][a-z0-9._:-]{0,63}){0,15})"
)


def open_frame(data: bytes, key: bytes, header: bytes, header_stem: bytes):
    """The frame the registry and the last-used file share (registry.md
    steps 1-4): returns the body lines between the header and the MAC line,
    or raises Damaged(kind)."""
    if len(data) > MAX_FILE:
        raise Damaged("too_large")
    first = data.split(b"\n", 1)[0]
    if first != header:
        rest = first[len(header_stem):]
        if first.startswith(header_stem) and re.fullmatch(rb"[1-9][0-9]{0,8}", rest):
            raise Damaged("unsupported_version")
        raise Damaged("malformed")
    mac_start = len(data) - (4 + 44 + 1)
    if not data.endswith(b"\n") or mac_start <= len(first) or data[mac_start - 1:mac_start] != b"\n" \
            or data[mac_start:mac_start + 4] != b"mac ":
        raise Damaged("malformed")
    mac_text = data[mac_start + 4:-1]
    try:
        mac = base64.b64decode(mac_text, validate=True)
    except ValueError:
        raise Damaged("malformed")
    if len(mac) != 32 or base64.b64encode(mac) != mac_text:
        raise Damaged("malformed")
    if not hmac.compare_digest(hmac.new(key, data[:mac_start], hashlib.sha256).digest(), mac):
        raise Damaged("authentication_failed")
    return data[len(first) + 1:mac_start].split(b"\n")[:-1]


def parse_registry(data: bytes, key: bytes):
    """Returns {digest: entry} or raises Damaged(kind)."""
    lines = open_frame(data, key, HEADER, HEADER_STEM)
    if not lines or not re.fullmatch(rb"generation " + NUMBER.encode(), lines[0]) or lines[0] == b"generation 0":
        raise Damaged("malformed")
    entries, ids = {}, []
    for line in lines[1:]:
        match = KEY_LINE.fullmatch(line.decode("ascii", "replace"))
        if not match:
            raise Damaged("malformed")
        fields = line.decode().split(" ")
        digest = bytes.fromhex(fields[2])
        grants = [] if fields[8] == "-" else fields[8].split(",")
        if public_id(digest) != fields[1] or grants != sorted(set(grants)) or digest in entries:
            raise Damaged("malformed")
        ids.append(fields[1])
        entries[digest] = {
            "id": fields[1], "expires": None if fields[4] == "-" else int(fields[4]), "revocation": fields[5],
            "trust": fields[6], "name": fields[7], "grants": grants,
        }
    if ids != sorted(set(ids)) or len(ids) > MAX_KEYS:
        raise Damaged("malformed")
    return entries


LAST_USED_HEADER = b"taskkey assistant-key last-used v1"
LAST_USED_STEM = b"taskkey assistant-key last-used v"


def parse_last_used(data: bytes, key: bytes):
    """docs/formats/last-used.md: {public id: seconds} or Damaged(kind)."""
    table, previous = {}, None
    for line in open_frame(data, key, LAST_USED_HEADER, LAST_USED_STEM):
        match = re.fullmatch(rb"(tkid_[0-9a-f]{16}) " + NUMBER.encode(), line)
        if not match or (previous is not None and match.group(1) <= previous):
            raise Damaged("malformed")
        previous = match.group(1)
        table[match.group(1).decode()] = int(match.group(2))
    return table


def decide(entry, now: int):
    revocation = entry["revocation"]
    if revocation.startswith("revoked:") or (revocation.startswith("until:") and now >= int(revocation[6:])):
        return ("invalid", "revoked")
    if entry["expires"] is not None and now >= entry["expires"]:
        return ("invalid", "expired")
    return ("valid", None)


def main() -> int:
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else "Vectors")
    failures = 0
    keys = json.loads((directory / "assistant-key-v1.json").read_text())
    assert keys["format"] == "assistant-key" and keys["version"] == 1
    for case in keys["tests"]:
        got = check_key(case["key"])
        want = (case["result"], case.get("error"), case.get("reason"), case.get("detail"))
        ok = got == want
        if ok and case["result"] == "valid":
            digest = hashlib.sha256(case["key"].encode()).digest()
            ok = (key_string(bytes.fromhex(case["random"])) == case["key"]
                  and "%08x" % zlib.crc32(case["key"][:46].encode()) == case["crc32"]
                  and case["key"][46:] == case["checksum"] and digest.hex() == case["sha256"]
                  and public_id(digest) == case["public_id"]
                  and re.search(keys["scanner_regex"], case["key"]) is not None)
        if not ok:
            failures += 1
            print(f"assistant-key case {case['id']} ({case['comment']}): got {got}")

    registry = json.loads((directory / "assistant-registry-v1.json").read_text())
    assert registry["format"] == "assistant-registry" and registry["version"] == 1
    key, now = bytes.fromhex(registry["integrity_key"]), registry["now"]
    for case in registry["tests"]:
        got = (None, None, None)
        try:
            entries = parse_registry(case.get("registry", registry["registry"]).encode(), key)
            entry = entries.get(hashlib.sha256(case["key"].encode()).digest())
            if entry is None:
                got = ("invalid", "unknown_key", None)
            else:
                result, error = decide(entry, now)
                got = (result, error, None)
                if result == "valid":
                    ok = (entry["id"], entry["name"], entry["trust"], entry["grants"]) == (
                        case["public_id"], case["name"], case["trust"], case["grants"])
                    if not ok:
                        got = ("wrong identity", None, None)
        except Damaged as damage:
            got = ("invalid", "registry_damaged", str(damage))
        want = (case["result"], case.get("error"), case.get("damage"))
        if got != want:
            failures += 1
            print(f"assistant-registry case {case['id']} ({case['comment']}): got {got}, want {want}")

    last_used = json.loads((directory / "assistant-last-used-v1.json").read_text())
    assert last_used["format"] == "assistant-last-used" and last_used["version"] == 1
    key = bytes.fromhex(last_used["integrity_key"])
    for case in last_used["tests"]:
        try:
            got = ("valid", None, parse_last_used(case["file"].encode(), key))
        except Damaged as damage:
            got = ("invalid", str(damage), None)
        want = (case["result"], case.get("damage"), case.get("last_used"))
        if got != want:
            failures += 1
            print(f"assistant-last-used case {case['id']} ({case['comment']}): got {got}, want {want}")

    total = len(keys["tests"]) + len(registry["tests"]) + len(last_used["tests"])
    print(f"assistant vectors: {total - failures} of {total} cases agree with docs/formats/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
