"""The Python peer of taskkey-bench: bare AES-256-GCM from the `cryptography`
package (OpenSSL underneath), timed in this process and reported back.

Reads lines `encrypt SIZE N` or `decrypt SIZE N` on standard input; for each,
runs AESGCM.encrypt (or .decrypt) N times on SIZE bytes with a fixed nonce and
associated data as long as TaskKey's, and prints the thread CPU nanoseconds.
No text encoding, no random nonce: the bare primitive.
"""
import os
import sys
import time

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

AAD = sys.argv[1].encode() if len(sys.argv) > 1 else b""


def main() -> None:
    aead = AESGCM(os.urandom(32))
    nonce = os.urandom(12)
    for line in sys.stdin:
        operation, size, count = line.split()
        data = b"a" * int(size)
        count = int(count)
        if operation == "encrypt":
            encrypt = aead.encrypt
            start = time.thread_time_ns()
            for _ in range(count):
                encrypt(nonce, data, AAD)
        else:
            sealed = aead.encrypt(nonce, data, AAD)
            decrypt = aead.decrypt
            start = time.thread_time_ns()
            for _ in range(count):
                decrypt(nonce, sealed, AAD)
        print(time.thread_time_ns() - start, flush=True)


main()
