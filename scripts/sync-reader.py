#!/usr/bin/env python3
"""An independent reader and writer of Tasker's sync storage, version 1,
written from docs/formats/sync-storage.md alone (with the conventions of
docs/formats/README.md and the sealed value of docs/formats/sealed-value.md),
not from the Swift code, for `make interop`. Standard library plus the
`cryptography` package (AES-GCM, HKDF-SHA512) and PyNaCl (X25519 and
libsodium's crypto_box_seal), both in the venv that scripts/interop.py makes.

    python3 scripts/sync-reader.py --write-vectors   (re)writes the vectors
    python3 scripts/sync-reader.py --check           checks every case

The vectors are Apps/Tasker/Vectors/sync-storage-v1.json. Everything in them
is deterministic: keys and nonces come from SHA-256 of fixed labels, so
--write-vectors always writes the same bytes. That includes the sealed boxes:
libsodium draws a box's ephemeral key at random, so the generator seals with
a fixed ephemeral secret through crypto_box (seal_box_with); the check opens
every box both ways, as the spec writes it and with libsodium's
crypto_box_seal_open (PyNaCl's SealedBox), and they must agree. `scripts/interop.py` loads this
file and calls `check_all(report)`.

Attachment blobs are attachment files (docs/formats/attachment.md), read and
written through scripts/attachment-reader.py, that format's own independent
reader, under the blob key this page's spec derives.

Members outside the agreed schema: an object case may carry
`append_zero_bytes` (N zero bytes to append to `object_hex`), so that the
too_large case does not need 8 MiB of hex, and `keyring_entries` (N: the
reader holds the keyring of the first N entries of `sync_keys`, their
`item_hex` concatenated; without it N = 1, which is what markers use too).
"""
import base64
import datetime
import hashlib
import itertools
import json
import math
import os
import re
import struct
import sys

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

try:
    import nacl.bindings
    import nacl.exceptions
    import nacl.public
except ImportError:
    sys.exit("sync-reader: needs PyNaCl (the venv of `make interop` has it: "
             ".build/interop-venv/bin/python scripts/sync-reader.py --check)")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VECTOR_FILE = os.path.join(ROOT, "Apps", "Tasker", "Vectors", "sync-storage-v1.json")


class Outcome(Exception):
    """A refusal; args[0] is the outcome name of the spec."""

    @property
    def name(self):
        return self.args[0]


def u16(n): return struct.pack(">H", n)
def u32(n): return struct.pack(">I", n)
def u64(n): return struct.pack(">Q", n)


# --- Keys ("Keys") ------------------------------------------------------------

def read_sync_key_item(item):
    """The vault item `tasker.sync-key`, the sync keyring: 1 to 64 entries of
    exactly 36 bytes, epoch (u32) || key (32), epochs nonzero and strictly
    increasing. A list of (epoch, key), oldest first."""
    if len(item) == 0 or len(item) % 36 != 0 or len(item) // 36 > 64:
        raise Outcome("malformed_sync_key")
    entries = [(struct.unpack(">I", item[i:i + 4])[0], item[i + 4:i + 36]) for i in range(0, len(item), 36)]
    epochs = [epoch for epoch, _ in entries]
    if epochs[0] == 0 or any(b <= a for a, b in zip(epochs, epochs[1:])):
        raise Outcome("malformed_sync_key")
    return entries


def target_key(sync_key, target_id, epoch):
    info = b"tasker-sync v1 target" + u32(epoch)  # 21 ASCII bytes + 4
    return HKDF(algorithm=hashes.SHA512(), length=32, salt=target_id, info=info).derive(sync_key)


# --- The target marker (54 bytes) ---------------------------------------------

def seal_marker(epoch, target_id, sync_key, nonce, magic=b"TKSM", version=1):
    head = magic + u16(version) + u32(epoch) + target_id
    tag = AESGCM(target_key(sync_key, target_id, epoch)).encrypt(nonce, b"", head)
    return head + nonce + tag


def open_marker(marker, sync_keys):
    """The target id T of a marker, or Outcome (rules 1-5 in order)."""
    if len(marker) != 54:
        raise Outcome("malformed_marker")
    if marker[0:4] != b"TKSM":
        raise Outcome("malformed_marker")
    if struct.unpack(">H", marker[4:6])[0] != 1:
        raise Outcome("unsupported_version")
    epoch = struct.unpack(">I", marker[6:10])[0]
    if epoch not in sync_keys:
        raise Outcome("unknown_epoch")
    target_id = marker[10:26]
    try:
        AESGCM(target_key(sync_keys[epoch], target_id, epoch)).decrypt(marker[26:38], marker[38:54], marker[0:26])
    except InvalidTag:
        raise Outcome("not_this_key")
    return target_id


# --- The change object --------------------------------------------------------

MAX_OBJECT = 4194304 + 62
MIN_OBJECT = 512 + 62


def padme(length):
    """Padmé (Nikitin et al., 2019), as the spec writes it."""
    e = length.bit_length() - 1            # floor(log2 L)
    s = e.bit_length()                     # floor(log2 E) + 1
    mask = (1 << (e - s)) - 1
    return (length + mask) & ~mask


def padded(payload):
    size = padme(max(512, 4 + len(payload)))
    return u32(len(payload)) + payload + bytes(size - 4 - len(payload))


def seal_raw(plaintext, device, seq, epoch, target_id, sync_key, nonce, magic=b"TKSO", version=1):
    """An object around any plaintext (the vectors use it for bad padding)."""
    header = magic + u16(version) + u32(epoch) + device + u64(seq)
    box = AESGCM(target_key(sync_key, target_id, epoch)).encrypt(nonce, plaintext, header + target_id)
    return header + nonce + box


def seal_object(payload_bytes, device_hex, seq, epoch, target_id, sync_key, nonce):
    return seal_raw(padded(payload_bytes), bytes.fromhex(device_hex), seq, epoch, target_id, sync_key, nonce)


def open_object(obj, name_device_hex, name_seq, target_id, sync_keys):
    """The payload (a dict) of object `d/<name_device_hex>/<name_seq>`, or
    Outcome: the reader's rules 1-9, in their order."""
    if len(obj) > MAX_OBJECT:
        raise Outcome("too_large")
    if len(obj) < MIN_OBJECT:
        raise Outcome("truncated")
    if obj[0:4] != b"TKSO":
        raise Outcome("malformed_object")
    if struct.unpack(">H", obj[4:6])[0] != 1:
        raise Outcome("unsupported_version")
    seq = struct.unpack(">Q", obj[26:34])[0]
    if obj[10:26].hex() != name_device_hex or seq != name_seq or seq == 0:
        raise Outcome("wrong_position")
    epoch = struct.unpack(">I", obj[6:10])[0]
    if epoch not in sync_keys:
        raise Outcome("unknown_epoch")
    try:
        plain = AESGCM(target_key(sync_keys[epoch], target_id, epoch)).decrypt(obj[34:46], obj[46:], obj[0:34] + target_id)
    except InvalidTag:
        raise Outcome("authentication_failed")
    size, length = len(plain), struct.unpack(">I", plain[0:4])[0]
    if length > size - 4 or size != padme(max(512, 4 + length)) or any(plain[4 + length:]):
        raise Outcome("bad_padding")
    return read_payload(plain[4:4 + length], seq, obj[10:26].hex(), epoch)


# --- Strict JSON (the approach of scripts/plan-reader.py) -------------------

MAX_DEPTH = 64


class NotStrict(Exception):
    pass


class Number:
    """A number token that is not an integer (fraction, exponent, -0)."""

    def __init__(self, token):
        self.token = token


def _integer(token):
    return Number(token) if token == "-0" else int(token)


def _fraction(token):
    if not math.isfinite(float(token)):
        raise NotStrict("number out of range")
    return Number(token)


def _constant(token):
    raise NotStrict(f"{token} is not JSON")


def _pairs(pairs):
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise NotStrict("a member name appears twice in one object")
    return dict(pairs)


def _depth(text):
    """Nesting depth, from the text itself, before json.loads recurses."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise NotStrict("too deep")
        elif char in "]}":
            depth -= 1


def _no_surrogates(value):
    """A `\\ud800` escape alone is JSON's syntax but no Unicode scalar."""
    if isinstance(value, str) and any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise NotStrict("a lone surrogate escape")
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    for element in value if isinstance(value, list) else ():
        _no_surrogates(element)


def strict_json(data):
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise NotStrict("not UTF-8")
    _depth(text)
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant,
                           parse_int=_integer, parse_float=_fraction)
    except (ValueError, RecursionError) as error:
        raise NotStrict(str(error))
    _no_surrogates(value)
    return value


def canonical(value):
    """Compact JSON with sorted keys (the writer's encoding and the merge's
    tie-break encoding): UTF-8 as is, only '"', '\\' and C0 escaped."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


# --- The payload ("Payload") ------------------------------------------------

MAX_SAFE = 2**53 - 1
HEX32 = re.compile(r"[0-9a-f]{32}")
CLOCK = re.compile(r"[0-9a-f]{16}-[0-9a-f]{32}")
SEALED = re.compile(r"tc1\.[0-9a-f]{8}:([A-Za-z0-9+/]*={0,2})")
DAY = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")


def bad(why):
    raise Outcome("malformed_payload", why)


def need(condition, why):
    if not condition:
        bad(why)


def is_int(v, lo, hi):
    return type(v) is int and lo <= v <= hi


def is_control(c):
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F  # C0, DEL, C1


def plain_string(v, lo, hi):
    return isinstance(v, str) and lo <= len(v) <= hi and not any(is_control(c) for c in v)


def members(obj, required, optional=()):
    need(isinstance(obj, dict), "not an object")
    need(set(required) <= set(obj) <= set(required) | set(optional), f"members {sorted(obj)}")


def is_day(v):
    m = DAY.fullmatch(v) if isinstance(v, str) else None
    if not m:
        return False
    try:
        datetime.date(int(m[1]), int(m[2]), int(m[3]))
        return True
    except ValueError:
        return False


def is_sealed(v):
    """`tc1.<kid>:` and canonical base64 of at least 28 bytes."""
    m = SEALED.fullmatch(v) if isinstance(v, str) else None
    if not m or len(m[1]) % 4:
        return False
    try:
        raw = base64.b64decode(m[1], validate=True)
    except ValueError:
        return False
    return base64.b64encode(raw).decode() == m[1] and len(raw) >= 28


TITLE = lambda v: isinstance(v, str) and 1 <= len(v) <= 65536  # noqa: E731
TIME = lambda v: is_int(v, 0, MAX_SAFE)  # noqa: E731
FIELDS = {
    "task": {"title": TITLE,
             "due": lambda v: v is None or is_day(v),
             "estimate_minutes": lambda v: v is None or is_int(v, 0, MAX_SAFE),
             "priority": lambda v: is_int(v, 0, 3),
             "energy": lambda v: v is None or is_int(v, 1, 3),
             "status": lambda v: isinstance(v, str) and v in ("open", "done"),
             "completed_at": lambda v: v is None or TIME(v),
             "contexts": lambda v: isinstance(v, str) and len(v) <= 65536,
             "created_at": TIME},
    "page": {"title": TITLE, "created_at": TIME, "updated_at": TIME},
    "attachment": {"owner": lambda v: is_owner(v),
                   "name": lambda v: is_attachment_name(v),
                   "media_type": lambda v: is_attachment_name(v),
                   "created_at": TIME,
                   "content": lambda v: is_content(v)},
}
OWNER = re.compile(r"(task|page)/[0-9a-f]{32}")


def is_owner(v):
    return isinstance(v, str) and OWNER.fullmatch(v) is not None


def is_attachment_name(v):
    """1 to 255 UTF-8 bytes, no control character (C0, DEL, C1)."""
    return (isinstance(v, str) and 1 <= len(v.encode("utf-8", "surrogatepass")) <= 255
            and not any(is_control(c) for c in v))


def is_content(v):
    return (isinstance(v, dict) and set(v) == {"device", "blob", "size"} and is_version(v["device"])
            and is_version(v["blob"]) and is_int(v["size"], 0, MAX_SAFE))


def is_clock(v):
    return isinstance(v, str) and CLOCK.fullmatch(v) is not None


def is_version(v):
    return isinstance(v, str) and HEX32.fullmatch(v) is not None


def check_record(r):
    members(r, ("kind", "id", "fields"), ("deleted", "body"))
    need(isinstance(r["kind"], str) and r["kind"] in FIELDS, "kind")
    need(is_version(r["id"]), "id")
    need(isinstance(r["fields"], dict), "fields")
    for name, entry in r["fields"].items():
        need(name in FIELDS[r["kind"]], f"field {name}")
        members(entry, ("value", "clock"))
        need(is_clock(entry["clock"]), "field clock")
        need(FIELDS[r["kind"]][name](entry["value"]), f"value of {name}")
    if "deleted" in r:
        need(is_clock(r["deleted"]), "deleted")
    if r["kind"] == "attachment":  # written whole, once: every field, no body
        need(set(r["fields"]) == set(FIELDS["attachment"]) and "body" not in r, "attachment fields")
    if "body" in r:
        members(r["body"], ("heads", "superseded"))
        heads, superseded = r["body"]["heads"], r["body"]["superseded"]
        need(isinstance(heads, list) and len(heads) <= 64, "heads")
        for head in heads:
            members(head, ("version", "clock", "text"))
            need(is_version(head["version"]) and is_clock(head["clock"]) and is_sealed(head["text"]), "head")
        need(len({h["version"] for h in heads}) == len(heads), "head versions repeat")
        need(isinstance(superseded, list) and len(superseded) <= 100000, "superseded")
        need(all(is_version(v) for v in superseded) and len(set(superseded)) == len(superseded), "superseded ids")


HEX64 = re.compile(r"[0-9a-f]{64}")
HEX168 = re.compile(r"[0-9a-f]{168}")


def is_device_id(v):
    return isinstance(v, str) and HEX32.fullmatch(v) is not None


def check_epoch_change(change, writer, seq, header_epoch):
    """The payload's `epoch` member ("Removing a device: epochs"): every
    reading rule there is malformed_payload."""
    members(change, ("number", "removed", "cuts", "keys"))
    need(is_int(change["number"], 0, 2**32 - 1) and change["number"] == header_epoch + 1, "epoch number")
    removed, cuts, keys = change["removed"], change["cuts"], change["keys"]
    need(isinstance(removed, list) and 1 <= len(removed) <= 64, "removed count")
    need(all(is_device_id(d) for d in removed) and len(set(removed)) == len(removed), "removed ids")
    need(writer not in removed, "the writer in removed")
    need(isinstance(cuts, dict) and 1 <= len(cuts) <= 1024, "cuts count")
    need(all(is_device_id(d) and is_int(s, 0, MAX_SAFE) for d, s in cuts.items()), "cuts")
    need(cuts.get(writer) == seq, "the writer's cut is not this object's seq")
    need(isinstance(keys, dict) and len(keys) <= 1024, "keys count")
    need(all(is_device_id(d) and isinstance(b, str) and HEX168.fullmatch(b) for d, b in keys.items()), "keys")
    need(writer not in keys, "the writer in keys")
    need(not set(keys) & set(removed), "a removed device in keys")


def read_payload(data, seq, writer, header_epoch):
    """The payload of an object of device `writer` (hex) at `seq`, sealed at
    `header_epoch`, or Outcome(malformed_payload)."""
    try:
        p = strict_json(data)
    except NotStrict as error:
        bad(str(error))
    members(p, ("format", "version", "made", "records"), ("device", "epoch", "seen", "floor"))
    need(p["format"] == "tasker-sync-changes", "format")
    need(type(p["version"]) is int and p["version"] == 1, "version")
    need(is_int(p["made"], 0, MAX_SAFE), "made")
    need(seq != 1 or "device" in p, "seq 1 without device")
    if "device" in p:
        members(p["device"], ("name",), ("box",))
        need(plain_string(p["device"]["name"], 1, 64), "device name")
        need("box" not in p["device"] or (isinstance(p["device"]["box"], str)
                                          and HEX64.fullmatch(p["device"]["box"])), "device box")
    if "epoch" in p:
        need("device" in p, "epoch without device")
        check_epoch_change(p["epoch"], writer, seq, header_epoch)
    if "seen" in p:  # the writer's positions of the other devices (Compaction)
        need(isinstance(p["seen"], dict) and len(p["seen"]) <= 1024, "seen")
        need(all(is_device_id(k) and k != writer and is_int(v, 0, MAX_SAFE) for k, v in p["seen"].items()), "seen")
    if "floor" in p:
        need(is_int(p["floor"], 1, MAX_SAFE) and p["floor"] < seq, "floor")
    need(isinstance(p["records"], list) and len(p["records"]) <= 10000, "records")
    for r in p["records"]:
        check_record(r)
    keys = [(r["kind"], r["id"]) for r in p["records"]]
    need(len(set(keys)) == len(keys), "two records share kind and id")
    return p


# --- Attachment blobs (the attachment format under the blob key) ------------

def _attachment_format():
    """scripts/attachment-reader.py, the independent reader of
    docs/formats/attachment.md, which the blob is an instance of."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("attachment_reader", os.path.join(ROOT, "scripts",
                                                                                    "attachment-reader.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ATTACHMENT = _attachment_format()


def blob_key(sync_key, target_id, epoch):
    """A(T, e) = HKDF-SHA512(IKM = S.key, salt = T, info = "tasker-sync v1 attachment" || u32(e), L = 32)."""
    return HKDF(algorithm=hashes.SHA512(), length=32, salt=target_id,
                info=b"tasker-sync v1 attachment" + u32(epoch)).derive(sync_key)


def blob_length(size):
    """L = 69 + P + 16 * (P // 16384 + 1), with P = pad(max(512, size))."""
    p = padme(max(512, size))
    return 69 + p + 16 * (p // 16384 + 1)


def blob_record(uid, content):
    return f"sync/attachment/{uid}/{content['blob']}"


def seal_blob(data, uid, content, epoch, sync_key, target_id, salt):
    plaintext = data + bytes(padme(max(512, content["size"])) - len(data))
    return ATTACHMENT.seal_attachment(plaintext, u32(epoch).hex(), blob_key(sync_key, target_id, epoch),
                                      blob_record(uid, content), salt)


def open_blob(blob, uid, content, sync_keys, target_id):
    """The content of a blob, by the reading rules 1 to 5, or an Outcome."""
    expected = blob_length(content["size"])
    if len(blob) > expected:
        bad_as("too_large")
    if len(blob) < expected:
        bad_as("truncated")
    if blob[:8] != ATTACHMENT.MAGIC or blob[8] != 1:
        bad_as("malformed_blob")
    epoch = struct.unpack(">I", blob[9:13])[0]
    if epoch not in sync_keys:
        bad_as("unknown_epoch")
    keys = {u32(epoch).hex(): blob_key(sync_keys[epoch], target_id, epoch)}
    try:
        kind, plaintext = ATTACHMENT.open_attachment(blob, keys, blob_record(uid, content))
    except ATTACHMENT.Outcome:
        bad_as("authentication_failed")
    need_as(kind == "valid" and len(plaintext) == padme(max(512, content["size"])), "authentication_failed")
    need_as(not any(plaintext[content["size"]:]), "bad_padding")
    return plaintext[:content["size"]]


def bad_as(name):
    raise Outcome(name)


def need_as(condition, name):
    if not condition:
        bad_as(name)


# --- Sealed boxes of epoch keys (libsodium crypto_box_seal) -----------------

def x25519_public(secret):
    return nacl.bindings.crypto_scalarmult_base(secret)


def seal_box_with(message, recipient_public, ephemeral_secret):
    """crypto_box_seal as the spec writes it, with a given ephemeral secret
    (the vectors' fixed bytes; libsodium itself draws it at random):
    ephemeral public key || XSalsa20-Poly1305 under crypto_box_beforenm with
    the nonce BLAKE2b-192(ephemeral public || recipient public)."""
    ephemeral_public = x25519_public(ephemeral_secret)
    nonce = hashlib.blake2b(ephemeral_public + recipient_public, digest_size=24).digest()
    return ephemeral_public + nacl.bindings.crypto_box(message, nonce, recipient_public, ephemeral_secret)


def open_box(box, secret):
    """The plaintext of a sealed box, or Outcome(box_not_opened). Opened twice:
    as the spec writes it (crypto_box_open with the BLAKE2b nonce) and with
    libsodium's own crypto_box_seal_open (PyNaCl's SealedBox); both must
    agree, or the spec's description of the box is wrong."""
    public = x25519_public(secret)
    try:
        theirs = nacl.public.SealedBox(nacl.public.PrivateKey(secret)).decrypt(box)
    except nacl.exceptions.CryptoError:
        theirs = None
    mine = None
    if len(box) >= 48:
        nonce = hashlib.blake2b(box[:32] + public, digest_size=24).digest()
        try:
            mine = nacl.bindings.crypto_box_open(box[32:], nonce, box[:32], secret)
        except nacl.exceptions.CryptoError:
            pass
    if mine != theirs:
        raise Outcome("spec_and_libsodium_disagree")
    if mine is None:
        raise Outcome("box_not_opened")
    return mine


# --- Sealed values of body texts (sealed-value.md) --------------------------

def seal_text(text, kid, key, context, nonce):
    marker = f"tc1.{kid}:".encode()
    box = AESGCM(key).encrypt(nonce, text.encode("utf-8"), marker + context.encode("utf-8"))
    return marker.decode() + base64.b64encode(nonce + box).decode()


def open_text(value, keys, context):
    """The note text of a sealed value, or None when it does not open."""
    kid, raw = value[4:12], base64.b64decode(value[13:])
    try:
        return AESGCM(keys[kid]).decrypt(raw[:12], raw[12:], value[:13].encode() + context.encode()).decode("utf-8")
    except (KeyError, InvalidTag, UnicodeDecodeError):
        return None


# --- Applying: the merge ------------------------------------------------------

def canonical_record(r):
    """Heads sorted by version, superseded sorted, body left out when empty."""
    out = {"kind": r["kind"], "id": r["id"], "fields": dict(r.get("fields", {}))}
    if "deleted" in r:
        out["deleted"] = r["deleted"]
    body = r.get("body", {})
    heads = sorted(body.get("heads", []), key=lambda h: h["version"])
    superseded = sorted(body.get("superseded", []))
    if heads or superseded:
        out["body"] = {"heads": heads, "superseded": superseded}
    return out


def merge(a, b):
    """The join of two states of one record (rules 1-3), canonical form."""
    assert (a["kind"], a["id"]) == (b["kind"], b["id"]), "merge of two records"
    out = {"kind": a["kind"], "id": a["id"], "fields": {}}
    fa, fb = a.get("fields", {}), b.get("fields", {})
    for name in sorted(set(fa) | set(fb)):
        sides = [e for e in (fa.get(name), fb.get(name)) if e is not None]
        out["fields"][name] = max(sides, key=lambda e: (e["clock"].encode(), canonical(e["value"])))
    deleted = [r["deleted"] for r in (a, b) if "deleted" in r]
    if deleted:
        out["deleted"] = max(deleted, key=str.encode)
    ba, bb = a.get("body", {}), b.get("body", {})
    superseded = set(ba.get("superseded", [])) | set(bb.get("superseded", []))
    heads = {}
    for head in ba.get("heads", []) + bb.get("heads", []):
        old = heads.get(head["version"])
        # One id, two texts: the greater text; equal texts: the greater clock (not in the spec).
        if old is None or (head["text"].encode(), head["clock"].encode()) > (old["text"].encode(), old["clock"].encode()):
            heads[head["version"]] = head
    out["body"] = {"heads": [h for v, h in heads.items() if v not in superseded], "superseded": list(superseded)}
    return canonical_record(out)


def shown(r):
    """(the shown head's version id or None, sorted conflict version ids)."""
    heads = r.get("body", {}).get("heads", [])
    if "deleted" in r or not heads:
        return None, sorted(h["version"] for h in heads)
    best = max(heads, key=lambda h: (h["clock"].encode(), h["version"].encode()))
    return best["version"], sorted(h["version"] for h in heads if h is not best)


# --- The configuration record ---------------------------------------------

COMMON_LINES = [("target-id ", "target_id"), ("device ", "device"), ("name ", "name"), ("database ", "database")]
AUTH_USER = re.compile(r"[!-~]+")


def _value(line, prefix):
    if not line.startswith(prefix) or line.endswith(" ") or len(line) == len(prefix):
        raise Outcome("malformed", f"line {prefix!r}")
    return line[len(prefix):]


def read_config(data, database_path):
    """The view of a configuration record, or Outcome(malformed,
    unsupported_version, wrong_database), checked in that order."""
    if len(data) > 8192:
        raise Outcome("malformed", "more than 8 KiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Outcome("malformed", "not UTF-8")
    if not text.endswith("\n"):
        raise Outcome("malformed", "no final LF")
    lines = text[:-1].split("\n")
    first = re.fullmatch(r"tasker-sync ([0-9]+)", lines[0])
    if not first:
        raise Outcome("malformed", "first line")
    if first[1] != "1":
        raise Outcome("unsupported_version")
    if any(is_control(c) for c in text[:-1].replace("\n", "")):
        raise Outcome("malformed", "a control character")
    if len(lines) >= 2 and lines[1].startswith("target webdav "):
        if len(lines) != 8:
            raise Outcome("malformed", "lines")
        url = _value(lines[1], "target webdav ")
        if not (url.startswith("https://") or url.startswith("http://")) or " " in url:
            raise Outcome("malformed", "url")
        user = None if lines[2] == "auth none" else _value(lines[2], "auth basic ")
        if user is not None and (not AUTH_USER.fullmatch(user) or ":" in user):
            raise Outcome("malformed", "user")
        ca = None if lines[3] == "ca system" else _value(lines[3], "ca file ")
        if ca is not None and not ca.startswith("/"):
            raise Outcome("malformed", "ca file")
        view = {"target_kind": "webdav", "target": url, "user": user, "ca_file": ca}
        rest = lines[4:]
    else:
        if len(lines) != 6:
            raise Outcome("malformed", "lines")
        folder = _value(lines[1], "target folder ")
        if not folder.startswith("/"):
            raise Outcome("malformed", "not an absolute path")
        view = {"target_kind": "folder", "target": folder}
        rest = lines[2:]
    for line, (prefix, key) in zip(rest, COMMON_LINES):
        view[key] = _value(line, prefix)
    if not view["database"].startswith("/"):
        raise Outcome("malformed", "not an absolute path")
    if not (HEX32.fullmatch(view["target_id"]) and HEX32.fullmatch(view["device"])):
        raise Outcome("malformed", "hex")
    if not plain_string(view["name"], 1, 64):
        raise Outcome("malformed", "name")
    if view.pop("database") != database_path:
        raise Outcome("wrong_database")
    return view


# --- Writing the vectors ----------------------------------------------------

def det(label, n):
    """Fixed bytes for the vectors: SHA-256 of a label, cut to n."""
    return hashlib.sha256(b"tasker sync-storage vectors: " + label.encode()).digest()[:n]


SYNC_KEY, OTHER_SYNC_KEY = det("sync key", 32), det("another sync key", 32)
T, OTHER_T = det("target id", 16), det("another target id", 16)
DEV_A, DEV_B = det("device A", 16), det("device B", 16)
DEV_C, DEV_D = det("device C", 16), det("device D", 16)  # C is removed at epoch 2; D receives the key
SYNC_KEY_2, SYNC_KEY_3 = det("sync key epoch 2", 32), det("sync key epoch 3", 32)
ENTRY_2 = u32(2) + SYNC_KEY_2  # the second keyring entry, what the epoch change's boxes hold
BOX_SECRET = {d: det("box secret of " + name, 32) for d, name in ((DEV_A, "A"), (DEV_B, "B"), (DEV_C, "C"), (DEV_D, "D"))}
NOTE_KID, NOTE_KEY = "5eed0001", det("note key", 32)
DATABASE = "/home/u/.local/share/tasker/tasker.db"


def clock(ms, counter=0, device=DEV_A):
    return f"{(ms << 16) + counter:016x}-{device.hex()}"


def rid(label):
    return det("id " + label, 16).hex()


def head(kind, record_id, label, ms, text, device=DEV_A):
    version = rid("version " + label)
    sealed = seal_text(text, NOTE_KID, NOTE_KEY, f"sync/{kind}/{record_id}/{version}", det("text " + label + " " + text, 12))
    return {"version": version, "clock": clock(ms, 0, device), "text": sealed}


def fld(value, ms, counter=0, device=DEV_A):
    return {"value": value, "clock": clock(ms, counter, device)}


MS = 1764748800000
TASK_ID, PAGE_ID = rid("task"), rid("page")


def full_task():
    return {"kind": "task", "id": TASK_ID, "fields": {
        "title": fld("Buy milk", MS), "due": fld("2026-02-28", MS + 1), "estimate_minutes": fld(15, MS + 2),
        "priority": fld(3, MS + 3), "energy": fld(1, MS + 4), "status": fld("done", MS + 5),
        "completed_at": fld(1764748900, MS + 6), "contexts": fld("@home @errands", MS + 7),
        "created_at": fld(1764748800, MS + 8)},
        "body": {"heads": [head("task", TASK_ID, "task note", MS + 9, "semi-skimmed, 2 litres")], "superseded": []}}


def page_with_body(page_id=PAGE_ID):
    return {"kind": "page", "id": page_id, "fields": {
        "title": fld("Trip to Lisbon", MS), "created_at": fld(1764748800, MS), "updated_at": fld(1764748860, MS + 1)},
        "body": {"heads": [head("page", page_id, "page body", MS + 2, "# Lisbon\n\nPack light.")], "superseded": []}}


def payload(records, device_name=None, made=1764748800, box=None):
    p = {"format": "tasker-sync-changes", "version": 1, "made": made, "records": records}
    if device_name is not None:
        p["device"] = {"name": device_name}
        if box is not None:
            p["device"]["box"] = box
    return p


def box_public_hex(device):
    return x25519_public(BOX_SECRET[device]).hex()


def epoch_box(device, entry=ENTRY_2):
    """keys[device] of the vectors' epoch change: the entry sealed to the
    device's box public key, with a fixed ephemeral secret."""
    return seal_box_with(entry, x25519_public(BOX_SECRET[device]), det("ephemeral for " + device.hex() + entry.hex(), 32))


CHANGE_SEQ = 5  # the seq of device A's epoch change object


def epoch_change(**changes):
    """The valid change from epoch 1 to 2 written by A at seq 5: C removed,
    cuts for every device A knows, the new entry boxed to B and to D."""
    change = {"number": 2, "removed": [DEV_C.hex()],
              "cuts": {DEV_A.hex(): CHANGE_SEQ, DEV_B.hex(): 3, DEV_C.hex(): 4, DEV_D.hex(): 0},
              "keys": {DEV_B.hex(): epoch_box(DEV_B).hex(), DEV_D.hex(): epoch_box(DEV_D).hex()}}
    change.update(changes)
    return change


def with_change(change, device=True, records=()):
    p = payload(list(records), "laptop", box=box_public_hex(DEV_A)) if device else payload(list(records))
    p["epoch"] = change
    return p


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def unused_bit_set(text):
    """The same sealed value with the lowest unused bit of its last base64
    character set (the text must end with '=')."""
    body = text.rstrip("=")
    assert body != text
    return body[:-1] + B64[B64.index(body[-1]) + 1] + text[len(body):]


def build_objects():
    cases = []
    counter = itertools.count(1)

    def add(comment, data, result, device=DEV_A, seq=2, name_device=None, name_seq=None, parsed=None, **kw):
        n = next(counter)
        case = {"id": n, "comment": comment, "device": (name_device or device).hex(),
                "seq": seq if name_seq is None else name_seq, "object_hex": data.hex(), "result": result}
        if parsed is not None:
            case["payload"] = parsed
        case.update(kw)
        cases.append(case)

    def obj(payload_bytes, device=DEV_A, seq=2, epoch=1, target=T, key=SYNC_KEY, nonce_label=None):
        return seal_object(payload_bytes, device.hex(), seq, epoch, target, key, det(f"object nonce {nonce_label}", 12))

    def good(comment, p, seq=2):
        add(comment, obj(canonical(p), seq=seq, nonce_label=comment), "success", seq=seq, parsed=p)

    def refuse_raw(comment, data, seq=2):
        add(comment, obj(data, seq=seq, nonce_label=comment), "malformed_payload", seq=seq)

    def refuse(comment, p, seq=2):
        refuse_raw(comment, canonical(p), seq)

    def with_record(change):
        r = full_task()
        change(r)
        return payload([r])

    tomb_id = rid("tombstone")
    tombstone = {"kind": "task", "id": tomb_id, "fields": {}, "deleted": clock(MS + 50, 0, DEV_B),
                 "body": {"heads": [], "superseded": [rid("version old 1"), rid("version old 2")]}}
    good("a task with every field and a note", payload([full_task()]))
    good("a page with a body", payload([page_with_body()]))
    good("a tombstone with superseded", payload([tombstone]))
    good("seq 1 with the device name", payload([full_task()], "laptop"), seq=1)
    good("seq 2, no device, no records", payload([]))
    good("a device name of 64 scalars, not ASCII", payload([], "é" * 64), seq=1)
    good("a task and a page with the same id", payload([full_task(), page_with_body(TASK_ID)]))
    good("nullable fields null, an empty contexts", with_record(lambda r: r["fields"].update(
        due=fld(None, MS), estimate_minutes=fld(None, MS), energy=fld(None, MS), completed_at=fld(None, MS),
        contexts=fld("", MS))))
    good("a title of 1000 scalars", with_record(lambda r: r["fields"].update(title=fld("ü" * 1000, MS))))
    good("a title and contexts with a newline, a tab and an escape byte (shown escaped, never raw)",
         with_record(lambda r: r["fields"].update(title=fld("Buy\nmilk\t\u001b[2J", MS), contexts=fld("@a\t@b", MS))))
    good("64 heads", with_record(lambda r: r["body"].update(
        heads=[head("task", TASK_ID, f"h{i}", MS + i, f"text {i}") for i in range(64)])))
    good("integers at their bounds", payload([{"kind": "task", "id": rid("bounds"), "fields": {
        "estimate_minutes": fld(1000000, MS), "priority": fld(0, MS), "energy": fld(3, MS),
        "created_at": fld(MAX_SAFE, MS), "completed_at": fld(0, MS)}}], made=MAX_SAFE))
    # Padmé: fill a contexts string so that 4 + length hits a chosen size.
    for comment, target_len in (("4 + length = 1025: padded to 1088", 1025), ("4 + length = 1088 exactly", 1088),
                                ("4 + length = 512 exactly: no padding", 512)):
        base = payload([{"kind": "task", "id": rid("padded"), "fields": {"contexts": fld("", MS)}}])
        base["records"][0]["fields"]["contexts"] = fld("x" * (target_len - 4 - len(canonical(base))), MS)
        assert len(canonical(base)) + 4 == target_len
        good(comment, base)
    good("an object of about 70 KiB", with_record(lambda r: r["body"].update(
        heads=[head("task", TASK_ID, "long note", MS, "All work and no play. " * 2400)])))

    # The object's rules, in order.
    p2 = canonical(payload([full_task()]))
    sealed = obj(p2, nonce_label="base")
    add("one byte over 4,194,366 (a valid header then zeros)", sealed, "too_large",
        append_zero_bytes=MAX_OBJECT + 1 - len(sealed))
    add("573 bytes", sealed[:46] + bytes(573 - 46), "truncated")
    add("only a header", sealed[:46], "truncated")
    header_swap = lambda **kw: seal_raw(padded(p2), kw.get("device", DEV_A), kw.get("seq", 2), kw.get("epoch", 1),  # noqa: E731
                                        T, SYNC_KEY, det("object nonce header " + repr(kw), 12),
                                        kw.get("magic", b"TKSO"), kw.get("version", 1))
    add("magic TKSM", header_swap(magic=b"TKSM"), "malformed_object")
    add("version 2", header_swap(version=2), "unsupported_version")
    add("version 0", header_swap(version=0), "unsupported_version")
    add("header device is not the name's", header_swap(device=DEV_B), "wrong_position")
    add("header seq 3 under name seq 2", header_swap(seq=3), "wrong_position")
    add("seq 0 under name seq 0", header_swap(seq=0), "wrong_position", name_seq=0)
    add("device A's object copied under device B's name", sealed, "wrong_position", name_device=DEV_B)
    add("epoch 2, which the sync key does not have", header_swap(epoch=2), "unknown_epoch")
    flipped = bytearray(sealed)
    flipped[100] ^= 1
    add("one ciphertext bit flipped", bytes(flipped), "authentication_failed")
    flipped = bytearray(sealed)
    flipped[-1] ^= 0x80
    add("one tag bit flipped", bytes(flipped), "authentication_failed")
    add("sealed for another target id", obj(p2, target=OTHER_T, nonce_label="other target"), "authentication_failed")
    add("sealed under another sync key", obj(p2, key=OTHER_SYNC_KEY, nonce_label="other key"), "authentication_failed")
    raw = lambda plain, label: seal_raw(plain, DEV_A, 2, 1, T, SYNC_KEY, det("object nonce raw " + label, 12))  # noqa: E731
    short = canonical(payload([]))
    add("length above size - 4", raw(u32(509) + short + bytes(508 - len(short)), "long"), "bad_padding")
    add("size 1024 for a payload that pads to 512", raw(u32(len(short)) + short + bytes(1020 - len(short)), "1024"),
        "bad_padding")
    add("size 513, not a Padmé size", raw(u32(len(short)) + short + bytes(509 - len(short)), "513"), "bad_padding")
    plain = bytearray(padded(short))
    plain[-1] = 1
    add("a nonzero padding byte", raw(bytes(plain), "nonzero"), "bad_padding")

    # The payload's rules: each case breaks one.
    refuse_raw("not JSON", b"records: none")
    refuse_raw("not UTF-8", b'{"format":"tasker-sync-changes\xff","made":0,"records":[],"version":1}')
    refuse_raw("a JSON array", b"[]")
    refuse_raw("text after the object", canonical(payload([])) + b"x")
    refuse_raw("a member twice at the top", b'{"format":"tasker-sync-changes","made":0,"made":0,"records":[],"version":1}')
    refuse_raw("a member twice inside a field", canonical(payload([full_task()])).replace(
        b'"priority":{', b'"priority":{"value":3,', 1))
    refuse_raw("NaN", b'{"format":"tasker-sync-changes","made":NaN,"records":[],"version":1}')
    refuse_raw("65 levels deep", b'{"format":"tasker-sync-changes","made":0,"records":[],"version":1,"x":'
               + b"[" * 64 + b"]" * 64 + b"}")
    refuse("an unknown top-level member", dict(payload([]), compacted=True))
    refuse("format tasker-sync", dict(payload([]), format="tasker-sync"))
    refuse("version 2", dict(payload([]), version=2))
    refuse_raw("version 1.0", canonical(payload([])).replace(b'"version":1', b'"version":1.0'))
    refuse("version true", dict(payload([]), version=True))
    refuse("made missing", {k: v for k, v in payload([]).items() if k != "made"})
    refuse("made -1", payload([], made=-1))
    refuse("made 2^53", payload([], made=2**53))
    refuse_raw("made written 1764748800.0", canonical(payload([])).replace(b'"made":1764748800', b'"made":1764748800.0'))
    refuse_raw("made written 1.7647488e9", canonical(payload([])).replace(b'"made":1764748800', b'"made":1.7647488e9'))
    refuse("records missing", {k: v for k, v in payload([]).items() if k != "records"})
    refuse("records an object", dict(payload([]), records={}))
    refuse("seq 1 without device", payload([]), seq=1)
    refuse("device name empty", payload([], ""))
    refuse("device name of 65 scalars", payload([], "é" * 65))
    refuse("device name with a BEL", payload([], "lap\u0007top"))
    refuse("device name with DEL", payload([], "lap\u007ftop"))
    refuse("device name with a C1 (U+0085)", payload([], "lap\u0085top"))
    refuse("device without name", dict(payload([]), device={}))
    refuse("device with another member", dict(payload([]), device={"name": "a", "os": "linux"}))
    refuse("two records with one kind and id", payload([full_task(), full_task()]))
    refuse("kind note", with_record(lambda r: r.update(kind="note")))
    refuse("id in upper case", with_record(lambda r: r.update(id=TASK_ID.upper())))
    refuse("id of 31 hex digits", with_record(lambda r: r.update(id=TASK_ID[:31])))
    refuse("a record without fields", with_record(lambda r: r.pop("fields")))
    refuse("an unknown member in a record", with_record(lambda r: r.update(color="red")))
    refuse("field color on a task", with_record(lambda r: r["fields"].update(color=fld("red", MS))))
    refuse("a page with status", payload([dict(page_with_body(), fields={"status": fld("open", MS)})]))
    refuse("a page with due", payload([dict(page_with_body(), fields={"due": fld(None, MS)})]))
    refuse("a field without clock", with_record(lambda r: r["fields"].update(priority={"value": 1})))
    refuse("a field with another member", with_record(lambda r: r["fields"]["priority"].update(by="me")))
    for comment, name, value in [
            ("title empty", "title", ""), ("title of 65537 scalars", "title", "a" * 65537),
            ("title null", "title", None), ("due 2026-02-30", "due", "2026-02-30"), ("due 2026-2-3", "due", "2026-2-3"),
            ("due with a time", "due", "2026-02-03T00:00"), ("estimate -1", "estimate_minutes", -1),
            ("estimate 2^53", "estimate_minutes", 2**53), ("estimate a string", "estimate_minutes", "15"),
            ("priority 4", "priority", 4), ("priority true", "priority", True), ("priority null", "priority", None),
            ("energy 0", "energy", 0), ("energy 4", "energy", 4), ("status closed", "status", "closed"),
            ("status null", "status", None), ("completed_at -1", "completed_at", -1),
            ("contexts of 65537 scalars", "contexts", "a" * 65537),
            ("contexts null", "contexts", None), ("created_at 2^53", "created_at", 2**53)]:
        refuse(comment, with_record(lambda r: r["fields"].update({name: fld(value, MS)})))
    for comment, spelled in (("estimate written 1.0", b"1.0"), ("estimate written 1e1", b"1e1"),
                             ("estimate written -0", b"-0")):
        refuse_raw(comment, canonical(payload([full_task()])).replace(b'"value":15', b'"value":' + spelled, 1))
    good_clock = clock(MS)
    for comment, bad_clock in (("clock in upper-case hex", good_clock[:16].upper().replace("0", "A") + good_clock[16:]),
                               ("clock of 15 digits", good_clock[1:]), ("clock device in upper case", good_clock.upper()),
                               ("clock with _ not -", good_clock.replace("-", "_")), ("clock a number", 5)):
        refuse(comment, with_record(lambda r: r["fields"]["priority"].update(clock=bad_clock)))
    refuse("deleted a bad clock", with_record(lambda r: r.update(deleted=good_clock[:48])))
    refuse("deleted null", with_record(lambda r: r.update(deleted=None)))
    text = full_task()["body"]["heads"][0]["text"]
    for comment, bad_text in (("body text plain", "semi-skimmed"), ("body text tc2", "tc2" + text[3:]),
                              ("body text with an upper-case kid", text[:4] + "5EED0001" + text[12:]),
                              ("body text without base64 padding", text.rstrip("=")),
                              ("body text with nonzero unused bits", unused_bit_set(text)),
                              ("body text with a line break", text[:20] + "\n" + text[20:]),
                              ("body text of 27 bytes", "tc1.5eed0001:" + base64.b64encode(bytes(27)).decode())):
        refuse(comment, with_record(lambda r: r["body"]["heads"][0].update(text=bad_text)))
    refuse("heads with one version twice", with_record(lambda r: r["body"]["heads"].append(
        dict(r["body"]["heads"][0], clock=clock(MS + 99)))))
    refuse("65 heads", with_record(lambda r: r["body"].update(
        heads=[head("task", TASK_ID, f"h{i}", MS + i, f"text {i}") for i in range(65)])))
    refuse("a head without clock", with_record(lambda r: r["body"]["heads"][0].pop("clock")))
    refuse("a head version in upper case", with_record(lambda r: r["body"]["heads"][0].update(
        version=r["body"]["heads"][0]["version"].upper())))
    refuse("superseded with one id twice", with_record(lambda r: r["body"].update(superseded=[TASK_ID, TASK_ID])))
    refuse("superseded id of 30 digits", with_record(lambda r: r["body"].update(superseded=[TASK_ID[:30]])))
    refuse("an unknown member in the body", with_record(lambda r: r["body"].update(draft=True)))

    # The device's box key (`device.box`).
    box_a = box_public_hex(DEV_A)
    good("a device with its box key", payload([], "laptop", box=box_a))
    good("seq 1 with the device name and box key", payload([full_task()], "laptop", box=box_a), seq=1)
    for comment, box in (("a box key of 63 hex digits", box_a[:63]), ("a box key of 65 hex digits", box_a + "0"),
                         ("a box key in upper case", box_a.upper()), ("a box key with a non-hex digit", "g" + box_a[1:]),
                         ("a box key empty", ""), ("a box key null", None), ("a box key a number", 5)):
        refuse(comment, dict(payload([], "laptop"), device={"name": "laptop", "box": box}))

    # Epoch changes ("Removing a device: epochs"). Device A writes them at seq
    # 5; epoch 2 objects are sealed under the second keyring entry and read
    # with a keyring of the first `keyring_entries` entries of `sync_keys`.
    def at_epoch(comment, p, result, epoch=1, entries=None, raw=None, seq=CHANGE_SEQ):
        key = {1: SYNC_KEY, 2: SYNC_KEY_2}[epoch]
        data = obj(canonical(p) if raw is None else raw, seq=seq, epoch=epoch, key=key, nonce_label="epoch " + comment)
        add(comment, data, result, seq=seq, parsed=p if result == "success" else None,
            **({"keyring_entries": entries} if entries else {}))

    def refuse_change(comment, change=None, p=None, raw=None, **kw):
        at_epoch(comment, p if p is not None else with_change(change), "malformed_payload", raw=raw, **kw)

    valid = with_change(epoch_change(), records=[full_task()])
    at_epoch("an epoch change from 1 to 2: C removed, cuts, the new entry boxed to B and D", valid, "success")
    at_epoch("an epoch change with no keys", with_change(epoch_change(keys={})), "success")
    at_epoch("an epoch change removing two devices, one recipient",
             with_change(epoch_change(removed=sorted([DEV_C.hex(), DEV_D.hex()]),
                                      keys={DEV_B.hex(): epoch_box(DEV_B).hex()})), "success")
    at_epoch("an epoch change whose device has no box key", dict(with_change(epoch_change()), device={"name": "laptop"}),
             "success")
    many_removed = lambda n: epoch_change(removed=[rid(f"removed {i}") for i in range(n)],  # noqa: E731
                                          cuts=dict({rid(f"removed {i}"): 1 for i in range(n)}, **{DEV_A.hex(): CHANGE_SEQ}))
    many_cuts = lambda n: epoch_change(cuts=dict({rid(f"cut {i}"): i for i in range(n - 2)},  # noqa: E731
                                                 **{DEV_A.hex(): CHANGE_SEQ, DEV_C.hex(): 4}))
    at_epoch("64 removed devices", with_change(many_removed(64)), "success")
    at_epoch("1,024 cuts", with_change(many_cuts(1024)), "success")
    at_epoch("an object at epoch 2, read with the keyring of two entries", payload([full_task()], "laptop", box=box_a),
             "success", epoch=2, entries=2, seq=CHANGE_SEQ + 1)
    at_epoch("an object at epoch 2, read with the first entry only", payload([full_task()], "laptop", box=box_a),
             "unknown_epoch", epoch=2, seq=CHANGE_SEQ + 1)
    at_epoch("an object at epoch 1, read with the keyring of two entries", payload([full_task()], "laptop", box=box_a),
             "success", entries=2, seq=CHANGE_SEQ - 1)
    at_epoch("an epoch change from 2 to 3 at epoch 2",
             with_change(epoch_change(number=3, removed=[DEV_D.hex()], cuts={DEV_A.hex(): CHANGE_SEQ + 1, DEV_B.hex(): 3,
                                                                            DEV_D.hex(): 2},
                                      keys={DEV_B.hex(): epoch_box(DEV_B, u32(3) + SYNC_KEY_3).hex()})),
             "success", epoch=2, entries=2, seq=CHANGE_SEQ + 1)
    refuse_change("an epoch change to 2 at epoch 2 (number not the header epoch + 1)",
                  epoch_change(cuts={DEV_A.hex(): CHANGE_SEQ + 1}), epoch=2, entries=2, seq=CHANGE_SEQ + 1)
    refuse_change("an epoch change to 3 at epoch 1", epoch_change(number=3))
    refuse_change("an epoch change to 1 at epoch 1", epoch_change(number=1))
    refuse_change("the writer in removed", epoch_change(removed=sorted([DEV_A.hex(), DEV_C.hex()])))
    more_keys = lambda d: dict(epoch_change()["keys"], **{d.hex(): epoch_box(d).hex()})  # noqa: E731
    cut = lambda d, n: dict(epoch_change()["cuts"], **{d: n})  # noqa: E731
    refuse_change("the writer in keys", epoch_change(keys=more_keys(DEV_A)))
    refuse_change("a removed device in keys", epoch_change(keys=more_keys(DEV_C)))
    refuse_change("the writer's cut 4, not the object's seq 5", epoch_change(cuts=cut(DEV_A.hex(), 4)))
    refuse_change("the writer's cut 6, not the object's seq 5", epoch_change(cuts=cut(DEV_A.hex(), 6)))
    refuse_change("cuts without the writer", epoch_change(cuts={DEV_B.hex(): 3, DEV_C.hex(): 4}))
    refuse_change("cuts empty", epoch_change(cuts={}))
    refuse_change("1,025 cuts", many_cuts(1025))
    refuse_change("removed empty", epoch_change(removed=[]))
    refuse_change("65 removed devices", many_removed(65))
    refuse_change("one device twice in removed", epoch_change(removed=[DEV_C.hex(), DEV_C.hex()]))
    refuse_change("a removed id in upper case", epoch_change(removed=[DEV_C.hex().upper()]))
    refuse_change("a removed id of 31 hex digits", epoch_change(removed=[DEV_C.hex()[:31]]))
    refuse_change("a cuts id in upper case", epoch_change(cuts=cut(DEV_B.hex().upper(), 3)))
    refuse_change("a keys id of 31 hex digits", epoch_change(keys={DEV_B.hex()[:31]: epoch_box(DEV_B).hex()}))
    box_b = epoch_box(DEV_B).hex()
    for comment, box in (("a key of 166 hex digits (83 bytes)", box_b[:166]),
                         ("a key of 170 hex digits (85 bytes)", box_b + "00"),
                         ("a key in upper-case hex", box_b.upper()), ("a key with a non-hex digit", "x" + box_b[1:]),
                         ("a key in base64", base64.b64encode(bytes.fromhex(box_b)).decode()), ("a key null", None)):
        refuse_change(comment, epoch_change(keys={DEV_B.hex(): box}))
    refuse_change("an extra member in the epoch change", dict(epoch_change(), reason="lost laptop"))
    for name in ("number", "removed", "cuts", "keys"):
        refuse_change(f"an epoch change without {name}", {k: v for k, v in epoch_change().items() if k != name})
    for comment, change in (("number a string", epoch_change(number="2")), ("number true", epoch_change(number=True)),
                            ("number null", epoch_change(number=None)),
                            ("removed a string", epoch_change(removed=DEV_C.hex())),
                            ("removed an object", epoch_change(removed={DEV_C.hex(): True})),
                            ("a removed id a number", epoch_change(removed=[7])),
                            ("cuts an array", epoch_change(cuts=[[DEV_A.hex(), CHANGE_SEQ]])),
                            ("a cut a string", epoch_change(cuts=cut(DEV_B.hex(), "3"))),
                            ("a cut -1", epoch_change(cuts=cut(DEV_B.hex(), -1))),
                            ("a cut 2^53", epoch_change(cuts=cut(DEV_B.hex(), 2**53))),
                            ("a cut null", epoch_change(cuts=cut(DEV_B.hex(), None))),
                            ("keys an array", epoch_change(keys=[box_b])),
                            ("epoch an array", [epoch_change()]), ("epoch null", None), ("epoch a number", 2)):
        refuse_change(comment, change)
    plain = canonical(with_change(epoch_change()))
    refuse_change("number written 2.0", raw=plain.replace(b'"number":2', b'"number":2.0'))
    refuse_change("number written 2e0", raw=plain.replace(b'"number":2', b'"number":2e0'))
    cut_a = f'"{DEV_A.hex()}":{CHANGE_SEQ}'.encode()
    assert plain.count(cut_a) == 1
    refuse_change("the writer's cut written 5.0", raw=plain.replace(cut_a, cut_a + b".0"))
    refuse_change("one device twice in cuts", raw=plain.replace(cut_a, cut_a + b"," + cut_a))
    refuse_change("the epoch change without device", p=with_change(epoch_change(), device=False))

    # Compaction: `seen` and `floor` (docs/formats/sync-storage.md, *Compaction*).
    seen = {DEV_B.hex(): 3, DEV_C.hex(): 0}
    good("seen and floor", dict(payload([full_task()], "laptop"), seen=seen, floor=1))
    good("an empty seen, a floor of seq - 1", dict(payload([], "laptop"), seen={}, floor=1))
    good("a fold at seq 9 below a floor of 8", dict(payload([full_task(), page_with_body()], "laptop"), floor=8), seq=9)
    for comment, changes in (
            ("seen naming the writer", {"seen": {DEV_A.hex(): 1}}), ("a seen seq of -1", {"seen": {DEV_B.hex(): -1}}),
            ("a seen seq of 2^53", {"seen": {DEV_B.hex(): 2**53}}), ("a seen seq a string", {"seen": {DEV_B.hex(): "3"}}),
            ("a seen id in upper case", {"seen": {DEV_B.hex().upper(): 3}}), ("seen an array", {"seen": [DEV_B.hex()]}),
            ("seen with 1,025 devices", {"seen": {det(f"seen device {i}", 16).hex(): 1 for i in range(1025)}}),
            ("a floor of 0", {"floor": 0}), ("a floor equal to the seq", {"floor": 2}), ("a floor above the seq", {"floor": 3}),
            ("a floor a string", {"floor": "1"}), ("a floor null", {"floor": None}), ("a floor of 1.5", {"floor": 1.5})):
        refuse(comment, dict(payload([], "laptop"), **changes))
    refuse_raw("a floor written 1.0", canonical(dict(payload([], "laptop"), floor=1)).replace(b'"floor":1', b'"floor":1.0'))

    # Attachment records: every field, no body (docs/formats/sync-storage.md, *The attachment record*).
    good("a task's attachment and a page's", payload([full_task(), attachment_record(),
                                                      attachment_record("page attachment", owner="page/" + PAGE_ID)]))
    good("an attachment deleted", payload([dict(attachment_record(), deleted=clock(MS + 50))]))
    good("an attachment name of 255 UTF-8 bytes", payload([attachment_record(name="é" * 127 + "x")]))
    good("an empty attachment", payload([attachment_record(content=blob_content("empty", 0))]))
    for name in FIELDS["attachment"]:
        without = attachment_record()
        del without["fields"][name]
        refuse(f"an attachment without {name}", payload([without]))
    extra = attachment_record()
    extra["fields"]["title"] = fld("x", MS)
    refuse("an attachment with a title field", payload([extra]))
    refuse("an attachment with a body", payload([dict(attachment_record(), body={"heads": [], "superseded": []})]))
    refuse("an attachment with no fields", payload([dict(attachment_record(), fields={})]))
    for comment, changes in (
            ("an owner of kind attachment", {"owner": "attachment/" + TASK_ID}),
            ("an owner without kind", {"owner": TASK_ID}), ("an owner in upper case", {"owner": "task/" + TASK_ID.upper()}),
            ("an owner a number", {"owner": 7}),
            ("a name of 256 UTF-8 bytes", {"name": "é" * 128}), ("an empty name", {"name": ""}),
            ("a name with a newline", {"name": "a\nb"}), ("a name with U+0085", {"name": "a\u0085b"}),
            ("a media type with a tab", {"media_type": "text/\tplain"}),
            ("a created_at of -1", {"created_at": -1}), ("a created_at a string", {"created_at": "0"}),
            ("content without size", {"content": {"device": DEV_A.hex(), "blob": rid("blob x")}}),
            ("content with an extra member", {"content": dict(blob_content("x", 10), sha256="00")}),
            ("content with a size of 2^53", {"content": blob_content("x", 2**53)}),
            ("content with a size of -1", {"content": blob_content("x", -1)}),
            ("content with a blob of 31 hex digits", {"content": dict(blob_content("x", 1), blob="a" * 31)}),
            ("content with a device in upper case", {"content": dict(blob_content("x", 1), device=DEV_A.hex().upper())}),
            ("content a string", {"content": "a/" + DEV_A.hex() + "/" + rid("blob x")})):
        refuse(comment, payload([attachment_record(**changes)]))
    return cases


ATTACHMENT_ID = rid("attachment")


def blob_content(label, size, device=DEV_A):
    return {"device": device.hex(), "blob": rid("blob " + label), "size": size}


def attachment_record(label="attachment", **values):
    """An attachment of the task, every field at one clock; `values` replace fields' values."""
    fields = {"owner": "task/" + TASK_ID, "name": "results.pdf", "media_type": "application/pdf",
              "created_at": 1764748800, "content": blob_content(label, 100000)}
    fields.update(values)
    return {"kind": "attachment", "id": rid(label) if label != "attachment" else ATTACHMENT_ID,
            "fields": {name: fld(value, MS + 40) for name, value in fields.items()}}


def build_blobs():
    """Blobs with the record they belong to and one outcome each."""
    cases = []
    counter = itertools.count(1)

    def content_bytes(label, size):
        return (det("blob content " + label, 32) * (size // 32 + 1))[:size]

    def add(comment, blob, result, uid, content, data=None, keyring_entries=1):
        case = {"id": next(counter), "comment": comment, "record_id": uid, "content": content,
                "keyring_entries": keyring_entries, "blob_hex": blob.hex(), "result": result}
        if data is not None:
            case["content_hex"] = data.hex()
        cases.append(case)

    def sealed(label, size, epoch=1, key=SYNC_KEY, target=T, uid=ATTACHMENT_ID, content=None, data=None):
        content = content or blob_content(label, size)
        data = content_bytes(label, size) if data is None else data
        return seal_blob(data, uid, content, epoch, key, target, det("blob salt " + label, 24)), content, data

    for label, size in (("a thousand bytes", 1000), ("empty", 0), ("one chunk exactly", 16384),
                        ("a hundred thousand bytes", 100000), ("511 bytes", 511), ("513 bytes", 513)):
        blob, content, data = sealed(label, size)
        add(f"{label}: opens", blob, "success", ATTACHMENT_ID, content, data)
    blob, content, data = sealed("epoch 2", 700, epoch=2, key=SYNC_KEY_2)
    add("sealed at epoch 2, read with both entries", blob, "success", ATTACHMENT_ID, content, data, keyring_entries=2)
    add("sealed at epoch 2, read with epoch 1 alone", blob, "unknown_epoch", ATTACHMENT_ID, content)
    blob, content, data = sealed("base", 1000)
    add("one byte more than L", blob + b"\x00", "too_large", ATTACHMENT_ID, content)
    add("one byte less than L", blob[:-1], "truncated", ATTACHMENT_ID, content)
    add("empty", b"", "truncated", ATTACHMENT_ID, content)
    add("another magic", b"\x88" + blob[1:], "malformed_blob", ATTACHMENT_ID, content)
    add("version 2", blob[:8] + b"\x02" + blob[9:], "malformed_blob", ATTACHMENT_ID, content)
    add("kid 7, no such epoch", blob[:9] + u32(7) + blob[13:], "unknown_epoch", ATTACHMENT_ID, content)
    add("kid 0", blob[:9] + u32(0) + blob[13:], "unknown_epoch", ATTACHMENT_ID, content)
    flipped = bytearray(blob)
    flipped[69 + 100] ^= 1
    add("a ciphertext byte flipped", bytes(flipped), "authentication_failed", ATTACHMENT_ID, content)
    flipped = bytearray(blob)
    flipped[20] ^= 1
    add("a salt byte flipped", bytes(flipped), "authentication_failed", ATTACHMENT_ID, content)
    add("read for another record", blob, "authentication_failed", rid("another attachment"), content)
    add("read under another blob name", blob, "authentication_failed", ATTACHMENT_ID,
        dict(content, blob=rid("blob another")))
    other, _, _ = sealed("base", 1000, target=OTHER_T)
    add("sealed for another target", other, "authentication_failed", ATTACHMENT_ID, content)
    other, _, _ = sealed("base", 1000, key=OTHER_SYNC_KEY)
    add("sealed under another sync key", other, "authentication_failed", ATTACHMENT_ID, content)
    wrong_label = ATTACHMENT.seal_attachment(content_bytes("base", 1000) + bytes(24), u32(1).hex(),
                                             target_key(SYNC_KEY, T, 1), blob_record(ATTACHMENT_ID, content),
                                             det("blob salt base", 24))
    add("sealed under the target key K, not A", wrong_label, "authentication_failed", ATTACHMENT_ID, content)
    padded = content_bytes("base", 1000) + bytes(23) + b"\x01"
    nonzero = ATTACHMENT.seal_attachment(padded, u32(1).hex(), blob_key(SYNC_KEY, T, 1),
                                         blob_record(ATTACHMENT_ID, content), det("blob salt base", 24))
    add("a nonzero padding byte", nonzero, "bad_padding", ATTACHMENT_ID, content)
    add("a size below the content's (the rest is not zero)", blob, "bad_padding", ATTACHMENT_ID,
        dict(content, size=999))
    add("a size whose padded length is larger", blob, "truncated", ATTACHMENT_ID, dict(content, size=1100))
    add("a size whose padded length is smaller", blob, "too_large", ATTACHMENT_ID, dict(content, size=100))
    whole = ATTACHMENT.seal_attachment(content_bytes("base", 1000), u32(1).hex(), blob_key(SYNC_KEY, T, 1),
                                       blob_record(ATTACHMENT_ID, content), det("blob salt base", 24))
    add("not padded (the content alone)", whole, "truncated", ATTACHMENT_ID, content)
    return cases


def build_markers():
    cases, good = [], seal_marker(1, T, SYNC_KEY, det("marker nonce", 12))

    def add(comment, data, result):
        case = {"id": len(cases) + 1, "comment": comment, "marker_hex": data.hex(), "result": result}
        if result == "success":
            case["target_id_hex"] = T.hex()
        cases.append(case)
    add("the target marker", good, "success")
    add("53 bytes", good[:53], "malformed_marker")
    add("55 bytes", good + b"\0", "malformed_marker")
    add("magic TKSO", seal_marker(1, T, SYNC_KEY, det("marker nonce", 12), magic=b"TKSO"), "malformed_marker")
    add("version 2", seal_marker(1, T, SYNC_KEY, det("marker nonce", 12), version=2), "unsupported_version")
    add("epoch 2", seal_marker(2, T, SYNC_KEY, det("marker nonce", 12)), "unknown_epoch")
    altered = bytearray(good)
    altered[53] ^= 1
    add("one tag bit flipped", bytes(altered), "not_this_key")
    altered = bytearray(good)
    altered[12] ^= 1
    add("the target id altered", bytes(altered), "not_this_key")
    add("set up under another sync key", seal_marker(1, T, OTHER_SYNC_KEY, det("marker nonce 2", 12)), "not_this_key")
    return cases


def build_merges():
    k, i = "task", rid("merged task")
    rec = lambda **kw: dict({"kind": k, "id": i, "fields": {}}, **kw)  # noqa: E731
    body = lambda heads, sup=(): {"heads": heads, "superseded": sorted(sup)}  # noqa: E731
    h = lambda label, ms, text, dev=DEV_A: head(k, i, label, ms, text, dev)  # noqa: E731
    v1, v2, v3 = h("m1", MS, "one"), h("m2", MS + 10, "two"), h("m3", MS + 20, "three")
    a_edit, b_edit = h("ma", MS + 5, "from A", DEV_A), h("mb", MS + 5, "from B", DEV_B)
    cases = [
        ("a field: the greater clock wins", [rec(fields={"title": fld("old", MS)}), rec(fields={"title": fld("new", MS + 1)})]),
        ("fields from both sides join", [rec(fields={"title": fld("t", MS)}), rec(fields={"priority": fld(2, MS, 0, DEV_B)})]),
        ("a clock's device breaks a time tie", [rec(fields={"priority": fld(1, MS, 0, DEV_A)}),
                                                 rec(fields={"priority": fld(2, MS, 0, DEV_B)})]),
        ("equal clocks: the greater encoding wins", [rec(fields={"title": fld("apple", MS)}),
                                                      rec(fields={"title": fld("banana", MS)})]),
        ("equal clocks: null against an integer", [rec(fields={"energy": fld(None, MS)}), rec(fields={"energy": fld(3, MS)})]),
        ("a delete wins over a later edit", [rec(deleted=clock(MS)), rec(fields={"title": fld("later", MS + 100)})]),
        ("two deletes: the greater clock", [rec(deleted=clock(MS, 0, DEV_B)), rec(deleted=clock(MS, 1))]),
        ("two concurrent heads: a conflict", [rec(body=body([v1])), rec(body=body([a_edit], [v1["version"]])),
                                             rec(body=body([b_edit], [v1["version"]]))]),
        ("a chain v1, v2, v3; one input knows only v1", [rec(body=body([v1])), rec(body=body([v2], [v1["version"]])),
                                                         rec(body=body([v3], [v1["version"], v2["version"]]))]),
        ("a delete that saw v1 keeps an unseen head as a conflict",
         [rec(body=body([v1])), rec(deleted=clock(MS + 30, 0, DEV_B), body=body([], [v1["version"]])),
          rec(body=body([a_edit], [v1["version"]]))]),
        ("a delete that saw every head", [rec(body=body([v1])), rec(deleted=clock(MS + 30), body=body([], [v1["version"]]))]),
        ("one version id, two texts: the greater text", [rec(body=body([v1])), rec(body=body([h("m1", MS, "one, again")]))]),
        ("idempotence: one state twice", [rec(fields={"title": fld("x", MS)}, body=body([v1, v2]))] * 2),
        ("heads without superseded ones, shown by clock", [rec(body=body([v1, v2, v3])), rec(body=body([], [v2["version"]]))]),
    ]
    out = []
    for n, (comment, inputs) in enumerate(cases, 1):
        joined = inputs[0]
        for other in inputs[1:]:
            joined = merge(joined, other)
        joined = canonical_record(joined)
        show, conflicts = shown(joined)
        out.append({"id": n, "comment": comment, "inputs": inputs, "joined": joined, "shown": show, "conflicts": conflicts})
    return out


def config_text(version="1", target="/home/u/Sync", target_id=T.hex(), device=DEV_A.hex(), name="laptop",
                database=DATABASE):
    return (f"tasker-sync {version}\ntarget folder {target}\ntarget-id {target_id}\ndevice {device}\n"
            f"name {name}\ndatabase {database}\n")


def webdav_text(url="https://cloud.example.com/remote.php/dav/files/u/Tasker", auth="auth basic u",
                ca="ca system"):
    return (f"tasker-sync 1\ntarget webdav {url}\n{auth}\n{ca}\ntarget-id {T.hex()}\ndevice {DEV_A.hex()}\n"
            f"name laptop\ndatabase {DATABASE}\n")


def build_configs():
    good = config_text()
    long_target = "/home/u/" + "d" * (8192 - len(config_text(target="/home/u/")))
    cases = [("a configuration record", good, "success"),
             ("exactly 8 KiB", config_text(target=long_target), "success"),
             ("a name with spaces and accents", config_text(name="Anne's télé"), "success"),
             ("CR LF line ends", good.replace("\n", "\r\n"), "malformed"),
             ("a trailing space on the name", config_text(name="laptop "), "malformed"),
             ("a trailing space on the first line", good.replace("tasker-sync 1\n", "tasker-sync 1 \n"), "malformed"),
             ("no final LF", good[:-1], "malformed"),
             ("tasker-sync 2", config_text(version="2"), "unsupported_version"),
             ("tasker-sync 2 with other lines", "tasker-sync 2\ntarget webdav https://x\n", "unsupported_version"),
             ("another database", config_text(database="/home/u/other.db"), "wrong_database"),
             ("device before target-id", good.replace(f"target-id {T.hex()}\ndevice {DEV_A.hex()}\n",
                                                      f"device {DEV_A.hex()}\ntarget-id {T.hex()}\n"), "malformed"),
             ("target-id in upper case", config_text(target_id=T.hex().upper()), "malformed"),
             ("an extra line", good + "extra yes\n", "malformed"),
             ("an empty line at the end", good + "\n", "malformed"),
             ("more than 8 KiB", config_text(target=long_target + "d"), "malformed"),
             ("Tasker-sync 1", good.replace("tasker-sync", "Tasker-sync", 1), "malformed"),
             ("target webdav with the folder's lines", good.replace("target folder", "target webdav"), "malformed"),
             ("a WebDAV target with a Basic user", webdav_text(), "success"),
             ("a WebDAV target on loopback, no authentication, a pinned CA",
              webdav_text(url="http://127.0.0.1:8080/dav", auth="auth none", ca="ca file /home/u/ca.pem"), "success"),
             ("a WebDAV user with a colon", webdav_text(auth="auth basic u:p"), "malformed"),
             ("a WebDAV auth line missing", webdav_text().replace("auth basic u\n", ""), "malformed"),
             ("a WebDAV URL of ftp", webdav_text(url="ftp://x/y"), "malformed"),
             ("a relative CA file", webdav_text(ca="ca file ca.pem"), "malformed"),
             ("auth digest", webdav_text(auth="auth digest u"), "malformed"),
             ("an empty name", config_text(name=""), "malformed"),
             ("a name of 65 scalars", config_text(name="n" * 65), "malformed"),
             ("a tab in the name", config_text(name="lap\ttop"), "malformed"),
             ("device id of 31 digits", config_text(device=DEV_A.hex()[:31]), "malformed"),
             ("empty", "", "malformed"),
             ("not UTF-8", good.encode().replace(b"laptop", b"lap\xfftop"), "malformed")]
    out = []
    for n, (comment, record, result) in enumerate(cases, 1):
        case = {"id": n, "comment": comment, "database": DATABASE}
        if isinstance(record, bytes):
            case["record_hex"] = record.hex()
        else:
            case["record"] = record
        case["result"] = result
        if result == "success":
            case["view"] = read_config(record.encode(), DATABASE)
        out.append(case)
    return out


def build_sync_key_items():
    entries = lambda *epochs: b"".join(u32(e) + det(f"keyring entry {e}", 32) for e in epochs)  # noqa: E731
    items = [(u32(1) + SYNC_KEY, "success", "one entry"), (u32(7) + OTHER_SYNC_KEY, "success", "one entry of epoch 7"),
             (u32(1) + SYNC_KEY[:31], "malformed_sync_key", "35 bytes"),
             (u32(1) + SYNC_KEY + b"\0", "malformed_sync_key", "37 bytes"), (b"", "malformed_sync_key", "0 bytes"),
             (SYNC_KEY, "malformed_sync_key", "32 bytes"), (u32(0) + SYNC_KEY, "malformed_sync_key", "epoch 0"),
             # The keyring: 1 to 64 entries, epochs strictly increasing.
             (u32(1) + SYNC_KEY + ENTRY_2, "success", "two entries, epochs 1 and 2 (the vectors' keyring)"),
             (entries(1, 2, 5), "success", "three entries, epochs 1, 2, 5"),
             (entries(*range(1, 65)), "success", "64 entries, epochs 1 to 64"),
             (entries(3, 0xFFFFFFFF), "success", "two entries, epochs 3 and 2^32 - 1"),
             (entries(*range(1, 66)), "malformed_sync_key", "65 entries"),
             (entries(1, 1), "malformed_sync_key", "72 bytes, two entries of epoch 1"),
             (entries(2, 1), "malformed_sync_key", "two entries, epochs 2 then 1"),
             (entries(1, 3, 2), "malformed_sync_key", "three entries, epochs 1, 3, 2"),
             (entries(1, 0), "malformed_sync_key", "epoch 0 in the second entry"),
             (entries(0, 1), "malformed_sync_key", "epoch 0 then 1 (increasing, but 0)"),
             (entries(1, 2)[:71], "malformed_sync_key", "71 bytes"),
             (entries(1, 2) + b"\0", "malformed_sync_key", "73 bytes")]
    out = []
    for n, (item, result, comment) in enumerate(items, 1):
        case = {"id": n, "item_hex": item.hex(), "result": result}
        if n > 7:  # the first seven cases keep the shape they had
            case = {"id": n, "comment": comment, "item_hex": item.hex(), "result": result}
        if result == "success":
            case["epochs"] = [e for e, _ in read_sync_key_item(item)]
        out.append(case)
    return out


def build_sealed_boxes(objects):
    """Sealed boxes (crypto_box_seal) with fixed ephemeral secrets: the boxes
    of the valid epoch change, and boxes that do not open."""
    change = next(c for c in objects if c["comment"].startswith("an epoch change from 1 to 2"))
    cases = []

    def add(comment, holder, box, result, plaintext=None, **kw):
        secret = BOX_SECRET[holder]
        case = {"id": len(cases) + 1, "comment": comment, "secret_key_hex": secret.hex(),
                "public_key_hex": x25519_public(secret).hex(), "box_hex": box.hex(), "result": result}
        if result == "success":
            case["plaintext_hex"] = plaintext.hex()
        case.update(kw)
        cases.append(case)
    for device, name in ((DEV_B, "B"), (DEV_D, "D")):
        box = bytes.fromhex(change["payload"]["epoch"]["keys"][device.hex()])
        add(f"keys[{name}] of object {change['id']}: the keyring entry of epoch 2", device, box, "success", ENTRY_2,
            object_id=change["id"], recipient=device.hex())
    to_b = epoch_box(DEV_B)
    add("a box of 36 bytes to A", DEV_A, epoch_box(DEV_A), "success", ENTRY_2)
    empty = seal_box_with(b"", x25519_public(BOX_SECRET[DEV_A]), det("ephemeral empty", 32))
    add("a box of no bytes (48 bytes)", DEV_A, empty, "success", b"")
    add("a box that opens to an entry of epoch 3 (applying leaves the device outside)", DEV_B,
        epoch_box(DEV_B, u32(3) + SYNC_KEY_3), "success", u32(3) + SYNC_KEY_3)
    add("B's box opened with D's key", DEV_D, to_b, "box_not_opened")
    for offset, where in ((0, "the ephemeral key"), (40, "the tag"), (60, "the ciphertext"), (83, "the last byte")):
        flipped = bytearray(to_b)
        flipped[offset] ^= 1
        add(f"one bit flipped in {where} (byte {offset})", DEV_B, bytes(flipped), "box_not_opened")
    add("83 bytes (the last byte cut)", DEV_B, to_b[:83], "box_not_opened")
    add("85 bytes (a zero byte appended)", DEV_B, to_b + b"\0", "box_not_opened")
    add("47 bytes", DEV_B, to_b[:47], "box_not_opened")
    add("32 bytes (the ephemeral key alone)", DEV_B, to_b[:32], "box_not_opened")
    add("empty", DEV_B, b"", "box_not_opened")
    return cases


def write_vectors():
    objects = build_objects()
    doc = {"format": "tasker-sync-storage", "version": 1,
           "source": "generated by scripts/sync-reader.py --write-vectors from docs/formats/sync-storage.md",
           "sync_keys": [{"epoch": 1, "key_hex": SYNC_KEY.hex(), "item_hex": (u32(1) + SYNC_KEY).hex()},
                         {"epoch": 2, "key_hex": SYNC_KEY_2.hex(), "item_hex": ENTRY_2.hex()}],
           "target_id_hex": T.hex(), "note_key": {"kid": NOTE_KID, "key_hex": NOTE_KEY.hex()},
           "markers": build_markers(), "objects": objects, "merges": build_merges(),
           "configs": build_configs(), "sync_key_items": build_sync_key_items(),
           "sealed_boxes": build_sealed_boxes(objects), "blobs": build_blobs()}
    with open(VECTOR_FILE, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    return doc


# --- Checking the vectors -------------------------------------------------

def outcome_of(function):
    try:
        return "success", function()
    except Outcome as outcome:
        return outcome.name, None


def check_vectors(report):
    name = os.path.relpath(VECTOR_FILE, ROOT)
    try:
        doc = json.load(open(VECTOR_FILE, encoding="utf-8"))
    except (OSError, ValueError) as error:
        return report(False, f"{name}: cannot be read: {error}")
    report(doc.get("format") == "tasker-sync-storage" and doc.get("version") == 1, f"{name}: format and version")
    for entry in doc["sync_keys"]:
        [(epoch, key)] = read_sync_key_item(bytes.fromhex(entry["item_hex"]))
        report(epoch == entry["epoch"] and key.hex() == entry["key_hex"], f"{name}: sync key item of epoch {epoch}")

    def keyring(n):
        """The keyring of the first n entries of sync_keys, read as one item."""
        return dict(read_sync_key_item(b"".join(bytes.fromhex(e["item_hex"]) for e in doc["sync_keys"][:n])))
    keys = keyring(1)  # markers and objects without `keyring_entries`
    target = bytes.fromhex(doc["target_id_hex"])
    note_keys = {doc["note_key"]["kid"]: bytes.fromhex(doc["note_key"]["key_hex"])}
    for c in doc["markers"]:
        got, value = outcome_of(lambda: open_marker(bytes.fromhex(c["marker_hex"]), keys))
        ok = got == c["result"] and (got != "success" or value.hex() == c["target_id_hex"])
        report(ok, f"{name} marker {c['id']} ({c['comment']}): expected {c['result']}, Python got {got}")
    for c in doc["objects"]:
        data = bytes.fromhex(c["object_hex"]) + bytes(c.get("append_zero_bytes", 0))
        ring = keyring(c.get("keyring_entries", 1))
        got, value = outcome_of(lambda: open_object(data, c["device"], c["seq"], target, ring))
        ok = got == c["result"]
        if ok and got == "success":
            ok, got = value == c["payload"] and all(  # every text opens under its context (a part of applying)
                open_text(h["text"], note_keys, f"sync/{r['kind']}/{r['id']}/{h['version']}") is not None
                for r in value["records"] for h in r.get("body", {}).get("heads", [])), "success, another payload"
        report(ok, f"{name} object {c['id']} ({c['comment']}): expected {c['result']}, Python got {got}")
    for c in doc["merges"]:
        what = f"{name} merge {c['id']} ({c['comment']})"
        try:
            for r in c["inputs"]:
                check_record(r)
                ok_texts = all(open_text(h["text"], note_keys, f"sync/{r['kind']}/{r['id']}/{h['version']}") is not None
                               for h in r.get("body", {}).get("heads", []))
                report(ok_texts, f"{what}: every text of an input opens under its context")
            results = []
            for order in list(itertools.permutations(c["inputs"])) + [c["inputs"] * 2, c["inputs"][::-1] * 2]:
                joined = order[0]
                for other in order[1:]:
                    joined = merge(joined, other)
                results.append(canonical_record(joined))
            results += [merge(r, r) for r in [c["joined"]]]
            ok = all(r == c["joined"] for r in results) and list(shown(c["joined"])) == [c["shown"], c["conflicts"]]
        except Outcome as outcome:
            ok = False
            what += f": an input is refused: {outcome.args}"
        report(ok, what)
    for c in doc["configs"]:
        data = bytes.fromhex(c["record_hex"]) if "record_hex" in c else c["record"].encode("utf-8")
        got, value = outcome_of(lambda: read_config(data, c["database"]))
        ok = got == c["result"] and (got != "success" or value == c["view"])
        got = got if ok or got != "success" else f"the view {value}"
        report(ok, f"{name} config {c['id']} ({c['comment']}): expected {c['result']}, Python got {got}")
    for c in doc["sync_key_items"]:
        got, value = outcome_of(lambda: read_sync_key_item(bytes.fromhex(c["item_hex"])))
        ok = got == c["result"] and (got != "success" or [e for e, _ in value] == c["epochs"])
        got = got if ok or got != "success" else f"epochs {[e for e, _ in value]}"
        report(ok, f"{name} sync key item {c['id']}: expected {c['result']}, Python got {got}")
    objects = {c["id"]: c for c in doc["objects"]}
    for c in doc["sealed_boxes"]:
        secret = bytes.fromhex(c["secret_key_hex"])
        what = f"{name} sealed box {c['id']} ({c['comment']})"
        report(x25519_public(secret).hex() == c["public_key_hex"], f"{what}: the public key is X25519(secret)")
        got, value = outcome_of(lambda: open_box(bytes.fromhex(c["box_hex"]), secret))
        ok = got == c["result"] and (got != "success" or value.hex() == c["plaintext_hex"])
        got = got if ok or got != "success" else f"the plaintext {value.hex()}"
        report(ok, f"{what}: expected {c['result']}, Python got {got}")
        if "object_id" in c:  # keys[recipient] of a valid epoch change, holding its new keyring entry
            change = objects[c["object_id"]]["payload"]["epoch"]
            entry = next((e for e in doc["sync_keys"] if e["epoch"] == change["number"]), None)
            report(change["keys"].get(c["recipient"]) == c["box_hex"] and entry is not None
                   and c["plaintext_hex"] == entry["item_hex"]
                   and c["plaintext_hex"][:8] == u32(change["number"]).hex(),
                   f"{what}: the box is keys[{c['recipient']}] of object {c['object_id']} and holds u32(number) || "
                   "the keyring entry of that epoch")
    for c in doc["blobs"]:
        ring = keyring(c["keyring_entries"])
        got, value = outcome_of(lambda: open_blob(bytes.fromhex(c["blob_hex"]), c["record_id"], c["content"], ring,
                                                  target))
        ok = got == c["result"] and (got != "success" or value.hex() == c["content_hex"])
        got = got if ok or got != "success" else "another content"
        report(ok, f"{name} blob {c['id']} ({c['comment']}): expected {c['result']}, Python got {got}")
    for array in ("markers", "objects", "merges", "configs", "sync_key_items", "sealed_boxes", "blobs"):
        ids = [c["id"] for c in doc[array]]
        report(len(set(ids)) == len(ids), f"{name}: ids of {array} are unique")


def check_all(report):
    check_vectors(report)


def main():
    if sys.argv[1:] == ["--write-vectors"]:
        doc = write_vectors()
        counts = ", ".join(f"{len(doc[a])} {a}" for a in ("markers", "objects", "merges", "configs", "sync_key_items",
                                                          "sealed_boxes", "blobs"))
        print(f"sync-reader: wrote {os.path.relpath(VECTOR_FILE, ROOT)} ({counts})")
        return
    if sys.argv[1:] not in ([], ["--check"]):
        print(__doc__)
        sys.exit(64)
    counts = [0, 0]

    def report(ok, what):
        counts[0 if ok else 1] += 1
        if not ok:
            print(f"FAIL {what}")

    check_all(report)
    print(f"sync-reader: {counts[0]} passed, {counts[1]} failed")
    sys.exit(1 if counts[1] else 0)


if __name__ == "__main__":
    main()
