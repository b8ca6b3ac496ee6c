#!/usr/bin/env bash
#===- bench/run.sh - run the Strata vs onnxruntime benchmark ---------------===#
# SPDX-License-Identifier: Apache-2.0
# Runs bench/bench.py with the project virtualenv; arguments pass through
# (see bench/README.md). Default: GPT-2-small shape, threads 1,2, 7 rounds.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${STRATA_VENV:-$ROOT/.venv}/bin/python"
[ -x "$PY" ] || { echo "bench: $PY missing; run scripts/setup.sh first" >&2; exit 1; }
exec "$PY" "$ROOT/bench/bench.py" "$@"
