#!/usr/bin/env bash
# Build and run one consumer project against zarrxt as a user would get it (meson test suite
# `consumers`, see tests/consumers/meson.build), unoptimised to keep it quick:
#   cmake       `meson install` into a staging directory, then find_package(zarrxt CONFIG) from it
#   pkgconfig   `meson install` into a staging directory, then dependency('zarrxt') through pkg-config
#   subproject  the source tree as subprojects/zarrxt of a meson project
# usage: run.sh KIND SOURCE_ROOT BUILD_ROOT VERSION PREFIX LIBDIR
set -euo pipefail
kind="$1" src="$2" build="$3" version="$4" prefix="$5" libdir="$6"
# meson test points LD_LIBRARY_PATH at the build tree; a consumer must find the staged libraries.
unset LD_LIBRARY_PATH
work="$(mktemp -d "${TMPDIR:-/tmp}/zarrxt-consumer-$kind-XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The project is copied out of the source tree so that nothing is written into it.
cp -r "$src/tests/consumers/$kind" "$work/project"
cp "$src/tests/consumers/consumer.cpp" "$src/tests/consumers/consumer_c.c" "$work/project/"

stage() {
  meson install -C "$build" --no-rebuild --quiet --destdir "$work/stage" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; return 1; }
  staged="$work/stage$prefix"
  for f in "$staged/$libdir/cmake/zarrxt/zarrxtConfig.cmake" "$staged/$libdir/cmake/zarrxt/zarrxtConfigVersion.cmake" \
           "$staged/$libdir/pkgconfig/zarrxt.pc" "$staged/$libdir/pkgconfig/zarrxt-compiled.pc" "$staged/$libdir/libzarrxt_compiled.a" \
           "$staged/include/zarrxt/zarrxt.hpp" "$staged/include/zarrxt.h" "$staged/$libdir/pkgconfig/zarrxt-c.pc" \
           "$staged/$libdir/libzarrxt_c.a" "$staged/$libdir/libzarrxt_c.so"; do
    [ -f "$f" ] || { echo "meson install did not install ${f#"$work/stage"}"; return 1; }
  done
}

# Runs a built consumer and checks it reports the expected version.
check_run() {
  local out
  out="$("$1")" || { echo "$out"; echo "$1 failed"; return 1; }
  echo "$out"
  grep -qx "zarrxt $version (build system: $version)" <<<"$out" || { echo "$1: wrong version line"; return 1; }
}

case "$kind" in
cmake)
  stage
  cmake -S "$work/project" -B "$work/b" -G Ninja -DCMAKE_PREFIX_PATH="$staged" -DEXPECT_VERSION="$version"
  # The package found must be the staged one, not some other installed copy.
  grep -q "^zarrxt_DIR:PATH=$staged/" "$work/b/CMakeCache.txt" ||
    { echo "CMake found zarrxt elsewhere: $(grep '^zarrxt_DIR' "$work/b/CMakeCache.txt")"; exit 1; }
  cmake --build "$work/b"
  check_run "$work/b/consumer"
  check_run "$work/b/consumer_compiled"
  check_run "$work/b/consumer_c"
  check_run "$work/b/consumer_c_static"
  # The shared C program runs on the staged library, not on an installed copy.
  # (ldd's output is kept first: grep -q stopping early would make ldd fail under pipefail.)
  libs="$(ldd "$work/b/consumer_c")"
  grep -q "$staged/$libdir/libzarrxt_c.so" <<<"$libs" ||
    { echo "consumer_c does not load the staged libzarrxt_c: $libs"; exit 1; }
  ;;
pkgconfig)
  stage
  # The .pc file names the final prefix; the sysroot variable maps it into the staging directory.
  export PKG_CONFIG_PATH="$staged/$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$work/stage"
  got="$(pkg-config --modversion zarrxt)"
  [ "$got" = "$version" ] || { echo "pkg-config says zarrxt $got, meson says $version"; exit 1; }
  pkg-config --cflags zarrxt | grep -q -- "-I$staged/include" ||
    { echo "pkg-config --cflags zarrxt does not point into the staged tree: $(pkg-config --cflags zarrxt)"; exit 1; }
  # zarrxt-compiled.pc: the valve's define on top of zarrxt.pc, and the staged archive.
  [ "$(pkg-config --modversion zarrxt-compiled)" = "$version" ] || { echo "zarrxt-compiled.pc has another version"; exit 1; }
  pkg-config --cflags zarrxt-compiled | grep -q -- "-DZARRXT_SEPARATE_COMPILATION" ||
    { echo "pkg-config --cflags zarrxt-compiled lacks the valve: $(pkg-config --cflags zarrxt-compiled)"; exit 1; }
  pkg-config --libs zarrxt-compiled | grep -q -- "-L$staged/$libdir .*-lzarrxt_compiled" ||
    { echo "pkg-config --libs zarrxt-compiled: $(pkg-config --libs zarrxt-compiled)"; exit 1; }
  meson setup "$work/b" "$work/project" --buildtype=plain -Dexpect_version="$version"
  ninja -C "$work/b"
  check_run "$work/b/consumer"
  LD_LIBRARY_PATH="$staged/$libdir" check_run "$work/b/consumer_c"
  # The static C library as docs/c-api.md links it: zarrxt's archives static, the system libraries
  # shared (pkg-config --static lists them).
  cc -std=c99 -Wall -Wextra -Werror -DZARRXT_EXPECTED_VERSION="\"$version\"" $(pkg-config --cflags zarrxt-c) \
    "$work/project/consumer_c.c" -o "$work/b/consumer_c_static" \
    -Wl,-Bstatic $(pkg-config --libs-only-L zarrxt-c) -lzarrxt_c -lzarrxt_compiled -Wl,-Bdynamic \
    $(pkg-config --static --libs zarrxt-c | sed 's/ -lzarrxt_c / /; s/ -lzarrxt_compiled / /')
  libs="$(ldd "$work/b/consumer_c_static")"
  if grep -q libzarrxt_c <<<"$libs"; then echo "consumer_c_static loads libzarrxt_c.so"; exit 1; fi
  check_run "$work/b/consumer_c_static"
  ;;
subproject)
  mkdir -p "$work/project/subprojects"
  ln -s "$src" "$work/project/subprojects/zarrxt"
  meson setup "$work/b" "$work/project" --buildtype=plain -Dexpect_version="$version"
  ninja -C "$work/b" consumer consumer_c
  check_run "$work/b/consumer"
  check_run "$work/b/consumer_c"
  ;;
*)
  echo "unknown consumer kind $kind"
  exit 2
  ;;
esac
echo "consumer $kind: ok"
