#!/usr/bin/env bash
# Installs .build/deb/taskkey_*.deb with apt-get, checks the files it put in
# place, then proves the installed binary needs no Swift toolchain: ldd and
# the dynamic section name no toolchain library or path, and the binary
# runs (init, unlock, seal, open, status) in a mount namespace where an
# empty directory is bind-mounted over the toolchain, with LD_LIBRARY_PATH
# cleared. Removes the package again. What `make package-test` runs.
set -euo pipefail
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
deb="$(ls .build/deb/taskkey_*.deb)"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "./$deb" >/dev/null
home="$(mktemp -d)"
trap '$SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq taskkey >/dev/null; rm -rf "$home"' EXIT

for file in /usr/bin/taskkey /usr/share/man/man1/taskkey.1.gz /usr/share/bash-completion/completions/taskkey \
  /usr/share/zsh/vendor-completions/_taskkey /usr/share/fish/vendor_completions.d/taskkey.fish; do
  test -s "$file" || { echo "package-test: $file is missing" >&2; exit 1; }
done
zcat /usr/share/man/man1/taskkey.1.gz | grep -q '^\.SH ENVIRONMENT'

toolchain="$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")"
echo "package-test: the toolchain is $toolchain"
if ldd /usr/bin/taskkey | grep -E "swift|Foundation|$toolchain"; then
  echo "package-test: the installed binary links the Swift toolchain" >&2; exit 1
fi
if readelf -d /usr/bin/taskkey | grep -E 'RPATH|RUNPATH' | grep -q "$toolchain"; then
  echo "package-test: the installed binary's RUNPATH names the toolchain" >&2; exit 1
fi

empty="$home/empty"
mkdir -p "$empty"
printf 'package test passphrase\n' > "$home/pass" && chmod 600 "$home/pass"
unshare -m bash -euo pipefail -c '
  mount --bind "$1" "$2"
  if [ -e "$2/usr/bin/swift" ]; then echo "package-test: the toolchain is still visible" >&2; exit 1; fi
  export TASKKEY_HOME="$3/keys" LD_LIBRARY_PATH=
  /usr/bin/taskkey --version
  /usr/bin/taskkey init --kdf fast-test-only --passphrase-file "$3/pass" >/dev/null
  test "$(echo "buy milk" | /usr/bin/taskkey seal -c note/1/body | /usr/bin/taskkey open -c note/1/body)" = "buy milk"
  /usr/bin/taskkey status --check
  /usr/bin/taskkey lock >/dev/null
  echo "package-test: the installed taskkey ran with $2 hidden"
' hide "$empty" "$toolchain" "$home"
