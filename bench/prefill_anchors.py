#!/usr/bin/env python3
# ===- bench/prefill_anchors.py - prefill per precision vs torch and ORT ---===#
# The time to the first token of a T-token prompt (batch 1), side by side in
# one run, rounds interleaved, medians:
# - Strata: the decoder compiled with defaults once per --prefill-precision
#   (fp32, bf16, int8 = W8A8), timed by `strata-bench` (a generate
#   workload of 1 new token: the prefill entry and the first sampling, one
#   warm-up run first), on the kernels the host has (`amx` where Linux
#   grants AMX tiles; --kernel-isa caps them);
# - PyTorch: the Hugging Face model with the same weights, fp32 and bf16
#   (`model.to(torch.bfloat16)`: oneDNN, on AMX tiles where the host has
#   them), under `torch.inference_mode()`, with `logits_to_keep=1` as
#   `generate` runs a prefill (the LM head on the last position only, as
#   Strata's prefill entry does);
# - onnxruntime: the same ONNX file, all graph optimizations, fp32 and
#   `quantize_dynamic` int8 (QInt8 weights), with the LM head cut to the last
#   position too (a Slice before its MatMul), so that every engine computes
#   the same work.
# Models: GPT-2-small (test/models/gen_size_ladder.py gpt2-small, ONNX
# weights copied into transformers' GPT2LMHeadModel) and the Llama-shaped
# 124M of bench/genai.py (its checkpoint and its with-past export, run with
# an empty past). The bench virtualenv (bench/setup-anchors.sh) has torch,
# transformers and onnxruntime.
#
# Usage: ~/.cache/strata/bench-venv/bin/python bench/prefill_anchors.py
#        [--models gpt2-small,llama-124m] [--tokens 128,512] [--rounds 5]
#        [--threads 2] [--precisions fp32,bf16,int8] [--kernel-isa ISA]
#        [--out FILE.json]
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import generation  # noqa: E402

CACHE = os.path.expanduser("~/.cache/strata/models")
# The ratios reported (what the AMX acceptance compares): name, then the
# engines whose median times are divided.
RATIOS = [("strata_bf16_over_torch_bf16", "strata-bf16", "torch-bf16"),
          ("strata_fp32_over_strata_bf16", "strata-fp32", "strata-bf16"),
          ("strata_w8a8_over_ort_int8", "strata-int8", "ort-int8"),
          ("strata_fp32_over_ort_fp32", "strata-fp32", "ort-fp32")]


def cut_lm_head(src, dst):
    """|src| with its logits computed for the last position only: a Slice
    [-1:] of the sequence axis before the MatMul that makes them."""
    import onnx
    from onnx import helper, numpy_helper
    model = onnx.load(src)
    g = model.graph
    head = next(n for n in g.node if "logits" in n.output)
    if head.op_type != "MatMul":
        sys.exit(f"{src}: logits come from {head.op_type}, not MatMul")
    consts = [numpy_helper.from_array(np.array([v], np.int64), f"lm_cut_{k}")
              for k, v in (("start", -1), ("end", 2**62), ("axis", 1))]
    g.initializer.extend(consts)
    g.node.insert(list(g.node).index(head), helper.make_node(
        "Slice", [head.input[0], "lm_cut_start", "lm_cut_end", "lm_cut_axis"],
        ["lm_cut_last"], name="lm_cut"))
    head.input[0] = "lm_cut_last"
    out = next(o for o in g.output if o.name == "logits")
    out.type.tensor_type.shape.dim[1].dim_value = 1
    onnx.save(model, dst, save_as_external_data=True,
              location=os.path.basename(dst) + ".data")


def gpt2_hf(onnx_path):
    """transformers' GPT2LMHeadModel with the ONNX file's weights."""
    import onnx
    import torch
    from onnx import numpy_helper
    from transformers import GPT2Config, GPT2LMHeadModel
    meta = json.load(open(os.path.join(os.path.dirname(onnx_path),
                                       "meta.json")))["config"]
    cfg = GPT2Config(vocab_size=meta["vocab"], n_positions=meta["n_positions"],
                     n_embd=meta["hidden"], n_layer=meta["layers"],
                     n_head=meta["heads"], activation_function="gelu_new")
    model = GPT2LMHeadModel(cfg)
    state = model.state_dict()
    loaded = set()
    for init in onnx.load(onnx_path).graph.initializer:
        name = "transformer." + init.name
        for part in (".c_fc.", ".c_proj."):
            if ".attn." not in name:
                name = name.replace(part, ".mlp" + part)
        if name not in state:
            continue
        value = torch.from_numpy(numpy_helper.to_array(init).copy())
        if value.shape != state[name].shape:
            value = value.t()
        state[name].copy_(value)
        loaded.add(name)
    missing = [k for k in state if k not in loaded and k != "lm_head.weight"
               and not k.endswith(".attn.bias")]
    if missing:
        sys.exit(f"weights missing from {onnx_path}: {missing[:5]}")
    model.tie_weights()
    return model.eval()


def models(names):
    """name -> (Strata's ONNX, ORT's ONNX, its past inputs, the HF model
    maker, vocabulary)."""
    out = {}
    for name in names:
        if name == "gpt2-small":
            d = os.path.join(CACHE, "gpt2-small")
            if not os.path.isfile(os.path.join(d, "decode.onnx")):
                sys.exit(f"no {d}: /usr/bin/python3 "
                         "test/models/gen_size_ladder.py gpt2-small")
            out[name] = dict(strata=os.path.join(d, "decode.onnx"),
                             ort=os.path.join(d, "prefill.onnx"),
                             hf=lambda d=d: gpt2_hf(
                                 os.path.join(d, "prefill.onnx")),
                             vocab=50257)
        elif name == "llama-124m":
            import genai
            hf = genai.checkpoint()
            path = genai.strata_onnx(hf)

            def make(hf=hf):
                from transformers import LlamaForCausalLM
                return LlamaForCausalLM.from_pretrained(hf).eval()
            out[name] = dict(strata=path, ort=path, hf=make,
                             vocab=genai.CONFIG["vocab_size"])
        else:
            sys.exit(f"unknown model {name}")
    return out


def ort_feeds(session, ids):
    """Inputs of a prefill of |ids|: an all-ones mask, positions from 0,
    and empty past tensors."""
    feeds = {}
    t = ids.shape[1]
    for i in session.get_inputs():
        if i.name == "input_ids":
            feeds[i.name] = ids
        elif i.name == "attention_mask":
            feeds[i.name] = np.ones((1, t), np.int64)
        elif i.name == "position_ids":
            feeds[i.name] = np.arange(t, dtype=np.int64)[None]
        elif i.name.startswith("past"):
            shape = [1 if isinstance(d, str) and "batch" in d else
                     0 if isinstance(d, str) else d for d in i.shape]
            feeds[i.name] = np.zeros(shape, np.float32)
        else:
            sys.exit(f"unexpected ORT input {i.name}")
    return feeds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="gpt2-small,llama-124m")
    ap.add_argument("--tokens", default="128,512")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--precisions", default="fp32,bf16,int8")
    ap.add_argument("--kernel-isa", default="")
    ap.add_argument("--bin-dir", default=os.path.join(ROOT, "build", "bin"))
    ap.add_argument("--out")
    a = ap.parse_args()
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    torch.set_num_threads(a.threads)
    tokens = [int(t) for t in a.tokens.split(",")]
    precisions = a.precisions.split(",")
    result = dict(host=generation.cpu_isa(), threads=a.threads,
                  torch=torch.__version__, onnxruntime=ort.__version__,
                  rounds=a.rounds, models={})
    tmp = tempfile.mkdtemp(prefix="strata-prefill-")
    for name, m in models(a.models.split(",")).items():
        print(f"== {name}", flush=True)
        # Strata artifacts and their plan: one generate workload of 1 new
        # token per prompt length.
        artifacts = {}
        for p in precisions:
            artifacts[p] = os.path.join(tmp, f"{name}-{p}.strata")
            generation.compile_artifact(
                a.bin_dir, m["strata"], artifacts[p],
                ["--prefill-precision", p, "--max-batch", "1", "--max-seq",
                 str(max(tokens) + 8)])
        plan = os.path.join(tmp, "plan.json")
        with open(plan, "w") as f:
            json.dump({"workloads": [dict(kind="generate", batch=1, prompt=t,
                                          gen=1) for t in tokens]}, f)
        # ORT models: fp32 and int8, the LM head on the last position.
        cut = os.path.join(tmp, f"{name}-last.onnx")
        cut_lm_head(m["ort"], cut)
        q8 = os.path.join(tmp, f"{name}-int8.onnx")
        quantize_dynamic(cut, q8, weight_type=QuantType.QInt8)
        so = ort.SessionOptions()
        so.intra_op_num_threads = a.threads
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sessions = {"ort-fp32": ort.InferenceSession(
                        cut, so, providers=["CPUExecutionProvider"]),
                    "ort-int8": ort.InferenceSession(
                        q8, so, providers=["CPUExecutionProvider"])}
        hf32 = m["hf"]()
        hf16 = m["hf"]().to(torch.bfloat16)
        rng = np.random.default_rng(1)
        ids = {t: rng.integers(0, m["vocab"], (1, t)).astype(np.int64)
               for t in tokens}
        # Same weights: torch fp32 and ORT fp32 agree on the last logits.
        with torch.inference_mode():
            ref = hf32(torch.from_numpy(ids[tokens[0]]),
                       logits_to_keep=1).logits[0, -1].numpy()
        got = sessions["ort-fp32"].run(
            ["logits"], ort_feeds(sessions["ort-fp32"], ids[tokens[0]]))[0]
        diff = float(np.abs(ref - got[0, -1]).max())
        print(f"torch vs ORT fp32 max logit diff {diff:.2e}", flush=True)

        def torch_ms(model, t):
            x = torch.from_numpy(ids[t])
            with torch.inference_mode():
                start = time.perf_counter()
                model(x, logits_to_keep=1)
                return (time.perf_counter() - start) * 1e3

        def ort_ms(session, t):
            feeds = ort_feeds(session, ids[t])
            start = time.perf_counter()
            session.run(["logits"], feeds)
            return (time.perf_counter() - start) * 1e3

        engines = [f"strata-{p}" for p in precisions] + [
            "torch-fp32", "torch-bf16", "ort-fp32", "ort-int8"]
        times = {e: {t: [] for t in tokens} for e in engines}
        for t in tokens:  # warm-up
            torch_ms(hf32, t), torch_ms(hf16, t)
            for s in sessions.values():
                ort_ms(s, t)
        for r in range(a.rounds):
            for p in precisions:
                out = subprocess.run(
                    [os.path.join(a.bin_dir, "strata-bench"), "--decode",
                     artifacts[p], "--plan", plan, "--threads",
                     str(a.threads), "--json"] +
                    (["--kernel-isa", a.kernel_isa] if a.kernel_isa else []),
                    check=True, capture_output=True, text=True).stdout
                report = json.loads(out)
                result["strata_kernels"] = report["kernel_isa"]
                for rec in report["results"]:
                    times[f"strata-{p}"][rec["prompt"]].append(
                        rec["ttft_seconds"] * 1e3)
            for t in tokens:
                times["torch-fp32"][t].append(torch_ms(hf32, t))
                times["torch-bf16"][t].append(torch_ms(hf16, t))
                for e, s in sessions.items():
                    times[e][t].append(ort_ms(s, t))
            print(f"round {r}: " + "; ".join(
                f"{e} " + "/".join(f"{times[e][t][-1]:.1f}" for t in tokens)
                for e in engines) + " ms", flush=True)
        med = {e: {t: statistics.median(times[e][t]) for t in tokens}
               for e in engines}
        ratios = {t: {key: med[a][t] / med[b][t] for key, a, b in RATIOS
                      if a in med and b in med} for t in tokens}
        result["models"][name] = dict(
            median_ms=med, ratios=ratios, ms=times,
            torch_vs_ort_fp32_max_logit_diff=diff)
        del hf32, hf16, sessions
    generation.report(result, a.out)


if __name__ == "__main__":
    main()
