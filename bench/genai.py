#!/usr/bin/env python3
# ===- bench/genai.py - generation, Strata vs onnxruntime-genai -------------===#
# One Llama-shaped checkpoint with random weights (hidden 768, 12 layers, 12
# heads, 4 KV heads, intermediate 2048, vocab 32000, rotary, GQA), made here
# with transformers (no download), then:
# - onnxruntime-genai: its model builder's fp32 CPU model, timed through its
#   Python API (append_tokens for the prompt, generate_next_token per token);
# - Strata: the same weights exported with past by torch.onnx.export
#   (the spelling of test/models/gen_transformers_fixtures.py), compiled
#   with defaults, generated with `strata-run generate`.
# Greedy, 2 threads each, rounds interleaved, medians. Workloads: prompt
# 128 + 64 new tokens at batch 1 and batch 8 (decode tokens/s), and prompt
# 512 (TTFT).
#
# With --precision int4: the builder's int4 model (MatMulNBits) against
# Strata's --decode-precision int4 artifact of the same weights.
#
# Runs in the anchors virtualenv (bench/setup-anchors.sh):
#   ~/.cache/strata/bench-venv/bin/python bench/genai.py [--rounds 3]
#       [--threads 2] [--precision fp32|int4] [--out FILE.json]
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.expanduser("~/.cache/strata/models/llama-124m")
CONFIG = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
              num_key_value_heads=4, intermediate_size=2048, vocab_size=32000,
              max_position_embeddings=2048, tie_word_embeddings=False)
SEED = 124


def checkpoint():
    """The Hugging Face checkpoint (and a placeholder tokenizer, which the
    builder insists on), made once."""
    hf = os.path.join(CACHE, "hf")
    if os.path.isfile(os.path.join(hf, "config.json")):
        return hf
    import torch
    from tokenizers import Tokenizer, models
    from transformers import (LlamaConfig, LlamaForCausalLM,
                              PreTrainedTokenizerFast)
    torch.manual_seed(SEED)
    model = LlamaForCausalLM(LlamaConfig(**CONFIG))
    model.save_pretrained(hf)
    vocab = {f"t{i}": i for i in range(CONFIG["vocab_size"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="t0"))
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="t0",
                            bos_token="t1", eos_token="t2").save_pretrained(hf)
    return hf


def genai_model(hf, precision):
    """The builder's CPU model: fp32, or int4 (its MatMulNBits weights,
    blocks of 32, the default accuracy level)."""
    out = os.path.join(CACHE, "genai-" + precision)
    if os.path.isfile(os.path.join(out, "genai_config.json")):
        return out
    subprocess.run([sys.executable, "-m", "onnxruntime_genai.models.builder",
                    "-i", hf, "-o", out, "-p", precision, "-e", "cpu", "-c",
                    os.path.join(CACHE, "builder-cache")], check=True)
    return out


def strata_onnx(hf):
    """The with-past export Strata compiles."""
    path = os.path.join(CACHE, "export", "model.onnx")
    if os.path.isfile(path):
        return path
    import torch
    import warnings
    from transformers import LlamaForCausalLM
    sys.path.insert(0, os.path.join(ROOT, "test", "models"))
    from gen_transformers_fixtures import Decoder
    model = LlamaForCausalLM.from_pretrained(hf, attn_implementation="eager")
    model.eval()
    cfg = model.config
    heads_kv = cfg.num_key_value_heads
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    b, s, p = 2, 7, 5
    args = [torch.randint(0, cfg.vocab_size, (b, s)),
            torch.ones(b, p + s, dtype=torch.long),
            torch.arange(p, p + s).unsqueeze(0).expand(b, s)]
    names = ["input_ids", "attention_mask", "position_ids"]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: "total_sequence_length"},
            "position_ids": {0: "batch_size", 1: "sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    outputs = ["logits"]
    for i in range(cfg.num_hidden_layers):
        for t in ("key", "value"):
            outputs.append(f"present.{i}.{t}")
            axes[outputs[-1]] = {0: "batch_size", 2: "total_sequence_length"}
            names.append(f"past_key_values.{i}.{t}")
            axes[names[-1]] = {0: "batch_size", 2: "past_sequence_length"}
            args.append(torch.randn(b, heads_kv, p, head_dim))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.no_grad():
            torch.onnx.export(Decoder(cfg, model), tuple(args), path,
                              opset_version=17, input_names=names,
                              output_names=outputs, dynamic_axes=axes,
                              do_constant_folding=True, dynamo=False)
    return path


def genai_run(og, model, prompts, new_tokens):
    """(TTFT ms, median per-token ms, tokens) through onnxruntime-genai."""
    params = og.GeneratorParams(model)
    params.set_search_options(max_length=prompts.shape[1] + new_tokens,
                              do_sample=False, batch_size=prompts.shape[0])
    gen = og.Generator(model, params)
    start = time.perf_counter()
    gen.append_tokens(prompts)
    gen.generate_next_token()
    ttft = (time.perf_counter() - start) * 1e3
    steps = []
    tokens = [gen.get_next_tokens().copy()]
    for _ in range(new_tokens - 1):
        t = time.perf_counter()
        gen.generate_next_token()
        steps.append((time.perf_counter() - t) * 1e3)
        tokens.append(gen.get_next_tokens().copy())
    return ttft, statistics.median(steps) if steps else 0.0, \
        np.stack(tokens, axis=1)


def strata_run(bin_dir, artifact, prompts, new_tokens, threads, tmp):
    path = os.path.join(tmp, "prompts.txt")
    with open(path, "w") as f:
        for p in prompts:
            f.write(",".join(str(int(t)) for t in p) + "\n")
    proc = subprocess.run(
        [os.path.join(bin_dir, "strata-run"), "generate", artifact,
         "--batch-prompt-ids", path, "--max-new-tokens", str(new_tokens),
         "--threads", str(threads), "--json"],
        capture_output=True, text=True, check=True)
    recs = [json.loads(line) for line in proc.stdout.splitlines()]
    # The median step, as genai's side measures: a sequence's mean interval
    # (tpot_ms) would also hold the prefills of the sequences added after
    # it (strata-run prefills each prompt as it joins; genai prefills the
    # batch before its first token and counts that in its TTFT).
    return (statistics.median(r["ttft_ms"] for r in recs),
            statistics.median(r["p50_ms"] for r in recs),
            np.array([r["tokens"] for r in recs]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=64)
    ap.add_argument("--precision", choices=["fp32", "int4"], default="fp32",
                    help="int4: genai's int4 model against Strata's "
                         "--decode-precision int4 (groups of 32)")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    import onnxruntime_genai as og
    hf = checkpoint()
    genai_dir = genai_model(hf, a.precision)
    onnx_path = strata_onnx(hf)
    config = og.Config(genai_dir)
    config.overlay(json.dumps({"model": {"decoder": {"session_options": {
        "intra_op_num_threads": a.threads, "inter_op_num_threads": 1}}}}))
    model = og.Model(config)
    rng = np.random.default_rng(0)
    workloads = {"b1_p128": (1, 128), "b8_p128": (8, 128),
                 "b1_p512": (1, 512)}
    results = {k: {"strata": [], "genai": []} for k in workloads}
    with tempfile.TemporaryDirectory(prefix="strata-genai-") as tmp:
        artifact = os.path.join(tmp, "llama.strata")
        start = time.time()
        subprocess.run([os.path.join(a.bin_dir, "strata-compile"), onnx_path,
                        "-o", artifact, "--quiet", "--max-batch", "8",
                        "--max-seq", "1024"] +
                       (["--decode-precision", "int4"]
                        if a.precision == "int4" else []), check=True)
        compile_s = time.time() - start
        prompts = {k: rng.integers(3, CONFIG["vocab_size"], (b, p))
                   .astype(np.int32) for k, (b, p) in workloads.items()}
        same = {}
        for r in range(a.rounds):
            for k, (b, p) in workloads.items():
                new = a.new_tokens if p == 128 else 2
                s = strata_run(a.bin_dir, artifact, prompts[k], new,
                               a.threads, tmp)
                g = genai_run(og, model, prompts[k], new)
                results[k]["strata"].append(s[:2])
                results[k]["genai"].append(g[:2])
                same[k] = bool((s[2][:, :8] == g[2][:, :8]).all())
                print(f"round {r} {k}: strata ttft {s[0]:.1f} tpot {s[1]:.2f}"
                      f" | genai ttft {g[0]:.1f} tpot {g[1]:.2f}", flush=True)
    summary = {"threads": a.threads, "precision": a.precision,
               "compile_s": compile_s,
               "first_8_tokens_equal": same}
    for k, (b, p) in workloads.items():
        row = {}
        for engine in ("strata", "genai"):
            ttft = statistics.median(x[0] for x in results[k][engine])
            tpot = statistics.median(x[1] for x in results[k][engine])
            row[engine] = {"ttft_ms": ttft, "tpot_ms": tpot,
                           "decode_tokens_per_s": b / (tpot / 1e3)
                           if tpot else None}
        row["ttft_ratio"] = row["strata"]["ttft_ms"] / row["genai"]["ttft_ms"]
        if row["genai"]["tpot_ms"]:
            row["decode_ratio"] = (row["strata"]["decode_tokens_per_s"] /
                                   row["genai"]["decode_tokens_per_s"])
        summary[k] = row
    text = json.dumps(summary, indent=1)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
