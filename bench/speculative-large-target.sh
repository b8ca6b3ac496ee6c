#!/usr/bin/env bash
#===- bench/speculative-large-target.sh - speculation on a DRAM-bound target ===#
# SPDX-License-Identifier: Apache-2.0
# The trained fixture target (19.7 MB) decodes from the last-level cache, so
# a verify call of k tokens costs nearly k decode steps and drafting can
# hardly pay (docs/speculative.md). Real targets stream their weights from
# memory at every step. This trains one that must: 6 layers, hidden 512
# (19.1M parameters, 77 MB of fp32 weights, over twice a 32 MB L3) on the
# fixtures' corpus and bytes, with the recipe of the fixture target
# (test/models/trained/train_bytegpt.py, 40 minutes on 2 cores), and runs
# bench/speculative.py with it as the target and the committed 2-layer
# draft (test/models/fixtures/bytegpt_draft, same corpus) as the draft.
#
# Needs what test/models/trained/build.sh needs (diatheke, sword-text-web,
# python3-torch) and a built tree.
#
# Usage: bench/speculative-large-target.sh [--out FILE.json] [WORK_DIR]
#        (default WORK_DIR ~/.cache/strata/bytegpt; the trained checkpoint
#        is reused when present)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
TRAINED="$ROOT/test/models/trained"
VPY="${STRATA_VENV:-$ROOT/.venv}/bin/python"
OUT=""
if [[ "${1:-}" == "--out" ]]; then OUT="$2"; shift 2; fi
WORK="${1:-${HOME}/.cache/strata/bytegpt}"
LARGE="$WORK/large"

[[ -f "$WORK/corpus/train.txt" ]] ||
  /usr/bin/python3 "$TRAINED/prepare_corpus.py" "$WORK/corpus"
if [[ ! -f "$LARGE/bytegpt.pt" ]]; then
  /usr/bin/python3 "$TRAINED/train_bytegpt.py" "$WORK/corpus" "$LARGE" \
    --layers 6 --hidden 512 --heads 8 --lr 1e-3 --steps 100000 --budget-min 40
fi
if [[ ! -f "$LARGE/export/decode.onnx" ]]; then
  /usr/bin/python3 "$TRAINED/export_bytegpt.py" "$LARGE/bytegpt.pt" \
    "$LARGE/export" bytegpt_large
  cp "$WORK/corpus/heldout.txt" "$LARGE/export/heldout.txt"
  "$VPY" "$TRAINED/eval_bpb.py" "$LARGE/export" --json "$LARGE/export/bpb.json"
fi
"$VPY" "$HERE/speculative.py" --target-dir "$LARGE/export" ${OUT:+--out "$OUT"}
