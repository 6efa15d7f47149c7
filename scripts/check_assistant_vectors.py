#!/usr/bin/env python3
"""An independent reader of the assistant-key formats, written from
SECURITY.md ("Assistant keys") alone, with the Python standard library only.

It re-derives every case of Vectors/assistant-key-v1.json,
Vectors/assistant-registry-v1.json, Vectors/assistant-registry-v2.json,
Vectors/assistant-last-used-v1.json and Vectors/assistant-last-used-v2.json and exits non-zero on any difference,
so the specification (docs/formats/) and the Swift code are checked against
each other.

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
    """Returns ({digest: entry}, generation) or raises Damaged(kind)."""
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
    return entries, int(lines[0][len(b"generation "):])


# Version 2 (docs/formats/registry.md, "Version 2 layout" onwards).
V2_LINE = b"taskkey assistant-key registry v2\n"
V2_HEADER, V2_ENTRY, V2_FILE_ID_AT, V2_MAC_AT = 126, 44, 78, 94
V2_MAX_KEYS = 1_000_000
V2_RECORD = range(33, 1303 + 1)
V2_MAX_FILE = 126 + V2_MAX_KEYS * (44 + 1303)
HEADER_LABEL = b"TaskKey registry v2 header\x00"
RECORD_LABEL = b"TaskKey registry v2 record\x00"


def v2_header(data: bytes, key: bytes, anchor: int):
    """Steps 3-6: (generation, file id, count, records offset) or Damaged."""
    if len(data) < V2_HEADER:
        raise Damaged("malformed")
    mac = hmac.new(key, HEADER_LABEL + data[:V2_MAC_AT], hashlib.sha256).digest()
    if not hmac.compare_digest(mac, data[V2_MAC_AT:V2_HEADER]):
        raise Damaged("authentication_failed")
    generation, count = int.from_bytes(data[34:42], "big"), int.from_bytes(data[42:46], "big")
    index_offset, index_length, records_offset, records_length = (
        int.from_bytes(data[at:at + 8], "big") for at in (46, 54, 62, 70))
    if generation == 0 or count > V2_MAX_KEYS:
        raise Damaged("malformed")
    if (index_offset, index_length, records_offset) != (V2_HEADER, V2_ENTRY * count, V2_HEADER + V2_ENTRY * count) \
            or records_offset > len(data) or records_length != len(data) - records_offset:
        raise Damaged("malformed")
    if generation < anchor:
        raise Damaged("rolled_back")
    return generation, data[V2_FILE_ID_AT:V2_MAC_AT], count, records_offset


def v2_entry(data: bytes, index: int, records_offset: int):
    at = V2_HEADER + V2_ENTRY * index
    digest, offset = data[at:at + 32], int.from_bytes(data[at + 32:at + 40], "big")
    length = int.from_bytes(data[at + 40:at + 44], "big")
    if offset < records_offset or length not in V2_RECORD or offset + length > len(data):
        raise Damaged("malformed")
    return digest, offset, length


def v2_record(data: bytes, key: bytes, generation: int, file_id: bytes, digest: bytes, offset: int, length: int):
    """Steps 8-9: the record's MAC, then a canonical key line for `digest`."""
    body, tag = data[offset:offset + length - 32], data[offset + length - 32:offset + length]
    mac = hmac.new(key, RECORD_LABEL + generation.to_bytes(8, "big") + file_id + body, hashlib.sha256).digest()
    if not hmac.compare_digest(mac, tag):
        raise Damaged("authentication_failed")
    try:
        line = body.decode("ascii")
    except UnicodeDecodeError:
        raise Damaged("malformed")
    if not KEY_LINE.fullmatch(line):
        raise Damaged("malformed")
    fields = line.split(" ")
    grants = [] if fields[8] == "-" else fields[8].split(",")
    if public_id(bytes.fromhex(fields[2])) != fields[1] or grants != sorted(set(grants)) \
            or bytes.fromhex(fields[2]) != digest:
        raise Damaged("malformed")
    return {"id": fields[1], "expires": None if fields[4] == "-" else int(fields[4]), "revocation": fields[5],
            "trust": fields[6], "name": fields[7], "grants": grants}


def open_registry(data: bytes, key: bytes, anchor: int):
    """Steps 1-2: ("v2", header) or ("v1", {digest: entry})."""
    if len(data) > V2_MAX_FILE:
        raise Damaged("too_large")
    if data.startswith(V2_LINE):
        return "v2", v2_header(data, key, anchor)
    entries, generation = parse_registry(data, key)
    if generation < anchor:
        raise Damaged("rolled_back")
    return "v1", entries


def verify_lookup(data: bytes, key: bytes, digest: bytes, anchor: int):
    """Verify's steps 1-9: the entry for `digest`, or None (unknown_key)."""
    kind, opened = open_registry(data, key, anchor)
    if kind == "v1":
        return opened.get(digest)
    generation, file_id, count, records_offset = opened
    low, high = 0, count
    while low < high:
        middle = (low + high) // 2
        found, offset, length = v2_entry(data, middle, records_offset)
        if found == digest:
            return v2_record(data, key, generation, file_id, digest, offset, length)
        if found < digest:
            low = middle + 1
        else:
            high = middle
    return None


def full_read(data: bytes, key: bytes, anchor: int):
    """The full read of list and every write (steps 1-6, then 7-9)."""
    kind, opened = open_registry(data, key, anchor)
    if kind == "v1":
        return opened
    generation, file_id, count, records_offset = opened
    entries, expected = [], records_offset
    for index in range(count):
        digest, offset, length = v2_entry(data, index, records_offset)
        if offset != expected or (entries and entries[-1][0] >= digest):
            raise Damaged("malformed")
        expected += length
        entries.append((digest, offset, length))
    if expected != len(data):
        raise Damaged("malformed")
    parsed, ids = {}, set()
    for digest, offset, length in entries:
        entry = v2_record(data, key, generation, file_id, digest, offset, length)
        if entry["id"] in ids:
            raise Damaged("malformed")
        ids.add(entry["id"])
        parsed[digest] = entry
    return parsed


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


# Last-used version 2 (docs/formats/last-used.md, "Version 2").
LU2_LINE = b"taskkey assistant-key last-used v2\n"
LU2_HEADER, LU2_SLOT, LU2_MAX = 71, 48, 1_000_000
LU2_HEADER_LABEL = b"TaskKey last-used v2 header\x00"
LU2_SLOT_LABEL = b"TaskKey last-used v2 slot\x00"


def last_used_v2_count(data: bytes, key: bytes) -> int:
    """Steps 1-5: the slot count, or Damaged."""
    if len(data) > LU2_HEADER + LU2_SLOT * LU2_MAX:
        raise Damaged("too_large")
    if len(data) < LU2_HEADER:
        raise Damaged("malformed")
    mac = hmac.new(key, LU2_HEADER_LABEL + data[:39], hashlib.sha256).digest()
    if not hmac.compare_digest(mac, data[39:LU2_HEADER]):
        raise Damaged("authentication_failed")
    count = int.from_bytes(data[35:39], "big")
    if count > LU2_MAX or len(data) != LU2_HEADER + LU2_SLOT * count:
        raise Damaged("malformed")
    return count


def last_used_v2_time(slot: bytes, key: bytes):
    """A slot's time, or None (never used): MAC failed, time 0 or >= 10^18."""
    mac = hmac.new(key, LU2_SLOT_LABEL + slot[:16], hashlib.sha256).digest()
    time = int.from_bytes(slot[8:16], "big")
    if not hmac.compare_digest(mac, slot[16:48]) or not 0 < time < 10**18:
        return None
    return time


def slot_public_id(slot: bytes) -> str:
    return "tkid_" + slot[:8].hex()


def parse_last_used_any(data: bytes, key: bytes):
    """The full read of either version: {public id: seconds} or Damaged."""
    if not data.startswith(LU2_LINE):
        return parse_last_used(data, key)
    count, table, previous = last_used_v2_count(data, key), {}, None
    for index in range(count):
        slot = data[LU2_HEADER + LU2_SLOT * index:LU2_HEADER + LU2_SLOT * (index + 1)]
        if previous is not None and slot[:8] <= previous:
            raise Damaged("malformed")
        previous = slot[:8]
        time = last_used_v2_time(slot, key)
        if time is not None:
            table[slot_public_id(slot)] = time
    return table


def last_used_v2_search(data: bytes, key: bytes, public: str):
    """Verify's search: ("used", t), ("never", None), ("absent", None) or ("refused", None)."""
    try:
        if not data.startswith(LU2_LINE):
            raise Damaged("malformed")
        count = last_used_v2_count(data, key)
    except Damaged:
        return ("refused", None)
    wanted, low, high = bytes.fromhex(public[len("tkid_"):]), 0, count
    while low < high:
        middle = (low + high) // 2
        slot = data[LU2_HEADER + LU2_SLOT * middle:LU2_HEADER + LU2_SLOT * (middle + 1)]
        if slot[:8] == wanted:
            time = last_used_v2_time(slot, key)
            return ("never", None) if time is None else ("used", time)
        if slot[:8] < wanted:
            low = middle + 1
        else:
            high = middle
    return ("absent", None)


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
            # Read from the version line on, as verify does: the version-2
            # line makes the file version 2 (registry.md, version 2 step 2).
            entry = verify_lookup(case.get("registry", registry["registry"]).encode(), key,
                                  hashlib.sha256(case["key"].encode()).digest(), 0)
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

    registry2 = json.loads((directory / "assistant-registry-v2.json").read_text())
    assert registry2["format"] == "assistant-registry" and registry2["version"] == 2
    key, now = bytes.fromhex(registry2["integrity_key"]), registry2["now"]
    for case in registry2["tests"]:
        data = bytes.fromhex(case.get("registry", registry2["registry"]))
        anchor = case.get("anchor") or 0
        try:
            full_read(data, key, anchor)
            listed = "valid"
        except Damaged as damage:
            listed = str(damage)
        try:
            entry = verify_lookup(data, key, hashlib.sha256(case["key"].encode()).digest(), anchor)
            if entry is None:
                got = ("invalid", "unknown_key", None)
            else:
                result, error = decide(entry, now)
                got = (result, error, None)
                end = entry["expires"]
                if entry["revocation"].startswith("until:"):
                    until = int(entry["revocation"][6:])
                    end = until if end is None else min(end, until)
                if result == "valid" and (entry["id"], entry["name"], entry["trust"], entry["grants"], end) != (
                        case["public_id"], case["name"], case["trust"], case["grants"], case.get("expires")):
                    got = ("wrong identity", None, None)
        except Damaged as damage:
            got = ("invalid", "registry_damaged", str(damage))
        want = (case["result"], case.get("error"), case.get("damage"), case["list"])
        if got + (listed,) != want:
            failures += 1
            print(f"assistant-registry v2 case {case['id']} ({case['comment']}): got {got + (listed,)}, want {want}")

    last_used = json.loads((directory / "assistant-last-used-v1.json").read_text())
    assert last_used["format"] == "assistant-last-used" and last_used["version"] == 1
    key = bytes.fromhex(last_used["integrity_key"])
    for case in last_used["tests"]:
        try:
            got = ("valid", None, parse_last_used_any(case["file"].encode(), key))
        except Damaged as damage:
            got = ("invalid", str(damage), None)
        want = (case["result"], case.get("damage"), case.get("last_used"))
        if got != want:
            failures += 1
            print(f"assistant-last-used case {case['id']} ({case['comment']}): got {got}, want {want}")

    last_used2 = json.loads((directory / "assistant-last-used-v2.json").read_text())
    assert last_used2["format"] == "assistant-last-used" and last_used2["version"] == 2
    key = bytes.fromhex(last_used2["integrity_key"])
    for case in last_used2["tests"]:
        data = bytes.fromhex(case["file"])
        try:
            got = ("valid", None, parse_last_used_any(data, key))
        except Damaged as damage:
            got = ("invalid", str(damage), None)
        if "search_id" in case:
            got += last_used_v2_search(data, key, case["search_id"])
        else:
            got += (None, None)
        want = (case["result"], case.get("damage"), case.get("last_used"), case.get("search"), case.get("search_time"))
        if got != want:
            failures += 1
            print(f"assistant-last-used v2 case {case['id']} ({case['comment']}): got {got}, want {want}")

    total = (len(keys["tests"]) + len(registry["tests"]) + len(registry2["tests"]) + len(last_used["tests"])
             + len(last_used2["tests"]))
    print(f"assistant vectors: {total - failures} of {total} cases agree with docs/formats/")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
