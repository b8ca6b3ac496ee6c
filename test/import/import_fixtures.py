"""Imports every committed fixture model with strata-import and checks that
each verifies: exit 0 and a @main function in the output.
Usage: python import_fixtures.py MODELS_DIR STRATA_IMPORT
Prints one line per model and a closing "N passed, M failed"."""
import glob
import os
import subprocess
import sys


def main():
    models_dir, tool = sys.argv[1], sys.argv[2]
    models = sorted(glob.glob(os.path.join(models_dir, "**", "*.onnx"),
                              recursive=True))
    passed = failed = 0
    for model in models:
        rel = os.path.relpath(model, models_dir)
        proc = subprocess.run([tool, model, "-o", "-"], capture_output=True,
                              text=True, timeout=300)
        if proc.returncode == 0 and "func.func @main" in proc.stdout:
            passed += 1
            print("PASS", rel)
        else:
            failed += 1
            print("FAIL", rel, proc.stderr.strip().splitlines()[:3])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not models else 0


if __name__ == "__main__":
    sys.exit(main())
