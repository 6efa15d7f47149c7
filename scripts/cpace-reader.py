#!/usr/bin/env python3
"""Independent reader of Vectors/cpace-ristretto255-sha512-v1.json.

Written from draft-irtf-cfrg-cpace-21 and RFC 9496 (ristretto255) and
docs/formats/cpace.md, not from the Swift code, in the Python standard
library alone: ristretto255 is computed here with integers (no libsodium),
so an error in TaskKey's use of libsodium cannot hide in both.

    python3 scripts/cpace-reader.py [PATH]     prints "N passed, M failed"

`make interop` loads it through scripts/interop.py (check_vectors).
"""
import hashlib
import hmac
import json
import os
import sys

# --- RFC 9496 ristretto255 over edwards25519 (a = -1) ----------------------

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
IDENTITY = (0, 1, 1, 0)


def is_negative(x):
    return (x % P) & 1 == 1


def ct_abs(x):
    return (-x) % P if is_negative(x) else x % P


def sqrt_ratio_m1(u, v):
    """RFC 9496 §4.2: (was_square, sqrt(u/v) or sqrt(i*u/v), non-negative)."""
    u %= P
    v %= P
    r = (u * pow(v, 3, P)) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    check = v * r * r % P
    correct = check == u
    flipped = check == (-u) % P
    flipped_i = check == (-u * SQRT_M1) % P
    if flipped or flipped_i:
        r = r * SQRT_M1 % P
    return correct or flipped, ct_abs(r)


# The constants of RFC 9496 §4.1 (which square root each is matters).
SQRT_AD_MINUS_ONE = 25063068953384623474111414158702152701244531502492656460079210482610430750235
INVSQRT_A_MINUS_D = 54469307008909316920995813868745141605393597292927456921205312896311721017578
ONE_MINUS_D_SQ = (1 - D * D) % P
D_MINUS_ONE_SQ = (D - 1) * (D - 1) % P


def decode(data):
    """RFC 9496 §4.3.1; None for a string that is not a canonical encoding."""
    if len(data) != 32:
        return None
    s = int.from_bytes(data, "little")
    if s >= P or is_negative(s):
        return None
    ss = s * s % P
    u1 = (1 - ss) % P
    u2 = (1 + ss) % P
    u2_sqr = u2 * u2 % P
    v = (-(D * u1 * u1) - u2_sqr) % P
    was_square, invsqrt = sqrt_ratio_m1(1, v * u2_sqr)
    den_x = invsqrt * u2 % P
    den_y = invsqrt * den_x * v % P
    x = ct_abs(2 * s * den_x)
    y = u1 * den_y % P
    t = x * y % P
    if not was_square or is_negative(t) or y == 0:
        return None
    return (x, y, 1, t)


def encode(point):
    """RFC 9496 §4.3.2."""
    x0, y0, z0, t0 = point
    u1 = (z0 + y0) * (z0 - y0) % P
    u2 = x0 * y0 % P
    _, invsqrt = sqrt_ratio_m1(1, u1 * u2 * u2)
    den1 = invsqrt * u1 % P
    den2 = invsqrt * u2 % P
    z_inv = den1 * den2 * t0 % P
    rotate = is_negative(t0 * z_inv)
    if rotate:
        x, y, den_inv = y0 * SQRT_M1 % P, x0 * SQRT_M1 % P, den1 * INVSQRT_A_MINUS_D % P
    else:
        x, y, den_inv = x0, y0, den2
    if is_negative(x * z_inv):
        y = (-y) % P
    s = ct_abs(den_inv * (z0 - y))
    return s.to_bytes(32, "little")


def add(p1, p2):
    """Extended twisted-Edwards addition (a = -1)."""
    x1, y1, z1, t1 = p1
    x2, y2, z2, t2 = p2
    a = (y1 - x1) * (y2 - x2) % P
    b = (y1 + x1) * (y2 + x2) % P
    c = t1 * 2 * D * t2 % P
    d = z1 * 2 * z2 % P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % P, g * h % P, f * g % P, e * h % P)


def multiply(scalar, point):
    result = IDENTITY
    while scalar:
        if scalar & 1:
            result = add(result, point)
        point = add(point, point)
        scalar >>= 1
    return result


def elligator(t):
    """RFC 9496 §4.3.4, MAP."""
    r = SQRT_M1 * t * t % P
    u = (r + 1) * ONE_MINUS_D_SQ % P
    v = (-1 - r * D) * (r + D) % P
    was_square, s = sqrt_ratio_m1(u, v)
    if not was_square:
        s = (-ct_abs(s * t)) % P
        c = r
    else:
        c = P - 1
    n = (c * (r - 1) * D_MINUS_ONE_SQ - v) % P
    w0 = 2 * s * v % P
    w1 = n * SQRT_AD_MINUS_ONE % P
    w2 = (1 - s * s) % P
    w3 = (1 + s * s) % P
    return (w0 * w3 % P, w2 * w1 % P, w1 * w3 % P, w0 * w2 % P)


def from_hash(data):
    """RFC 9496 §4.3.4, element derivation from 64 bytes."""
    t1 = int.from_bytes(data[:32], "little") & ((1 << 255) - 1)
    t2 = int.from_bytes(data[32:], "little") & ((1 << 255) - 1)
    return add(elligator(t1 % P), elligator(t2 % P))


# --- draft-irtf-cfrg-cpace-21 ---------------------------------------------

DSI = b"CPaceRistretto255"


def prepend_len(data):
    length, out = len(data), b""
    while True:
        out += bytes([length if length < 128 else (length & 0x7F) | 0x80])
        length >>= 7
        if length == 0:
            return out + data


def lv_cat(*parts):
    return b"".join(prepend_len(p) for p in parts)


def generator_string(prs, ci, sid):
    zpad = max(0, 128 - 1 - len(prepend_len(prs)) - len(prepend_len(DSI)))
    return lv_cat(DSI, prs, bytes(zpad), ci, sid)


def o_cat(a, b):
    larger = a > b  # bytes compare lexicographically, a proper prefix is smaller
    return b"oc" + (a + b if larger else b + a)


def transcript_ir(ya, ada, yb, adb):
    return lv_cat(ya, ada) + lv_cat(yb, adb)


def transcript_oc(ya, ada, yb, adb):
    return o_cat(lv_cat(ya, ada), lv_cat(yb, adb))


def scalar_mult_vfy(scalar, message):
    """The receiving party's checks in TaskKey's order (docs/formats/cpace.md):
    returns (error name or None, K)."""
    if len(message) != 32:
        return "cpace_message_length", None
    point = decode(message)
    if point is None:
        return "cpace_invalid_point", None
    if message == bytes(32):
        return "cpace_identity_point", None
    k = encode(multiply(int.from_bytes(scalar, "little"), point))
    if k == bytes(32):
        return "cpace_identity_point", None
    return None, k


def isk(sid, k, transcript):
    return hashlib.sha512(lv_cat(DSI + b"_ISK", sid, k) + transcript).digest()


def confirmation(sid, key, ya, ada, yb, adb):
    mac_key = hashlib.sha512(b"CPaceMac" + sid + key).digest()
    ta = hmac.new(mac_key, lv_cat(ya, ada), hashlib.sha512).digest()
    tb = hmac.new(mac_key, lv_cat(yb, adb), hashlib.sha512).digest()
    return mac_key, ta, tb


def exchange(case):
    """Every value of one run, from the case's inputs."""
    h = lambda name: bytes.fromhex(case[name])  # noqa: E731
    prs, ci, sid, ada, adb = h("prs"), h("ci"), h("sid"), h("ada"), h("adb")
    gen = generator_string(prs, ci, sid)
    digest = hashlib.sha512(gen).digest()
    g = from_hash(digest)
    ya_scalar, yb_scalar = h("ya"), h("yb")
    ya = encode(multiply(int.from_bytes(ya_scalar, "little"), g))
    yb = encode(multiply(int.from_bytes(yb_scalar, "little"), g))
    _, k_a = scalar_mult_vfy(ya_scalar, yb)
    _, k_b = scalar_mult_vfy(yb_scalar, ya)
    out = {"generator_string": gen, "generator_hash": digest, "g": encode(g), "Ya": ya, "Yb": yb, "K": k_a}
    for setting, transcript in (("ir", transcript_ir), ("oc", transcript_oc)):
        t = transcript(ya, ada, yb, adb)
        key = isk(sid, k_a, t)
        mac_key, ta, tb = confirmation(sid, key, ya, ada, yb, adb)
        out.update({f"transcript_{setting}": t, f"isk_{setting}": key, f"sid_output_{setting}":
                    hashlib.sha512(b"CPaceSidOutput" + t).digest(), f"mac_key_{setting}": mac_key,
                    f"ta_{setting}": ta, f"tb_{setting}": tb})
    return out, k_a == k_b


def check_case(case):
    """None when the case gives its stated outcome, else what differs."""
    kind = case["kind"]
    if kind == "exchange":
        got, same = exchange(case)
        if not same:
            return "the two sides computed different K"
        wrong = [name for name, value in got.items() if name in case and bytes.fromhex(case[name]) != value]
        missing = [name for name in ("g", "Ya", "Yb", "K", "isk_ir", "isk_oc") if name not in case]
        return f"differs in {wrong}, missing {missing}" if wrong or missing else None
    if kind == "scalar_mult_vfy":
        error, k = scalar_mult_vfy(bytes.fromhex(case["scalar"]), bytes.fromhex(case["point"]))
        if case["result"] == "valid":
            return None if error is None and k.hex() == case["product"] else f"got {error or k.hex()}"
        return None if error == case["error"] else f"expected {case['error']}, got {error or 'success'}"
    if kind == "confirmation":
        h = lambda name: bytes.fromhex(case[name])  # noqa: E731
        _, ta, tb = confirmation(h("sid"), h("isk"), h("Ya"), h("ada"), h("Yb"), h("adb"))
        ok_a = hmac.compare_digest(ta, h("ta"))
        ok_b = hmac.compare_digest(tb, h("tb"))
        if case["result"] == "valid":
            return None if ok_a and ok_b else "a tag differs"
        return None if not (ok_a and ok_b) and case["error"] == "cpace_confirmation_failed" else "tags verified"
    return f"unknown kind {kind!r}"


def check_document(document):
    """(passed, failures) for a parsed vector file."""
    if document.get("format") != "cpace-ristretto255-sha512" or document.get("version") != 1:
        return 0, ["not cpace-ristretto255-sha512 version 1"]
    passed, failures = 0, []
    for case in document["tests"]:
        problem = check_case(case)
        if problem is None:
            passed += 1
        else:
            failures.append(f"case {case['id']} ({case['comment']}): {problem}")
    return passed, failures


def check_vectors(document, name, report):
    """scripts/interop.py's hook: one report per case."""
    for case in document["tests"]:
        problem = check_case(case)
        report(problem is None, f"{name} case {case['id']} ({case['comment']}): {problem}")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "Vectors", "cpace-ristretto255-sha512-v1.json")
    with open(path, encoding="utf-8") as handle:
        passed, failures = check_document(json.load(handle))
    for line in failures:
        print("FAIL " + line)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
