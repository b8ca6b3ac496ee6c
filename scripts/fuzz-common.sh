#===- scripts/fuzz-common.sh - what the fuzzing scripts share -------------===#
# SPDX-License-Identifier: Apache-2.0
# Sourced by fuzz-inputs.sh and fuzz-loaders.sh, which set LOG (the
# combined log), CRASHES (libFuzzer's artifact folder), MARKER (a file
# touched when the run started), status and the summary array.

# fuzz_result NAME PART RC: appends libFuzzer's output PART to LOG, sets
# status=1 if the fuzzer failed or left a new artifact NAME-* in CRASHES
# (with -fork=1 -ignore_crashes=1 libFuzzer exits 0 even after crashes),
# and adds one summary line (executions, rate, edges).
fuzz_result() {
  local name="$1" part="$2" rc="$3" found execs rate last secs cov
  { echo "=== $name"; cat "$part"; } >> "$LOG"
  found=$(find "$CRASHES" -type f -name "$name-*" -newer "$MARKER" | wc -l)
  if [ "$rc" -ne 0 ] || [ "$found" -gt 0 ]; then
    status=1
  fi
  # A plain run ends with stat:: lines, a fork run with a status line.
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$part" | tail -n 1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$part" | tail -n 1)
  if [ -z "$execs" ]; then
    last=$(grep -E '^#[0-9]+: cov:' "$part" | tail -n 1 || true)
    execs=$(sed -n 's/^#\([0-9]*\):.*/\1/p' <<< "$last")
    secs=$(sed -n 's/.* time: *\([0-9]*\)s.*/\1/p' <<< "$last")
    [ -n "$execs" ] && [ "${secs:-0}" -gt 0 ] && rate=$(( execs / secs ))
  fi
  cov=$(grep -E '^#[0-9]+.*cov: ' "$part" | tail -n 1 |
        sed -n 's/.*cov: \([0-9]*\).*/\1/p' || true)
  summary+=("$name: ${execs:-?} executions (${rate:-?}/s), ${cov:-?} edges,"\
" exit status $rc, $found new artifact(s)")
  rm -f "$part"
}
