#!/usr/bin/env bash
#===- scripts/measure-import.sh - import time and peak RSS of a big model --===#
# SPDX-License-Identifier: Apache-2.0
# Generates the GPT-2-small size-ladder model (124M parameters, weights as
# external data, cached outside the repo) if needed, then imports it three
# times with strata-import --no-print and reports wall time and peak RSS
# against the weight file size. Usage: scripts/measure-import.sh [SIZE]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SIZE="${1:-gpt2-small}"
CACHE="${STRATA_MODEL_CACHE:-$HOME/.cache/strata/models}"
MODEL="$CACHE/$SIZE/prefill.onnx"
[ -f "$MODEL" ] || /usr/bin/python3 "$ROOT/test/models/gen_size_ladder.py" "$SIZE"
IMPORT="${STRATA_BIN_DIR:-$ROOT/build/bin}/strata-import"
weights=$(stat -c %s "$CACHE/$SIZE/weights.data")
echo "model: $SIZE, weights: $((weights / 1048576)) MiB"
for i in 1 2 3; do
  /usr/bin/time -f "%e %M" -o /tmp/strata-measure.$$ "$IMPORT" "$MODEL" --no-print
  read -r secs kb < /tmp/strata-measure.$$
  awk -v s="$secs" -v kb="$kb" -v w="$weights" 'BEGIN {
    printf "run: %.2f s, peak RSS %d MiB (%.2fx the weights)\n", s, kb / 1024, kb * 1024 / w }'
done
rm -f /tmp/strata-measure.$$
