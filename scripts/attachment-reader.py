#!/usr/bin/env python3
"""An independent reader and writer of TaskKey attachment files, version 1,
written from docs/formats/attachment.md alone (HKDF-Expand and AES-GCM from
the `cryptography` package), for `make interop`.

    scripts/attachment-reader.py FILE KEYFILE RECORD    (prints the plaintext, or one outcome word and exits 1)

`scripts/interop.py` loads it to re-derive Vectors/attachment-v1.json, to run
the published Cobblestone vectors through this reader, and to exchange files
with the real binary both ways.
"""
import hashlib
import hmac
import os
import secrets
import subprocess
import sys
import tempfile
import zlib

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

MAGIC = bytes.fromhex("89544b410d0a1a0a")
WRAPPER = 13
HEADER = 56
CHUNK = 16384
SEALED_CHUNK = CHUNK + 16
INFO_PREFIX = b"c2sp.org/chunked-encryption@v1+" + b"AEAD_AES_256_GCM" + b"\x00"


class Outcome(Exception):
    """A reader step failed; args[0] is the outcome word of the format doc."""


def derive(key, salt, context):
    """The key schedule: key (32) || base nonce (12) || commitment (32)."""
    okm = HKDFExpand(hashes.SHA512(), 76, INFO_PREFIX + salt + context).derive(key)
    return okm[:32], okm[32:44], okm[44:]


def nonce(base, index):
    return (int.from_bytes(base, "big") ^ index).to_bytes(12, "big")


def open_chunks(body, aead_key, base_nonce, released=None):
    """Steps 7-10 on the bytes after the header (or a raw-mode message)."""
    full, rest = divmod(len(body), SEALED_CHUNK)
    if rest == 0:
        raise Outcome("missing_final_chunk")
    if rest < 16:
        raise Outcome("truncated_chunk")
    aead = AESGCM(aead_key)
    out = bytearray()
    for index in range(full + 1):
        piece = body[index * SEALED_CHUNK:(index + 1) * SEALED_CHUNK]
        try:
            out += aead.decrypt(nonce(base_nonce, index), piece, None)
        except InvalidTag:
            raise Outcome("final_chunk_authentication_failed" if index == full else "chunk_authentication_failed")
        if released is not None and index < full:
            released[:] = out
    return bytes(out)


def opens(aead, base_nonce, index, piece):
    """Whether `piece` (ciphertext and tag) opens as chunk `index`."""
    try:
        aead.decrypt(nonce(base_nonce, index), piece, None)
        return True
    except InvalidTag:
        return False


def refine(aead, base_nonce, piece, index, step_outcome, limit=None):
    """Rules 1-3 of "Refining a failure" for a piece that failed as chunk
    `index`; `limit` bounds rule 2 (a random-access reader's chunk count)."""
    for length in range(16, min(len(piece) - 1, SEALED_CHUNK - 1) + 1):
        if opens(aead, base_nonce, index, piece[:length]):
            return "trailing_data"
    end = min(index + 1024 + 1, limit if limit is not None else 2**38, 2**38)
    for other in range(max(0, index - 1024), end):
        if other != index and opens(aead, base_nonce, other, piece):
            return "chunk_out_of_place"
    return step_outcome


def open_chunks_refined(body, aead_key, base_nonce, random_access):
    """Steps 7-10 as TaskKey's stream (random_access False) or random-access
    reader (True, reading the whole plaintext) report them, refined."""
    full, rest = divmod(len(body), SEALED_CHUNK)
    if rest == 0:
        raise Outcome("missing_final_chunk")
    if rest < 16:
        raise Outcome("truncated_chunk")
    aead = AESGCM(aead_key)
    piece = lambda i: body[i * SEALED_CHUNK:(i + 1) * SEALED_CHUNK]
    order = [full] + list(range(full)) if random_access else list(range(full + 1))
    out = {}
    for index in order:
        try:
            out[index] = aead.decrypt(nonce(base_nonce, index), piece(index), None)
        except InvalidTag:
            final = index == full
            limit = full + 1 if random_access and not final else None
            got = refine(aead, base_nonce, piece(index), index,
                         "final_chunk_authentication_failed" if final else "chunk_authentication_failed", limit)
            if random_access and final and got == "final_chunk_authentication_failed" and full > 0:
                # Rule 4: the real final chunk before the computed one.
                if refine(aead, base_nonce, piece(full - 1), full - 1, None, 0) == "trailing_data":
                    got = "trailing_data"
                elif any(opens(aead, base_nonce, j, piece(j)[:rest])
                         for j in range(full - 2, max(0, full - 1024) - 1, -1)):
                    got = "trailing_data"
            raise Outcome(got)
    return b"".join(out[i] for i in range(full + 1))


def open_payload(payload, key, context, released=None):
    """The standard's message: steps 5-10."""
    if len(payload) < HEADER:
        raise Outcome("truncated_header")
    salt, commitment = payload[:24], payload[24:56]
    aead_key, base_nonce, expected = derive(key, salt, context)
    if not hmac.compare_digest(expected, commitment):
        raise Outcome("commitment_mismatch")
    return open_chunks(payload[HEADER:], aead_key, base_nonce, released)


def open_attachment(data, keys, record, refined=None):
    """Returns ('plain', data) or ('valid', plaintext); raises Outcome. With
    `refined` ("stream" or "random access"), failures are refined as that
    TaskKey reader refines them."""
    if len(data) < len(MAGIC) or data[:8] != MAGIC:
        return "plain", data
    if len(data) < WRAPPER:
        raise Outcome("truncated_wrapper")
    if data[8] != 1:
        raise Outcome("unsupported_version")
    kid = data[9:13].hex()
    if kid not in keys:
        raise Outcome("unknown_key_id")
    if refined is None:
        return "valid", open_payload(data[WRAPPER:], keys[kid], data[:WRAPPER] + record.encode())
    payload = data[WRAPPER:]
    if len(payload) < HEADER:
        raise Outcome("truncated_header")
    aead_key, base_nonce, expected = derive(keys[kid], payload[:24], data[:WRAPPER] + record.encode())
    if not hmac.compare_digest(expected, payload[24:56]):
        raise Outcome("commitment_mismatch")
    return "valid", open_chunks_refined(payload[HEADER:], aead_key, base_nonce, refined == "random access")


def seal_chunks(plaintext, aead_key, base_nonce):
    aead = AESGCM(aead_key)
    count = len(plaintext) // CHUNK + 1  # the last chunk is always short, maybe empty
    return b"".join(aead.encrypt(nonce(base_nonce, i), plaintext[i * CHUNK:(i + 1) * CHUNK], None)
                    for i in range(count))


def seal_attachment(plaintext, kid, key, record, salt=None):
    wrapper = MAGIC + b"\x01" + bytes.fromhex(kid)
    salt = salt if salt is not None else secrets.token_bytes(24)
    aead_key, base_nonce, commitment = derive(key, salt, wrapper + record.encode())
    return wrapper + salt + commitment + seal_chunks(plaintext, aead_key, base_nonce)


# The outcomes a reader may refine (the format doc, after step 9), and the
# step's own outcome this reader reports instead.
REFINED = {"chunk_out_of_place": {"chunk_authentication_failed", "final_chunk_authentication_failed"},
           "trailing_data": {"chunk_authentication_failed", "final_chunk_authentication_failed"}}


def check_vectors(doc, name, report):
    """Every case of Vectors/attachment-v1.json; valid cases are also
    re-sealed from their own salt and must give the file byte for byte."""
    keys = {k["kid"]: bytes.fromhex(k["key"]) for k in doc["keys"]}
    for case in doc["tests"]:
        data = bytes.fromhex(case["file"])
        expect = case["expect"]
        try:
            got, out = open_attachment(data, keys, case["record"])
        except Outcome as outcome:
            got, out = outcome.args[0], None
        ok = got == expect or got in REFINED.get(expect, ())
        # The refining rules, as each TaskKey reader applies them, give the
        # vector's outcome exactly.
        for reader in ("stream", "random access"):
            try:
                refined = open_attachment(data, keys, case["record"], refined=reader)[0]
            except Outcome as outcome:
                refined = outcome.args[0]
            if refined != expect:
                ok = False
                got = f"{got} ({reader}, refined: {refined})"
        if expect == "valid" and ok:
            ok = out == bytes.fromhex(case["plaintext"])
            kid = data[9:13].hex()
            ok = ok and seal_attachment(out, kid, keys[kid], case["record"], salt=data[13:37]) == data
        if expect == "plain" and ok:
            ok = out == data
        report(ok, f"{name} case {case['id']} ({case['comment']}): expected {expect}, Python got {got}")


def check_cobblestone(doc, name, report):
    """The published Cobblestone-256 vectors through this reader: plain and
    raw mode; valid ones re-sealed in raw mode must give the ciphertext."""
    for group in doc["testGroups"]:
        if group["aead"] != "AEAD_AES_256_GCM":
            continue
        for t in group["tests"]:
            ct = zlib.decompress(bytes.fromhex(t["ct"]))
            key, ctx = bytes.fromhex(t["key"]), bytes.fromhex(t["ctx"])
            released = bytearray()
            try:
                if len(key) != 32:
                    raise Outcome("invalid_key_size")
                msg = open_payload(ct, key, ctx, released)
                ok = t["result"] == "valid" and len(msg) == t["msgLength"] \
                    and hashlib.sha512(msg).hexdigest() == t["msgSha512"]
                raw_key, base = bytes.fromhex(t["aeadKey"]), bytes.fromhex(t["baseNonce"])
                ok = ok and seal_chunks(msg, raw_key, base) == ct[HEADER:]
                ok = ok and open_chunks(ct[HEADER:], raw_key, base) == msg
            except Outcome:
                prefix = t.get("msgLength", 0) if "PartialPlaintext" in t["flags"] else 0
                ok = t["result"] == "invalid" and len(released) <= prefix
            report(ok, f"{name} tcId {t['tcId']} ({t['comment']})")


def check_binary(taskkey, report):
    """Python seals, taskkey opens; taskkey seals, Python opens; a tampered
    file is refused by taskkey with exit 10 and nothing under the output."""
    with tempfile.TemporaryDirectory() as home:
        kid, key = secrets.token_hex(4), secrets.token_bytes(32)
        key_file = os.path.join(home, "python.key")
        fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, f"{kid}:{key.hex()}\n".encode())
        os.close(fd)
        for size in (0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 3):
            plaintext = secrets.token_bytes(size)
            record = f"attachment/{secrets.randbelow(10**6)}"
            sealed = seal_attachment(plaintext, kid, key, record)
            r = subprocess.run([taskkey, "attach", "open", "--record", record, "--key-file", key_file],
                               input=sealed, capture_output=True)
            report(r.returncode == 0 and r.stdout == plaintext, f"taskkey opens a Python-sealed attachment of {size} bytes")
            r = subprocess.run([taskkey, "attach", "seal", "--record", record, "--key-file", key_file],
                               input=plaintext, capture_output=True)
            try:
                ok = r.returncode == 0 and open_attachment(r.stdout, {kid: key}, record) == ("valid", plaintext)
            except Outcome:
                ok = False
            report(ok, f"Python opens a taskkey-sealed attachment of {size} bytes")
            tampered = bytearray(sealed)
            tampered[-1] ^= 1
            path, out = os.path.join(home, f"t{size}"), os.path.join(home, f"o{size}")
            open(path, "wb").write(tampered)
            r = subprocess.run([taskkey, "attach", "open", path, "-o", out, "--record", record, "--key-file", key_file],
                               capture_output=True)
            report(r.returncode == 10 and not os.path.exists(out),
                   f"taskkey refuses a tampered attachment of {size} bytes (exit 10, no output)")
        # Extended by whole pieces, or to a whole number of them: both of
        # taskkey's readers give the exit code of the refined outcome.
        record = "attachment/extended"
        sealed = seal_attachment(secrets.token_bytes(2 * CHUNK + 100), kid, key, record)
        rest = (len(sealed) - WRAPPER - HEADER) % SEALED_CHUNK
        exits = {"missing_final_chunk": 65, "trailing_data": 10}
        for label, extra in (("to a whole number of pieces", SEALED_CHUNK - rest), ("by one whole piece", SEALED_CHUNK),
                             ("by two whole pieces", 2 * SEALED_CHUNK)):
            path = os.path.join(home, "extended")
            data = sealed + secrets.token_bytes(extra)
            open(path, "wb").write(data)
            try:
                open_attachment(data, {kid: key}, record, refined="stream")
                want = None
            except Outcome as outcome:
                want = exits.get(outcome.args[0])
            base = [taskkey, "attach", "open", path, "--record", record, "--key-file", key_file]
            got = [subprocess.run(base + more, capture_output=True).returncode for more in ([], ["--range", "0:1"])]
            report(want is not None and got == [want, want],
                   f"taskkey's stream and random-access readers agree on an attachment extended {label} "
                   f"(exits {got}, the spec's refined outcome gives {want})")


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        sys.exit(64)
    line = open(sys.argv[2]).read().strip()
    kid, key = line.split(":")
    try:
        result, out = open_attachment(open(sys.argv[1], "rb").read(), {kid: bytes.fromhex(key)}, sys.argv[3])
    except Outcome as outcome:
        print(outcome.args[0])
        sys.exit(1)
    sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main()
