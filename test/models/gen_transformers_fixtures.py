#!/usr/bin/env python3
# ===- test/models/gen_transformers_fixtures.py - HF Llama exports ----------===#
# Exports a tiny random-weight transformers LlamaForCausalLM (eager attention,
# grouped-query K/V repeated by expand + reshape, the float causal + padding
# mask of transformers' masking utilities) with torch.onnx.export
# (dynamo=False), the way current releases spell the graph, and the same
# layers as a MistralForCausalLM with a 4-token sliding window (its mask:
# causal, k > q - 4 and padding, and-ed together), and as a
# Qwen2ForCausalLM whose layers alternate a 4-token sliding window (layer 0)
# with full causal attention (layer 1), each layer with its own mask:
#   transformers_llama_op17_prefill  input_ids, attention_mask, position_ids
#                                    -> logits, present.N.key/value
#   transformers_llama_op17_past     the same plus past_key_values.N.key/value
#   transformers_llama8_op17_past    the same with 8 heads and 4 key/value
#                                    heads (split 4 ways by tensor
#                                    parallelism)
#   transformers_mistral_op17_prefill  the Mistral model's prefill
#   transformers_qwen2_op17_prefill    the alternating Qwen2 model's prefill
# and, as a user exports them without a cache (input_ids, attention_mask ->
# logits; the positions come from the model's own cache position, or from
# the mask as OPT counts them), one small model of each other mainstream
# decoder family whose graph spells something of its own:
#   transformers_llama_op17_logits     the Llama model above, without
#                                      position_ids (rotary angles from the
#                                      model's cache_position)
#   transformers_opt_op17_logits       learned positions counted from the
#                                      mask (cumsum(mask) * mask), ReLU MLP
#   transformers_olmo2_op17_logits     RMSNorm over the whole q/k projection
#                                      before the head split, norms after
#                                      attention and MLP
#   transformers_qwen3_op17_logits     RMSNorm per head on q and k
#   transformers_gemma_op17_logits     (1 + w) RMSNorm, scaled embeddings,
#                                      GeGLU (tanh GELU)
#   transformers_phi3_op17_logits      fused qkv and gate/up projections
#   transformers_gptneox_op17_logits   rotary on a quarter of each head,
#                                      parallel attention and MLP
#   transformers_falcon_op17_logits    fused qkv with grouped K/V, parallel
#                                      attention and MLP
#   transformers_phi_op17_logits       rotary on half of each head, one
#                                      LayerNorm feeding attention and MLP
#   transformers_granite_op17_logits   embedding, attention, residual and
#                                      logit multipliers
# and two exported by torch.onnx.export's default exporter (dynamo=True,
# opset 18; needs onnxscript), which spells sizes and masks otherwise
# (view(batch, -1) as (batch * length) / batch, the padding mask by
# GatherND):
#   transformers_llama_op18_dynamo, transformers_gpt2_op18_dynamo
#   transformers_bert_op18_dynamo      an encoder (-> last_hidden_state):
#                                      the position and token type tables
#                                      cut to the length, read by
#                                      GatherElements
#   transformers_gemma3_op17_logits    a 4-token sliding window in layer 0,
#                                      full attention in layer 1, q/k norms,
#                                      norms before and after each block
# (No Mistral with-past export: transformers' sliding-window cache makes the
# traced graph keep the last W - 1 past rows and build its mask for S + W -
# 1 keys whatever the past length, so it runs only for pasts of W - 1 rows
# or more; onnxruntime fails on shorter ones too.)
# Dims are named as in Hugging Face exports: batch_size, sequence_length,
# past_sequence_length, total_sequence_length. Both fixtures share weights.
# Each lands in fixtures/<name>/ as model.onnx plus meta.json (the format of
# gen_torch_fixtures.py); make_references.py writes the references.
#
# Needs current torch + transformers (not Debian's torch 1.13): exported with
# torch 2.15.0 and transformers 5.24.0 from ~/.cache/strata/export-venv. Other
# versions may spell the graph differently; the committed files are the
# reference. Not run in CI.
#
# Usage: ~/.cache/strata/export-venv/bin/python gen_transformers_fixtures.py \
#            [OUT_DIR] [--only NAME...] [--verify]
import argparse
import io
import json
import os
import sys
import warnings

import torch
import transformers
from transformers import (DynamicCache, LlamaConfig, LlamaForCausalLM,
                          MistralConfig, MistralForCausalLM, Qwen2Config,
                          Qwen2ForCausalLM)

HERE = os.path.dirname(os.path.abspath(__file__))
EXPORTED_WITH = {"torch": "2.15.0", "transformers": "5.24.0"}

# Export-time example sizes; the references use other sizes (see
# make_references.py), so a size baked in by the tracer fails there.
B, S, P = 2, 7, 5
OPSET = 17
CONFIG = dict(vocab_size=256, hidden_size=64, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2,
              intermediate_size=176, max_position_embeddings=128,
              rms_norm_eps=1e-6, tie_word_embeddings=False)
SEED = 20261201
SLIDING_WINDOW = 4

# name: (kind, family)
FIXTURES = {
    "transformers_llama_op17_prefill": ("prefill", "llama"),
    "transformers_llama_op17_past": ("past", "llama"),
    "transformers_llama8_op17_past": ("past", "llama8"),
    "transformers_mistral_op17_prefill": ("prefill", "mistral"),
    "transformers_qwen2_op17_prefill": ("prefill", "qwen2"),
}
LOGITS_FAMILIES = ("llama", "opt", "olmo2", "qwen3", "gemma", "phi3", "gptneox",
                   "falcon", "phi", "granite", "gemma3")
FIXTURES.update({"transformers_%s_op17_logits" % f: ("logits", f)
                 for f in LOGITS_FAMILIES})
# Exported by the default (dynamo) exporter at its own opset.
DYNAMO = {"transformers_llama_op18_dynamo": "llama",
          "transformers_gpt2_op18_dynamo": "gpt2",
          "transformers_bert_op18_dynamo": "bert"}
FIXTURES.update({name: ("encoder" if f == "bert" else "logits", f)
                 for name, f in DYNAMO.items()})
DYNAMO_OPSET = 18

# The sizes of CONFIG for the families whose configs name them otherwise.
PLAIN = dict(vocab_size=256, hidden_size=64, num_hidden_layers=2,
             num_attention_heads=4, max_position_embeddings=128)

# Fused ops per family after Strata's fusion (2 layers), and the GELU form.
EXPECTED = {
    "llama": dict(rms_norm=5, silu=2, attention=2),
    "llama8": dict(rms_norm=5, silu=2, attention=2),
    "gpt2": dict(layer_norm=5, gelu=2, attention=2),
    "bert": dict(layer_norm=5, gelu=2, attention=2),
    "opt": dict(layer_norm=5, attention=2),
    "olmo2": dict(rms_norm=9, silu=2, attention=2),
    "qwen3": dict(rms_norm=9, silu=2, attention=2),
    "gemma": dict(rms_norm=5, gelu=2, attention=2),
    "phi3": dict(rms_norm=5, silu=2, attention=2),
    "gptneox": dict(layer_norm=5, gelu=2, attention=2),
    "falcon": dict(layer_norm=5, gelu=2, attention=2),
    "phi": dict(layer_norm=3, gelu=2, attention=2),
    "granite": dict(rms_norm=5, silu=2, attention=2),
    "gemma3": dict(rms_norm=13, gelu=2, attention=2),
}
GELU_FORM = {"gpt2": "tanh", "bert": "none", "gemma": "tanh", "gemma3": "tanh", "gptneox": "none", "falcon": "none",
             "phi": "tanh"}


def family_model(family):
    """(config, model class) of a family beyond Llama's."""
    T = transformers
    if family == "opt":
        return T.OPTConfig(**PLAIN, ffn_dim=176, word_embed_proj_dim=64,
                           do_layer_norm_before=True), T.OPTForCausalLM
    if family == "bert":
        return (T.BertConfig(**PLAIN, intermediate_size=176), T.BertModel)
    if family == "gpt2":
        return (T.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4,
                             n_positions=128), T.GPT2LMHeadModel)
    if family == "olmo2":
        return T.Olmo2Config(**CONFIG), T.Olmo2ForCausalLM
    if family == "qwen3":
        return T.Qwen3Config(**CONFIG, head_dim=16), T.Qwen3ForCausalLM
    if family == "gemma":
        return T.GemmaConfig(**CONFIG, head_dim=16), T.GemmaForCausalLM
    if family == "phi3":
        return T.Phi3Config(**CONFIG, pad_token_id=0), T.Phi3ForCausalLM
    if family == "gptneox":
        return (T.GPTNeoXConfig(**PLAIN, intermediate_size=176,
                                rotary_pct=0.25), T.GPTNeoXForCausalLM)
    if family == "falcon":
        return (T.FalconConfig(**{k: v for k, v in PLAIN.items()
                                  if k != "max_position_embeddings"},
                               new_decoder_architecture=True, num_kv_heads=2,
                               max_position_embeddings=128),
                T.FalconForCausalLM)
    if family == "phi":
        return (T.PhiConfig(**PLAIN, intermediate_size=176,
                            partial_rotary_factor=0.5), T.PhiForCausalLM)
    if family == "granite":
        return (T.GraniteConfig(**CONFIG, embedding_multiplier=2.0,
                                attention_multiplier=0.125,
                                residual_multiplier=0.5, logits_scaling=4.0),
                T.GraniteForCausalLM)
    if family == "gemma3":
        return (T.Gemma3TextConfig(**CONFIG, head_dim=16,
                                   sliding_window=SLIDING_WINDOW,
                                   layer_types=QWEN2_LAYER_TYPES),
                T.Gemma3ForCausalLM)
    raise ValueError(family)

# The alternating model's layer kinds, as Gemma-2/3 and Qwen2 configs spell
# them, and the window each layer's attention must carry after fusion.
QWEN2_LAYER_TYPES = ["sliding_attention", "full_attention"]


def build(family="llama"):
    """The random-weight model. Weights have std 1/sqrt(hidden) (norm gains
    1 +- 0.1) so attention scores are O(1) and a wrong mask or scale shows in
    the logits; transformers' 0.02 init would hide it."""
    if family == "mistral":
        cfg = MistralConfig(**CONFIG, sliding_window=SLIDING_WINDOW)
        model_class = MistralForCausalLM
    elif family == "qwen2":
        cfg = Qwen2Config(**CONFIG, sliding_window=SLIDING_WINDOW,
                          use_sliding_window=True,
                          layer_types=QWEN2_LAYER_TYPES)
        model_class = Qwen2ForCausalLM
    elif family == "llama":
        cfg = LlamaConfig(**CONFIG)
        model_class = LlamaForCausalLM
    elif family == "llama8":
        cfg = LlamaConfig(**dict(CONFIG, num_attention_heads=8,
                                 num_key_value_heads=4))
        model_class = LlamaForCausalLM
    else:
        cfg, model_class = family_model(family)
    cfg._attn_implementation = "eager"
    torch.manual_seed(SEED)
    model = model_class(cfg)
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            noise = torch.randn(p.shape, generator=g)
            # Gains (norm weights; Falcon names its norms ln_*): 1 +- 0.1.
            if name.endswith(("norm.weight", "layernorm.weight")) or \
                    ".ln_" in name and name.endswith(".weight"):
                p.copy_(1 + 0.1 * noise)
            else:
                p.copy_(noise * CONFIG["hidden_size"] ** -0.5)
    model.eval()
    return cfg, model


class Decoder(torch.nn.Module):
    """Flat tensor signature around LlamaForCausalLM: the cache goes in as
    past_key_values.N.key/value and comes out as present.N.key/value. The
    DynamicCache is built here because transformers 5.x takes it as the
    `cache` argument and traces no tuple-of-tensors form."""

    def __init__(self, cfg, model):
        super().__init__()
        self.cfg, self.model = cfg, model

    def forward(self, input_ids, attention_mask, position_ids, *past):
        cache = DynamicCache(config=self.cfg)
        for i in range(len(past) // 2):
            cache.update(past[2 * i], past[2 * i + 1], i)
        out = self.model(input_ids=input_ids, attention_mask=attention_mask,
                         position_ids=position_ids, cache=cache,
                         use_cache=True)
        present = []
        for layer in out.cache.layers:
            present += [layer.keys, layer.values]
        return (out.logits, *present)


class Logits(torch.nn.Module):
    """input_ids, attention_mask -> logits, no cache: the model computes
    its positions itself."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask,
                          use_cache=False).logits


class Encoder(torch.nn.Module):
    """input_ids, attention_mask -> last_hidden_state."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids,
                          attention_mask=attention_mask).last_hidden_state


def signature(kind, cfg):
    if kind in ("encoder", "logits"):
        # input_ids, attention_mask -> one output, no cache.
        output = "last_hidden_state" if kind == "encoder" else "logits"
        g = torch.Generator().manual_seed(SEED + 1)
        args = [torch.randint(0, cfg.vocab_size, (B, S), generator=g),
                torch.ones(B, S, dtype=torch.long)]
        axes = {n: {0: "batch_size", 1: "sequence_length"}
                for n in ("input_ids", "attention_mask", output)}
        return args, ["input_ids", "attention_mask"], [output], axes
    heads_kv = cfg.num_key_value_heads
    head_dim = cfg.hidden_size // cfg.num_attention_heads
    total = "total_sequence_length" if kind == "past" else "sequence_length"
    g = torch.Generator().manual_seed(SEED + 1)
    past_len = P if kind == "past" else 0
    args = [torch.randint(0, cfg.vocab_size, (B, S), generator=g),
            torch.ones(B, past_len + S, dtype=torch.long),
            torch.arange(past_len, past_len + S).unsqueeze(0).expand(B, S)]
    names = ["input_ids", "attention_mask", "position_ids"]
    axes = {"input_ids": {0: "batch_size", 1: "sequence_length"},
            "attention_mask": {0: "batch_size", 1: total},
            "position_ids": {0: "batch_size", 1: "sequence_length"},
            "logits": {0: "batch_size", 1: "sequence_length"}}
    outputs = ["logits"]
    for i in range(cfg.num_hidden_layers):
        for t in ("key", "value"):
            outputs.append("present.%d.%s" % (i, t))
            axes[outputs[-1]] = {0: "batch_size", 2: total}
            if kind == "past":
                names.append("past_key_values.%d.%s" % (i, t))
                axes[names[-1]] = {0: "batch_size", 2: "past_sequence_length"}
                args.append(torch.randn(B, heads_kv, P, head_dim, generator=g))
    return args, names, outputs, axes


def export(name, out_dir):
    kind, family = FIXTURES[name]
    cfg, model = build(family)
    args, names, outputs, axes = signature(kind, cfg)
    buf = io.BytesIO()
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wrapper = {"logits": Logits, "encoder": Encoder}.get(
            kind, lambda m: Decoder(cfg, m))(model)
        if name in DYNAMO:
            path = os.path.join(d, "model.onnx")
            torch.onnx.export(wrapper, tuple(args), path,
                              opset_version=DYNAMO_OPSET, input_names=names,
                              output_names=outputs, dynamic_axes=axes,
                              dynamo=True, external_data=False,
                              verbose=False)
            buf.write(without_provenance(path))
        else:
            torch.onnx.export(wrapper, tuple(args), buf,
                              opset_version=OPSET, input_names=names,
                              output_names=outputs, dynamic_axes=axes,
                              do_constant_folding=True, dynamo=False)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(buf.getvalue())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(metadata(name, kind, family, cfg, names, outputs, axes), f,
                  indent=1, sort_keys=True)
        f.write("\n")
    return len(buf.getvalue())


def without_provenance(path):
    """The bytes of the ONNX file at |path| without the default exporter's
    per-node stack traces and doc strings (they name the exporting
    machine's file paths)."""
    import onnx
    model = onnx.load(path)
    for graph in [model.graph] + [f for f in model.functions]:
        for node in graph.node:
            node.doc_string = ""
            del node.metadata_props[:]
    for value in list(model.graph.value_info) + list(model.graph.input) + \
            list(model.graph.output):
        del value.metadata_props[:]
    del model.graph.metadata_props[:]
    model.doc_string = ""
    return model.SerializeToString()


def metadata(name, kind, family, cfg, inputs, outputs, axes):
    layers = cfg.num_hidden_layers
    meta = {
        "name": name, "family": family, "kind": kind,
        "opset": DYNAMO_OPSET if name in DYNAMO else OPSET,
        "exporter": "torch.onnx.export dynamo=%s (torch %s, transformers %s)"
                    % (name in DYNAMO, torch.__version__.split("+")[0],
                       transformers.__version__),
        "generator": "test/models/gen_transformers_fixtures.py",
        "layers": layers, "heads": cfg.num_attention_heads,
        "kv_heads": getattr(cfg, "num_key_value_heads", None),
        "head_dim": cfg.hidden_size // cfg.num_attention_heads,
        "hidden": cfg.hidden_size,
        "intermediate": getattr(cfg, "intermediate_size", None),
        "vocab": cfg.vocab_size, "max_positions": cfg.max_position_embeddings,
        "gelu_approximate": None, "has_attention_mask": True, "causal": True,
        "position": "rotary", "norm": "pre-RMSNorm",
        "inputs": inputs, "outputs": outputs,
        "dim_names": {k: {str(a): n for a, n in v.items()} for k, v in axes.items()},
        "dim_relations": {"total_sequence_length":
                          "past_sequence_length + sequence_length"}
        if kind == "past" else {},
        "expected_after_fusion": {"layer_norm": 0, "rms_norm": 2 * layers + 1,
                                  "gelu": 0, "attention": layers},
    }
    if kind == "encoder":
        meta["causal"] = False
        meta["position"] = "learned"
    if kind in ("logits", "encoder"):
        kv_heads = getattr(cfg, "num_key_value_heads", None) or \
            getattr(cfg, "num_kv_heads", None) or cfg.num_attention_heads
        meta.update({
            "kv_heads": kv_heads,
            "head_dim": getattr(cfg, "head_dim", None) or
            cfg.hidden_size // cfg.num_attention_heads,
            "intermediate": getattr(cfg, "intermediate_size", None) or
            getattr(cfg, "ffn_dim", None) or 4 * cfg.hidden_size,
            "position": "learned" if family in ("opt", "gpt2", "bert")
            else "rotary",
            "norm": "LayerNorm" if "layer_norm" in EXPECTED[family]
            else "RMSNorm",
            "gelu_approximate": GELU_FORM.get(family),
            "expected_after_fusion": {
                op: EXPECTED[family].get(op, 0)
                for op in ("layer_norm", "rms_norm", "gelu", "silu",
                           "attention")},
        })
    if family == "mistral":
        meta["sliding_window"] = SLIDING_WINDOW
    if family == "opt":
        # The decoder layers run on [B * S, hidden] and reshape back with
        # extents read from a shape vector; the analysis of output maxima
        # bounds that batch by a product, not exactly.
        meta["loose_output_maxima"] = {
            "logits": "the batch after the layers' reshape back from "
                      "[B * S, hidden] is bounded, not exact"}
    if family in ("qwen2", "gemma3"):
        meta["layer_windows"] = [SLIDING_WINDOW if t == "sliding_attention"
                                 else None for t in QWEN2_LAYER_TYPES]
    return meta


def verify(name, out_dir):
    """Runs the torch model on the saved onnxruntime reference inputs and
    returns the worst abs difference to the saved outputs."""
    import numpy as np
    kind, family = FIXTURES[name]
    cfg, model = build(family)
    wrapper = {"logits": Logits, "encoder": Encoder}.get(
        kind, lambda m: Decoder(cfg, m))(model)
    worst = 0.0
    ref = os.path.join(out_dir, name, "ref")
    for case in sorted(os.listdir(ref)):
        with open(os.path.join(ref, case, "case.json")) as f:
            spec = json.load(f)
        if spec["kind"] != "outputs":
            continue
        t = {n: torch.from_numpy(np.load(os.path.join(ref, case, n + ".npy")))
             for n in spec["inputs"] + spec["outputs"]}
        args = [t["input_ids"], t["attention_mask"]]
        if kind not in ("logits", "encoder"):
            args.append(t["position_ids"])
        args += [t["past_key_values.%d.%s" % (i, k)]
                 for i in range(cfg.num_hidden_layers) for k in ("key", "value")
                 if "past_key_values.%d.%s" % (i, k) in t]
        with torch.no_grad():
            outs = wrapper(*args)
        if kind in ("logits", "encoder"):
            outs = (outs,)
        for n, got in zip(spec["outputs"], outs):
            worst = max(worst, float((got - t[n]).abs().max()))
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--verify", action="store_true",
                    help="compare eager torch with the saved onnxruntime references")
    a = ap.parse_args()
    torch.set_num_threads(1)
    have = {"torch": torch.__version__.split("+")[0],
            "transformers": transformers.__version__}
    if have != EXPORTED_WITH:
        print("note: exporting with %r; the committed fixtures come from %r"
              % (have, EXPORTED_WITH), file=sys.stderr)
    for name in a.only or FIXTURES:
        if a.verify:
            err = verify(name, a.out)
            print("%-32s torch vs onnxruntime max abs diff %.2g%s"
                  % (name, err, "" if err < 1e-4 else "  MISMATCH"))
            if err >= 1e-4:
                sys.exit(1)
            continue
        print("%-32s %7d bytes" % (name, export(name, a.out)))


if __name__ == "__main__":
    main()
