#!/usr/bin/env python3
# ===- bench/bench.py - Strata vs onnxruntime, side by side ---------------===#
# The one benchmark procedure (bench/README.md): onnxruntime at its best
# (ORT_ENABLE_ALL, and the transformers-optimizer output where it applies) and
# Strata on the same ONNX files, intra-op threads = N and inter-op 1, for each
# N in --threads, in interleaved rounds (each round runs every engine once, in
# rotating order). Prints a markdown table of medians, spreads, paired ratios
# and fractions of the machine's roofline (measured on the spot), and writes
# bench.json, bench.md and PNG plots to --out. Strata is compiled once
# (build/bin/strata-compile, compile time reported) and run by
# build/bin/strata-bench; its columns read "pending", with the reason, when a
# tool is missing or fails.
#
# Usage: .venv/bin/python bench/bench.py [--model gpt2-small] [--threads 1,2]
#            [--rounds 7] [--out build/bench] [--quick] [--ablation]
#            [--reuse-artifacts]
import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import engines  # noqa: E402
import roofline  # noqa: E402

PREFILL_SEQS = (32, 128, 512)
DECODE_CTXS = (128, 1024)
GEN_BATCHES = (1, 4, 16)
GEN_PROMPT, GEN_TOKENS, TTFT_PROMPT = 16, 32, 128
PENDING = "pending"


# --------------------------------------------------------------------------- #
# Models
# --------------------------------------------------------------------------- #
def model_dir(name):
    """A size-ladder name (generated into the cache on first use, not timed)
    or a folder with prefill.onnx, decode.onnx and meta.json."""
    if os.path.isdir(name):
        return os.path.abspath(name)
    cache = os.environ.get("STRATA_MODEL_CACHE",
                           os.path.join(os.path.expanduser("~"), ".cache", "strata", "models"))
    d = os.path.join(cache, name)
    if not os.path.exists(os.path.join(d, "meta.json")):
        print("[bench] generating %s into %s (cached, not timed)" % (name, d), flush=True)
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "test", "models",
                                                         "gen_size_ladder.py"), name], check=True)
    return d


def ensure_ortopt(d, meta):
    """onnxruntime.transformers optimizer output in d/ortopt (cached)."""
    out = os.path.join(d, "ortopt")
    if os.path.exists(os.path.join(out, "decode.onnx")):
        return True
    import contextlib
    import io
    import logging
    from onnxruntime.transformers import optimizer
    logging.disable(logging.WARNING)
    os.makedirs(out, exist_ok=True)
    print("[bench] running the onnxruntime transformers optimizer (cached, not timed)", flush=True)
    for name in ("prefill.onnx", "decode.onnx"):
        with contextlib.redirect_stdout(io.StringIO()):
            m = optimizer.optimize_model(os.path.join(d, name), model_type="gpt2",
                                         num_heads=meta["heads"], hidden_size=meta["hidden"],
                                         opt_level=0)
        m.save_model_to_file(os.path.join(out, name), use_external_data_format=True,
                             all_tensors_to_one_file=True)
    return True


def costs(meta, kind, **k):
    """[(flops, bytes read)] per phase (one model call) of a workload for a
    GPT-2-shaped model, fp32."""
    L, h, V = meta["layers"], meta["hidden"], meta["vocab"]
    wm = 12 * L * h * h + V * h  # matmul weights incl. the LM head
    wbytes = 4 * wm

    def prefill(s, b):
        return 2 * wm * s * b + 4 * L * s * s * h * b, wbytes

    def step(ctx, b):
        return 2 * wm * b + 4 * L * ctx * h * b, wbytes + 2 * L * ctx * h * 4 * b

    if kind in ("prefill", "ttft"):
        return [prefill(k["seq"], k["batch"])]
    if kind == "decode":
        return [step(k["ctx"], k["batch"])]
    return [prefill(k["prompt"], k["batch"])] + [
        step(k["prompt"] + i + 1, k["batch"]) for i in range(k["gen"] - 1)]


def workloads(quick, max_positions):
    """The fixed workload list, less what exceeds the model's positions."""
    seqs = PREFILL_SEQS[:2] if quick else PREFILL_SEQS
    w = [dict(kind="prefill", seq=s, batch=1) for s in seqs]
    w += [dict(kind="decode", ctx=c, batch=1) for c in DECODE_CTXS]
    w += [dict(kind="generate", batch=b, prompt=GEN_PROMPT, gen=GEN_TOKENS)
          for b in (GEN_BATCHES[:2] if quick else GEN_BATCHES)]
    w.append(dict(kind="ttft", seq=TTFT_PROMPT, batch=1))
    return [x for x in w if x.get("seq", x.get("ctx", x.get("prompt", 0) + x.get("gen", 0)))
            <= max_positions]


def label(w):
    return {"prefill": "prefill seq %(seq)d (ms)", "decode": "decode step ctx %(ctx)d (ms)",
            "generate": "generate batch %(batch)d (tok/s)",
            "ttft": "TTFT prompt %(seq)d (ms)"}[w["kind"]] % w


def run_ort(engine, w):
    """Returns (value, seconds): value in the table's unit."""
    if w["kind"] == "prefill":
        s = engine.prefill(w["seq"], w["batch"])
        return s * 1e3, s
    if w["kind"] == "decode":
        s = engine.decode(w["ctx"], w["batch"])
        return s * 1e3, s
    if w["kind"] == "ttft":
        s = engine.generate(1, w["seq"], 1)[1]
        return s * 1e3, s
    s, _ = engine.generate(w["batch"], w["prompt"], w["gen"])
    return w["batch"] * w["gen"] / s, s


def strata_value(w, res):
    s = res["seconds"]
    if w["kind"] == "generate":
        return w["batch"] * w["gen"] / s, s
    if w["kind"] == "ttft":
        s = res.get("ttft_seconds", s)
    return s * 1e3, s


# --------------------------------------------------------------------------- #
# Peak RSS: one fresh process per engine and thread count
# --------------------------------------------------------------------------- #
def rss_worker(d, variant, threads):
    with open(os.path.join(d, "meta.json")) as f:
        maxpos = json.load(f).get("max_positions", 1 << 30)
    e = engines.OrtEngine(d, threads, variant)
    e.generate(1, GEN_PROMPT, GEN_TOKENS)
    e.prefill(min(PREFILL_SEQS[-1], maxpos), 1)
    print(json.dumps({"peak_rss_bytes": vm_hwm(), "load_seconds": e.load_seconds}))


def vm_hwm():
    """Peak resident set of this process since its execve (VmHWM). ru_maxrss
    would carry the forking parent's high-water mark into the child."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def peak_rss(d, variant, threads):
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--rss-worker", d, variant,
                        str(threads)], capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- #
# Statistics and report
# --------------------------------------------------------------------------- #
def stats(xs):
    a = np.asarray(xs, dtype=float)
    q1, med, q3 = np.percentile(a, [25, 50, 75])
    return {"median": float(med), "p25": float(q1), "p75": float(q3), "min": float(a.min()),
            "max": float(a.max()), "n": int(a.size),
            "spread_pct": float(50.0 * (q3 - q1) / med) if med else 0.0}


def fmt(s, digits=1):
    if s is None or s == PENDING:
        return PENDING
    return "%.*f ±%.0f%%" % (digits, s["median"], s["spread_pct"])


def paired_ratio(base, other, higher_is_better):
    """Per-round speedup of `other` over `base` (>1 = other faster)."""
    r = [(o / b if higher_is_better else b / o) for b, o in zip(base, other)]
    return stats(r)


def report(res, args):
    lines = []
    eng_names = res["engines"]
    head = ["metric", "threads"] + [res["engine_labels"][e] for e in eng_names]
    head += ["%s vs ORT" % res["engine_labels"][e] for e in eng_names[1:]]
    head += ["ORT roofline fraction"]
    strata_cols = "strata" in eng_names
    if strata_cols:
        head += ["Strata roofline fraction"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for t in res["threads"]:
        for w in res["workloads"]:
            key = label(w)
            row = [key, str(t)]
            cell = res["results"][str(t)]
            for e in eng_names:
                s = cell[e].get(key)
                row.append(fmt(s["stats"] if isinstance(s, dict) else s,
                               0 if w["kind"] == "generate" else 1))
            base = cell["ort"][key]["values"]
            for e in eng_names[1:]:
                s = cell[e].get(key)
                if not isinstance(s, dict):
                    row.append(PENDING)
                    continue
                pr = paired_ratio(base, s["values"], w["kind"] == "generate")
                row.append("%.2fx [%.2f-%.2f]" % (pr["median"], pr["min"], pr["max"]))
            fr = cell["ort"][key]["roofline_fraction"]
            row.append("%.0f%% (%s)" % (100 * fr, cell["ort"][key]["bound"]))
            if strata_cols:
                s = cell["strata"].get(key)
                row.append("%.0f%%" % (100 * s["roofline_fraction"]) if isinstance(s, dict)
                           else PENDING)
            lines.append("| " + " | ".join(row) + " |")
        for what, unit in (("peak RSS", "MB"), ("load time", "s"), ("compile time", "s")):
            row = ["%s (%s)" % (what, unit), str(t)]
            for e in eng_names:
                v = res["results"][str(t)][e].get(what)
                if what == "compile time" and e != "strata":
                    row.append("(in load)")  # onnxruntime optimizes inside load
                elif v is None:
                    row.append(PENDING)
                elif what == "compile time":
                    c = res.get("strata_compile_seconds", {})
                    row.append("%.1f (prefill %.1f + decode %.1f%s)" % (
                        v, c.get("prefill", 0), c.get("decode", 0),
                        ", cached" if res.get("strata_compile_cached") else ""))
                else:
                    row.append("%.0f" % v if unit == "MB" else "%.3f" % v)
            row += ["" for _ in eng_names[1:]] + [""] + ([""] if strata_cols else [])
            lines.append("| " + " | ".join(row) + " |")
    lim = res["roofline"]
    lines.append("")
    probes = res.get("roofline_probes", [])
    if probes:
        lines.append("Read bandwidth over the %d probes (one before the rounds, one after each): %s" % (
            len(probes), "; ".join("%s thread(s) %.1f-%.1f GB/s" % (
                t, min(p[t]["read_gbps"] for p in probes), max(p[t]["read_gbps"] for p in probes))
                for t in sorted(lim, key=int))))
    lines.append("Roofline (highest of the probes, %s): " % res["roofline_isa"] + "; ".join(
        "%s thread(s): read %.1f GB/s, fp32 %.1f GFLOP/s, bf16 %s GFLOP/s, int8 %s GOP/s" % (
            t, lim[t]["read_gbps"], lim[t]["fp32_gflops"],
            "n/a" if lim[t]["bf16_gflops"] is None else "%.1f" % lim[t]["bf16_gflops"],
            "n/a" if lim[t]["int8_gops"] is None else "%.1f" % lim[t]["int8_gops"])
        for t in sorted(lim, key=int)))
    return "\n".join(lines)


# The fp32 CPU back end's targets: (workload label, threads, max time ratio
# Strata / best onnxruntime column; None: reported only).
ACCEPTANCE = [("prefill seq 512 (ms)", 2, 1.0), ("prefill seq 128 (ms)", 2, 1.05),
              ("decode step ctx 128 (ms)", 1, 1.1), ("decode step ctx 1024 (ms)", 1, 1.1),
              ("decode step ctx 128 (ms)", 2, None), ("decode step ctx 1024 (ms)", 2, None)]


def acceptance(res):
    """Strata's median time over the faster onnxruntime column's median, per
    target workload, plus compile and load time."""
    if "strata" not in res["engines"]:
        return ""
    lines = ["| workload | threads | Strata | best ORT (column) | time ratio Strata / ORT | "
             "target | met |", "|---|---|---|---|---|---|---|"]
    for key, t, target in ACCEPTANCE:
        cell = res["results"].get(str(t))
        if not cell or not isinstance(cell["strata"].get(key), dict):
            continue
        ort = [(cell[e][key]["stats"]["median"], res["engine_labels"][e])
               for e in res["engines"] if e != "strata" and isinstance(cell[e].get(key), dict)]
        best, which = min(ort)
        mine = cell["strata"][key]["stats"]["median"]
        ratio = mine / best
        lines.append("| %s | %d | %.1f | %.1f (%s) | %.2f | %s | %s |" % (
            key, t, mine, best, which, ratio, "<= %.2f" % target if target else "reported",
            ("yes" if ratio <= target else "no") if target else ""))
    # Until the prefill/decode split, Strata compiles two artifacts: each is
    # checked, and the sum (what one artifact with both entries would cost
    # today) is reported.
    csec = res.get("strata_compile_seconds", {})
    for role in ("prefill", "decode"):
        if role in csec:
            lines.append("| compile %s.onnx (s) | | %.1f | | | <= 60 | %s |"
                         % (role, csec[role], "yes" if csec[role] <= 60 else "no"))
    if csec:
        lines.append("| compile both (s) | | %.1f | | | reported | |" % sum(csec.values()))
    for t in res["threads"]:
        load = res["results"][str(t)]["strata"].get("load time")
        if load is not None:
            lines.append("| artifact load (both, ms) | %d | %.0f | | | <= 200 | %s |"
                         % (t, 1e3 * load, "yes" if load <= 0.2 else "no"))
    return "\n".join(lines)


def plots(res, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker  # noqa: F401
    figs = [("prefill", "sequence length", "latency (ms)", "seq"),
            ("decode", "context length", "step latency (ms)", "ctx"),
            ("generate", "batch", "tokens/s", "batch")]
    fig, axes = plt.subplots(1, 4, figsize=(20, 4.5))
    for ax, (kind, xl, yl, xk) in zip(axes, figs):
        ws = [w for w in res["workloads"] if w["kind"] == kind]
        for t in res["threads"]:
            for e in res["engines"]:
                cell = res["results"][str(t)][e]
                pts = [(w[xk], cell[label(w)]["stats"]) for w in ws
                       if isinstance(cell.get(label(w)), dict)]
                if not pts:
                    continue
                x = [p[0] for p in pts]
                y = [p[1]["median"] for p in pts]
                err = [[p[1]["median"] - p[1]["p25"] for p in pts],
                       [p[1]["p75"] - p[1]["median"] for p in pts]]
                ax.errorbar(x, y, yerr=err, marker="o", capsize=3,
                            label="%s, %s thr" % (res["engine_labels"][e], t))
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        xs = sorted({w[xk] for w in ws})
        ax.set_xticks(xs)
        ax.set_xticklabels([str(v) for v in xs])
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel(xl)
        ax.set_ylabel(yl)
        ax.set_title(kind)
        ax.legend(fontsize=7)
    ax = axes[3]
    names, fr = [], []
    for t in res["threads"]:
        for w in res["workloads"]:
            names.append("%s t%s" % (label(w).split(" (")[0], t))
            fr.append(100 * res["results"][str(t)]["ort"][label(w)]["roofline_fraction"])
    ax.barh(range(len(fr)), fr)
    ax.set_yticks(range(len(fr)))
    ax.set_yticklabels(names, fontsize=6)
    ax.set_xlabel("% of roofline (ORT)")
    ax.set_title("roofline fraction")
    fig.suptitle("%s on %s" % (res["model"], res["machine"]["cpu"]))
    fig.tight_layout()
    path = os.path.join(out, "bench.png")
    fig.savefig(path, dpi=90)
    return path


# --------------------------------------------------------------------------- #
# Main procedure
# --------------------------------------------------------------------------- #
def machine():
    cpu = platform.processor() or "cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version()}


def main():
    ap = argparse.ArgumentParser(description="Strata vs onnxruntime benchmark (bench/README.md)")
    ap.add_argument("--model", default="gpt2-small")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--quick", action="store_true", help="fewer sizes (smoke test)")
    ap.add_argument("--no-ortopt", action="store_true")
    ap.add_argument("--ablation", action="store_true")
    ap.add_argument("--reuse-artifacts", action="store_true",
                    help="keep Strata artifacts compiled earlier (same models, flags and "
                         "strata-compile) and report their recorded compile time")
    ap.add_argument("--strata-warmup", type=int, default=1,
                    help="untimed runs of each workload in each strata-bench round")
    ap.add_argument("--rss-worker", nargs=3, metavar=("DIR", "VARIANT", "THREADS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rss_worker:
        return rss_worker(args.rss_worker[0], args.rss_worker[1], int(args.rss_worker[2]))
    args.threads = [int(t) for t in args.threads.split(",")]
    if args.ablation:
        import ablation
        return ablation.run(args, stats, fmt)

    import onnxruntime as ort
    d = model_dir(args.model)
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    names = ["ort"]
    if not args.no_ortopt and ensure_ortopt(d, meta):
        names.append("ortopt")
    names.append("strata")
    labels = {"ort": "ORT", "ortopt": "ORT+optimizer", "strata": "Strata"}

    t_start = time.time()
    load_start = os.getloadavg()
    os.makedirs(args.out, exist_ok=True)
    print("[bench] measuring the roofline", flush=True)
    limits, isa = roofline.measure(args.out, args.threads)
    # The probe runs again after every round and the fractions use the
    # highest reading of each limit: this VM's read bandwidth moves by 2x
    # within minutes, and a single probe taken in a slow moment put decode
    # steps "above 100%".
    probes = [limits]
    ws = workloads(args.quick, meta.get("max_positions", 1 << 30))
    # The model directory as ~/..., so results hold no path of this machine.
    shown_dir = d.replace(os.path.expanduser("~"), "~", 1)
    res = {"model": meta.get("name", os.path.basename(d)), "model_dir": shown_dir, "meta": meta,
           "threads": args.threads, "rounds": args.rounds, "workloads": ws,
           "engines": names, "engine_labels": labels, "machine": machine(),
           "onnxruntime": ort.__version__, "roofline": {str(k): v for k, v in limits.items()},
           "roofline_isa": isa, "results": {}}
    notes = []
    engs = {}
    # Strata: both artifacts compiled once, for every length and batch of
    # the full workload list (the same artifacts with --quick).
    arts = None
    try:
        arts, csec, cached = engines.compile_strata(
            d, args.out, min(meta.get("max_positions", 1024), max(DECODE_CTXS)),
            max(GEN_BATCHES), reuse=args.reuse_artifacts)
        res["strata_compile_seconds"], res["strata_compile_cached"] = csec, cached
        res["strata_artifacts"] = arts
        print("[bench] Strata compile: prefill %.1f s, decode %.1f s%s" % (
            csec["prefill"], csec["decode"], " (cached)" if cached else ""), flush=True)
    except engines.StrataError as e:
        notes.append("Strata: %s" % e)
    for t in args.threads:
        res["results"][str(t)] = {n: {} for n in names}
        for n in names:
            if n == "strata":
                if arts is None:
                    continue
                engs[(t, n)] = engines.StrataEngine(arts, t, warmup=args.strata_warmup)
                res["results"][str(t)][n]["compile time"] = sum(csec.values())
            else:
                engs[(t, n)] = engines.OrtEngine(d, t, n)
    print("[bench] %d engine(s) x %d workloads x %d rounds" % (len(engs), len(ws), args.rounds),
          flush=True)
    raw = {k: {label(w): [] for w in ws} for k in engs}
    for r in range(args.rounds):
        keys = list(engs)
        keys = keys[r % len(keys):] + keys[:r % len(keys)]  # rotate engine order
        for k in keys:
            e = engs[k]
            if k[1] == "strata":
                try:
                    outs = e.round(ws)
                except engines.StrataError as err:
                    notes.append("Strata (%d threads): %s" % (k[0], err))
                    print("[bench] %s" % notes[-1], flush=True)
                    del engs[k], raw[k]
                    continue
                for w, out in zip(ws, outs):
                    raw[k][label(w)].append(strata_value(w, out)[0])
                continue
            for w in ws:
                raw[k][label(w)].append(run_ort(e, w)[0])
        print("[bench] round %d/%d done at %.0fs" % (r + 1, args.rounds, time.time() - t_start),
              flush=True)
        probes.append(roofline.measure(args.out, args.threads)[0])
    limits = roofline.highest(probes)
    res["roofline"] = {str(k): v for k, v in limits.items()}
    res["roofline_probes"] = [{str(k): v for k, v in p.items()} for p in probes]
    for (t, n), e in engs.items():
        cell = res["results"][str(t)][n]
        for w in ws:
            vals = raw[(t, n)][label(w)]
            st = stats(vals)
            phases = costs(meta, w["kind"], **{k: v for k, v in w.items() if k != "kind"})
            ideal = sum(roofline.ideal_seconds(limits[t], f, b) for f, b in phases)
            flops, nbytes = sum(p[0] for p in phases), sum(p[1] for p in phases)
            mem = sum(b / limits[t]["read_gbps"] for _, b in phases)
            cmp_ = sum(f / limits[t]["fp32_gflops"] for f, _ in phases)
            secs = (w["batch"] * w["gen"] / st["median"]) if w["kind"] == "generate" \
                else st["median"] / 1e3
            cell[label(w)] = {"values": vals, "stats": st, "flops": flops, "bytes": nbytes,
                              "roofline_fraction": ideal / secs,
                              "bound": "compute" if cmp_ >= mem else "memory"}
        if n != "strata":
            rss = peak_rss(d, n, t)
            cell["peak RSS"] = rss["peak_rss_bytes"] / 1e6
            cell["load time"] = rss["load_seconds"]
        else:
            try:
                e.rss(GEN_PROMPT, GEN_TOKENS,
                      min(PREFILL_SEQS[-1], meta.get("max_positions", 1 << 30)))
                cell["peak RSS"] = e.peak_rss / 1e6
                cell["load time"] = e.load_seconds
            except engines.StrataError as err:
                notes.append("Strata (%d threads, RSS run): %s" % (t, err))
            cell["round load seconds"] = e.round_loads
    res["wall_seconds"] = time.time() - t_start
    res["loadavg_start"], res["loadavg_end"] = load_start, os.getloadavg()
    res["notes"] = notes or ["Strata measured."]
    table = report(res, args)
    title = ("## %s: %d rounds, threads %s, onnxruntime %s (%.0f s; 1-min load average "
             "%.1f at start, %.1f at end, on %d cores)"
             % (res["model"], args.rounds, ",".join(map(str, args.threads)), ort.__version__,
                res["wall_seconds"], load_start[0], res["loadavg_end"][0], os.cpu_count()))
    print("\n" + title + "\n")
    print(table)
    acc = acceptance(res)
    if acc:
        acc = ("\nCPU targets (Strata median / the faster onnxruntime column's "
               "median; < 1 = Strata faster):\n\n" + acc)
        print(acc)
    for n in sorted(set(notes)):
        print("\nNOTE: %s -- the Strata columns it concerns read pending." % n)
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(title + "\n\n" + table + "\n" + (acc + "\n" if acc else ""))
        for n in sorted(set(notes)):
            f.write("\nNOTE: %s\n" % n)
    png = plots(res, args.out)
    print("\n[bench] wrote %s, %s, %s" % (os.path.join(args.out, "bench.json"),
                                        os.path.join(args.out, "bench.md"), png))


if __name__ == "__main__":
    sys.exit(main())
