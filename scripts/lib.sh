# shellcheck shell=bash
# Shared set-up for scripts/demo, scripts/test, scripts/bench and scripts/fuzz: install what is
# missing (as root, from Debian's archive and npm), then configure and build with meson.

ZX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZX_BUILD="${ZX_BUILD:-$ZX_ROOT/build}"

zx_log() { printf '[zarrxt] %s\n' "$*" >&2; }

# Debian packages needed to build the library, the tool, the examples and the tests.
ZX_BUILD_PKGS=(g++ meson ninja-build pkg-config xtensor-dev xtl-dev nlohmann-json3-dev zlib1g-dev
  libzstd-dev doctest-dev libdeflate-dev libblosc-dev liblz4-dev libbz2-dev liblzma-dev libcurl4-openssl-dev libssl-dev libexpat1-dev python3)
# Interoperability peers: Debian's zarr-python 2.13 (v2) and Node.js for zarrita (v3); the wild
# writers GDAL 3.6 (its tools and python3-gdal) and NCZarr (netCDF-C 4.9.0's ncgen, nccopy, ncdump).
# nginx serves arrays on loopback to the remote-store tests (suite remote); openssl makes the
# certificate of its HTTPS + HTTP/2 server. The kerchunk suite reads reference files with
# fsspec 2022.11's ReferenceFileSystem (python3-fsspec) and takes a netCDF-4 variable's data offset
# from h5dump (hdf5-tools).
ZX_PEER_PKGS=(python3-zarr python3-numcodecs gdal-bin python3-gdal netcdf-bin nginx-light openssl
  python3-fsspec hdf5-tools)
# MPI for zarrxt/mpi.hpp and the `mpi` suite (scripts/test builds with -Dmpi=enabled).
ZX_MPI_PKGS=(libopenmpi-dev openmpi-bin)
# The consumer tests (suite consumers) build a program with CMake against the installed package;
# the C API's Fortran test (suite c_api) needs gfortran.
ZX_CONSUMER_PKGS=(cmake gfortran)

zx_missing_pkgs() {
  local p missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  printf '%s\n' "${missing[@]}"
}

zx_apt_updated=0
zx_install_pkgs() {
  local missing
  mapfile -t missing < <(zx_missing_pkgs "$@" | sed '/^$/d')
  [ "${#missing[@]}" -eq 0 ] && return 0
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      sudo="sudo -n"
    else
      zx_log "missing Debian packages: ${missing[*]}"
      zx_log "run this script as root (or install them) and try again"
      return 1
    fi
  fi
  zx_log "installing: ${missing[*]}"
  if [ "$zx_apt_updated" -eq 0 ]; then
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    zx_apt_updated=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

zx_install_node() {
  if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    return 0
  fi
  zx_install_pkgs nodejs npm
}

# The npm peers, pinned so results do not drift, into a build-local folder: zarrita (the v3 peer);
# for the S3 tests s3rver (the server), the AWS SDK's own SigV4 signer and SHA-256 (the proxy in
# front of s3rver that checks every signature, tests/support/s3_sigv4_proxy.mjs) and the AWS SDK's
# S3 client (an independent reader of what zarrxt writes).
ZX_ZARRITA_VERSION="0.7.5"
ZX_NPM_PEERS=("zarrita@$ZX_ZARRITA_VERSION" "s3rver@3.7.1" "@smithy/signature-v4@5.7.5" "@aws-crypto/sha256-js@5.2.0"
  "@aws-sdk/client-s3@3.1175.0")
zx_npm_peers_present() {
  local dir="$1" spec name version
  for spec in "${ZX_NPM_PEERS[@]}"; do
    name="${spec%@*}"
    version="${spec##*@}"
    [ -f "$dir/node_modules/$name/package.json" ] &&
      grep -q "\"version\": \"$version\"" "$dir/node_modules/$name/package.json" || return 1
  done
}
zx_install_zarrita() {
  local dir="$ZX_BUILD/npm"
  zx_npm_peers_present "$dir" && return 0
  zx_install_node || return 1
  mkdir -p "$dir"
  zx_log "installing ${ZX_NPM_PEERS[*]} into $dir"
  (cd "$dir" && [ -f package.json ] || echo '{"name":"zarrxt-peers","private":true,"type":"module"}' > package.json
   npm install --no-audit --no-fund --loglevel=error "${ZX_NPM_PEERS[@]}" >&2)
}

# Configure (once) and build. Extra arguments go to `meson setup`.
zx_build() {
  if [ ! -f "$ZX_BUILD/build.ninja" ]; then
    meson setup "$ZX_BUILD" "$ZX_ROOT" --buildtype=release "$@" >&2
  fi
  ninja -C "$ZX_BUILD" >&2
}

# Path of a clang++ (the versioned one first: Debian's clang-14 package always provides it).
zx_clang() {
  local c
  for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return 0
    fi
  done
  return 1
}

# The build trees of `scripts/test --all` (the release tree is $ZX_BUILD) and the packages they need.
ZX_SANITIZE_PKGS=(clang-14 libclang-rt-14-dev)
ZX_ASAN_BUILD="${ZX_ASAN_BUILD:-$ZX_ROOT/build-asan}"
ZX_TSAN_BUILD="${ZX_TSAN_BUILD:-$ZX_ROOT/build-tsan}"
ZX_CLANG_BUILD="${ZX_CLANG_BUILD:-$ZX_ROOT/build-clang}"
ZX_FUZZ_BUILD="${ZX_FUZZ_BUILD:-$ZX_ROOT/build-fuzz}"
ZX_FUZZ_TARGETS=(metadata_v3 metadata_v2 codecs shard_index array_read)

# zx_configure DIR [MESON SETUP ARGS...]: configure DIR once (a configured tree is kept as it is,
# except that -Dwerror=true is applied to it when asked for). CXX in the environment picks the compiler.
zx_configure() {
  local dir="$1"
  shift
  if [ ! -f "$dir/build.ninja" ]; then
    meson setup "$dir" "$ZX_ROOT" "$@" >&2 || return 1
  elif printf '%s\n' "$@" | grep -qx -- '-Dwerror=true'; then
    meson configure "$dir" -Dwerror=true >&2 || return 1
  fi
}

# zx_suite_targets DIR [--suite S | --no-suite S]...: the ninja targets the selected tests of the
# configured tree DIR need (their executables and declared dependencies), one per line.
zx_suite_targets() {
  python3 - "$@" <<'PY'
import json, os, sys
d, args = sys.argv[1], sys.argv[2:]
inc = [args[i + 1] for i in range(len(args) - 1) if args[i] == "--suite"]
exc = [args[i + 1] for i in range(len(args) - 1) if args[i] == "--no-suite"]
info = os.path.join(d, "meson-info")
targets = {t["id"]: t["filename"] for t in json.load(open(os.path.join(info, "intro-targets.json")))}
names = lambda t: {s.split(":")[-1] for s in t["suite"]}
out = set()
for t in json.load(open(os.path.join(info, "intro-tests.json"))):
    if (inc and not names(t) & set(inc)) or names(t) & set(exc):
        continue
    for dep in t.get("depends", []):
        out.update(os.path.relpath(f, d) for f in targets.get(dep, []))
for f in sorted(out):
    print(f)
PY
}

# zx_build_suites DIR [--suite S | --no-suite S]...: build what those tests need, nothing more.
zx_build_suites() {
  local dir="$1" targets
  # Regenerate first if meson.build changed: the target list comes from the tree's introspection.
  ninja -C "$dir" build.ninja >&2 || return 1
  mapfile -t targets < <(zx_suite_targets "$@" | sed '/^$/d')
  [ "${#targets[@]}" -eq 0 ] && return 0
  ninja -C "$dir" ${ZX_JOBS:+-j "$ZX_JOBS"} "${targets[@]}" >&2
}

# The ASan+UBSan tree: GCC at -O1, as ASan recommends. GCC leaves float-cast-overflow out of
# "undefined", so it is asked for by name. Debug information is line tables only (-g1): the
# sanitizers' stack traces still name file and line, and a unity test unit compiles in 0.6 of the
# time it takes with full -g (157 s against 255 s of CPU for test_threads, measured). The test
# programs are compiled at -O0 (-Dtest_optimization=0): the ASan build is the longest stage of
# --all and the test units most of it. Measured on a clean clone of 0d5f032, same machine: the
# build 771 s instead of 1019 s, the tests 103 s instead of 77 s (the library code they exercise is
# the compiled part, still at -O1). Extra arguments go to `meson setup`.
zx_configure_asan() {
  zx_configure "$ZX_ASAN_BUILD" -Doptimization=1 -Dtest_optimization=0 -Ddebug=false \
    -Db_sanitize=address,undefined -Db_lundef=false -Dsanitize_tests=true \
    "-Dcpp_args=-fsanitize=float-cast-overflow -g1" -Dcpp_link_args=-fsanitize=float-cast-overflow \
    -Dexamples=false -Dbench=false -Dmpi=disabled "$@"
}

# The ThreadSanitizer tree (GCC, -O1, line tables as above): the suites whose code runs on
# several threads.
zx_configure_tsan() {
  zx_configure "$ZX_TSAN_BUILD" -Doptimization=1 -Ddebug=false -Dcpp_args=-g1 -Db_sanitize=thread \
    -Db_lundef=false -Dsanitize_tests=true -Dexamples=false -Dbench=false -Dtools=false -Dmpi=disabled "$@"
}

# The libFuzzer targets in $ZX_FUZZ_BUILD with clang (ASan, UBSan and libFuzzer come from
# tests/fuzz/meson.build); nothing else is built there. Extra arguments go to `meson setup`.
zx_configure_fuzz() {
  local cxx
  cxx="$(zx_clang)" || { zx_log "clang++ is required for the fuzz targets (Debian package clang-14)"; return 1; }
  CXX="$cxx" zx_configure "$ZX_FUZZ_BUILD" --buildtype=debugoptimized -Ddebug=false -Dcpp_args=-g1 -Dfuzz=true \
    -Dtests=false -Dexamples=false -Dtools=false -Dbench=false "$@" || return 1
  if ! grep -q 'Checking if "libFuzzer" : links: YES' "$ZX_FUZZ_BUILD/meson-logs/meson-log.txt"; then
    zx_log "$ZX_FUZZ_BUILD has no libFuzzer targets (is libclang-rt-14-dev installed?)"
    return 1
  fi
}

# Configure (once) and build the fuzz targets (scripts/fuzz).
zx_build_fuzz() {
  zx_configure_fuzz "$@" && ninja -C "$ZX_FUZZ_BUILD" ${ZX_JOBS:+-j "$ZX_JOBS"} >&2
}

# True when LeakSanitizer can run here (it stops the process's threads with ptrace-like calls,
# which some containers deny; it then fails every program at exit).
zx_lsan_works() {
  local cxx dir rc
  cxx="${CXX:-c++}"
  dir="$(mktemp -d)"
  echo 'int main() { return 0; }' > "$dir/probe.cpp"
  "$cxx" -fsanitize=address "$dir/probe.cpp" -o "$dir/probe" >/dev/null 2>&1 &&
    ASAN_OPTIONS=detect_leaks=1 "$dir/probe" >/dev/null 2>&1
  rc=$?
  rm -rf "$dir"
  return $rc
}
