#!/usr/bin/env bash
# The main job end to end, in a throwaway home that is removed after.
set -euo pipefail
taskkey="$1"
home="$(mktemp -d)"
export TASKKEY_HOME="$home/keys"
cleanup() { "$taskkey" lock >/dev/null 2>&1 || true; rm -rf "$home"; }
trap cleanup EXIT
cd "$home"

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# A real user types the passphrase at the prompt (echo off); the demo feeds
# it from a 0600 file so that it runs unattended.
umask 077
printf 'maple orbit velvet kettle\n' > passphrase

step "Make a vault (Argon2id calibrated on this machine); init leaves it unlocked"
"$taskkey" init --passphrase-file passphrase
"$taskkey" status

step "Seal a note body for record 42 with the vault's note key"
echo 'Call the bank about the mortgage' | "$taskkey" seal --context note/42/body | tee sealed.txt

step "Open it again (any process of this user, until reboot or lock)"
"$taskkey" open --context note/42/body < sealed.txt

step "A legacy plain note passes through unchanged"
echo 'tc2. call Bob' | "$taskkey" open --context note/42/body

step "The same value copied to another record is refused"
if "$taskkey" open --context note/43/body < sealed.txt; then
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
if "$taskkey" open --context note/42/body < tampered.txt; then
  echo "demo: a tampered value opened" >&2; exit 1
else
  echo "(exit code $?)"
fi

step "Keep an AI-provider key on this device only; it never enters a sync bundle"
printf 'sk-demo-not-a-real-key' | "$taskkey" item set provider/openai --device-only --label "OpenAI key"
"$taskkey" item list
"$taskkey" sync export --out keys.tksync --passphrase-file passphrase
if grep -q 'sk-demo-not-a-real-key' keys.tksync; then echo "demo: device-only item in bundle" >&2; exit 1; fi
echo "keys.tksync: $(wc -c < keys.tksync) bytes, no device-only item inside"

step "A system backup (GNU tar --exclude-caches) keeps the vault file, never device-only/"
tar --exclude-caches -cf system-backup.tar -C "$home" keys
tar -tf system-backup.tar
if tar -tf system-backup.tar | grep -q 'device-only/device.tkv'; then
  echo "demo: the device-only store reached a system backup" >&2; exit 1
fi

step "A TaskKey backup holds the note keyring only; doctor checks permissions and markers"
"$taskkey" backup create --out keys.tkbackup
"$taskkey" doctor

step "Lock: from now on every process needs the passphrase again"
"$taskkey" lock
if "$taskkey" open --context note/42/body < sealed.txt; then
  echo "demo: opened while locked" >&2; exit 1
else
  echo "(exit code $?)"
fi

# The Tasker app links TaskKey's library (Apps/Tasker); its binary is the second argument.
if [ -n "${2:-}" ]; then
  tasker="$2"
  export TASKER_HOME="$home/tasker"
  step "Tasker: add a task with a note; the app seals it with the vault's note key"
  "$taskkey" unlock --passphrase-file passphrase
  printf %s "Ask about the mortgage rate, account 1234" | "$tasker" add "Call the bank" --notes - --due 2026-12-02 --estimate 20 --priority high

  step "sqlite3 on Tasker's database: the title is plain, the note is ciphertext"
  sqlite3 "$TASKER_HOME/tasker.db" "SELECT id, title, notes FROM tasks" | tee rows.txt
  if grep -q mortgage rows.txt; then echo "demo: a plaintext note in the database" >&2; exit 1; fi

  step "tasker show opens the note"
  "$tasker" show 1

  step "A planning provider gets six fields per task, never the note"
  "$tasker" plan-context --json --today 2026-12-01
  "$taskkey" lock
fi
printf '\nDemo finished; the throwaway home is removed.\n'
