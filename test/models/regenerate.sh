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
# Current torch + transformers (+ onnxscript, for the default exporter's
# fixtures) for gen_transformers_fixtures.py; without them its committed
# fixtures are kept (copied in --check mode).
XPY="${STRATA_EXPORT_VENV:-$HOME/.cache/strata/export-venv}/bin/python"
HAVE_XPY=0
if [ -x "$XPY" ] && "$XPY" -c "import torch, transformers, onnxscript" 2>/dev/null; then
  HAVE_XPY=1
fi
OUT="$HERE/fixtures"
if [ "${1:-}" = "--check" ]; then
  OUT="$(mktemp -d)"
  trap 'rm -rf "$OUT"' EXIT
  mkdir -p "$OUT/bytegpt"
  cp "$HERE/fixtures/bytegpt/"{prefill.onnx,decode.onnx,bytegpt.data,meta.json,heldout.txt,bpb.json} \
     "$OUT/bytegpt/" 2>/dev/null || true
  if [ "$HAVE_XPY" = 0 ]; then
    for d in "$HERE"/fixtures/transformers_*/; do
      mkdir -p "$OUT/$(basename "$d")"
      cp "$d"{model.onnx,meta.json} "$OUT/$(basename "$d")/"
    done
  fi
fi

"$TPY" "$HERE/gen_torch_fixtures.py" "$OUT"
"$VPY" "$HERE/gen_ort_optimized.py" "$OUT" 2>/dev/null
"$VPY" "$HERE/gen_helper_models.py" "$OUT"
if [ "$HAVE_XPY" = 1 ]; then
  "$XPY" "$HERE/gen_transformers_fixtures.py" "$OUT"
else
  echo "note: no torch + transformers + onnxscript at $XPY: transformers_* fixtures kept" >&2
fi
"$VPY" "$HERE/make_references.py" "$OUT"
"$TPY" "$HERE/gen_torch_fixtures.py" "$OUT" --verify
if [ "$HAVE_XPY" = 1 ]; then
  "$XPY" "$HERE/gen_transformers_fixtures.py" "$OUT" --verify
fi

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
