#!/usr/bin/env python3
"""An independent reader of TaskKey vault files and sync bundles, version 1,
written from SECURITY.md (the vault section) alone, to check the spec and the
vectors. Needs python3-cryptography and libsodium (through ctypes).

    scripts/vault-reader.py Vectors/vault-v1/vault.tkv 'correct horse battery staple'
    scripts/vault-reader.py Vectors/vault-v1/sync.tksync 'correct horse battery staple'

Prints the keys and items as JSON, or one outcome word and exits 1:
damaged, unsupported_version, wrong_passphrase, tampered.

    scripts/vault-reader.py --check Vectors/vault-v1.json

runs every case of the vector file and reports each outcome.
"""
import ctypes, ctypes.util, hashlib, hmac, json, struct, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

sodium = ctypes.CDLL(ctypes.util.find_library("sodium"))
assert sodium.sodium_init() >= 0
MIB = 1 << 20


class Outcome(Exception):
    pass


def argon2id(passphrase, salt, t, m_kib, length):
    out = ctypes.create_string_buffer(length)
    rc = sodium.crypto_pwhash(out, ctypes.c_ulonglong(length), passphrase, ctypes.c_ulonglong(len(passphrase)),
                              salt, ctypes.c_ulonglong(t), ctypes.c_size_t(m_kib * 1024), ctypes.c_int(2))
    if rc != 0:
        raise Outcome("damaged")
    return out.raw


def gcm_open(key, box, aad):
    return AESGCM(key).decrypt(box[:12], box[12:], aad)


def check_kdf(preset, t, m):
    if preset == 2 and (t, m) == (1, 8192):
        return
    if preset == 1 and 3 <= t <= 64 and 65536 <= m <= 4 * MIB:
        return
    raise Outcome("damaged")


def check_length(length):
    if not (540 <= length <= 28 + 8 * MIB and (length - 28) % 512 == 0):
        raise Outcome("damaged")


def parse_store(plain, store):
    if len(plain) == 0 or len(plain) % 512:
        raise Outcome("damaged")
    pos = 0

    def take(n):
        nonlocal pos
        if pos + n > len(plain):
            raise Outcome("damaged")
        pos += n
        return plain[pos - n:pos]

    k, primary = struct.unpack(">II", take(8))
    keys = []
    if store == 2:
        if k or primary:
            raise Outcome("damaged")
    else:
        if not 1 <= k <= 256:
            raise Outcome("damaged")
        for _ in range(k):
            kid = struct.unpack(">I", take(4))[0]
            keys.append({"id": "%08x" % kid, "key": take(32).hex()})
        ids = [key["id"] for key in keys]
        if len(set(ids)) != k or "%08x" % primary not in ids:
            raise Outcome("damaged")
    (n,) = struct.unpack(">I", take(4))
    if n > 1024:
        raise Outcome("damaged")
    items, previous = [], None
    allowed = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:@/-")
    for _ in range(n):
        if take(1)[0] != store:
            raise Outcome("damaged")
        name = take(take(1)[0])
        if not 1 <= len(name) <= 128 or name[:1] == b"-" or not set(name) <= allowed:
            raise Outcome("damaged")
        if previous is not None and not previous < name:
            raise Outcome("damaged")
        previous = name
        (l,) = struct.unpack(">H", take(2))
        if l > 256:
            raise Outcome("damaged")
        label = take(l).decode("utf-8")
        if any(ord(c) < 0x20 or ord(c) == 0x7f for c in label):
            raise Outcome("damaged")
        created, modified, v = struct.unpack(">qqI", take(20))
        if v > 65536:
            raise Outcome("damaged")
        items.append({"name": name.decode(), "label": label, "class": store, "created": created,
                      "modified": modified, "value": take(v).decode("utf-8", "replace")})
    padding = plain[pos:]
    if len(padding) >= 512 or any(padding):
        raise Outcome("damaged")
    return {"primary": "%08x" % primary, "keys": keys, "items": items}


def read_vault(data, passphrase):
    if len(data) < 10 or data[:8] != b"TKVAULT\0":
        raise Outcome("damaged")
    if struct.unpack(">H", data[8:10])[0] != 1:
        raise Outcome("unsupported_version")
    if not 1312 <= len(data) <= 190 + 2 * (5 + 28 + 8 * MIB) + 32:
        raise Outcome("damaged")
    body = data[:-32]
    if not hmac.compare_digest(hashlib.sha256(body).digest(), data[-32:]):
        raise Outcome("damaged")
    alg, preset, t, m = struct.unpack(">BBII", body[26:36])
    if alg != 1:
        raise Outcome("damaged")
    check_kdf(preset, t, m)
    salt = body[36:52]
    if body[60] != 1 or body[121] != 2:
        raise Outcome("damaged")
    generation = body[182:190]
    pos, sealed = 190, {}
    for store in (1, 2):
        if pos + 5 > len(body) or body[pos] != store:
            raise Outcome("damaged")
        (length,) = struct.unpack(">I", body[pos + 1:pos + 5])
        check_length(length)
        sealed[store] = body[pos + 5:pos + 5 + length]
        if len(sealed[store]) != length:
            raise Outcome("damaged")
        pos += 5 + length
    if pos != len(body):
        raise Outcome("damaged")
    kek = argon2id(passphrase, salt, t, m, 32)
    master = {}
    for store, offset in ((1, 61), (2, 122)):
        try:
            master[store] = gcm_open(kek, body[offset:offset + 60], body[:60] + bytes([store]))
        except InvalidTag:
            master[store] = None
    if master[1] is None and master[2] is None:
        raise Outcome("wrong_passphrase")
    if master[1] is None or master[2] is None:
        raise Outcome("tampered")
    result = {"vaultID": body[10:26].hex(), "generation": struct.unpack(">Q", generation)[0]}
    for store in (1, 2):
        try:
            plain = gcm_open(master[store], sealed[store], body[:26] + generation + bytes([store]))
        except InvalidTag:
            raise Outcome("tampered")
        result["store%d" % store] = parse_store(plain, store)
    return result


def read_bundle(data, passphrase):
    if len(data) < 10 or data[:8] != b"TKSYNC\0\0":
        raise Outcome("damaged")
    if struct.unpack(">H", data[8:10])[0] != 1:
        raise Outcome("unsupported_version")
    if not 668 <= len(data) <= 96 + 28 + 8 * MIB + 32:
        raise Outcome("damaged")
    body = data[:-32]
    if not hmac.compare_digest(hashlib.sha256(body).digest(), data[-32:]):
        raise Outcome("damaged")
    alg, preset, t, m = struct.unpack(">BBII", body[26:36])
    if alg != 1:
        raise Outcome("damaged")
    check_kdf(preset, t, m)
    (length,) = struct.unpack(">I", body[92:96])
    check_length(length)
    if length != len(body) - 96:
        raise Outcome("damaged")
    k64 = argon2id(passphrase, body[36:52], t, m, 64)
    if not hmac.compare_digest(hashlib.sha256(k64[32:]).digest(), body[60:92]):
        raise Outcome("wrong_passphrase")
    try:
        plain = gcm_open(k64[:32], body[96:], body[:96])
    except InvalidTag:
        raise Outcome("tampered")
    return {"sourceVaultID": body[10:26].hex(), "store1": parse_store(plain, 1)}


def check(path):
    import os
    spec = json.load(open(path))
    base = os.path.join(os.path.dirname(path), spec["files"])
    bad = 0
    for case in spec["tests"]:
        data = open(os.path.join(base, case["file"]), "rb").read()
        reader = read_vault if case["kind"] == "vault" else read_bundle
        try:
            result = reader(data, case["passphrase"].encode())
            store1 = result["store1"]
            items = store1["items"] + result.get("store2", {"items": []})["items"]
            want = spec["expected"]
            names = [i["name"] for i in want["items"]] if case["kind"] == "vault" else want["syncBundleItems"]
            same = (store1["primary"] == want["primaryKeyID"] and store1["keys"] == want["noteKeys"]
                    and sorted(i["name"] for i in items) == names
                    and all(i["value"] == w["value"] and i["label"] == w["label"] and i["created"] == w["created"]
                            and i["modified"] == w["modified"] for i in items for w in want["items"]
                            if w["name"] == i["name"]))
            got = "success" if same else "mismatch"
        except Outcome as outcome:
            got = outcome.args[0]
        ok = got == case["expect"]
        bad += not ok
        print("ok  " if ok else "FAIL", case["id"], case["file"], case["expect"], "" if ok else "got " + got)
    sys.exit(1 if bad else 0)


def main():
    if sys.argv[1] == "--check":
        check(sys.argv[2])
        return
    path, passphrase = sys.argv[1], sys.argv[2].encode()
    data = open(path, "rb").read()
    try:
        reader = read_bundle if data[:6] == b"TKSYNC" else read_vault
        print(json.dumps(reader(data, passphrase), indent=2))
    except Outcome as outcome:
        print(outcome.args[0])
        sys.exit(1)


if __name__ == "__main__":
    main()
