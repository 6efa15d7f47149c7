#!/usr/bin/env python3
"""An independent reader of TaskKey vault files and sync bundles, version 1,
written from SECURITY.md (the vault section) alone, to check the spec and the
vectors. Needs python3-cryptography and libsodium (through ctypes).

    scripts/vault-reader.py Vectors/vault-v1/vault.tkv 'correct horse battery staple' [device.tkv]
    scripts/vault-reader.py Vectors/vault-v1/sync.tksync 'correct horse battery staple'

Prints the keys and items as JSON, or one outcome word and exits 1:
damaged, unsupported_version, wrong_passphrase, tampered.

    scripts/vault-reader.py --check Vectors/vault-v1.json

runs every case of the vector file (vault-v1.json or backup-v1.json) and
reports each outcome. A backup file (TKBACKUP) given as the first argument
is read with read_backup.
"""
import ctypes, ctypes.util, hashlib, hmac, json, os, struct, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.exceptions import InvalidTag

sodium = ctypes.CDLL(ctypes.util.find_library("sodium"))
assert sodium.sodium_init() >= 0
MIB = 1 << 20


class Outcome(Exception):
    pass


def argon2id(passphrase, salt, t, m_kib, length):
    """Argon2id v1.3, parallelism 1: argon2-cffi (the reference C code) when
    installed, so the check does not share libsodium with TaskKey; else
    libsodium's crypto_pwhash with ALG_ARGON2ID13."""
    try:
        from argon2.low_level import Type, hash_secret_raw
        return hash_secret_raw(passphrase, salt, time_cost=t, memory_cost=m_kib, parallelism=1, hash_len=length,
                               type=Type.ID, version=19)
    except ImportError:
        pass
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



def forbidden_in_label(c):
    """store-contents.md, "Labels": C0, DEL, C1, U+2028/U+2029 and the
    bidirectional controls."""
    o = ord(c)
    return (o < 0x20 or 0x7f <= o <= 0x9f or o in (0x2028, 0x2029, 0x061c, 0x200e, 0x200f)
            or 0x202a <= o <= 0x202e or 0x2066 <= o <= 0x2069)

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
    if n > 10000:
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
        try:
            label = take(l).decode("utf-8")
        except UnicodeDecodeError:
            raise Outcome("damaged")
        if any(forbidden_in_label(c) for c in label):
            raise Outcome("damaged")
        created, modified, v = struct.unpack(">qqI", take(20))
        if v > 65536:
            raise Outcome("damaged")
        items.append({"name": name.decode(), "label": label, "class": store, "created": created,
                      "modified": modified, "value": take(v).decode("utf-8", "replace")})
    retired = []
    if plain[pos:pos + 4] == b"RTRD":
        take(4)
        (r,) = struct.unpack(">I", take(4))
        if store == 2 or not 1 <= r <= 4096:
            raise Outcome("damaged")
        for _ in range(r):
            kid = "%08x" % struct.unpack(">I", take(4))[0]
            if (retired and kid <= retired[-1]) or kid in [key["id"] for key in keys]:
                raise Outcome("damaged")
            retired.append(kid)
    padding = plain[pos:]
    if len(padding) >= 512 or any(padding):
        raise Outcome("damaged")
    return {"primary": "%08x" % primary, "keys": keys, "items": items, "retired": retired}


def read_sealed_store(body, pos, store):
    """store id (1) || length (4) || sealed store, which must end the body."""
    if pos + 5 > len(body) or body[pos] != store:
        raise Outcome("damaged")
    (length,) = struct.unpack(">I", body[pos + 1:pos + 5])
    check_length(length)
    if pos + 5 + length != len(body):
        raise Outcome("damaged")
    return body[pos + 5:]


def checked_body(data, minimum, maximum):
    if not minimum <= len(data) <= maximum:
        raise Outcome("damaged")
    body = data[:-32]
    if not hmac.compare_digest(hashlib.sha256(body).digest(), data[-32:]):
        raise Outcome("damaged")
    return body


def read_vault(data, passphrase, device=None, master_out=False):
    if len(data) < 10 or data[:8] != b"TKVAULT\0":
        raise Outcome("damaged")
    if struct.unpack(">H", data[8:10])[0] != 1:
        raise Outcome("unsupported_version")
    body = checked_body(data, 706, 129 + 5 + 28 + 8 * MIB + 32)
    alg, preset, t, m = struct.unpack(">BBII", body[26:36])
    if alg != 1:
        raise Outcome("damaged")
    check_kdf(preset, t, m)
    salt = body[36:52]
    if body[60] != 1:
        raise Outcome("damaged")
    generation = body[121:129]
    sealed = read_sealed_store(body, 129, 1)
    device_body = None
    if device is not None:
        # The device-only file's checks that need no key come first too.
        if len(device) < 10 or device[:8] != b"TKDEVICE":
            raise Outcome("damaged")
        if struct.unpack(">H", device[8:10])[0] != 1:
            raise Outcome("unsupported_version")
        device_body = checked_body(device, 672, 95 + 5 + 28 + 8 * MIB + 32)
        if device_body[10:26] != body[10:26] or device_body[26] != 2:
            raise Outcome("damaged")
        device_sealed = read_sealed_store(device_body, 95, 2)
    kek = argon2id(passphrase, salt, t, m, 32)
    try:
        master = gcm_open(kek, body[61:121], body[:60] + b"\x01")
    except InvalidTag:
        raise Outcome("wrong_passphrase")
    result = {"vaultID": body[10:26].hex(), "generation": struct.unpack(">Q", generation)[0]}
    try:
        plain = gcm_open(master, sealed, body[:26] + generation + b"\x01")
    except InvalidTag:
        raise Outcome("tampered")
    result["store1"] = parse_store(plain, 1)
    if master_out:
        result["master"] = master
    if device_body is not None:
        dwk = hmac.new(master, b"TaskKey device-only wrap key v1" + body[10:26], hashlib.sha256).digest()
        try:
            device_master = gcm_open(dwk, device_body[27:87], device_body[:26] + b"\x02")
            plain = gcm_open(device_master, device_sealed, device_body[:26] + device_body[87:95] + b"\x02")
        except InvalidTag:
            raise Outcome("tampered")
        result["deviceGeneration"] = struct.unpack(">Q", device_body[87:95])[0]
        result["store2"] = parse_store(plain, 2)
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


def read_backup(data, passphrase):
    """The backup file (SECURITY.md, Backups), in the order of its MUST rules."""
    if len(data) < 10 or data[:8] != b"TKBACKUP":
        raise Outcome("damaged")
    if struct.unpack(">H", data[8:10])[0] != 1:
        raise Outcome("unsupported_version")
    if not 46 + 706 + 32 <= len(data) <= 46 + 129 + 5 + 28 + 8 * MIB + 32 + 32:
        raise Outcome("damaged")
    (length,) = struct.unpack(">I", data[42:46])
    if length != len(data) - 46 - 32:
        raise Outcome("damaged")
    vault = data[46:46 + length]
    if vault[10:26] != data[10:26] or vault[121:129] != data[26:34]:
        raise Outcome("damaged")
    # read_vault applies every rule of the vault file; then derive BK from MK.
    result = read_vault(vault, passphrase, master_out=True)
    bk = hmac.new(result.pop("master"), b"TaskKey backup authentication key v1" + data[10:26], hashlib.sha256).digest()
    if not hmac.compare_digest(hmac.new(bk, data[:-32], hashlib.sha256).digest(), data[-32:]):
        raise Outcome("tampered")
    result["created"] = struct.unpack(">q", data[34:42])[0]
    return result


def run_cases(spec, base, outcome_of):
    """Runs every case of a vector file: reads the file it names, asks
    outcome_of(case, data) whether it matches (an Outcome names a refusal),
    prints one line a case and exits 1 if any case gave another outcome."""
    bad = 0
    for case in spec["tests"]:
        data = open(os.path.join(base, case["file"]), "rb").read()
        try:
            got = "success" if outcome_of(case, data) else "mismatch"
        except Outcome as outcome:
            got = outcome.args[0]
        ok = got == case["expect"]
        bad += not ok
        print("ok  " if ok else "FAIL", case["id"], case["file"], case["expect"], "" if ok else "got " + got)
    sys.exit(1 if bad else 0)


def backup_matches(want):
    def matches(case, data):
        result = read_backup(data, case["passphrase"].encode())
        store1 = result["store1"]
        return (result["vaultID"] == want["vaultID"] and result["generation"] == want["generation"]
                and result["created"] == want["created"] and len(store1["keys"]) == want["noteKeyCount"]
                and [i["name"] for i in store1["items"]] == want["items"])
    return matches


def vault_matches(want, base):
    def matches(case, data):
        device = case.get("deviceFile")
        device = open(os.path.join(base, device), "rb").read() if device else None
        if case["kind"] == "vault":
            result = read_vault(data, case["passphrase"].encode(), device)
        else:
            result = read_bundle(data, case["passphrase"].encode())
        store1 = result["store1"]
        items = store1["items"] + result.get("store2", {"items": []})["items"]
        if case["kind"] == "vault":
            names = [i["name"] for i in want["items"] if device or i["class"] == "after-first-unlock"]
        else:
            names = want["syncBundleItems"]
        return (store1["primary"] == want["primaryKeyID"] and store1["keys"] == want["noteKeys"]
                and store1["retired"] == want["retiredKeyIDs"]
                and sorted(i["name"] for i in items) == names
                and all(i["value"] == w["value"] and i["label"] == w["label"] and i["created"] == w["created"]
                        and i["modified"] == w["modified"] for i in items for w in want["items"]
                        if w["name"] == i["name"]))
    return matches


def check(path):
    spec = json.load(open(path))
    base = os.path.join(os.path.dirname(path), spec["files"])
    if spec.get("format") == "backup":
        run_cases(spec, base, backup_matches(spec["expected"]))
    run_cases(spec, base, vault_matches(spec["expected"], base))


def main():
    if sys.argv[1] == "--check":
        check(sys.argv[2])
        return
    path, passphrase = sys.argv[1], sys.argv[2].encode()
    data = open(path, "rb").read()
    try:
        if data[:8] == b"TKBACKUP":
            print(json.dumps(read_backup(data, passphrase), indent=2))
        elif data[:6] == b"TKSYNC":
            print(json.dumps(read_bundle(data, passphrase), indent=2))
        else:
            device = open(sys.argv[3], "rb").read() if len(sys.argv) > 3 else None
            print(json.dumps(read_vault(data, passphrase, device), indent=2))
    except Outcome as outcome:
        print(outcome.args[0])
        sys.exit(1)


if __name__ == "__main__":
    main()
