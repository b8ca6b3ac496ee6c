#!/usr/bin/env bash
#===- scripts/demo.sh - set up, build, compile the trained model, generate -===#
# SPDX-License-Identifier: Apache-2.0
# 1. scripts/setup.sh (Debian packages + the pinned virtualenv)
# 2. builds strata-compile and strata-run
# 3. compiles the bundled trained byte-level GPT (test/models/fixtures/bytegpt,
#    4.9M parameters trained on the World English Bible) into one artifact
#    with its prefill and decode entries over a KV cache
# 4. generates text from a prompt in-process (strata-run generate), with
#    sampling so that the text does not loop
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
echo "==> compile $MODEL/decode.onnx"
"$BUILD/bin/strata-compile" "$MODEL/decode.onnx" -o "$OUT/bytegpt.strata" --max-batch 4 --max-seq 256
echo "==> generate ($STEPS bytes, temperature 0.7, top-k 40)"
"$BUILD/bin/strata-run" generate "$OUT/bytegpt.strata" --prompt "$PROMPT" \
  --tokenizer byte --max-new-tokens "$STEPS" --temperature 0.7 --top-k 40 \
  --seed 1
