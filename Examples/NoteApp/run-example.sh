#!/usr/bin/env bash
# Builds Examples/NoteApp, failing on any compiler warning, and runs it against a
# throwaway vault made with the taskkey binary given as $1: the note seals
# and opens, a minted assistant key verifies, a revoked one is refused, and
# a locked vault is an error. What `make example` runs.
set -euo pipefail
taskkey="$1"
here="$(cd "$(dirname "$0")" && pwd)"
home="$(mktemp -d)"
trap 'TASKKEY_HOME="$home/keys" "$taskkey" lock >/dev/null 2>&1 || true; rm -rf "$home"' EXIT
swift build --package-path "$here" >"$home/build.log" 2>&1 || { cat "$home/build.log" >&2; exit 1; }
if grep "warning:" "$home/build.log" >&2; then echo "example: the build has warnings" >&2; exit 1; fi
app="$(swift build --package-path "$here" --show-bin-path)/NoteApp"
export TASKKEY_HOME="$home/keys"
printf 'example passphrase 1\n' > "$home/pass" && chmod 600 "$home/pass"
"$taskkey" init --kdf fast-test-only --passphrase-file "$home/pass" >/dev/null
key="$("$taskkey" mint --name example-bot --grant notes:read 2>/dev/null)"
out="$(printf '%s\n' "$key" | "$app")"
echo "$out"
grep -q "buy milk" <<<"$out"
grep -q "assistant example-bot, trust standard" <<<"$out"
id="$("$taskkey" list --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["keys"][0]["id"])')"
"$taskkey" revoke "$id" >/dev/null
if printf '%s\n' "$key" | "$app" 2>"$home/err"; then echo "example: a revoked key verified" >&2; exit 1; fi
grep -q "revoked" "$home/err"
"$taskkey" lock >/dev/null
if "$app" </dev/null 2>"$home/err"; then echo "example: a locked vault opened" >&2; exit 1; fi
grep -q "locked" "$home/err"
echo "example: ok"
