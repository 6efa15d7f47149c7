#!/usr/bin/env python3
"""The generator of the project cases of Vectors/cpace-ristretto255-sha512-v1.json.

Cases whose `source` is `draft` (ids 1 to 4) are the draft's published
values and are kept exactly as committed; every `project` case is computed
here again with scripts/cpace-reader.py (integer ristretto255, no
libsodium), from fixed inputs. `taskkey vectors check` then checks all of
them against TaskCrypto (libsodium).

    python3 scripts/cpace-vectors.py            rewrites the file
    python3 scripts/cpace-vectors.py --check    exits 1 when the file drifted
"""
import importlib.util
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.path.join(ROOT, "Vectors", "cpace-ristretto255-sha512-v1.json")
spec = importlib.util.spec_from_file_location("cpace_reader", os.path.join(ROOT, "scripts", "cpace-reader.py"))
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)


EXCHANGE_FIELDS = ("generator_string", "generator_hash", "g", "Ya", "Yb", "K", "transcript_ir", "isk_ir",
                   "transcript_oc", "isk_oc", "sid_output_ir", "sid_output_oc")
INPUTS = ("prs", "ci", "sid", "ada", "adb", "ya", "yb")
P = 2**255 - 19


def run(inputs, cache={}):  # noqa: B006 (a deliberate memo)
    key = json.dumps(inputs, sort_keys=True)
    if key not in cache:
        cache[key] = r.exchange(inputs)[0]
    return cache[key]


def exchange_case(case_id, comment, inputs):
    values = run(inputs)
    case = dict(id=case_id, comment=comment, source="project", kind="exchange", **inputs)
    case.update({name: values[name].hex() for name in EXCHANGE_FIELDS})
    return case


def confirmation_case(case_id, comment, inputs, setting, tamper=None):
    values = run(inputs)
    case = dict(id=case_id, comment=comment, source="project", kind="confirmation", sid=inputs["sid"],
                isk=values[f"isk_{setting}"].hex(), Ya=values["Ya"].hex(), ada=inputs["ada"], Yb=values["Yb"].hex(),
                adb=inputs["adb"], mac_key=values[f"mac_key_{setting}"].hex(), ta=values[f"ta_{setting}"].hex(),
                tb=values[f"tb_{setting}"].hex(), result="valid")
    if tamper:
        tamper(case)
        case.update(result="invalid", error="cpace_confirmation_failed")
    return case


def flip_last_bit_of_tb(case):
    case["tb"] = case["tb"][:-2] + "%02x" % (int(case["tb"][-2:], 16) ^ 1)


def generate(doc):
    """The draft's cases as committed, then every project case afresh."""
    tests = [t for t in doc["tests"] if t["source"] == "draft"]
    draft = {name: tests[0][name] for name in INPUTS}
    tests.append(confirmation_case(
        5, "key confirmation (draft section 10.4, HMAC-SHA-512) over case 1, initiator-responder ISK", draft, "ir"))
    tests.append(confirmation_case(6, "key confirmation over case 1, symmetric (ordered) ISK", draft, "oc"))
    tests.append(confirmation_case(
        7, "case 5 with the last bit of Tb changed: B's tag does not verify", draft, "ir", flip_last_bit_of_tb))

    def other_isk(case):
        case["isk"] = run(draft)["isk_oc"].hex()
    tests.append(confirmation_case(
        8, "case 5's tags under the other ordering's ISK: they do not verify", draft, "ir", other_isk))
    ci = b"\x0e192.0.2.1:7700\x0e192.0.2.2:7700\x0ctaskkey-pair"
    long_prs = dict(prs=bytes(range(200)).hex(), ci=ci.hex(), sid="", ada="", adb="", ya="0b" * 31 + "05",
                    yb="a7" * 31 + "0c")
    tests.append(exchange_case(
        9, "a PRS of 200 bytes (two-byte LEB128 length, no zero padding), empty sid and ADs, CI with two "
        "addresses and a label", long_prs))
    tests.append(confirmation_case(10, "key confirmation over case 9 (empty sid), initiator-responder ISK",
                                   long_prs, "ir"))
    for case_id, length in ((11, 107), (12, 108)):
        prs = b"p" * length
        padding = max(0, 128 - 1 - len(r.prepend_len(prs)) - len(r.prepend_len(r.DSI)))
        inputs = dict(prs=prs.hex(), ci="", sid="00" * 16, ada=b"A".hex(), adb=b"B".hex(), ya="11" * 31 + "01",
                      yb="22" * 31 + "02")
        tests.append(exchange_case(
            case_id, f"a PRS of {length} bytes: zero padding of {padding} bytes (the first SHA-512 block's edge)",
            inputs))
    yb = tests[0]["Yb"]
    refused = [
        ("a message of 31 bytes", "cpace_message_length", yb[:62]),
        ("a message of 33 bytes", "cpace_message_length", yb + "00"),
        ("an empty message", "cpace_message_length", ""),
        ("s = p (a non-canonical field element)", "cpace_invalid_point", P.to_bytes(32, "little").hex()),
        ("s = 1, negative (odd)", "cpace_invalid_point", (1).to_bytes(32, "little").hex()),
        ("case 1's Yb with the top bit set", "cpace_invalid_point", yb[:62] + "%02x" % (int(yb[62:], 16) | 0x80)),
        ("s = p + 2 (2 not reduced)", "cpace_invalid_point", (P + 2).to_bytes(32, "little").hex()),
    ]
    for comment, error, point in refused:
        tests.append(dict(id=len(tests) + 1, comment=comment, source="project", kind="scalar_mult_vfy",
                          scalar=tests[1]["scalar"], point=point, result="invalid", error=error))
    for test in tests:
        assert r.check_case(test) is None, (test["id"], r.check_case(test))
    return dict(doc, tests=tests)


def main():
    with open(PATH, encoding="utf-8") as handle:
        text = handle.read()
    fresh = json.dumps(generate(json.loads(text)), indent=2) + "\n"
    if "--check" in sys.argv:
        if fresh != text:
            print(f"{PATH} drifted from scripts/cpace-vectors.py; run it to rewrite the file")
            return 1
        print("cpace vectors: no drift")
        return 0
    with open(PATH, "w", encoding="utf-8") as handle:
        handle.write(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
