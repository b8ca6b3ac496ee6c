#!/usr/bin/env bash
#===- test/models/regenerate.sh - rebuild (or verify) the committed fixtures -===#
# SPDX-License-Identifier: Apache-2.0
# Regenerates every fixture under test/models/fixtures from its script and
# rewrites the onnxruntime references. With --check it regenerates into a
# temporary folder instead and fails unless every file is byte-identical to the
# committed one (the trained model's ONNX files are copied, not retrained: its
# training is seeded but not bit-reproducible; its references are regenerated).
#
# Usage: test/models/regenerate.sh [--check]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VPY="${STRATA_VENV:-$ROOT/.venv}/bin/python"
TPY=/usr/bin/python3
OUT="$HERE/fixtures"
if [ "${1:-}" = "--check" ]; then
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
  mkdir -p "$OUT/bytegpt"
  cp "$HERE/fixtures/bytegpt/"{prefill.onnx,decode.onnx,bytegpt.data,meta.json,heldout.txt,bpb.json} \
     "$OUT/bytegpt/" 2>/dev/null || true
fi

"$TPY" "$HERE/gen_torch_fixtures.py" "$OUT"
"$VPY" "$HERE/gen_ort_optimized.py" "$OUT" 2>/dev/null
"$VPY" "$HERE/gen_helper_models.py" "$OUT"
"$VPY" "$HERE/make_references.py" "$OUT"
"$TPY" "$HERE/gen_torch_fixtures.py" "$OUT" --verify

if [ "$OUT" != "$HERE/fixtures" ]; then
  bad=0
  while IFS= read -r f; do
    rel="${f#"$HERE/fixtures/"}"
    if ! cmp -s "$f" "$OUT/$rel"; then
      echo "differs: $rel"; bad=$((bad + 1))
    fi
  done < <(find "$HERE/fixtures" -type f | sort)
  n=$(find "$HERE/fixtures" -type f | wc -l)
  echo "$((n - bad)) passed, $bad failed"
  [ "$bad" -eq 0 ]
fi
