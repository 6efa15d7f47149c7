"""The Python peer of taskkey-bench: bare AES-256-GCM from the `cryptography`
package (OpenSSL underneath), timed in this process and reported back.

    bench_peer.py AAD
        Reads lines `encrypt SIZE N` or `decrypt SIZE N` on standard input;
        for each, runs AESGCM.encrypt (or .decrypt) N times on SIZE bytes and
        prints the thread CPU nanoseconds (the in-process rows: one peer kept
        running for the whole benchmark).
    bench_peer.py AAD --once encrypt|decrypt SIZE N
        One fresh process per measurement (the separate-process rows, as an
        outside harness runs it): N // 4 calls of warm-up, then N timed
        calls in slices of 500; prints nanoseconds per call of the median
        slice, as taskkey-bench's children do.

A fixed nonce and associated data as long as TaskKey's; no text encoding,
no random nonce: the bare primitive.
"""
import os
import sys
import time

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

AAD = sys.argv[1].encode() if len(sys.argv) > 1 else b""


def timed(aead, nonce, operation: str, size: int, count: int) -> int:
    """Thread CPU nanoseconds for `count` calls of `operation`."""
    data = b"a" * size
    if operation == "encrypt":
        encrypt = aead.encrypt
        start = time.thread_time_ns()
        for _ in range(count):
            encrypt(nonce, data, AAD)
    elif operation == "decrypt":
        sealed = aead.encrypt(nonce, data, AAD)
        decrypt = aead.decrypt
        start = time.thread_time_ns()
        for _ in range(count):
            decrypt(nonce, sealed, AAD)
    else:
        raise SystemExit(f"bench_peer.py: unknown operation {operation!r}")
    return time.thread_time_ns() - start


def main() -> None:
    aead = AESGCM(os.urandom(32))
    nonce = os.urandom(12)
    if len(sys.argv) == 6 and sys.argv[2] == "--once":
        operation, size, count = sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
        timed(aead, nonce, operation, size, max(1, count // 4))
        slices = sorted(timed(aead, nonce, operation, size, 500) for _ in range(max(1, count // 500)))
        print(f"{slices[len(slices) // 2] / 500:.3f}", flush=True)
        return
    for line in sys.stdin:
        operation, size, count = line.split()
        print(timed(aead, nonce, operation, int(size), int(count)), flush=True)


main()
