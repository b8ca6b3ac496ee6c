#!/usr/bin/env python3
# ===- bench/precision.py - decode speed per weight precision --------------===#
# One decoder compiled once per `--decode-precision`, batch-1 greedy
# generation through `strata-run generate` (in-process prefill + decode),
# rounds interleaved across the precisions, medians reported: tokens/s and
# its ratio to fp32 (the prompt's prefill included), the decode rate alone
# (1 / time per output token) and its ratio, and the bytes a decode step
# reads (weights at their stored
# width plus scales, and the KV cache at the generation's mean context)
# over the machine's read bandwidth as the multi-stream probe
# (bench/roofline.cc) measures it between every two runs (each run against
# the higher of the probes beside it; the fastest step over the highest
# probe, and the median of the per-run fractions). Then prefill
# per `--prefill-precision`: the time to the first
# token of a `--prefill-tokens` prompt (512), rounds interleaved, medians
# and the ratio to fp32.
#
# A precision may name a KV cache precision too: `int4/kv-int8` compiles
# with `--decode-precision int4 --kv-cache-precision int8` (its step bytes
# count the cache at int8 rows of head_dim + 4 bytes); a long --prompt
# makes the cache the larger part of a step.
#
# `--compare-bin-dir DIR` adds every precision again as `P@base`, compiled
# by DIR's strata-compile and run by the same strata-run: a compiler change
# measured side by side with the compiler before it.
#
# Usage: bench/precision.py [--model-dir DIR] [--threads 2] [--rounds 5]
#        [--prompt 128] [--new-tokens 64] [--precisions fp32,bf16,int8,int4]
#        [--int4-group 32] [--prefill-precisions fp32,int8,bf16]
#        [--prefill-tokens 512] [--kernel-isa avx2] [--out FILE.json]
#        [--compare-bin-dir DIR]
import argparse
import json
import os
import statistics
import sys
import tempfile

import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generation  # noqa: E402

import numpy as np  # noqa: E402


def matmul_weights(model):
    """(elements, columns) summed over the initializers MatMul/Gemm read."""
    graph = onnx.load(model, load_external_data=False).graph
    dims = {i.name: list(i.dims) for i in graph.initializer}
    producer = {o: n for n in graph.node for o in n.output}
    read = {}
    for node in graph.node:
        if node.op_type not in ("MatMul", "Gemm"):
            continue
        transposed = node.op_type == "Gemm" and any(
            a.name == "transB" and a.i for a in node.attribute)
        name = node.input[1] if len(node.input) > 1 else ""
        while name not in dims and name in producer and \
                producer[name].op_type in ("Transpose", "Cast", "Identity"):
            transposed ^= producer[name].op_type == "Transpose"
            name = producer[name].input[0]
        if name in dims and len(dims[name]) == 2:
            k, n = dims[name]
            read[name] = (k * n, k if transposed else n)
    return (sum(e for e, _ in read.values()),
            sum(c for _, c in read.values()))


def step_bytes(precision, elements, columns, int4_group=32):
    """Weight bytes one decode step reads at |precision|: per-column fp32
    scales for int8, one per group of |int4_group| rows for int4."""
    if precision == "fp32":
        return 4 * elements
    if precision == "bf16":
        return 2 * elements
    if precision == "int8":
        return elements + 4 * columns
    if precision == "int4":
        return elements / 2 + 4 * elements / int4_group
    raise ValueError(precision)


def split_precision(spec):
    """(weight precision, KV cache precision) of a spec like int4/kv-int8."""
    weights, _, kv = spec.partition("/kv-")
    return weights, kv or "fp32"


def kv_bytes_factor(kv, head_dim):
    """Bytes of a cached KV row at |kv| over its fp32 bytes."""
    if kv == "bf16":
        return 0.5
    if kv == "int8":
        return (head_dim + 4) / (4 * head_dim)
    return 1.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default=os.path.expanduser(
        "~/.cache/strata/models/gpt2-small"))
    ap.add_argument("--model-file", default="decode.onnx")
    ap.add_argument("--bin-dir", default=os.path.join(generation.ROOT,
                                                      "build", "bin"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--precisions", default="fp32,bf16,int8,int4")
    ap.add_argument("--int4-group", type=int, default=32)
    ap.add_argument("--prefill-precisions", default="fp32,int8,bf16")
    ap.add_argument("--prefill-tokens", type=int, default=512)
    ap.add_argument("--kernel-isa", default="",
                    help="cap the runtime's kernels (avx2: the AVX2 kernels "
                         "on an AVX-512 host); the ISA is recorded")
    ap.add_argument("--out", default="")
    ap.add_argument("--compare-bin-dir", default="",
                    help="also compile each precision with this build's "
                    "strata-compile (labelled P@base)")
    a = ap.parse_args()
    model = os.path.join(a.model_dir, a.model_file)
    meta_path = os.path.join(a.model_dir, "meta.json")
    meta = json.load(open(meta_path)) if os.path.exists(meta_path) else {}
    vocab = meta.get("vocab", 32000)
    precisions = a.precisions.split(",")
    if a.compare_bin_dir:
        precisions += [p + "@base" for p in precisions]
    elements, columns = matmul_weights(model)
    prompt = np.random.default_rng(0).integers(0, vocab, a.prompt).tolist()
    result = {"machine": generation.cpu_isa(),
              "kernel_isa": a.kernel_isa or "host's best",
              "threads": a.threads, "model": model, "prompt": a.prompt,
              "new_tokens": a.new_tokens, "rounds": a.rounds}
    with tempfile.TemporaryDirectory(prefix="strata-precision-") as tmp:
        artifacts, sizes = {}, {}
        for p in precisions:
            artifacts[p] = os.path.join(tmp, p.replace("/", "_") + ".strata")
            weights, kv = split_precision(p.removesuffix("@base"))
            compiler = a.compare_bin_dir if p.endswith("@base") else a.bin_dir
            generation.compile_artifact(compiler, model, artifacts[p],
                                        ["--decode-precision", weights,
                                         "--int4-group", str(a.int4_group),
                                         "--kv-cache-precision", kv])
            sizes[p] = os.path.getsize(artifacts[p])
        runs = {p: [] for p in precisions}
        tokens = {}
        # A probe between every two runs: each run's bandwidth is the higher
        # of the probes right before and after it (this VM's memory moves
        # between states within a round, so a probe per round let runs
        # exceed 100% of it).
        probes = [generation.probe_read_gbps(tmp, a.threads)]
        run_probes = {p: [] for p in precisions}
        for r in range(a.rounds):
            for p in precisions:
                rec, _ = generation.strata_generate(
                    a.bin_dir, artifacts[p], [prompt], a.new_tokens,
                    a.threads, tmp, kernel_isa=a.kernel_isa)
                runs[p].append(rec[0])
                tokens.setdefault(p, rec[0]["tokens"])
                probes.append(generation.probe_read_gbps(tmp, a.threads))
                run_probes[p].append(max(probes[-2], probes[-1]))
            print(f"round {r}: " + ", ".join(
                f"{p} {runs[p][-1]['tokens_per_s']:.1f} tok/s "
                f"(probe {run_probes[p][-1]:.1f} GB/s)"
                for p in precisions), flush=True)
        prefill = prefill_runs(a, model, vocab, tmp)
    kv, head_dim = 0, 64
    if "hidden" in meta:
        head_dim = meta["hidden"] // meta["heads"]
        kv = 2 * meta["layers"] * meta.get("kv_heads", meta["heads"]) * \
            (a.prompt + a.new_tokens / 2) * head_dim * 4
    result["read_gbps_probe"] = max(probes)
    result["read_gbps_probes"] = probes
    base = statistics.median(x["tokens_per_s"] for x in runs[precisions[0]])
    base_tpot = statistics.median(
        x["tpot_ms"] for x in runs[precisions[0]]) / 1e3
    for p in precisions:
        tps = statistics.median(x["tokens_per_s"] for x in runs[p])
        tpot = statistics.median(x["tpot_ms"] for x in runs[p]) / 1e3
        weights, kv_precision = split_precision(p.removesuffix("@base"))
        moved = step_bytes(weights, elements, columns, a.int4_group) + \
            kv * kv_bytes_factor(kv_precision, head_dim)
        result[p] = {
            "tokens_per_s": tps, "tpot_ms": tpot * 1e3,
            "ttft_ms": statistics.median(x["ttft_ms"] for x in runs[p]),
            # Generation as a whole (the prompt's prefill included) and
            # decode alone (the step rate: 1 / time per output token).
            "ratio_to_" + precisions[0]: tps / base,
            "decode_tokens_per_s": 1 / tpot,
            "decode_ratio_to_" + precisions[0]: base_tpot / tpot,
            "step_bytes": moved, "gbps": moved / tpot / 1e9,
            # Best against best (bench/generation.py says why).
            "fraction_of_probe": moved / (min(x["tpot_ms"] for x in runs[p])
                                          / 1e3) / 1e9 / max(probes),
            # Each run against the probes beside it.
            "fraction_median_per_run": statistics.median(
                moved / (x["tpot_ms"] / 1e3) / 1e9 / g
                for x, g in zip(runs[p], run_probes[p])),
            "fraction_per_run": [
                moved / (x["tpot_ms"] / 1e3) / 1e9 / g
                for x, g in zip(runs[p], run_probes[p])],
            "artifact_bytes": sizes[p],
            "same_tokens_as_" + precisions[0]:
                tokens[p] == tokens[precisions[0]]}
    if prefill:
        first = a.prefill_precisions.split(",")[0]
        base_ttft = statistics.median(prefill[first])
        result["prefill"] = {"tokens": a.prefill_tokens}
        for p, times in prefill.items():
            ttft = statistics.median(times)
            result["prefill"][p] = {
                "ttft_ms": ttft, "ttft_ms_per_round": times,
                "speedup_over_" + first: base_ttft / ttft}
    generation.report(result, a.out)


def prefill_runs(a, model, vocab, tmp):
    """Time to first token (ms) per round of a --prefill-tokens prompt for
    each --prefill-precision (decode fp32)."""
    precisions = [p for p in a.prefill_precisions.split(",") if p]
    if not precisions:
        return {}
    prompt = np.random.default_rng(1).integers(
        0, vocab, a.prefill_tokens).tolist()
    artifacts = {}
    for p in precisions:
        artifacts[p] = os.path.join(tmp, "prefill-" + p + ".strata")
        generation.compile_artifact(
            a.bin_dir, model, artifacts[p],
            ["--prefill-precision", p, "--max-batch", "1", "--max-seq",
             str(a.prefill_tokens + 8)])
    times = {p: [] for p in precisions}
    for r in range(a.rounds):
        for p in precisions:
            rec, _ = generation.strata_generate(
                a.bin_dir, artifacts[p], [prompt], 1, a.threads, tmp,
                kernel_isa=a.kernel_isa)
            times[p].append(rec[0]["ttft_ms"])
        print(f"prefill round {r}: " + ", ".join(
            f"{p} {times[p][-1]:.1f} ms" for p in precisions), flush=True)
    return times


if __name__ == "__main__":
    main()
