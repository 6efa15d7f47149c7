#!/usr/bin/env bash
# Coverage-guided fuzzing of the sealed-value reader, base64 and key files
# with libFuzzer and AddressSanitizer. Not part of `make test` (it runs for
# as long as you let it); `make fuzz SECONDS=300` runs it for five minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
out=.build/fuzz
mkdir -p "$out/corpus"
# Seed the corpus with every value from the sealed-value vectors.
python3 - "$out/corpus" <<'PY'
import json, sys, hashlib
for t in json.load(open("Vectors/sealed-value-v1.json"))["tests"]:
    v = t["value"].encode()
    open(f"{sys.argv[1]}/{hashlib.sha256(v).hexdigest()[:16]}", "wb").write(v)
PY
printf 'module CTaskKeySupport {\n  header "%s"\n  export *\n}\n' \
  "$PWD/Sources/CTaskKeySupport/include/taskkey_support.h" > "$out/CTaskKeySupport.modulemap"
clang -O1 -fsanitize=fuzzer-no-link,address -c Sources/CTaskKeySupport/support.c \
  -I Sources/CTaskKeySupport/include -o "$out/support.o"
swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name TaskCrypto \
  -Xcc -fmodule-map-file=Sources/COpenSSL/module.modulemap \
  -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap \
  -Xcc -fmodule-map-file="$out/CTaskKeySupport.modulemap" \
  Sources/TaskCrypto/*.swift Fuzz/FuzzSealedValue.swift "$out/support.o" \
  -lcrypto -lsodium -o "$out/fuzz-sealed-value"
test -x "$out/fuzz-sealed-value"
"$out/fuzz-sealed-value" -max_total_time="$seconds" -max_len=4096 "$out/corpus"
