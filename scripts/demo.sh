#!/usr/bin/env bash
#===- scripts/demo.sh - set up, build, compile the trained model, generate -===#
# SPDX-License-Identifier: Apache-2.0
# 1. scripts/setup.sh (Debian packages + the pinned virtualenv)
# 2. builds strata-compile and strata-run
# 3. compiles the bundled trained byte-level GPT (test/models/fixtures/bytegpt,
#    4.9M parameters trained on the World English Bible) into two artifacts,
#    prefill and decode, sharing nothing but the model file
# 4. generates text greedily from a prompt through the runtime
# Usage: scripts/demo.sh [PROMPT] [STEPS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${STRATA_BUILD_DIR:-$ROOT/build}"
MLIR_DIR="${MLIR_DIR:-/usr/lib/llvm-22/lib/cmake/mlir}"
PROMPT="${1:-In the beginning God}"
STEPS="${2:-80}"
MODEL="$ROOT/test/models/fixtures/bytegpt"
OUT="$BUILD/demo"

echo "==> setup"
bash "$ROOT/scripts/setup.sh"
echo "==> build"
cmake -G Ninja -S "$ROOT" -B "$BUILD" -DMLIR_DIR="$MLIR_DIR" >/dev/null
ninja -C "$BUILD" strata-compile strata-run
mkdir -p "$OUT"
echo "==> compile $MODEL/{prefill,decode}.onnx"
"$BUILD/bin/strata-compile" "$MODEL/prefill.onnx" -o "$OUT/prefill.strata" --max-batch 1 --max-seq 256
"$BUILD/bin/strata-compile" "$MODEL/decode.onnx" -o "$OUT/decode.strata" --max-batch 1 --max-seq 256
echo "==> generate ($STEPS bytes, greedy)"
"$ROOT/.venv/bin/python" "$ROOT/scripts/generate.py" "$OUT/prefill.strata" \
  "$OUT/decode.strata" --prompt "$PROMPT" --steps "$STEPS" --bin-dir "$BUILD/bin"
