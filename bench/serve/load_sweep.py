#!/usr/bin/env python3
# ===- bench/serve/load_sweep.py - strata-serve under an offered load -------===#
# Continuous batching against static batching on the same artifact and
# engine: strata-serve is started once per policy (--static-batching for the
# baseline) and fed the same request trace at each offered load: Poisson
# arrivals, prompt and output lengths drawn (seeded), greedy, streamed.
# Lengths (--lengths): "uniform" draws prompts from --prompt-range and
# outputs from --output-range; "sharegpt" draws both from long-tailed
# lognormals (sigma 0.8) with the means the vLLM paper reports for ShareGPT
# conversations (161 prompt and 338 output tokens), scaled by
# --length-scale and clipped to fit the artifact's context, the shape of
# the traces serving systems are compared on. Measured at the client: throughput (generated tokens over the
# time from the first arrival to the last answer), TTFT (send to first text
# chunk) and TPOT (a request's mean time between chunks after the first),
# p50 and p99 over requests.
#
# Models: the trained byte-level fixture (--model bytegpt, the default;
# text prompts through the byte tokenizer, --max-seq 256), or the
# Llama-shaped checkpoint of bench/genai.py (--model llama-124m: random
# weights, GQA, vocab 32000; prompts as token ids, --tokenizer none,
# --max-seq 512). Both compiled with --max-batch = --max-seqs.
#
# --genai (llama-124m, in the anchors virtualenv): onnxruntime-genai's
# static-batch generation on the same weights in the same run, at batch 1,
# 4 and 8, every sequence of a batch with the trace's mean prompt and output
# lengths (no padding, no waiting for a longest sequence: its best case).
#
#   .venv/bin/python bench/serve/load_sweep.py [--loads 4,8,16,32,64]
#       [--requests 96] [--max-seqs 8] [--out FILE.json] [--plot FILE.png]
#   ~/.cache/strata/bench-venv/bin/python bench/serve/load_sweep.py \
#       --model llama-124m --genai --loads 1,2,4,8 [--threads 2]
# The docs/serving.md figures:
#   ... --model llama-124m --lengths sharegpt --max-seq 1024 --max-seqs 16 \
#       --loads 2,4 --requests 128 --threads 2 --genai
#   ... --model bytegpt --lengths sharegpt --length-scale 0.25 \
#       --max-seq 256 --max-seqs 16 --loads 16,32,64 --requests 256 --threads 2
import argparse
import concurrent.futures
import json
import math
import os
import random
import statistics
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "serve"))
import serve_harness as h  # noqa: E402

WORDS = ("And God said Let there be light and there was light In the "
         "beginning the earth was without form and void darkness upon the "
         "face of the deep Spirit moved waters").split()


SHAREGPT_MEANS = (161, 338)  # prompt, output tokens (vLLM paper, ShareGPT)
SHAREGPT_SIGMA = 0.8


def lognormal_length(rng, mean, low, high):
    """A length from a lognormal of |mean| and SHAREGPT_SIGMA, in [low, high]."""
    mu = math.log(mean) - SHAREGPT_SIGMA ** 2 / 2
    return max(low, min(high, int(round(rng.lognormvariate(mu, SHAREGPT_SIGMA)))))


def draw_lengths(rng, lengths, prompt_range, output_range):
    """(prompt length, max_tokens): uniform in the ranges, or ShareGPT-shaped
    (lengths = ("sharegpt", scale, context))."""
    if lengths[0] == "uniform":
        return rng.randint(*prompt_range), rng.randint(*output_range)
    _, scale, context = lengths
    prompt = lognormal_length(rng, SHAREGPT_MEANS[0] * scale, 4, context // 2)
    output = lognormal_length(rng, SHAREGPT_MEANS[1] * scale, 4,
                              context - prompt - 1)
    return prompt, output


def trace(count, rate, seed, prompt_range, output_range, vocab=None,
          lengths=("uniform",)):
    """(arrival offset s, prompt, max_tokens) per request: text, or token
    ids below |vocab| when it is given."""
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(count):
        t += rng.expovariate(rate)
        length, max_tokens = draw_lengths(rng, lengths, prompt_range,
                                          output_range)
        if vocab:
            prompt = [rng.randrange(3, vocab) for _ in range(length)]
        else:
            prompt = ""
            while len(prompt) < length:
                prompt += rng.choice(WORDS) + " "
            prompt = prompt[:length]
        out.append((t, prompt, max_tokens))
    return out


def one_request(server, start, item):
    offset, prompt, max_tokens = item
    delay = start + offset - time.perf_counter()
    if delay > 0:
        time.sleep(delay)
    sent = time.perf_counter()
    conn, resp = h.open_stream(server.host, server.port,
                               {"prompt": prompt, "max_tokens": max_tokens,
                                "temperature": 0, "stream": True})
    times, tokens = [], 0
    buffer = b""
    try:
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                break
            now = time.perf_counter()
            buffer += chunk
            while b"\n\n" in buffer:
                block, buffer = buffer.split(b"\n\n", 1)
                line = block.decode("utf-8", "replace").strip()
                if not line.startswith("data: ") or line == "data: [DONE]":
                    continue
                event = json.loads(line[6:])
                choice = (event.get("choices") or [{}])[0]
                if choice.get("text") or choice.get("token_ids"):
                    times.append(now)
                if event.get("usage"):
                    tokens = event["usage"]["completion_tokens"]
    finally:
        conn.close()
    done = time.perf_counter()
    ttft = times[0] - sent if times else None
    tpot = (times[-1] - times[0]) / (len(times) - 1) if len(times) > 1 else None
    return {"ttft": ttft, "tpot": tpot, "tokens": tokens, "sent": sent,
            "done": done, "status": resp.status}


def percentile(values, p):
    values = sorted(v for v in values if v is not None)
    if not values:
        return None
    index = max(0, min(len(values) - 1, int(round(p * len(values) + 0.5)) - 1))
    return values[index]


def run_load(server, items):
    start = time.perf_counter() + 0.2
    with concurrent.futures.ThreadPoolExecutor(max_workers=len(items)) as pool:
        results = list(pool.map(lambda it: one_request(server, start, it), items))
    bad = [r for r in results if r["status"] != 200]
    first = min(r["sent"] for r in results)
    last = max(r["done"] for r in results)
    tokens = sum(r["tokens"] for r in results)
    return {"throughput_tok_s": tokens / (last - first),
            "requests": len(results), "errors": len(bad),
            "ttft_p50_ms": 1000 * percentile([r["ttft"] for r in results], 0.5),
            "ttft_p99_ms": 1000 * percentile([r["ttft"] for r in results], 0.99),
            "tpot_p50_ms": 1000 * percentile([r["tpot"] for r in results], 0.5),
            "tpot_p99_ms": 1000 * percentile([r["tpot"] for r in results], 0.99)}


def plot(results, loads, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for policy, style in (("continuous", "o-"), ("static", "s--")):
        rows = results[policy]
        axes[0].plot(loads, [r["throughput_tok_s"] for r in rows], style, label=policy)
        axes[1].plot(loads, [r["ttft_p50_ms"] for r in rows], style, label=f"{policy} p50")
        axes[1].plot(loads, [r["ttft_p99_ms"] for r in rows], style, alpha=0.5,
                     label=f"{policy} p99")
        axes[2].plot(loads, [r["tpot_p50_ms"] for r in rows], style, label=f"{policy} p50")
        axes[2].plot(loads, [r["tpot_p99_ms"] for r in rows], style, alpha=0.5,
                     label=f"{policy} p99")
    for ax, title in zip(axes, ("throughput (generated tok/s)", "TTFT (ms)",
                                "TPOT (ms)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("offered load (requests/s)")
        ax.set_title(title)
        ax.legend(fontsize=8)
    axes[1].set_yscale("log")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def genai_static(threads, prompt_len, new_tokens, batches, rounds=3):
    """onnxruntime-genai's generation throughput (tok/s) per batch size on
    the Llama-shaped checkpoint: B sequences of |prompt_len| random ids,
    |new_tokens| each, greedy; the median of |rounds|."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import numpy as np
    import onnxruntime_genai as og
    from genai import checkpoint, genai_model
    config = og.Config(genai_model(checkpoint(), "fp32"))
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {
        "intra_op_num_threads": threads, "inter_op_num_threads": 1}}}}))
    model = og.Model(config)
    rng = np.random.default_rng(0)
    out = {}
    for batch in batches:
        prompts = rng.integers(3, 32000, (batch, prompt_len)).astype(np.int32)
        times = []
        for _ in range(rounds):
            params = og.GeneratorParams(model)
            params.set_search_options(max_length=prompt_len + new_tokens,
                                      do_sample=False, batch_size=batch)
            start = time.perf_counter()
            gen = og.Generator(model, params)
            gen.append_tokens(prompts)
            for _ in range(new_tokens):
                gen.generate_next_token()
            times.append(time.perf_counter() - start)
        out[batch] = batch * new_tokens / statistics.median(times)
        print(f"genai static batch {batch}: {out[batch]:.1f} tok/s", flush=True)
    return out


def compile_model(args, artifact):
    if args.model == "bytegpt":
        h.compile_bytegpt(args.bin_dir, args.fixture, artifact,
                          max_batch=args.max_seqs, max_seq=args.max_seq)
        return None, []
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from genai import checkpoint, strata_onnx
    import subprocess
    subprocess.run([os.path.join(args.bin_dir, "strata-compile"),
                    strata_onnx(checkpoint()), "-o", artifact, "--quiet",
                    "--max-batch", str(args.max_seqs), "--max-seq",
                    str(args.max_seq)],
                   check=True)
    return 32000, ["--tokenizer", "none"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", choices=["bytegpt", "llama-124m"],
                        default="bytegpt")
    parser.add_argument("--genai", action="store_true")
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--fixture", default=os.path.join(
        ROOT, "test", "models", "fixtures", "bytegpt"))
    parser.add_argument("--loads", default="4,8,16,32,64")
    parser.add_argument("--requests", type=int, default=96)
    parser.add_argument("--max-seqs", type=int, default=8)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--prompt-range", default="16,96")
    parser.add_argument("--output-range", default="16,160")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--lengths", choices=["uniform", "sharegpt"],
                        default="uniform")
    parser.add_argument("--length-scale", type=float, default=1.0,
                        help="sharegpt: multiplies both means")
    parser.add_argument("--max-seq", type=int, default=0,
                        help="the artifact's context (default: 256 for "
                        "bytegpt, 512 for llama-124m)")
    parser.add_argument("--out")
    parser.add_argument("--plot")
    args = parser.parse_args()
    loads = [float(x) for x in args.loads.split(",")]
    prompt_range = tuple(int(x) for x in args.prompt_range.split(","))
    output_range = tuple(int(x) for x in args.output_range.split(","))
    if not args.max_seq:
        args.max_seq = 256 if args.model == "bytegpt" else 512
    lengths = (("uniform",) if args.lengths == "uniform" else
               ("sharegpt", args.length_scale, args.max_seq))
    results = {"continuous": [], "static": []}
    with tempfile.TemporaryDirectory() as work:
        artifact = os.path.join(work, "model.strata")
        vocab, serve_flags = compile_model(args, artifact)
        # Every load draws the same lengths (the seed's), so one trace gives
        # the means; its prompts must be drawn as the loads' are (ids below
        # the vocabulary, or text), or the draws after them differ.
        sample = trace(args.requests, loads[0], args.seed, prompt_range,
                       output_range, vocab, lengths)
        mean_prompt = statistics.mean(len(p) for _, p, _ in sample)
        mean_output = statistics.mean(n for _, _, n in sample)
        print(f"lengths {args.lengths}: mean prompt {mean_prompt:.0f}, mean "
              f"max_tokens {mean_output:.0f} "
              f"(max {max(n for _, _, n in sample)})", flush=True)
        for policy in ("continuous", "static"):
            extra = ["--static-batching"] if policy == "static" else []
            server = h.Server(args.bin_dir, artifact, "--max-seqs",
                              str(args.max_seqs), "--threads", str(args.threads),
                              "--max-queue", "4096", *serve_flags, *extra)
            try:
                run_load(server, trace(8, 50, 99, prompt_range, output_range,
                                       vocab, lengths))
                for load in loads:
                    items = trace(args.requests, load, args.seed, prompt_range,
                                  output_range, vocab, lengths)
                    row = dict(load_rps=load, **run_load(server, items))
                    results[policy].append(row)
                    print(f"{policy:10s} {load:6.1f} req/s: "
                          f"{row['throughput_tok_s']:7.0f} tok/s, TTFT p50/p99 "
                          f"{row['ttft_p50_ms']:7.1f}/{row['ttft_p99_ms']:7.1f} ms, "
                          f"TPOT p50/p99 {row['tpot_p50_ms']:6.2f}/"
                          f"{row['tpot_p99_ms']:6.2f} ms, errors {row['errors']}",
                          flush=True)
            finally:
                server.stop()
    best = {p: max(r["throughput_tok_s"] for r in rows) for p, rows in results.items()}
    print(f"best throughput: continuous {best['continuous']:.0f} tok/s, static "
          f"{best['static']:.0f} tok/s, ratio {best['continuous'] / best['static']:.2f}")
    genai = None
    if args.genai:
        genai = genai_static(args.threads or 2, round(mean_prompt),
                             round(mean_output), sorted({1, 4, 8, args.max_seqs}))
        print(f"Strata continuous best / genai best static batch: "
              f"{best['continuous'] / max(genai.values()):.2f}")
    report = {"model": args.model, "genai_static_tok_s": genai,
              "threads": args.threads,
              "max_seqs": args.max_seqs, "requests_per_load": args.requests,
              "lengths": args.lengths, "length_scale": args.length_scale,
              "max_seq": args.max_seq, "mean_prompt": mean_prompt,
              "mean_max_tokens": mean_output,
              "prompt_range": prompt_range, "output_range": output_range,
              "results": results, "best_throughput": best}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
    if args.plot:
        plot(results, loads, args.plot)


if __name__ == "__main__":
    main()
