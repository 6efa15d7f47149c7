#!/usr/bin/env bash
# Prepares the link of the tasker users run (make app-release): a folder of
# links to Debian's static archives of libcrypto, libsodium, SQLite and
# libstdc++, and pkg-config files that point SwiftPM at it.
#
#   Apps/Tasker/scripts/static-link.sh OUT
#   PKG_CONFIG_PATH=OUT/pkgconfig swift build -c release --static-swift-stdlib ...
#   Apps/Tasker/scripts/static-link.sh --check BINARY
#
# --check fails when BINARY needs a shared library other than glibc's (libc,
# libm, the loader) and libgcc_s, so a link that silently fell back to the
# shared libraries is caught, and when it links Foundation's CoreFoundation
# (__CFInitialize): tasker uses FoundationEssentials only, and one call into
# Foundation proper (NSString, FileHandle, JSONSerialization, ...) would pull
# CoreFoundation and ICU back into every start.
#
# SwiftPM turns each system library's pkg-config file into -L<libdir> -l<name>,
# and with Debian's own files that -L is /usr/lib/x86_64-linux-gnu, where the
# shared library wins. These files keep the same -l names and include flags
# but give OUT/lib as the only -L, so the linker finds the .a there first;
# libstdc++.a (the Swift runtime's C++ library) is found there before the
# compiler's own folder for the same reason. Nothing is downloaded: the
# archives come from libssl-dev, libsodium-dev, libsqlite3-dev and the C++
# compiler's libstdc++ package, installed by `make deps`.
set -euo pipefail

if [[ ${1:-} == --check ]]; then
  binary=${2:?usage: static-link.sh --check BINARY}
  needed=$(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  extra=$(grep -vxE 'libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|ld-linux-x86-64\.so\.2' <<<"$needed" || true)
  if [[ -n $extra ]]; then
    echo "static-link.sh: $binary still loads: $(tr '\n' ' ' <<<"$extra")" >&2
    exit 1
  fi
  if nm "$binary" 2>/dev/null | grep ' __CFInitialize$' >/dev/null; then
    echo "static-link.sh: $binary links CoreFoundation again (a Foundation API outside FoundationEssentials)" >&2
    exit 1
  fi
  echo "static-link.sh: $binary loads only: $(tr '\n' ' ' <<<"$needed")(no CoreFoundation)"
  exit 0
fi

out=${1:?usage: static-link.sh OUT}
mkdir -p "$out/lib" "$out/pkgconfig"

# name of the pkg-config module, -l name
# (zlib: only the shipped taskkey links it, for `taskkey vectors check`.)
modules=("libcrypto crypto" "libsodium sodium" "sqlite3 sqlite3" "zlib z")
for entry in "${modules[@]}"; do
  read -r module lib <<<"$entry"
  libdir=$(pkg-config --variable=libdir "$module")
  archive="$libdir/lib$lib.a"
  [[ -f $archive ]] || { echo "static-link.sh: no $archive (install the -dev package of $module)" >&2; exit 1; }
  ln -sfn "$archive" "$out/lib/lib$lib.a"
  cflags=$(pkg-config --cflags "$module")
  cat >"$out/pkgconfig/$module.pc" <<PC
# Written by Apps/Tasker/scripts/static-link.sh: $module linked statically.
libdir=$out/lib
Name: $module
Description: $module from $archive, linked into the shipped tasker
Version: $(pkg-config --modversion "$module")
Libs: -L\${libdir} -l$lib
Cflags: $cflags
PC
done

cxx=$(${CC:-clang} -print-file-name=libstdc++.a)
[[ -f $cxx ]] || { echo "static-link.sh: no libstdc++.a (install libstdc++-12-dev)" >&2; exit 1; }
ln -sfn "$cxx" "$out/lib/libstdc++.a"
