#!/usr/bin/env bash
#===- scripts/test.sh - set up, build and run every test -------------------===#
# SPDX-License-Identifier: Apache-2.0
# 1. scripts/setup.sh (apt + the pinned virtualenv; a no-op when present)
# 2. configure + build (Release, Ninja, ccache, lld-22)
# 3. ctest: the lit suite and every GoogleTest binary
# 4. an ASan+UBSan build of the unit tests, run through ctest -L unit, of
#    strata-import, run over the hostile-model corpus (lit), and of
#    strata-run, run over the hostile-input corpus; a ThreadSanitizer build
#    of the runtime tests; then the input fuzzer (libFuzzer, ASan+UBSan)
#    for STRATA_FUZZ_SECONDS (60) over two fixtures, the artifact loader
#    and .npy reader fuzzers for STRATA_FUZZ_LOADER_SECONDS (30) each, and
#    the importer fuzzer for STRATA_FUZZ_IMPORT_SECONDS (30)
# 3b. the Python package: `pip install .` into a fresh virtualenv, then its
#    pytest suite (test/python/, docs/python.md's tutorial included)
# Step 3 includes the runtime's installation test (examples.installed_runtime:
# examples/ built against `cmake --install --component runtime`) and the
# runtime-only configure without LLVM/MLIR (runtime.runtime_only_build).
# Exits non-zero on any failure. STRATA_SKIP_SANITIZE=1 skips step 4.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BUILD="${STRATA_BUILD_DIR:-$ROOT/build}"
ASAN_BUILD="${STRATA_ASAN_BUILD_DIR:-$ROOT/build-asan}"
TSAN_BUILD="${STRATA_TSAN_BUILD_DIR:-$ROOT/build-tsan}"
MLIR_DIR="${MLIR_DIR:-/usr/lib/llvm-22/lib/cmake/mlir}"
JOBS="${STRATA_JOBS:-$(nproc)}"
# Keep ccache's cache inside the user's cache dir; CI reuses it across runs
# on the same machine.
export CCACHE_DIR="${CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ccache}"
export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"

step() { printf '\n==> %s\n' "$*"; }

step "setup"
bash "$ROOT/scripts/setup.sh"

step "configure ($BUILD)"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DMLIR_DIR="$MLIR_DIR" >/dev/null

step "build"
start=$(date +%s)
ninja -C "$BUILD" -j "$JOBS"
echo "build took $(( $(date +%s) - start )) s"

step "ctest: lit + GoogleTest"
ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS"

step "python package: pip install . in a fresh virtualenv, pytest"
# A fresh virtualenv on Debian's interpreter that also sees its packages:
# the tutorial exports with Debian's torch (scripts/setup.sh), as a model
# engineer exports with theirs. pip builds in build-python/ beside $BUILD,
# so ccache serves the objects just compiled.
PY_VENV="${STRATA_PYTHON_VENV:-$ROOT/build-python-venv}"
rm -rf "$PY_VENV"
/usr/bin/python3 -m venv --system-site-packages "$PY_VENV"
"$PY_VENV/bin/python" -m pip install -q --disable-pip-version-check \
  pytest==8.3.4 onnxruntime==1.23.2
start=$(date +%s)
MLIR_DIR="$MLIR_DIR" "$PY_VENV/bin/python" -m pip install -q \
  --disable-pip-version-check "$ROOT"
echo "pip install . took $(( $(date +%s) - start )) s"
(cd "$ROOT/test/python" && "$PY_VENV/bin/python" -m pytest -q -p no:cacheprovider)
step "python package strata-runtime (no LLVM/MLIR): build, load and generate"
RT_VENV="${PY_VENV}-runtime"
rm -rf "$RT_VENV"
/usr/bin/python3 -m venv --system-site-packages "$RT_VENV"
"$RT_VENV/bin/python" -m pip install -q --disable-pip-version-check \
  "$ROOT/python/runtime"
"$RT_VENV/bin/python" "$ROOT/test/python/runtime_only_check.py" "$BUILD/bin"

if [ "${STRATA_SKIP_SANITIZE:-0}" != "1" ]; then
  step "sanitizers: ASan+UBSan unit tests ($ASAN_BUILD)"
  cmake -G Ninja -S "$ROOT" -B "$ASAN_BUILD" -DMLIR_DIR="$MLIR_DIR" \
    -DSTRATA_SANITIZE=address,undefined >/dev/null
  ninja -C "$ASAN_BUILD" -j "$JOBS" strata_unit_tests strata-import strata-run
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
  ctest --test-dir "$ASAN_BUILD" -L unit --output-on-failure -j "$JOBS"
  step "sanitizers: the hostile-model corpus through strata-import"
  /usr/lib/llvm-22/bin/lit -sv "$ASAN_BUILD/test" --filter 'import/hostile'
  step "sanitizers: the hostile-input corpus through strata-run"
  # Artifacts from the regular compiler, run by the sanitized runtime.
  "$ROOT/.venv/bin/python" "$ROOT/test/e2e/check_hostile_inputs.py" \
    "$ROOT/test/models" "$BUILD/bin" --run-bin "$ASAN_BUILD/bin"
  unset ASAN_OPTIONS UBSAN_OPTIONS
  step "sanitizers: ThreadSanitizer on the runtime tests ($TSAN_BUILD)"
  # Thread pool, sessions and concurrent runs; the runtime alone builds.
  cmake -G Ninja -S "$ROOT" -B "$TSAN_BUILD" -DMLIR_DIR="$MLIR_DIR" \
    -DSTRATA_SANITIZE=thread >/dev/null
  ninja -C "$TSAN_BUILD" -j "$JOBS" strata_runtime_tests strata_runtime_kernel_tests
  TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}" \
    "$TSAN_BUILD/bin/strata_runtime_tests" --gtest_brief=1
  TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}" \
    "$TSAN_BUILD/bin/strata_runtime_kernel_tests" --gtest_brief=1
  step "fuzzing: random input contents into compiled fixtures (bounded)"
  STRATA_BIN_DIR="$BUILD/bin" bash "$ROOT/scripts/fuzz-inputs.sh" "${STRATA_FUZZ_SECONDS:-60}"
  step "fuzzing: the artifact loader and the .npy reader (bounded)"
  bash "$ROOT/scripts/fuzz-loaders.sh" "${STRATA_FUZZ_LOADER_SECONDS:-30}"
  step "fuzzing: the ONNX importer (bounded)"
  STRATA_JOBS="$JOBS" bash "$ROOT/scripts/fuzz.sh" "${STRATA_FUZZ_IMPORT_SECONDS:-30}"
fi

step "all tests passed"
