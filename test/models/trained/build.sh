#!/usr/bin/env bash
#===- test/models/trained/build.sh - corpus -> training -> ONNX -> references -===#
# SPDX-License-Identifier: Apache-2.0
# The whole recipe of test/models/fixtures/bytegpt and of its speculative
# decoding draft bytegpt_draft (2 layers, hidden 128: 0.46M parameters on
# the same corpus and bytes), in order. Needs the Debian
# packages diatheke + sword-text-web (corpus), python3-torch, and the venv.
# Training takes <= 15 minutes on 2 cores (the draft <= 10 more) and is
# seeded but not bit-exact.
#
# Usage: test/models/trained/build.sh [WORK_DIR]   (default ~/.cache/strata/bytegpt)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
VPY="${STRATA_VENV:-$ROOT/.venv}/bin/python"
WORK="${1:-${HOME}/.cache/strata/bytegpt}"
OUT="$HERE/../fixtures/bytegpt"

/usr/bin/python3 "$HERE/prepare_corpus.py" "$WORK/corpus"
/usr/bin/python3 "$HERE/train_bytegpt.py" "$WORK/corpus" "$WORK"
mkdir -p "$OUT"
/usr/bin/python3 "$HERE/export_bytegpt.py" "$WORK/bytegpt.pt" "$OUT"
cp "$WORK/corpus/heldout.txt" "$OUT/heldout.txt"
"$VPY" "$HERE/eval_bpb.py" "$OUT" --json "$OUT/bpb.json"
"$VPY" "$ROOT/test/models/make_references.py" --only bytegpt

/usr/bin/python3 "$HERE/train_bytegpt.py" "$WORK/corpus" "$WORK/draft" \
  --layers 2 --hidden 128 --heads 4 --steps 5000 --budget-min 10
/usr/bin/python3 "$HERE/export_bytegpt.py" "$WORK/draft/bytegpt.pt" \
  "$OUT/../bytegpt_draft" bytegpt_draft
"$VPY" "$ROOT/test/models/make_references.py" --only bytegpt_draft
