#!/usr/bin/env python3
"""How a passphrase becomes bytes, written from docs/formats/vault-file.md
("Passphrase bytes"), not from the Swift code, for `make interop`: it decides
every case of Vectors/passphrase-bytes-v1.json with the standard library.

Loaded by scripts/interop.py; `check_vectors(doc, name, report)` reports one
verdict per case.
"""
import unicodedata

LIMIT = 1024


def kdf_input(data):
    """The bytes Argon2id reads for a passphrase file's bytes, or the error."""
    line = data.split(b"\n", 1)[0]
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) > LIMIT:
        return "passphrase_too_long"
    if any(b >= 0x80 for b in line):
        try:
            line = unicodedata.normalize("NFC", line.decode("utf-8")).encode("utf-8")
        except UnicodeDecodeError:
            pass
    if not line:
        return "empty_passphrase"
    if len(line) > LIMIT:
        return "passphrase_too_long"
    return line


def check_vectors(doc, name, report):
    for t in doc["tests"]:
        got = kdf_input(bytes.fromhex(t["input"]))
        want = bytes.fromhex(t["kdf_input"]) if t["result"] == "valid" else t["error"]
        report(got == want, f"{name} case {t['id']} ({t['comment']})")
