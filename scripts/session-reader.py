#!/usr/bin/env python3
"""An unlock-session reader written from docs/formats/unlock-session.md
("Reading"), not from the Swift code, for `make interop`: it decides every
case of Vectors/unlock-session-v2.json with the `cryptography` package.

Loaded by scripts/interop.py; `check_vectors(doc, name, report)` reports one
verdict per case.
"""
import hashlib
import hmac

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

SESSION_LENGTH = 182
KEY_FILE_LENGTH = 56
WRAP_LABEL = b"TaskKey device-only wrap key v1"


class Outcome(Exception):
    """A reading that ends without keys: (error, reason)."""


def key_from_file(data, boot_id):
    """Step 5: exactly 56 bytes of "TKSESKEY", this boot's id and SK."""
    if data is None or len(data) != KEY_FILE_LENGTH or data[:8] != b"TKSESKEY" or data[8:24] != boot_id:
        return None
    return data[24:56]


def read_session(session, key_files, header, boot_id, now):
    """Steps 1 to 8; returns (MK_1, DWK, not_after) or raises Outcome."""
    vault_id = header[10:26]
    if session is None:
        raise Outcome("locked", "not_unlocked")
    if (len(session) != SESSION_LENGTH or session[:8] != b"TKUNLOCK" or session[8:10] != b"\x00\x02"
            or session[10:26] != vault_id):
        raise Outcome("locked", "not_unlocked")
    if session[26:42] != boot_id:
        raise Outcome("locked", "machine_restarted")
    not_after = int.from_bytes(session[50:58], "big", signed=True)
    if not_after != 0 and now >= not_after:
        raise Outcome("locked", "expired")
    keys = [k for k in (key_from_file(f, boot_id) for f in key_files) if k is not None]
    if not keys:
        raise Outcome("locked", "session_key_gone")
    sealed = session[90:]
    plain = None
    for key in keys:
        try:
            plain = AESGCM(key).decrypt(sealed[:12], sealed[12:], session[:90])
            break
        except InvalidTag:
            continue
    if plain is None:
        raise Outcome("locked", "session_key_mismatch")
    if session[58:90] != hashlib.sha256(header).digest():
        raise Outcome("tampered", None)
    master, wrap = plain[:32], plain[32:64]
    if not hmac.compare_digest(hmac.new(master, WRAP_LABEL + vault_id, hashlib.sha256).digest(), wrap):
        raise Outcome("locked", "session_inconsistent")
    return master, wrap, not_after


def check_vectors(doc, name, report):
    header = bytes.fromhex(doc["vault_header"])
    for t in doc["tests"]:
        hexed = lambda field: bytes.fromhex(t[field]) if t.get(field) is not None else None  # noqa: E731
        what = f"{name} case {t['id']} ({t['comment']})"
        try:
            master, wrap, not_after = read_session(
                hexed("session"), [hexed("key_file"), hexed("key_file_next")], header,
                bytes.fromhex(t["boot_id"]), t["now"])
            report(t["result"] == "valid" and master.hex() == t["master_key"] and wrap.hex() == t["device_wrap_key"]
                   and not_after == t["not_after"], what)
        except Outcome as outcome:
            error, reason = outcome.args
            report(t["result"] == "invalid" and t["error"] == error and t.get("reason") == reason, what)
