#!/usr/bin/env python3
"""The primitives TaskKey builds on, checked against Vectors/ with other
implementations than TaskKey's, for `make interop`: AES-256-GCM and
HMAC-SHA256 (known answers and Project Wycheproof) with `cryptography` and
the standard library, HKDF-SHA-512 (Wycheproof) with `cryptography`, and
Argon2id with argon2-cffi's binding of the reference C code.

Loaded by scripts/interop.py inside its virtual environment; each
`check_*(doc, name, report)` reports one verdict per case.
"""
import hashlib
import hmac

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM


def check_aes_gcm(doc, name, report):
    for t in doc["tests"]:
        key, nonce, aad = (bytes.fromhex(t[f]) for f in ("key", "nonce", "aad"))
        pt, ct, tag = (bytes.fromhex(t[f]) for f in ("plaintext", "ciphertext", "tag"))
        try:
            opened = AESGCM(key).decrypt(nonce, ct + tag, aad)
            outcome = ("valid", opened == pt)
        except InvalidTag:
            outcome = ("invalid", t.get("error") == "authentication_failed")
        report(outcome[0] == t["result"] and outcome[1], f"{name} case {t['id']} ({t['comment']})")
        if t["result"] == "valid":
            report(AESGCM(key).encrypt(nonce, pt, aad) == ct + tag, f"{name} case {t['id']} re-encrypts")


def check_wycheproof_aead(doc, name, report):
    """The groups TaskKey runs (Vectors/README.md): 256-bit keys, 96-bit IVs, 128-bit tags."""
    for group in doc["testGroups"]:
        if (group["type"], group["keySize"], group["ivSize"], group["tagSize"]) != ("AeadTest", 256, 96, 128):
            continue
        for t in group["tests"]:
            key, iv, aad, msg, ct, tag = (bytes.fromhex(t[f]) for f in ("key", "iv", "aad", "msg", "ct", "tag"))
            try:
                ok = AESGCM(key).decrypt(iv, ct + tag, aad) == msg and t["result"] != "invalid"
            except InvalidTag:
                ok = t["result"] != "valid"
            report(ok, f"{name} tcId {t['tcId']}")


def check_wycheproof_mac(doc, name, report):
    """HMAC-SHA256 groups TaskKey runs (Vectors/README.md): 256-bit keys, untruncated tags."""
    for group in doc["testGroups"]:
        if (group["type"], group["keySize"], group["tagSize"]) != ("MacTest", 256, 256):
            continue
        for t in group["tests"]:
            key, msg, tag = (bytes.fromhex(t[f]) for f in ("key", "msg", "tag"))
            verifies = hmac.compare_digest(hmac.new(key, msg, hashlib.sha256).digest(), tag)
            ok = verifies if t["result"] == "valid" else (not verifies if t["result"] == "invalid" else True)
            report(ok, f"{name} tcId {t['tcId']}")


def check_wycheproof_hkdf(doc, name, report):
    """HKDF-SHA-512, every group (Vectors/README.md), with cryptography's HKDF."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF
    for group in doc["testGroups"]:
        for t in group["tests"]:
            ikm, salt, info = (bytes.fromhex(t[f]) for f in ("ikm", "salt", "info"))
            if t["size"] > 255 * 64:
                ok = t["result"] != "valid"
            else:
                okm = HKDF(hashes.SHA512(), t["size"], salt or None, info).derive(ikm)
                ok = (okm.hex() == t["okm"]) == (t["result"] != "invalid")
            report(ok, f"{name} tcId {t['tcId']}")


def argon2id(password, salt, secret, ad, t, m, p, length):
    """Argon2id v1.3 with argon2-cffi's binding of the reference C code; the
    low-level context takes the secret and associated data RFC 9106 uses."""
    from argon2.low_level import ffi, lib
    out = ffi.new("uint8_t[]", length)
    keep = [ffi.new("uint8_t[]", bytes(b) or b"\0") for b in (password, salt, secret, ad)]
    ctx = ffi.new("argon2_context *", dict(
        out=out, outlen=length, pwd=keep[0], pwdlen=len(password), salt=keep[1], saltlen=len(salt),
        secret=keep[2] if secret else ffi.NULL, secretlen=len(secret), ad=keep[3] if ad else ffi.NULL,
        adlen=len(ad), t_cost=t, m_cost=m, lanes=p, threads=p, version=0x13,
        allocate_cbk=ffi.NULL, free_cbk=ffi.NULL, flags=lib.ARGON2_DEFAULT_FLAGS))
    if lib.argon2_ctx(ctx, lib.Argon2_id) != lib.ARGON2_OK:
        raise ValueError("argon2 refused the parameters")
    return bytes(ffi.buffer(out, length))


def check_argon2id(doc, name, report):
    """SECURITY.md §8.6: TaskKey refuses t outside 1..64, m outside 8 KiB..4 GiB,
    a salt other than 16 bytes, a passphrase outside 1..1024 bytes and an output
    outside 16..256 bytes, before any work."""
    for t in doc["tests"]:
        password, salt, secret, ad = (bytes.fromhex(t[f]) for f in ("password", "salt", "secret", "ad"))
        within = (1 <= t["t"] <= 64 and 8 <= t["m"] <= 4 << 20 and len(salt) == 16
                  and 1 <= len(password) <= 1024 and 16 <= t["length"] <= 256)
        what = f"{name} case {t['id']} ({t['comment']})"
        if t["result"] == "invalid":
            report(not within and t["error"] == "invalid_kdf_parameters", what)
        else:
            tag = argon2id(password, salt, secret, ad, t["t"], t["m"], t["p"], t["length"])
            report(within and tag.hex() == t["tag"], what)
