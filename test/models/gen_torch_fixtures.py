#!/usr/bin/env python3
# ===- test/models/gen_torch_fixtures.py - torch.onnx.export fixtures --------===#
# Exports the random-weight GPT-2, Llama and BERT style fixtures with
# torch.onnx.export (Debian's python3-torch 1.13; run with /usr/bin/python3).
# Each fixture lands in fixtures/<name>/ as model.onnx plus meta.json (shape
# facts and the op counts the fusion passes must reach). Seeded and
# deterministic: rerunning gives byte-identical files.
#
# Usage: /usr/bin/python3 gen_torch_fixtures.py [OUT_DIR] [--only NAME...]
import argparse
import io
import json
import os
import sys
import warnings

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import arch  # noqa: E402

# Export-time example sizes. References (make_references.py) use other sizes,
# so a size baked in by the tracer shows up as a failure there.
B, S, P = 2, 7, 5

GPT = dict(vocab=256, n_positions=128, hidden=64, layers=2, heads=4)
LLAMA = dict(vocab=256, max_positions=128, hidden=64, layers=2, heads=4, kv_heads=2,
             intermediate=176)
BERT = dict(vocab=256, max_positions=128, hidden=64, layers=2, heads=4, intermediate=256)

# name: (family, opset, kind, config overrides, has attention_mask)
FIXTURES = {
    "gpt2_op14_prefill": ("gpt2", 14, "prefill", {"act": "erf"}, True),
    "gpt2_op14_past": ("gpt2", 14, "past", {"act": "erf"}, True),
    "gpt2_op17_prefill": ("gpt2", 17, "prefill", {"act": "erf"}, True),
    "gpt2_op17_past": ("gpt2", 17, "past", {"act": "erf"}, True),
    "gpt2_tanh_op14_prefill": ("gpt2", 14, "prefill", {"act": "tanh"}, True),
    "gpt2_newgelu_op17_prefill": ("gpt2", 17, "prefill", {"act": "new_gelu"}, False),
    "gpt2_newgelu_op17_past": ("gpt2", 17, "past", {"act": "new_gelu"}, False),
    # Scripted spelling variants (same function, other graphs); see arch.GPT2Config.
    "gpt2_var_scale_mul": ("gpt2", 17, "prefill", {"variant": {"scale": "mul"}}, True),
    "gpt2_var_scale_split": ("gpt2", 17, "prefill", {"variant": {"scale": "split"}}, True),
    "gpt2_var_scale_preq": ("gpt2", 17, "prefill", {"variant": {"scale": "pre_q"}}, True),
    "gpt2_var_mask_triu": ("gpt2", 17, "prefill", {"variant": {"mask": "triu_add"}}, True),
    "gpt2_var_mask_fill": ("gpt2", 17, "prefill", {"variant": {"mask": "masked_fill"}}, True),
    "gpt2_var_operands_op14": ("gpt2", 14, "prefill", {"variant": {"operands": "swap"}}, True),
    "llama_op17_prefill": ("llama", 17, "prefill", {}, True),
    "llama_op17_past": ("llama", 17, "past", {}, True),
    "llama_op14_prefill": ("llama", 14, "prefill", {}, True),
    "bert_op14": ("bert", 14, "encoder", {}, True),
    "bert_op17": ("bert", 17, "encoder", {}, True),
    # Spellings no matcher lists, fused by what they compute (see arch.py):
    # a tanh GELU with its cubic factored and 0.5 + 0.5 tanh, and one as
    # x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)).
    "bert_tanh_gelu_op17": ("bert", 17, "encoder", {"act": "factored_tanh"}, True),
    "gpt2_sigmoid_gelu_op17_prefill": ("gpt2", 17, "prefill", {"act": "sigmoid_gelu"}, True),
    # Scores clamped to finfo.min after the mask, the scale split on Q and K
    # (K after the cache, before repeat_kv).
    "llama_clamp_qkscale_op17_prefill": ("llama", 17, "prefill",
                                         {"variant": {"scale": "qk", "clamp": True}}, True),
    "llama_clamp_qkscale_op17_past": ("llama", 17, "past",
                                      {"variant": {"scale": "qk", "clamp": True}}, True),
    # SiLU as x / (1 + exp(-x)) in layer 0, x (0.5 + 0.5 tanh(x / 2)) in layer 1.
    "llama_swish_op17_prefill": ("llama", 17, "prefill",
                                 {"variant": {"act": ["exp_silu", "tanh_silu"]}}, True),
    # K heads repeated by Unsqueeze + Tile, V by Concat of copies.
    "llama_kv_tile_op17_prefill": ("llama", 17, "prefill",
                                   {"variant": {"kv_repeat": "tile_concat"}}, True),
    "llama_kv_tile_op17_past": ("llama", 17, "past",
                                {"variant": {"kv_repeat": "tile_concat"}}, True),
}


# The strata.gelu approximation each arch.activation kind must fuse into.
GELU_APPROXIMATION = {"erf": "none", "tanh": "tanh", "new_gelu": "tanh",
                      "sigmoid_gelu": "tanh", "factored_tanh": "tanh"}


def seed_of(name):
    """Prefill and with-past fixtures of one model share weights."""
    for suffix in ("_prefill", "_past"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return sum(ord(c) * (i + 1) for i, c in enumerate(name)) % 100003


def build(name):
    family, opset, kind, over, has_mask = FIXTURES[name]
    torch.manual_seed(0)
    if family == "gpt2":
        cfg = arch.GPT2Config(**{**GPT, **over})
        model = arch.GPT2LMHeadModel(cfg)
        kv_heads, head_dim = cfg.heads, cfg.hidden // cfg.heads
    elif family == "llama":
        cfg = arch.LlamaConfig(**{**LLAMA, **over})
        model = arch.LlamaForCausalLM(cfg)
        kv_heads, head_dim = cfg.kv_heads, cfg.hidden // cfg.heads
    else:
        cfg = arch.BertConfig(**{**BERT, **over})
        model = arch.BertModel(cfg)
        kv_heads, head_dim = cfg.heads, cfg.hidden // cfg.heads
    # std 1/sqrt(hidden): pre-activations and attention scores are O(1), so
    # an approximation (tanh vs erf GELU, dropped eps) shows in the outputs.
    arch.randomize_(model, std=cfg.hidden ** -0.5, seed=seed_of(name))
    model.eval()
    return family, opset, kind, cfg, model, has_mask, kv_heads, head_dim


def export(name, out_dir):
    family, opset, kind, cfg, model, has_mask, kv_heads, head_dim = build(name)
    g = torch.Generator().manual_seed(seed_of(name))
    ids = torch.randint(0, cfg.vocab, (B, S), generator=g)
    past_len = P if kind == "past" else 0
    args, names, axes = [ids], ["input_ids"], {"input_ids": {0: "batch", 1: "sequence"}}
    total = "total_sequence" if kind == "past" else "sequence"
    if family == "bert":
        args += [torch.ones(B, S, dtype=torch.long), torch.zeros(B, S, dtype=torch.long)]
        names += ["attention_mask", "token_type_ids"]
        axes.update({n: {0: "batch", 1: "sequence"} for n in names[1:]})
        outputs = ["last_hidden_state"]
        axes["last_hidden_state"] = {0: "batch", 1: "sequence"}
    else:
        if has_mask or family == "llama":
            args.append(torch.ones(B, past_len + S, dtype=torch.long))
            names.append("attention_mask")
            axes["attention_mask"] = {0: "batch", 1: total}
        elif kind == "past":
            args.append(None)
        if family == "llama":
            args.append(torch.arange(past_len, past_len + S).unsqueeze(0).expand(B, S))
            names.append("position_ids")
            axes["position_ids"] = {0: "batch", 1: "sequence"}
        outputs = ["logits"]
        axes["logits"] = {0: "batch", 1: "sequence"}
        for i in range(cfg.layers):
            for t in ("key", "value"):
                outputs.append("present.%d.%s" % (i, t))
                axes[outputs[-1]] = {0: "batch", 2: total}
                if kind == "past":
                    names.append("past_key_values.%d.%s" % (i, t))
                    axes[names[-1]] = {0: "batch", 2: "past_sequence"}
                    args.append(torch.randn(B, kv_heads, P, head_dim, generator=g))
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(args), buf, opset_version=opset,
                          input_names=names, output_names=outputs,
                          dynamic_axes=axes, do_constant_folding=True)
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(buf.getvalue())
    meta = metadata(name, family, opset, kind, cfg, has_mask, kv_heads, head_dim,
                    names, outputs, axes)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return len(buf.getvalue())


def metadata(name, family, opset, kind, cfg, has_mask, kv_heads, head_dim,
             inputs, outputs, axes):
    layers = cfg.layers
    if family == "gpt2":
        expect = {"layer_norm": 2 * layers + 1, "rms_norm": 0, "gelu": layers,
                  "attention": layers}
        gelu = GELU_APPROXIMATION[cfg.act]
        hidden, vocab, maxpos = cfg.hidden, cfg.vocab, cfg.n_positions
        inter = 4 * cfg.hidden
    elif family == "llama":
        expect = {"layer_norm": 0, "rms_norm": 2 * layers + 1, "gelu": 0,
                  "attention": layers}
        gelu, hidden, vocab, maxpos = None, cfg.hidden, cfg.vocab, cfg.max_positions
        inter = cfg.intermediate
    else:
        expect = {"layer_norm": 2 * layers + 1, "rms_norm": 0, "gelu": layers,
                  "attention": layers}
        gelu, hidden, vocab, maxpos = (GELU_APPROXIMATION[cfg.act], cfg.hidden, cfg.vocab,
                                       cfg.max_positions)
        inter = cfg.intermediate
    return {
        "name": name, "family": family, "kind": kind, "opset": opset,
        "exporter": "torch.onnx.export (torch %s)" % torch.__version__.split("+")[0],
        "generator": "test/models/gen_torch_fixtures.py",
        "layers": layers, "heads": cfg.heads, "kv_heads": kv_heads,
        "head_dim": head_dim, "hidden": hidden, "intermediate": inter,
        "vocab": vocab, "max_positions": maxpos,
        "gelu_approximate": gelu, "has_attention_mask": bool(has_mask or family != "gpt2"),
        "causal": family != "bert", "position": {"gpt2": "learned", "llama": "rotary",
                                                   "bert": "learned"}[family],
        "norm": {"gpt2": "pre-LN", "llama": "pre-RMSNorm", "bert": "post-LN"}[family],
        "inputs": inputs, "outputs": outputs,
        "dim_names": {k: {str(a): n for a, n in v.items()} for k, v in axes.items()},
        "dim_relations": {"total_sequence": "past_sequence + sequence"}
        if kind == "past" else {},
        "expected_after_fusion": expect,
        "variant": getattr(cfg, "variant", {}),
    }


def verify(name, out_dir):
    """Runs the torch module on the saved onnxruntime reference inputs and
    returns the worst abs difference to the saved outputs (proves that the
    export traced no constant shape and matches eager torch)."""
    import numpy as np
    family, _, kind, cfg, model, has_mask, _, _ = build(name)
    worst = 0.0
    ref = os.path.join(out_dir, name, "ref")
    for case in sorted(os.listdir(ref)):
        with open(os.path.join(ref, case, "case.json")) as f:
            spec = json.load(f)
        if spec["kind"] != "outputs":
            continue
        t = {n: torch.from_numpy(np.load(os.path.join(ref, case, n + ".npy")))
             for n in spec["inputs"] + spec["outputs"]}
        if family == "bert":
            outs = [model(t["input_ids"], t["attention_mask"], t["token_type_ids"])]
        else:
            args = [t["input_ids"], t.get("attention_mask")]
            if family == "llama":
                args.append(t["position_ids"])
            if kind == "past":
                args += [t["past_key_values.%d.%s" % (i, k)]
                         for i in range(cfg.layers) for k in ("key", "value")]
            with torch.no_grad():
                outs = model(*args)
        for n, got in zip(spec["outputs"], outs):
            worst = max(worst, float((got.detach() - t[n]).abs().max()))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--verify", action="store_true",
                    help="compare eager torch with the saved onnxruntime references")
    a = ap.parse_args()
    torch.set_num_threads(1)
    for name in a.only or FIXTURES:
        if a.verify:
            err = verify(name, a.out)
            print("%-28s torch vs onnxruntime max abs diff %.2g%s"
                  % (name, err, "" if err < 1e-4 else "  MISMATCH"))
            if err >= 1e-4:
                sys.exit(1)
            continue
        n = export(name, a.out)
        print("%-28s %7d bytes" % (name, n))


if __name__ == "__main__":
    main()
