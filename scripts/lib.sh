# shellcheck shell=bash
# Shared set-up for scripts/demo, scripts/test, scripts/bench and scripts/fuzz: install what is
# missing (as root, from Debian's archive and npm), then configure and build with meson.

ZX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZX_BUILD="${ZX_BUILD:-$ZX_ROOT/build}"

zx_log() { printf '[zarrxt] %s\n' "$*" >&2; }

# Debian packages needed to build the library, the tool, the examples and the tests.
ZX_BUILD_PKGS=(g++ meson ninja-build pkg-config xtensor-dev xtl-dev nlohmann-json3-dev zlib1g-dev
  libzstd-dev doctest-dev libdeflate-dev libblosc-dev python3)
# Interoperability peers: Debian's zarr-python 2.13 (v2) and Node.js for zarrita (v3).
ZX_PEER_PKGS=(python3-zarr python3-numcodecs)

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

# zarrita (the v3 peer) into a build-local folder; pinned so results do not drift.
ZX_ZARRITA_VERSION="0.7.5"
zx_install_zarrita() {
  local dir="$ZX_BUILD/npm"
  if [ -f "$dir/node_modules/zarrita/package.json" ] &&
     grep -q "\"version\": \"$ZX_ZARRITA_VERSION\"" "$dir/node_modules/zarrita/package.json"; then
    return 0
  fi
  zx_install_node || return 1
  mkdir -p "$dir"
  zx_log "installing zarrita@$ZX_ZARRITA_VERSION into $dir"
  (cd "$dir" && [ -f package.json ] || echo '{"name":"zarrxt-peers","private":true,"type":"module"}' > package.json
   npm install --no-audit --no-fund --loglevel=error "zarrita@$ZX_ZARRITA_VERSION" >&2)
}

# Configure (once) and build. Extra arguments go to `meson setup`.
zx_build() {
  if [ ! -f "$ZX_BUILD/build.ninja" ]; then
    meson setup "$ZX_BUILD" "$ZX_ROOT" --buildtype=release "$@" >&2
  fi
  ninja -C "$ZX_BUILD" >&2
}
