#!/usr/bin/env bash
# The main job end to end, in a throwaway directory that is removed after.
set -euo pipefail
taskkey="$1"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
cd "$home"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Make a note key (a 0600 key file; the key id is printed)"
"$taskkey" keygen --out note.key
ls -l note.key

step "Seal a note body for record 42"
echo 'Call the bank about the mortgage' |
  "$taskkey" seal --key-file note.key --context note/42/body | tee sealed.txt

step "Open it again"
"$taskkey" open --key-file note.key --context note/42/body < sealed.txt

step "A legacy plain note passes through unchanged"
echo 'tc2. call Bob' | "$taskkey" open --key-file note.key --context note/42/body

step "The same value copied to another record is refused"
if "$taskkey" open --key-file note.key --context note/43/body < sealed.txt; then
  echo "demo: a value opened under the wrong context" >&2; exit 1
else
  echo "(exit code $?)"
fi

step "A tampered value is refused with its reason"
python3 - sealed.txt tampered.txt <<'PY'
import base64, sys
text = open(sys.argv[1]).read().strip()
marker, payload = text[:13], text[13:]
raw = bytearray(base64.b64decode(payload))
raw[14] ^= 0x01  # flip one ciphertext bit
open(sys.argv[2], "w").write(marker + base64.b64encode(bytes(raw)).decode() + "\n")
PY
if "$taskkey" open --key-file note.key --context note/42/body < tampered.txt; then
  echo "demo: a tampered value opened" >&2; exit 1
else
  echo "(exit code $?)"
fi
printf '\nDemo finished; the throwaway directory is removed.\n'
