#!/usr/bin/env python3
# ===- test/e2e/check_cuda_kernels.py - NVRTC + ptxas on emitted kernels ---===#
# SPDX-License-Identifier: Apache-2.0
# Every fixture's CUDA kernels (`strata-compile --emit cuda-ptx`), compiled
# by NVRTC to compute_80 PTX and assembled by `ptxas -arch=sm_90`: the
# check that runs without a GPU. By default a sample with one fixture of
# each family (CI); --all takes every fixture (docs/design/cuda.md records
# the result). Exits 77 (ctest: skipped) when NVRTC or ptxas is missing.
#
# Usage: check_cuda_kernels.py MODELS_DIR BIN_DIR [--all]
import os
import shutil
import subprocess
import sys
import tempfile
import time

SAMPLE = [
    "bert_op17", "gpt2_op17_past", "transformers_qwen2_op17_prefill",
    "opset23_llama_past", "vision_resnet_bn_op17", "vision_vit_op17",
    "vision_unet_op17", "vision_crnn_op17", "audio_whisper_op17",
]
SKIP = 77


def find_ptxas():
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 "/usr/local/cuda"):
        if home and os.path.exists(os.path.join(home, "bin", "ptxas")):
            return os.path.join(home, "bin", "ptxas")
    return shutil.which("ptxas")


def main():
    models, bin_dir = sys.argv[1], sys.argv[2]
    fixtures_dir = os.path.join(models, "fixtures")
    names = sorted(n for n in os.listdir(fixtures_dir)
                   if os.path.exists(os.path.join(fixtures_dir, n, "model.onnx")))
    if "--all" not in sys.argv[3:]:
        missing = [n for n in SAMPLE if n not in names]
        if missing:
            print("sample fixtures missing: %s" % ", ".join(missing))
            return 1
        names = SAMPLE
    ptxas = find_ptxas()
    if not ptxas:
        print("SKIP: ptxas not found (set CUDA_HOME to the CUDA toolkit)")
        return SKIP
    compile_tool = os.path.join(bin_dir, "strata-compile")
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            ptx = os.path.join(tmp, name + ".ptx")
            start = time.time()
            r = subprocess.run(
                [compile_tool, os.path.join(fixtures_dir, name, "model.onnx"),
                 "--emit", "cuda-ptx", "--cuda-targets", "compute_80",
                 "-o", ptx, "--quiet"], capture_output=True, text=True)
            if r.returncode != 0:
                if "libnvrtc.so) was not found" in r.stderr:
                    print("SKIP: " + r.stderr.strip().splitlines()[-1])
                    return SKIP
                print("FAIL %s: strata-compile: %s" % (name, r.stderr.strip()[-2000:]))
                failed += 1
                continue
            with open(ptx) as f:
                entries = f.read().count(".entry ")
            a = subprocess.run([ptxas, "-arch=sm_90", ptx, "-o", os.devnull],
                               capture_output=True, text=True)
            if a.returncode != 0:
                print("FAIL %s: ptxas: %s" % (name, a.stderr.strip()[-2000:]))
                failed += 1
                continue
            print("PASS %s: %d distinct kernels, NVRTC + ptxas sm_90 in %.1f s"
                  % (name, entries, time.time() - start), flush=True)
    print("%d passed, %d failed" % (len(names) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
