#!/usr/bin/env python3
# ===- test/e2e/check_tensor_parallel.py - N ranks compute what 1 does ----===#
# Tensor and pipeline parallelism end to end: a GPT-2-shaped decoder (4
# heads) and a Llama-shaped one with grouped-query attention (8 heads, 4
# key/value heads) compiled whole, with --tensor-parallel 2 and 4, with
# --pipeline-parallel 2 and 4 and with both 2 x 2 (and exports of other
# families with --tensor-parallel 2), the ranks run as processes of one
# `mpirun` (Open MPI, oversubscribed on a small machine). On the same
# inputs:
# - `strata-run --steps`: `main` (with past: the past keys sliced by heads,
#   the present outputs gathered; each stage's presents sent to the
#   others), prefill, batched decode and verify steps; every output of
#   every step against the whole model's;
# - `strata-run generate`: greedy tokens of a batch of prompts, equal; with
#   pipeline stages also with the prompts dealt to 2 and 3 micro-batches
#   (generators stepped side by side on communicators of their own).
# Tolerance: the ranks sum each row-parallel product in R partial sums
# (rank order) instead of one, a reassociation of at most a few hundred
# fp32 terms: max|y - y1| <= 1e-5 * max(1, max|y1|), while a wrong head,
# column or row moves logits by >= 1e-2. Pipeline stages compute what one
# process does, in the same order: the same bits.
#
# Usage: check_tensor_parallel.py MODELS_DIR BIN_DIR [--only SUBSTRING]
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_generation import (decode_step, prefill_steps, save,  # noqa: E402
                              verify_step)

TOLERANCE = 1e-5
MAX_SEQ = 32
# (fixture, tensor ranks, pipeline stages)
CASES = [("gpt2_op17_past", 2, 1), ("gpt2_op17_past", 4, 1),
         ("transformers_llama8_op17_past", 2, 1),
         ("transformers_llama8_op17_past", 4, 1),
         # Pipeline stages (two layers: 4 stages cut after each attention
         # and each MLP), and both.
         ("gpt2_op17_past", 1, 2), ("gpt2_op17_past", 1, 4),
         ("gpt2_op17_past", 2, 2),
         ("transformers_llama8_op17_past", 1, 2),
         ("transformers_llama8_op17_past", 1, 4),
         ("transformers_llama8_op17_past", 2, 2),
         # Per-head q/k norms; a sliding-window layer's ring cache; the
         # default exporter's reshapes into an inferred dim.
         ("transformers_qwen3_op17_logits", 2, 1),
         ("transformers_gemma3_op17_logits", 2, 1),
         ("transformers_llama_op18_dynamo", 2, 1),
         # q/k/v cut by slices; grouped key/value taken by index; q/k norms
         # over the whole projection (gathered, normalized, cut again).
         ("transformers_phi3_op17_logits", 2, 1),
         ("transformers_falcon_op17_logits", 2, 1),
         ("transformers_olmo2_op17_logits", 2, 1),
         # A sliding window whose present outputs change type on the way.
         ("transformers_mistral_op17_prefill", 2, 1),
         # Encoders: `main` on the fixture's reference inputs.
         ("bert_op17", 2, 1), ("vision_vit_op17", 2, 1)]


def mpirun(ranks, argv, timeout=600):
    """|argv| as |ranks| processes of one MPI job on this machine."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return subprocess.run(["mpirun", "-np", str(ranks), "--bind-to", "none",
                           "--mca", "mpi_yield_when_idle", "1"] + argv,
                          capture_output=True, text=True, timeout=timeout,
                          env=env)


def compile_model(bin_dir, model, out, ranks, stages=1):
    cmd = [os.path.join(bin_dir, "strata-compile"), model, "-o", out,
           "--quiet", "--max-seq", str(MAX_SEQ), "--max-batch", "4",
           "--verify-length", "4"]
    if ranks > 1:
        cmd += ["--tensor-parallel", str(ranks)]
    if stages > 1:
        cmd += ["--pipeline-parallel", str(stages)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError("compile: " + proc.stderr.strip())


def main_step(tmp, meta, rng):
    """The with-past graph on random past keys: every output."""
    batch, length = 2, 5
    past = 3 if any("past" in name for name in meta["inputs"]) else 0
    inputs = {
        "input_ids": rng.integers(0, meta["vocab"], (batch, length)),
        "attention_mask": np.ones((batch, past + length), np.int64),
        "position_ids": np.broadcast_to(
            np.arange(past, past + length, dtype=np.int64), (batch, length)),
    }
    for name in meta["inputs"]:
        if "past" in name:
            inputs[name] = rng.standard_normal(
                (batch, meta["kv_heads"] or meta["heads"], past,
                 meta["head_dim"])).astype(np.float32)
    return ("main", {k: save(tmp, "main_" + k.replace(".", "_"),
                             np.ascontiguousarray(v))
                     for k, v in inputs.items() if k in meta["inputs"]})


def steps_for(tmp, meta):
    rng = np.random.default_rng(11)
    vocab = meta["vocab"]
    seqs = [rng.integers(0, vocab, (1, 12), dtype=np.int64) for _ in range(2)]
    steps = [main_step(tmp, meta, rng)]
    steps += prefill_steps(tmp, "p0", seqs[0][:, :5], 0, 5)
    steps += prefill_steps(tmp, "p1", seqs[1][:, :3], 2, 3)
    positions = [5, 3]
    for t in range(3):
        steps.append(decode_step(
            tmp, f"d{t}", [seqs[0][0, positions[0]], seqs[1][0, positions[1]]],
            [0, 2], positions))
        positions = [p + 1 for p in positions]
    ids = np.stack([seqs[0][0, positions[0]:positions[0] + 2],
                    seqs[1][0, positions[1]:positions[1] + 2]])
    steps.append(verify_step(tmp, "v", ids, [0, 2], positions))
    return steps


def run_steps(bin_dir, artifact, steps, tmp, tag, ranks):
    steps_file = os.path.join(tmp, tag + ".steps")
    with open(steps_file, "w") as f:
        for entry, inputs in steps:
            f.write(entry + " " + " ".join(f"{k}={v}" for k, v in
                                           inputs.items()) + "\n")
    out = os.path.join(tmp, tag + ".out")
    argv = [os.path.join(bin_dir, "strata-run"), artifact, "--threads", "1",
            "--steps", steps_file, "--output-dir", out]
    proc = (mpirun(ranks, argv) if ranks > 1 else
            subprocess.run(argv, capture_output=True, text=True, timeout=600))
    if proc.returncode != 0:
        raise RuntimeError(f"{tag}: " + (proc.stderr or proc.stdout).strip())
    return [{os.path.basename(p)[:-4]: np.load(p)
             for p in glob.glob(os.path.join(out, str(k), "*.npy"))}
            for k in range(len(steps))]


def generate(bin_dir, artifact, prompts_file, ranks, micro_batches=1):
    argv = [os.path.join(bin_dir, "strata-run"), "generate", artifact,
            "--batch-prompt-ids", prompts_file, "--max-new-tokens", "12",
            "--threads", "1", "--json", "--micro-batches", str(micro_batches)]
    proc = (mpirun(ranks, argv) if ranks > 1 else
            subprocess.run(argv, capture_output=True, text=True, timeout=600))
    if proc.returncode != 0:
        raise RuntimeError("generate: " + (proc.stderr or proc.stdout).strip())
    lines = [json.loads(line) for line in proc.stdout.splitlines()
             if line.startswith("{")]
    return [line["tokens"] for line in lines if "tokens" in line]


def reference_step(d):
    """`main` on the inputs of the fixture's first reference case."""
    case = sorted(glob.glob(os.path.join(d, "ref", "*", "case.json")))[0]
    with open(case) as f:
        names = json.load(f)["inputs"]
    return ("main", {n: os.path.join(os.path.dirname(case), n + ".npy")
                     for n in names})


def check(bin_dir, models_dir, fixture, ranks, stages, tmp):
    d = os.path.join(models_dir, "fixtures", fixture)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    model = os.path.join(d, "model.onnx")
    whole = os.path.join(tmp, "whole.strata")
    if not os.path.exists(whole):
        compile_model(bin_dir, model, whole, 1)
    tag = f"tp{ranks}pp{stages}"
    split = os.path.join(tmp, tag + ".strata")
    compile_model(bin_dir, model, split, ranks, stages)
    decoder = meta.get("causal", False)
    steps = steps_for(tmp, meta) if decoder else [reference_step(d)]
    want = run_steps(bin_dir, whole, steps, tmp, "whole", 1)
    got = run_steps(bin_dir, split, steps, tmp, tag, ranks * stages)
    problems, worst = [], 0.0
    for k, (w, g) in enumerate(zip(want, got)):
        if sorted(w) != sorted(g):
            problems.append(f"step {k}: outputs {sorted(g)} != {sorted(w)}")
            continue
        for name in w:
            if g[name].shape != w[name].shape:
                problems.append(f"step {k} {name}: shape {g[name].shape} != "
                                f"{w[name].shape}")
                continue
            err = float(np.abs(g[name].astype(np.float64) - w[name]).max())
            tol = TOLERANCE * max(1.0, float(np.abs(w[name]).max()))
            worst = max(worst, err / tol)
            if not err <= tol:
                problems.append(f"step {k} ({steps[k][0]}) {name}: max abs "
                                f"error {err:.3g} > {tol:.3g}")
    if not decoder:
        return problems, worst
    prompts = os.path.join(tmp, "prompts.txt")
    with open(prompts, "w") as f:
        f.write("1,2,3,4,5\n7,3\n9,9,8,1,2,3,4\n")
    tokens_whole = generate(bin_dir, whole, prompts, 1)
    tokens_split = generate(bin_dir, split, prompts, ranks * stages)
    if len(tokens_whole) != 3 or tokens_whole != tokens_split:
        problems.append(f"greedy tokens {tokens_split} != {tokens_whole}")
    for micro_batches in (2, 3) if stages > 1 else ():
        tokens = generate(bin_dir, split, prompts, ranks * stages,
                          micro_batches)
        if tokens != tokens_whole:
            problems.append(f"greedy tokens with {micro_batches} "
                            f"micro-batches {tokens} != {tokens_whole}")
    return problems, worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--only", default="",
                    help="run the cases whose label contains this")
    a = ap.parse_args()
    if not shutil.which("mpirun"):
        print("SKIP: no mpirun (Open MPI is installed by scripts/setup.sh)")
        return 77
    failed = 0
    tmps = {}
    try:
        for fixture, ranks, stages in CASES:
            label = f"{fixture} tp{ranks} x pp{stages}"
            if a.only not in label:
                continue
            tmp = tmps.setdefault(fixture, tempfile.mkdtemp(prefix="strata-tp-"))
            try:
                problems, worst = check(a.bin_dir, a.models_dir, fixture,
                                        ranks, stages, tmp)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                problems, worst = [str(e)], float("nan")
            if problems:
                failed += 1
                print(f"FAIL {label}")
                for p in problems:
                    print("  " + p)
            else:
                print(f"PASS {label} (worst error {worst:.2f} of tolerance)")
    finally:
        for tmp in tmps.values():
            shutil.rmtree(tmp, ignore_errors=True)
    ran = sum(a.only in f"{f} tp{r} x pp{p}" for f, r, p in CASES)
    print(f"{ran - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
