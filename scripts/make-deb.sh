#!/usr/bin/env bash
# Builds .build/deb/taskkey_<version>_<arch>.deb with dpkg-deb from the
# static taskkey binary given as $1: the binary in /usr/bin, the man page,
# and the bash, zsh and fish completions, all printed by the binary itself.
# Depends lists the Debian packages of the shared libraries it links (libc,
# libcrypto, libsodium …), found with ldd and dpkg -S; none is the toolchain.
set -euo pipefail
bin="$1"
version="$("$bin" --version | awk '{print $2}')"
arch="$(dpkg --print-architecture)"
out="$(pwd)/.build/deb"
root="$out/taskkey_${version}_${arch}"
rm -rf "$out" && mkdir -p "$root/DEBIAN"
make -s install DESTDIR="$root" PREFIX=/usr >/dev/null
gzip -9n "$root/usr/share/man/man1/taskkey.1"
install -d "$root/usr/share/doc/taskkey"
printf 'TaskKey %s\nSee taskkey(1) and taskkey --help.\n' "$version" > "$root/usr/share/doc/taskkey/README"

package_of() {  # the package that owns a library path (merged /usr or not)
  local path="$1" real
  real="$(readlink -f "$path")"
  for candidate in "$path" "$real" "${path#/usr}" "${real#/usr}" "/usr$path" "/usr$real"; do
    if owner="$(dpkg -S "$candidate" 2>/dev/null | head -n1)"; then
      echo "${owner%%:*}"
      return 0
    fi
  done
  echo "make-deb: no Debian package owns $path" >&2
  return 1
}
depends=""
for lib in $(ldd "$bin" | awk '/=>/ { print $3 }'); do
  case "$lib" in
    */swift/*) echo "make-deb: $bin links the toolchain library $lib" >&2; exit 1 ;;
  esac
  depends="$depends $(package_of "$lib")"
done
depends="$(tr ' ' '\n' <<<"$depends" | sed '/^$/d' | sort -u | paste -sd, - | sed 's/,/, /g')"

cat > "$root/DEBIAN/control" <<CONTROL
Package: taskkey
Version: $version
Architecture: $arch
Maintainer: TaskKey developers <taskkey@localhost>
Depends: $depends
Section: utils
Priority: optional
Description: key management and note sealing for the Tasker task app
 taskkey seals note text with AES-256-GCM, keeps its keys in a
 passphrase-guarded vault readable from the first unlock until reboot,
 and mints and verifies keys for AI assistants. The Swift runtime is
 linked in; no Swift toolchain is needed.
CONTROL
dpkg-deb --build --root-owner-group "$root" "$out/taskkey_${version}_${arch}.deb" >/dev/null
echo "$out/taskkey_${version}_${arch}.deb (Depends: $depends)"
