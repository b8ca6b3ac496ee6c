#!/usr/bin/env python3
# ===- bench/tensor_parallel.py - ranks against one process ----------------===#
# GPT-2-small (the size ladder's export) compiled whole and with
# --tensor-parallel R, generating greedily from the same prompts: the whole
# model in one process on R threads and on 1 thread, and R ranks of one
# mpirun, each on 1 thread (the same cores). Rounds interleave the forms.
# Reported per decode step of the split model: the step time (TPOT), the
# time its rank spent in collectives (transfer and waiting for the other
# ranks) and the rest (compute), and the bytes each rank contributed,
# measured as the difference between runs of N2 and N1 new tokens divided
# by N2 - N1 (prefill and the first token cancel out) and compared with
# the formula: per layer two all-reduces of batch x hidden floats, and the
# LM head's all-gather of batch x ceil(vocab / R) floats. With --pipeline
# the split is --pipeline-parallel R instead: rank 0 (the first stage)
# sends the residual stream, batch x hidden floats and 32 bytes of
# extents, and receives the logits; --micro-batches M adds the stages run
# with `strata-run generate --micro-batches M` (the batch's prompts dealt
# to M generators stepped side by side). Each form also reports the median
# of its sequences' median step (p50), which leaves out the prefills of
# the other sequences that TPOT's mean holds.
#
# Usage: bench/tensor_parallel.py [--model-dir DIR] [--ranks 2] [--pipeline]
#        [--micro-batches M] [--batch 1 4] [--rounds 3] [--out FILE.json]
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generation import cpu_isa  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = 64
N1, N2 = 16, 64


def mpirun(ranks, argv):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return ["mpirun", "-np", str(ranks), "--bind-to", "none", "--mca",
            "mpi_yield_when_idle", "1"] + argv, env


def generate(bin_dir, artifact, prompts, new_tokens, threads, ranks,
             extra=()):
    argv = [os.path.join(bin_dir, "strata-run"), "generate", artifact,
            "--batch-prompt-ids", prompts, "--max-new-tokens", str(new_tokens),
            "--threads", str(threads), "--json", *extra]
    env = None
    if ranks > 1:
        argv, env = mpirun(ranks, argv)
    out = subprocess.run(argv, check=True, capture_output=True, text=True,
                         env=env).stdout
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    seqs = [x for x in lines if "tokens" in x]
    coll = next((x["collectives"] for x in lines if "collectives" in x), None)
    return seqs, coll


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", default=os.path.join(
        os.path.expanduser("~"), ".cache", "strata", "models", "gpt2-small"))
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--pipeline", action="store_true",
                    help="pipeline stages instead of tensor ranks")
    ap.add_argument("--micro-batches", type=int, default=1,
                    help="with --pipeline: also run the stages with this "
                    "many micro-batches")
    ap.add_argument("--batch", type=int, nargs="+", default=[1, 4])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    with open(os.path.join(a.model_dir, "meta.json")) as f:
        meta = json.load(f)
    layers, hidden, vocab = meta["layers"], meta["hidden"], meta["vocab"]
    tmp = tempfile.mkdtemp(prefix="strata-tp-bench-")
    whole = os.path.join(tmp, "whole.strata")
    split = os.path.join(tmp, "split.strata")
    flag = "--pipeline-parallel" if a.pipeline else "--tensor-parallel"
    for out, extra in ((whole, []), (split, [flag, str(a.ranks)])):
        subprocess.run([os.path.join(a.bin_dir, "strata-compile"),
                        os.path.join(a.model_dir, "prefill.onnx"),
                        os.path.join(a.model_dir, "decode.onnx"), "-o", out,
                        "--quiet", "--max-batch", str(max(a.batch)),
                        "--max-seq", "256", *extra], check=True)
    forms = [("whole, %d threads" % a.ranks, whole, a.ranks, 1, []),
             ("whole, 1 thread", whole, 1, 1, []),
             ("%d %s x 1 thread" % (a.ranks, "stages" if a.pipeline
                                   else "ranks"), split, 1, a.ranks, [])]
    if a.pipeline and a.micro_batches > 1:
        forms.append(("%d stages x 1 thread, %d micro-batches"
                      % (a.ranks, a.micro_batches), split, 1, a.ranks,
                      ["--micro-batches", str(a.micro_batches)]))
    results = []
    for batch in a.batch:
        prompts = os.path.join(tmp, "prompts%d.txt" % batch)
        with open(prompts, "w") as f:
            for b in range(batch):
                f.write(",".join(str(100 + 7 * b + i) for i in range(PROMPT))
                        + "\n")
        runs = {name: {"tpot": [], "ttft": [], "p50": []}
                for name, *_ in forms}
        comm = {"seconds": [], "bytes": [], "calls": []}
        tokens = {}
        for _ in range(a.rounds):
            for name, artifact, threads, ranks, extra in forms:
                seqs, coll = generate(a.bin_dir, artifact, prompts, N2,
                                      threads, ranks, extra)
                tokens[name] = [s["tokens"] for s in seqs]
                runs[name]["tpot"].append(
                    statistics.mean(s["tpot_ms"] for s in seqs))
                runs[name]["ttft"].append(
                    statistics.mean(s["ttft_ms"] for s in seqs))
                runs[name]["p50"].append(
                    statistics.median(s["p50_ms"] for s in seqs))
                if ranks > 1 and not extra:
                    _, short = generate(a.bin_dir, artifact, prompts, N1,
                                        threads, ranks)
                    steps = N2 - N1
                    comm["seconds"].append(
                        (coll["seconds"] - short["seconds"]) / steps)
                    comm["bytes"].append(
                        (coll["bytes_per_rank"] - short["bytes_per_rank"])
                        / steps)
                    calls = ("all_gathers", "sends", "receives")
                    comm["calls"].append(
                        sum(coll[k] - short[k] for k in calls) / steps)
        formula = (4 * batch * hidden + 32 if a.pipeline else
                   4 * (2 * layers * batch * hidden +
                        batch * -(-vocab // a.ranks)))
        split_name = forms[2][0]
        tpot = statistics.median(runs[split_name]["tpot"])
        comm_ms = 1e3 * statistics.median(comm["seconds"])
        row = {
            "batch": batch,
            "same_tokens": len({json.dumps(t) for t in tokens.values()}) == 1,
            "forms": {name: {"tpot_ms": statistics.median(r["tpot"]),
                             "ttft_ms": statistics.median(r["ttft"]),
                             "p50_step_ms": statistics.median(r["p50"]),
                             "p50_step_ms_per_round": r["p50"]}
                      for name, r in runs.items()},
            "per_step": {"collectives": statistics.median(comm["calls"]),
                         "bytes_per_rank": statistics.median(comm["bytes"]),
                         "formula_bytes": formula,
                         "tpot_ms": tpot, "communication_ms": comm_ms,
                         "compute_ms": tpot - comm_ms},
        }
        results.append(row)
        print("batch %d (same tokens: %s)" % (batch, row["same_tokens"]))
        for name, r in row["forms"].items():
            print("  %-38s TTFT %8.2f ms  TPOT %7.2f ms  p50 step %7.2f ms"
                  % (name, r["ttft_ms"], r["tpot_ms"], r["p50_step_ms"]))
        p = row["per_step"]
        print("  per decode step of %s: %.0f collectives, %.0f bytes per rank "
              "(formula %d), %.2f ms = %.2f compute + %.2f communication"
              % (split_name, p["collectives"], p["bytes_per_rank"],
                 p["formula_bytes"], p["tpot_ms"], p["compute_ms"],
                 p["communication_ms"]))
    report = {"model": meta.get("name"), "isa": cpu_isa(), "ranks": a.ranks,
              "split": "pipeline" if a.pipeline else "tensor",
              "layers": layers, "hidden": hidden, "vocab": vocab,
              "prompt_tokens": PROMPT, "new_tokens": [N1, N2],
              "rounds": a.rounds, "micro_batches": a.micro_batches,
              "results": results}
    if a.out:
        with open(a.out, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
