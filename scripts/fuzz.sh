#!/usr/bin/env bash
# Coverage-guided fuzzing with libFuzzer and AddressSanitizer. `make fuzz`
# runs every harness for FUZZ_SECONDS each; `make test` builds every harness
# and runs each for a few seconds (`make fuzz-smoke`), so none can rot.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# targets: sealed-value key-file assistant-keys vault-file sync-bundle
#          backup-file json-lines attachment (default: all of them)
#
# Each harness in Fuzz/ is compiled with Fuzz/FuzzSupport.swift (what the
# harnesses share), links instrumented static builds of the library
# modules it needs (built with -enable-testing, so `@testable import` reaches
# internal parsers) and is seeded from Vectors/.
#
# FUZZ_OPTIMIZATION (default -O) is the Swift optimisation level: `make
# fuzz-smoke` passes -Onone, which compiles the instrumented modules in a
# fraction of the time (the smoke run checks that every harness builds and
# runs, not how deep it gets in a few seconds), into a folder of its own so
# that `make fuzz` never links those builds.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(sealed-value key-file assistant-keys vault-file sync-bundle backup-file json-lines
  attachment)
optimization="${FUZZ_OPTIMIZATION:--O}"
case "$optimization" in
  -O) out=.build/fuzz ;;
  -Onone) out=.build/fuzz-onone ;;
  *) echo "fuzz.sh: FUZZ_OPTIMIZATION is -O or -Onone, not '$optimization'" >&2; exit 64 ;;
esac
mkdir -p "$out/mods"

printf 'module CTaskSystem {\n  header "%s"\n  header "%s"\n  export *\n}\n' \
  "$PWD/Sources/CTaskSystem/include/task_system.h" "$PWD/Sources/CTaskSystem/include/task_system_random.h" \
  > "$out/CTaskSystem.modulemap"
clang -O1 -fsanitize=fuzzer-no-link,address -c Sources/CTaskSystem/shim.c \
  -I Sources/CTaskSystem/include -o "$out/support.o"
clang -O1 -fsanitize=fuzzer-no-link,address -c Sources/CTaskSystem/nonce_random.c \
  -I Sources/CTaskSystem/include -o "$out/nonce_random.o"
# TaskCrypto's SSSE3 base64 loops, instrumented like the rest.
printf 'module CTaskCrypto {\n  header "%s"\n  export *\n}\n' "$PWD/Sources/CTaskCrypto/include/ctaskcrypto.h" \
  > "$out/CTaskCrypto.modulemap"
clang -O1 -fsanitize=fuzzer-no-link,address -c Sources/CTaskCrypto/base64_ssse3.c \
  -I Sources/CTaskCrypto/include -o "$out/base64_ssse3.o"

build() {  # build NAME HARNESS MODULE... (modules in dependency order)
  local name="$1" harness="$2"; shift 2
  local libs=()
  for module in "$@"; do
    # Each library module is built once, instrumented, as a static library
    # with testing enabled so that the harness can reach internal parsers.
    if [ ! -f "$out/lib$module.a" ] || [ -n "$(find Sources/"$module" -newer "$out/lib$module.a" -name '*.swift')" ]; then
      # -package-name: the libraries' `package` seams (ARCHITECTURE.md, "Package seams").
      swiftc "$optimization" -sanitize=fuzzer,address -parse-as-library -enable-testing -module-name "$module" \
        -package-name TaskKey \
        -emit-library -static -emit-module -emit-module-path "$out/mods/$module.swiftmodule" -I "$out/mods" \
        -Xcc -fmodule-map-file=Sources/COpenSSL/module.modulemap \
        -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap \
        -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap \
        -Xcc -fmodule-map-file="$out/CTaskSystem.modulemap" \
        -Xcc -fmodule-map-file="$out/CTaskCrypto.modulemap" \
        $(find Sources/"$module" -name '*.swift' | sort) -o "$out/lib$module.a"
    fi
    libs=("$out/lib$module.a" "${libs[@]}")  # dependents before their dependencies
  done
  swiftc "$optimization" -sanitize=fuzzer,address -parse-as-library -package-name TaskKey -I "$out/mods" \
    -Xcc -fmodule-map-file=Sources/COpenSSL/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap \
    -Xcc -fmodule-map-file=Sources/CZlib/module.modulemap \
    -Xcc -fmodule-map-file="$out/CTaskSystem.modulemap" \
    -Xcc -fmodule-map-file="$out/CTaskCrypto.modulemap" \
    "$harness" Fuzz/FuzzSupport.swift "${libs[@]}" "$out/support.o" "$out/nonce_random.o" "$out/base64_ssse3.o" -lcrypto -lsodium -lz -o "$out/fuzz-$name" 2>&1 |
    grep -v -E 'ld.gold: warning: Cannot export local symbol' || true
  test -x "$out/fuzz-$name"
}

seed() {  # seed NAME PYTHON-EXPRESSION-YIELDING-BYTES
  mkdir -p "$out/corpus-$1"
  python3 - "$out/corpus-$1" "$2" <<'PY'
import glob, hashlib, json, sys
target, expression = sys.argv[1], sys.argv[2]
for value in eval(expression):
    open(f"{target}/{hashlib.sha256(value).hexdigest()[:16]}", "wb").write(value)
PY
}

for target in "${targets[@]}"; do
  case "$target" in
    sealed-value)
      build sealed-value Fuzz/FuzzSealedValue.swift TaskSystem TaskCrypto
      seed sealed-value '[t["value"].encode() for t in json.load(open("Vectors/sealed-value-v1.json"))["tests"]]' ;;
    assistant-keys)
      build assistant-keys Fuzz/FuzzAssistantKeys.swift TaskSystem TaskCrypto TaskVault AssistantKeys
      seed assistant-keys '[t["key"].encode() for t in json.load(open("Vectors/assistant-key-v1.json"))["tests"]] + [bytes.fromhex(t.get("registry", r["registry"])) for r in [json.load(open("Vectors/assistant-registry-v2.json"))] for t in r["tests"]] + [bytes.fromhex(t["file"]) for t in json.load(open("Vectors/assistant-last-used-v2.json"))["tests"] if "file" in t]' ;;
    key-file)
      build key-file Fuzz/FuzzKeyFile.swift TaskSystem TaskCrypto
      seed key-file '[(t["kid"] + ":" + t["key"] + "\n").encode() for t in json.load(open("Vectors/sealed-value-v1.json"))["keys"]]' ;;
    vault-file)
      build vault-file Fuzz/FuzzVaultFile.swift TaskSystem TaskCrypto TaskVault
      seed vault-file '[open(f, "rb").read()[:-32] for f in glob.glob("Vectors/vault-v1/*")]' ;;
    sync-bundle)
      build sync-bundle Fuzz/FuzzSyncBundle.swift TaskSystem TaskCrypto TaskVault
      seed sync-bundle '[open(f, "rb").read()[:-32] for f in glob.glob("Vectors/vault-v1/*.tksync")] + [bytes(4) * 3 + bytes(500)]' ;;
    backup-file)
      build backup-file Fuzz/FuzzBackupFile.swift TaskSystem TaskCrypto TaskVault AssistantKeys BackupRules
      seed backup-file '[open(f, "rb").read() for f in glob.glob("Vectors/backup-v1/*")]' ;;
    json-lines)
      build json-lines Fuzz/FuzzJSONLines.swift TaskSystem TaskCrypto TaskVault AssistantKeys BackupRules TaskAttachments TaskPairing \
        CommandKit ExitCodeMap \
        TaskKeyVectors TaskKeyCLI
      seed json-lines '[b"tc1.0a0b0c0d:AAAA\nplain\n", b"{\"v\": \"tc1.0a0b0c0d:AA==\", \"c\": \"note/1\"}\n{\"v\": null, \"c\": \"x\"}"]' ;;
    attachment)
      build attachment Fuzz/FuzzAttachment.swift TaskSystem TaskCrypto TaskAttachments
      seed attachment '[bytes.fromhex(t["file"]) for t in json.load(open("Vectors/attachment-v1.json"))["tests"]] + [b"seal-new-attachments=on\n"]' ;;
    *) echo "fuzz.sh: unknown target '$target'" >&2; exit 64 ;;
  esac
  echo "== fuzzing $target for $seconds s"
  status=0
  SWIFT_BACKTRACE=enable=no "$out/fuzz-$target" -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$out/crash-$target-" "$out/corpus-$target" > "$out/log-$target" 2>&1 || status=$?
  grep -E '^(Done|==[0-9]+==ERROR|SUMMARY|Fatal error|stat::number_of_executed_units)' "$out/log-$target" || true
  if [ "$status" -ne 0 ]; then
    echo "fuzz.sh: $target found a failure (exit $status); see $out/log-$target and $out/crash-$target-*" >&2
    exit 1
  fi
done
