#!/usr/bin/env bash
# Installs collie into a temporary prefix, moves the prefix elsewhere (the installed files
# must be relocatable), then builds examples/cg.c against it both ways — pkg-config and
# CMake's find_package(collie) — and runs each on 3 ranks with the installed collie-run.
# Also: every installed tool answers --version with the version pkg-config and the CMake
# package report, with no LD_LIBRARY_PATH.
# usage: test_install.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

cmake --install "$build" --prefix "$tmp/staged" >/dev/null
mv "$tmp/staged" "$tmp/prefix"          # relocated: nothing may point at the old path
pfx=$tmp/prefix
! grep -rl "$tmp/staged" "$pfx" >/dev/null || fail "installed files name the install-time prefix"

libdir=$(cd "$pfx" && dirname "$(find . -name collie.pc | head -1)")
libdir=${libdir%/pkgconfig}
export PKG_CONFIG_PATH=$pfx/$libdir/pkgconfig
version=$(pkg-config --modversion collie)
header=$(sed -n 's/^#define COLLIE_VERSION_STRING "\(.*\)"/\1/p' "$pfx/include/collie.h")
[ "$version" = "$header" ] || fail "collie.pc says $version, collie.h says $header"
for tool in collie-run collie-bench collie-sim collie-tune; do
  out=$(env -u LD_LIBRARY_PATH "$pfx/bin/$tool" --version)
  [ "$out" = "$tool (collie) $version" ] || fail "$tool --version printed '$out'"
done
echo "installed tools report version $version"

# pkg-config build (shared library, found at run time through LD_LIBRARY_PATH).
cc -O2 "$src/examples/cg.c" -o "$tmp/cg_pc" $(pkg-config --cflags --libs collie) -lm
LD_LIBRARY_PATH=$pfx/$libdir "$pfx/bin/collie-run" -n 3 "$tmp/cg_pc" 3000 | tee "$tmp/pc.out"
grep -q "converged after" "$tmp/pc.out" || fail "cg built with pkg-config did not converge"
for f in "$pfx/$libdir"/pkgconfig/collie_mpi-*.pc; do
  [ -e "$f" ] || continue
  name=$(basename "$f" .pc)
  dir=$(pkg-config --variable=libdir "$name")
  [ -e "$dir/libcollie_mpi.so" ] || fail "$name.pc points at $dir, which has no libcollie_mpi.so"
  echo "$name.pc: $dir/libcollie_mpi.so"
done

# CMake package build (the executable carries the imported target's library path).
cmake -S "$src/examples" -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$pfx" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/ex" >/dev/null
env -u LD_LIBRARY_PATH "$pfx/bin/collie-run" -n 3 "$tmp/ex/cg" 3000 | tee "$tmp/cmake.out"
grep -q "converged after" "$tmp/cmake.out" || fail "cg built with find_package did not converge"
cmp -s "$tmp/pc.out" "$tmp/cmake.out" || fail "the two builds printed different results"
echo "passed: install, relocation, pkg-config and find_package builds"
