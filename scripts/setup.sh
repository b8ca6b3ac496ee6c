#!/usr/bin/env bash
#===- scripts/setup.sh - install everything Strata needs -------------------===#
# SPDX-License-Identifier: Apache-2.0
# Idempotent: installs missing Debian packages and the project virtualenv with
# the pinned pip packages from scripts/requirements.txt. Safe to run twice.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${STRATA_VENV:-$ROOT/.venv}"

log() { printf '[setup] %s\n' "$*"; }
die() { printf '[setup] error: %s\n' "$*" >&2; exit 1; }

APT_PACKAGES=(
  # LLVM/MLIR 22 (bookworm-security) linked as shared libraries; lit/FileCheck.
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # clang + compiler-rt for libFuzzer and the sanitizer build; lld for links
  # and for in-process linking of generated code.
  clang-22 libclang-rt-22-dev lld-22 liblld-22-dev
  # ONNX protobuf classes (ONNX 1.12) and the node test data (opset <= 17).
  libonnx-dev protobuf-compiler libprotobuf-dev libonnx-testdata
  # Build tools and tests.
  cmake ninja-build ccache g++ libgtest-dev libgmock-dev
  # Commodity libraries; cpp-httplib serves HTTP in strata-serve.
  nlohmann-json3-dev libxxhash-dev zlib1g-dev libzstd-dev libcpp-httplib-dev
  # SentencePiece for tokenizers/ (optional there); spm_train for its tests.
  libsentencepiece-dev sentencepiece
  # Open MPI for libstrata_mpi, the transport of tensor-parallel ranks
  # (optional there), and mpirun for its tests and strata-run's launch.
  openmpi-bin libopenmpi-dev
  # Fixture generators run with Debian's /usr/bin/python3; python3-dev builds
  # the Python package's extension modules.
  python3-onnx python3-torch python3-venv python3-numpy python3-dev
  # Debian's torch links the reference BLAS unless an optimized one is
  # installed (2.7 vs ~44 GFLOP/s); the Bible text trains the demo model.
  libopenblas0-openmp sword-text-web diatheke
  # Misc tools used by scripts.
  xz-utils
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done

if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  if ! $SUDO apt-get update -q; then
    die "apt-get update failed: cannot reach Debian's package registry"
  fi
  if ! DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q \
      --no-install-recommends "${missing[@]}"; then
    die "apt-get install failed for: ${missing[*]} (is bookworm-security enabled?)"
  fi
else
  log "Debian packages: all present"
fi

# Project virtualenv for everything tests and benchmarks run. Built on
# Debian's interpreter so it does not depend on whatever python is on PATH.
REQ="$ROOT/scripts/requirements.txt"
STAMP="$VENV/.strata-requirements"
if [ ! -x "$VENV/bin/python" ]; then
  log "creating virtualenv $VENV"
  /usr/bin/python3 -m venv "$VENV" || die "could not create virtualenv at $VENV"
fi
if ! cmp -s "$REQ" "$STAMP"; then
  log "installing pinned pip packages from scripts/requirements.txt"
  if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ"; then
    die "pip install failed: cannot reach PyPI or a pinned version is missing"
  fi
  cp "$REQ" "$STAMP"
else
  log "virtualenv: up to date"
fi
log "done"
