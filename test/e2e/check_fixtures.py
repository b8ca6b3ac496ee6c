#!/usr/bin/env python3
# ===- test/e2e/check_fixtures.py - compiled fixtures match onnxruntime -----===#
# Compiles every fixture model with strata-compile and runs each of its
# "outputs" reference cases, and each "greedy" case (token ids of greedy
# generation through strata-run generate, compared exactly), (test/models/fixtures/<name>/ref/<case>/) with
# strata-run, comparing every output with the onnxruntime reference saved
# there. fp32 tolerance: max|y - ref| <= 1e-4 * max(1, max|ref|), i.e. a few
# hundred ulps of accumulated rounding over the model's reductions, well
# below any real error (a wrong mask or scale moves outputs by >= 1e-2).
#
# Usage: check_fixtures.py MODELS_DIR BIN_DIR [--filter REGEX] [-v]
# Prints one line per case and closes with "N passed, M failed".
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

TOLERANCE = {"float32": 1e-4}


def compile_model(bin_dir, model, out, extra):
    cmd = [os.path.join(bin_dir, "strata-compile"), model, "-o", out, "--quiet"]
    cmd += extra
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return proc.returncode == 0, proc.stderr.strip()


def run_case(bin_dir, artifact, case_dir, spec, out_dir):
    cmd = [os.path.join(bin_dir, "strata-run"), artifact, "--output-dir",
           out_dir]
    for name in spec["inputs"]:
        cmd += ["--input", f"{name}={os.path.join(case_dir, name + '.npy')}"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        return False, proc.stderr.strip()
    worst = []
    for name in spec["outputs"]:
        ref = np.load(os.path.join(case_dir, name + ".npy"))
        path = os.path.join(out_dir, re.sub(r"[^A-Za-z0-9._-]", "_", name)
                            + ".npy")
        if not os.path.isfile(path):
            return False, f"missing output {name}"
        got = np.load(path)
        if got.shape != ref.shape:
            return False, f"{name}: shape {got.shape} != {ref.shape}"
        tol = TOLERANCE.get(str(ref.dtype), 0.0) * max(1.0, float(np.abs(ref).max()))
        err = float(np.abs(got.astype(np.float64) - ref.astype(np.float64)).max())
        if not err <= tol:  # NaN fails too
            return False, f"{name}: max abs error {err:.3g} > {tol:.3g}"
        worst.append(f"{name} {err:.2g}")
    return True, ", ".join(worst)


def check_greedy(bin_dir, fixture_dir, case_dir, spec, tmp):
    """Greedy generation in-process (strata-run generate over the prefill and
    decode entries every decoder export gets), all prompts in one batch,
    reproduces the onnxruntime token ids exactly, from either export."""
    prompt = np.load(os.path.join(case_dir, "prompt_ids.npy")).astype(np.int64)
    want = np.load(os.path.join(case_dir, "generated_ids.npy"))
    prompts = os.path.join(tmp, "greedy_prompts.txt")
    with open(prompts, "w") as f:
        for row in prompt:
            f.write(",".join(str(int(t)) for t in row) + "\n")
    prefill = os.path.join(fixture_dir, spec["prefill"])
    decode = os.path.join(fixture_dir, spec["decode"])
    # Each export alone, and the two together (the pair form).
    for role, model in (("prefill", prefill), ("decode", decode),
                        ("pair", prefill)):
        out = os.path.join(tmp, os.path.basename(fixture_dir) + "-" + role +
                           "-gen.strata")
        extra = ["--max-batch", str(len(prompt))]
        if role == "pair":  # the with-past export second
            extra.insert(0, decode)
        ok, msg = compile_model(bin_dir, model, out, extra)
        if not ok:
            return False, f"compile {role}: {msg}"
        proc = subprocess.run(
            [os.path.join(bin_dir, "strata-run"), "generate", out,
             "--batch-prompt-ids", prompts, "--max-new-tokens",
             str(want.shape[1]), "--json"],
            capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return False, f"generate ({role}): {proc.stderr.strip()}"
        got = np.array([json.loads(line)["tokens"]
                        for line in proc.stdout.splitlines()])
        if got.shape != want.shape or not (got == want).all():
            bad = int((got != want).any(axis=1).sum()) \
                if got.shape == want.shape else len(want)
            return False, f"{role}: {bad} of {want.shape[0]} " \
                          "generations differ"
    return True, ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--filter", default="")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-e2e-") as tmp:
        for meta in sorted(glob.glob(os.path.join(a.models_dir, "fixtures",
                                                  "*", "ref", "*",
                                                  "case.json"))):
            case_dir = os.path.dirname(meta)
            fixture_dir = os.path.dirname(os.path.dirname(case_dir))
            label = os.path.relpath(case_dir, a.models_dir)
            if a.filter and not re.search(a.filter, label):
                continue
            spec = json.load(open(meta))
            if spec.get("kind") == "greedy":
                ok, msg = check_greedy(a.bin_dir, fixture_dir, case_dir, spec,
                                       tmp)
                passed += ok
                failed += not ok
                print(("PASS " if ok else "FAIL ") + label +
                      ("" if ok else f": {msg}"))
                continue
            if spec.get("kind") != "outputs":
                continue  # "split" cases are covered by the outputs cases
            model = os.path.join(fixture_dir, spec["model"])
            artifact = os.path.join(tmp, os.path.basename(fixture_dir) + "-" +
                                    spec["model"] + ".strata")
            if not os.path.exists(artifact):
                # main only: the generation entries have their own check
                # (check_generation.py).
                ok, msg = compile_model(a.bin_dir, model, artifact,
                                        ["--no-generation-entries"])
                if not ok:
                    failed += 1
                    print(f"FAIL {label}: compile: {msg.splitlines()[-1] if msg else ''}")
                    continue
            out_dir = tempfile.mkdtemp(dir=tmp)
            ok, msg = run_case(a.bin_dir, artifact, case_dir, spec, out_dir)
            if ok:
                passed += 1
                print(f"PASS {label}" + (f" ({msg})" if a.verbose else ""))
            else:
                failed += 1
                print(f"FAIL {label}: {msg.splitlines()[-1] if msg else ''}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
