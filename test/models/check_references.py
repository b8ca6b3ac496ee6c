#!/usr/bin/env python3
# ===- test/models/check_references.py - onnxruntime reproduces the .npy -----===#
# Re-runs every reference case under MODELS_DIR with onnxruntime and compares
# with the saved .npy files: once with graph optimizations off and once with
# all of them on (so the tolerance is known to hold across kernel choices).
# Exits non-zero on any mismatch; the last line reads "N passed, M failed".
#
# Usage: .venv/bin/python test/models/check_references.py MODELS_DIR [-v]
import argparse
import os
import sys

import refs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    cases = refs.find_cases(a.models_dir)
    if not cases:
        print("error: no reference cases under %s" % a.models_dir, file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    passed = failed = 0
    for case in cases:
        rel = os.path.relpath(case, a.models_dir)
        for level in ("disable", "all"):
            try:
                ok, msg = refs.run_case(case, level)
            except Exception as e:  # a broken model is a failure, not a crash
                ok, msg = False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0])
            if ok:
                passed += 1
            else:
                failed += 1
            if a.verbose or not ok:
                print("%s %s [opt=%s]: %s" % ("PASS" if ok else "FAIL", rel, level, msg))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
