#!/usr/bin/env python3
# ===- test/e2e/check_disaggregated.py - Prefill here, decode there ------===#
# Disaggregated prefill and decode end to end: a GPT-2-shaped decoder and a
# Llama-shaped one (grouped-query attention) compiled once, then
# `strata-run generate --disaggregate` as the 2 processes of one `mpirun`
# (rank 0 prefills and sends each prompt's KV cache, rank 1 decodes and
# prints) against the same command in one process, on a batch of 3
# prompts, greedy and sampled with a seed. Checked: the same tokens; per
# request the cache bytes sent are 2 (keys and values) x layers x kv_heads
# x head_dim x 4 (fp32) x prompt length; the TTFT split (queue, prefill,
# transfer, first decode step) is there and non-negative. Also: the clear
# refusals without an MPI job, with 3 ranks and with speculative decoding.
#
# Usage: check_disaggregated.py MODELS_DIR BIN_DIR (MODELS_DIR: test/models)
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_tensor_parallel import mpirun as run_ranks  # noqa: E402

FIXTURES = ["gpt2_op17_past", "transformers_llama8_op17_past"]
PROMPTS = ["1,2,3,4,5", "7,8,9,10,11,12,13,14,15,16,17", "20,21,22"]
MAX_NEW = 12
MODES = {"greedy": [],
         "sampled": ["--temperature", "0.9", "--top-k", "20", "--seed", "5"]}
SPLIT = ["queue_ms", "prefill_ms", "transfer_ms", "first_decode_ms",
         "ttft_ms"]


def mpirun(ranks, argv):
    return run_ranks(ranks, argv, timeout=300)


def compile_model(bin_dir, model, out):
    proc = subprocess.run(
        [os.path.join(bin_dir, "strata-compile"), model, "-o", out,
         "--quiet", "--max-batch", "4", "--max-seq", "64"],
        capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError("compile: " + proc.stderr.strip())


def requests(proc, what):
    if proc.returncode != 0:
        raise RuntimeError(what + ": " + (proc.stderr or proc.stdout).strip())
    lines = [json.loads(line) for line in proc.stdout.splitlines()
             if line.startswith("{")]
    return [line for line in lines if "tokens" in line]


def check(bin_dir, models_dir, fixture, tmp):
    d = os.path.join(models_dir, "fixtures", fixture)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    artifact = os.path.join(tmp, fixture + ".strata")
    compile_model(bin_dir, os.path.join(d, "model.onnx"), artifact)
    prompts = os.path.join(tmp, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("\n".join(PROMPTS) + "\n")
    per_token = (2 * meta["layers"] * (meta["kv_heads"] or meta["heads"]) *
                 meta["head_dim"] * 4)
    problems = []
    for mode, flags in MODES.items():
        argv = [os.path.join(bin_dir, "strata-run"), "generate", artifact,
                "--batch-prompt-ids", prompts, "--max-new-tokens",
                str(MAX_NEW), "--threads", "1", "--json"] + flags
        alone = requests(subprocess.run(argv, capture_output=True, text=True,
                                        timeout=300), mode + " colocated")
        split = requests(mpirun(2, argv + ["--disaggregate"]),
                         mode + " disaggregated")
        if [r["tokens"] for r in split] != [r["tokens"] for r in alone]:
            problems.append(f"{mode}: disaggregated tokens "
                            f"{[r['tokens'] for r in split]} != colocated "
                            f"{[r['tokens'] for r in alone]}")
            continue
        for i, r in enumerate(split):
            length = len(PROMPTS[i].split(","))
            if r.get("kv_bytes") != per_token * length:
                problems.append(f"{mode} prompt {i}: {r.get('kv_bytes')} KV "
                                f"bytes, expected {per_token * length}")
            for key in SPLIT:
                value = r.get(key)
                if not isinstance(value, (int, float)) or value < 0:
                    problems.append(f"{mode} prompt {i}: {key} is {value}")
    return problems


def refusals(bin_dir, tmp):
    """The clear errors of what --disaggregate cannot do."""
    artifact = os.path.join(tmp, FIXTURES[0] + ".strata")
    argv = [os.path.join(bin_dir, "strata-run"), "generate", artifact,
            "--prompt-ids", "1,2,3", "--disaggregate"]
    cases = [
        ("one process", subprocess.run(argv, capture_output=True, text=True,
                                       timeout=120),
         "this process has no communicator"),
        ("3 ranks", mpirun(3, argv), "needs exactly 2 ranks"),
        ("prompt lookup", subprocess.run(argv + ["--prompt-lookup"],
                                         capture_output=True, text=True,
                                         timeout=120),
         "does not support speculative decoding"),
    ]
    problems = []
    for label, proc, message in cases:
        if proc.returncode == 0 or message not in proc.stderr:
            problems.append(f"{label}: expected a failure saying "
                            f"'{message}', got exit {proc.returncode}: "
                            f"{proc.stderr.strip()[-300:]}")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    a = ap.parse_args()
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun (Open MPI is installed by scripts/setup.sh)")
        return 77
    failed = 0
    tmp = tempfile.mkdtemp(prefix="strata-disagg-")
    try:
        for fixture in FIXTURES:
            try:
                problems = check(a.bin_dir, a.models_dir, fixture, tmp)
            except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
                problems = [str(e)]
            failed += report(fixture, problems)
        failed += report("refusals", refusals(a.bin_dir, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FIXTURES) + 1 - failed} passed, {failed} failed")
    return 1 if failed else 0


def report(label, problems):
    if problems:
        print(f"FAIL {label}")
        for p in problems:
            print("  " + p)
        return 1
    print(f"PASS {label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
