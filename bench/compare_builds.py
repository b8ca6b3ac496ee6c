#!/usr/bin/env python3
# ===- bench/compare_builds.py - two Strata builds, side by side ----------===#
# Times the same workloads with two builds of Strata (a "before" and an
# "after" tool folder, each with its own strata-compile and strata-bench):
# both compile the model's prefill.onnx and decode.onnx with the flags
# bench.py uses, then rounds alternate between the builds (the order flips
# every round), one fresh strata-bench process per build, round and thread
# count, each workload run once untimed first. Reported per workload: each
# build's median and the paired after/before ratio, median [min-max] over
# rounds (< 1: the after build is faster). Answers "did this change cost
# speed" more precisely than two bench.py runs, whose onnxruntime columns
# drift between runs.
#
# Usage: compare_builds.py --before DIR --after DIR [--model gpt2-small]
#          [--rounds 7] [--out build/compare] [--threads 1,2]
#          [--only prefill|decode]
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import engines  # noqa: E402
from bench import DECODE_CTXS, GEN_BATCHES, model_dir  # noqa: E402

# The workloads changes are judged by: prefill at 512 and 128 tokens, one
# decode step at contexts 128 and 1024 (batch 1).
WORKLOADS = [dict(kind="prefill", seq=512, batch=1),
             dict(kind="prefill", seq=128, batch=1),
             dict(kind="decode", ctx=128, batch=1),
             dict(kind="decode", ctx=1024, batch=1)]


def label(w):
    return ("prefill %(seq)d" % w if w["kind"] == "prefill"
            else "decode ctx %(ctx)d" % w)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="tool folder of the old build")
    ap.add_argument("--after", required=True, help="tool folder of the new build")
    ap.add_argument("--model", default="gpt2-small")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "build",
                                                  "compare"))
    ap.add_argument("--only", choices=("prefill", "decode"),
                    help="time only the workloads of this kind")
    a = ap.parse_args()
    workloads = [w for w in WORKLOADS if not a.only or w["kind"] == a.only]
    d = model_dir(a.model)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    max_seq = min(meta.get("max_positions", 1024), max(DECODE_CTXS))
    builds = {}
    for name, bin_dir in (("before", a.before), ("after", a.after)):
        arts, secs, _ = engines.compile_strata(
            d, os.path.join(a.out, name), max_seq, max(GEN_BATCHES),
            bin_dir=os.path.abspath(bin_dir))
        print("[compare] %s: compile prefill %.1f s, decode %.1f s" % (
            name, secs["prefill"], secs["decode"]), flush=True)
        builds[name] = (arts, os.path.abspath(bin_dir), secs)
    threads = [int(t) for t in a.threads.split(",")]
    times = {(b, t): [[] for _ in workloads] for b in builds for t in threads}
    for r in range(a.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for t in threads:
            for b in order:
                arts, bin_dir, _ = builds[b]
                out = engines.StrataEngine(arts, t, bin_dir=bin_dir).run_plan(workloads)
                for i, res in enumerate(out["results"]):
                    times[(b, t)][i].append(res["seconds"])
        print("[compare] round %d of %d done" % (r + 1, a.rounds), flush=True)
    rows = []
    print("\n| workload | threads | before (ms) | after (ms) | after / before |")
    print("|---|---|---|---|---|")
    for t in threads:
        for i, w in enumerate(workloads):
            bt, at = times[("before", t)][i], times[("after", t)][i]
            ratios = [x / y for x, y in zip(at, bt)]
            row = dict(workload=label(w), threads=t,
                       before_ms=1e3 * statistics.median(bt),
                       after_ms=1e3 * statistics.median(at),
                       ratio=statistics.median(ratios),
                       ratio_min=min(ratios), ratio_max=max(ratios),
                       before=bt, after=at)
            rows.append(row)
            print("| %s | %d | %.2f | %.2f | %.3f [%.3f-%.3f] |" % (
                row["workload"], t, row["before_ms"], row["after_ms"],
                row["ratio"], row["ratio_min"], row["ratio_max"]))
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "compare.json"), "w") as f:
        json.dump({"model": a.model, "rounds": a.rounds,
                   "compile_seconds": {b: v[2] for b, v in builds.items()},
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
