#!/usr/bin/env bash
#===- scripts/fuzz-inputs.sh - fuzz the inputs of compiled fixtures -------===#
# SPDX-License-Identifier: Apache-2.0
# scripts/fuzz-inputs.sh [SECONDS [LIBFUZZER_FLAGS...]]   (SECONDS: 600)
# Builds strata-input-fuzzer in build-fuzz/ (clang-22, ASan+UBSan, libFuzzer;
# only the runtime and the fuzzer are compiled), compiles each fixture with
# the release compiler ($STRATA_BIN_DIR, default build/bin, built there if
# missing) and fuzzes the fixtures' input contents and shapes in turn,
# SECONDS split between them, each over a working corpus seeded from
# test/fuzz/input-corpus/<fixture>/. Crash, leak and timeout inputs land in
# build-fuzz/input-crashes/<fixture>-*; the log is build-fuzz/input-fuzz.log.
# Exits non-zero when the fuzzer found something in this run. Extra flags go
# to libFuzzer, e.g. to keep going past known crashes:
#   scripts/fuzz-inputs.sh 600 -fork=1 -ignore_crashes=1 -ignore_timeouts=1
# STRATA_FUZZ_FIXTURES overrides the fixture list; the fuzzer's other
# STRATA_FUZZ_* variables pass through (docs/testing.md).
set -euo pipefail
# shellcheck source=scripts/fuzz-common.sh
source "$(dirname "${BASH_SOURCE[0]}")/fuzz-common.sh"

SECONDS_TO_RUN="${1:-600}"
shift $(( $# > 0 ? 1 : 0 ))
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRATA_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}"
BIN_DIR="${STRATA_BIN_DIR:-$ROOT/build/bin}"
MLIR_DIR="${MLIR_DIR:-/usr/lib/llvm-22/lib/cmake/mlir}"
JOBS="${STRATA_JOBS:-$(nproc)}"
# A GPT-2 decode step with past K/V and a BERT encoder with token_type_ids:
# token ids, positions, masks and a cache whose length is an input dim.
read -r -a FIXTURES <<< "${STRATA_FUZZ_FIXTURES:-gpt2_op17_past bert_op17}"
# Small maxima keep one run at a few milliseconds; 128 is the fixtures'
# position table, so longer sequences reach out-of-range positions only
# through inconsistent dims (past + sequence != total), as they should.
COMPILE_FLAGS=(--max-batch 4 --max-seq 128)

echo "==> configure ($BUILD)"
CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$ROOT" -B "$BUILD" \
  -DMLIR_DIR="$MLIR_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DSTRATA_BUILD_FUZZERS=ON -DSTRATA_BUILD_TESTS=OFF \
  -DSTRATA_SANITIZE=address,undefined >/dev/null
echo "==> build strata-input-fuzzer"
ninja -C "$BUILD" -j "$JOBS" strata-input-fuzzer

if [ ! -x "$BIN_DIR/strata-compile" ]; then
  if [ -n "${STRATA_BIN_DIR:-}" ]; then
    echo "error: $BIN_DIR/strata-compile not found" >&2
    exit 2
  fi
  echo "==> build strata-compile ($ROOT/build)"
  cmake -G Ninja -S "$ROOT" -B "$ROOT/build" -DMLIR_DIR="$MLIR_DIR" >/dev/null
  ninja -C "$ROOT/build" -j "$JOBS" strata-compile
fi

ARTIFACTS="$BUILD/input-artifacts"
CRASHES="$BUILD/input-crashes"
LOG="$BUILD/input-fuzz.log"
mkdir -p "$ARTIFACTS" "$CRASHES"
: > "$LOG"
# Artifacts of earlier runs stay; only newer ones count as this run's.
MARKER="$BUILD/.input-fuzz-start"
touch "$MARKER"

per_fixture=$(( SECONDS_TO_RUN / ${#FIXTURES[@]} ))
(( per_fixture > 0 )) || per_fixture=1
status=0
summary=()
for fixture in "${FIXTURES[@]}"; do
  model="$ROOT/test/models/fixtures/$fixture/model.onnx"
  artifact="$ARTIFACTS/$fixture.strata"
  echo "==> compile $fixture"
  "$BIN_DIR/strata-compile" "$model" -o "$artifact" --quiet "${COMPILE_FLAGS[@]}"

  # The working corpus grows as the fuzzer finds new coverage; the committed
  # seeds are only read.
  corpus="$BUILD/input-corpus/$fixture"
  seeds="$ROOT/test/fuzz/input-corpus/$fixture"
  mkdir -p "$corpus"
  dirs=("$corpus")
  [ -d "$seeds" ] && dirs+=("$seeds")
  part="$BUILD/input-fuzz-$fixture.log"
  echo "==> fuzz $fixture for ${per_fixture} s (log: $LOG)"
  set +e
  STRATA_FUZZ_ARTIFACT="$artifact" \
  ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
  UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  "$BUILD/bin/strata-input-fuzzer" \
    -max_total_time="$per_fixture" -max_len=4096 -timeout=10 \
    -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix="$CRASHES/$fixture-" "$@" "${dirs[@]}" \
    2>&1 | tee "$part"
  rc=${PIPESTATUS[0]}
  set -e
  fuzz_result "$fixture" "$part" "$rc"
done

echo "==> final stats"
printf '  %s\n' "${summary[@]}"
echo "artifacts: $CRASHES/"
ls -l "$CRASHES/"
exit "$status"
