#!/usr/bin/env bash
# Installs the Debian packages uringsim needs (only those missing) and configures + builds it in build/.
# Idempotent: when everything is installed and built it only re-runs the incremental build.
set -euo pipefail
cd "$(dirname "$0")"
PKGS=(cmake g++ make pkg-config libsimgrid-dev libboost-graph-dev libboost-math-dev libboost-dev
      nlohmann-json3-dev catch2 libcli11-dev libfmt-dev parallel
      gnuplot-nox chromium graphviz liburing-dev fio zlib1g-dev)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
BUILD_TYPE=${BUILD_TYPE:-Release}
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE="$BUILD_TYPE" >/dev/null
fi
cmake --build build -j"$(nproc)"
