#!/usr/bin/env bash
#===- bench/setup-anchors.sh - the bench virtualenv for the anchors --------===#
# SPDX-License-Identifier: Apache-2.0
# onnxruntime-genai and its model builder's undeclared dependencies (torch,
# transformers, onnx_ir, tqdm), kept out of the test virtualenv: several GB.
# Usage: bench/setup-anchors.sh [VENV]   (default ~/.cache/strata/bench-venv)
set -euo pipefail
VENV="${1:-${STRATA_BENCH_VENV:-$HOME/.cache/strata/bench-venv}}"
if [ ! -x "$VENV/bin/python" ]; then
  /usr/bin/python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet -r "$(dirname "$0")/requirements-anchors.txt"
echo "$VENV"
