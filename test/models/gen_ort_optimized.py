#!/usr/bin/env python3
# ===- test/models/gen_ort_optimized.py - contrib-op spellings ---------------===#
# Runs onnxruntime's transformers optimizer (onnxruntime.transformers, python
# fusions only: opt_level=0) over torch-exported fixtures, producing the
# com.microsoft contrib-op spellings users feed us: SkipLayerNormalization,
# BiasGelu, FastGelu, Attention (packed QKV), SkipSimplifiedLayerNormalization.
# Output: fixtures/<base>_ortopt/{model.onnx, meta.json}. Run with the venv
# python after gen_torch_fixtures.py. Deterministic.
#
# Usage: .venv/bin/python test/models/gen_ort_optimized.py [FIXTURES_DIR]
import contextlib
import io
import json
import logging
import os
import sys

from onnxruntime.transformers import optimizer

HERE = os.path.dirname(os.path.abspath(__file__))

# base fixture -> optimizer model_type
BASES = {
    "gpt2_op17_prefill": "gpt2",
    "gpt2_op17_past": "gpt2",
    "gpt2_newgelu_op17_prefill": "gpt2",
    "bert_op17": "bert",
    "llama_op17_past": "gpt2",  # no llama model_type; gpt2 runs the RMSNorm fusions
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "fixtures")
    logging.disable(logging.WARNING)
    for base, model_type in BASES.items():
        with open(os.path.join(out, base, "meta.json")) as f:
            meta = json.load(f)
        with contextlib.redirect_stdout(io.StringIO()):
            m = optimizer.optimize_model(
                os.path.join(out, base, "model.onnx"), model_type=model_type,
                num_heads=meta["heads"], hidden_size=meta["hidden"], opt_level=0)
        stats = {k: v for k, v in sorted(m.get_fused_operator_statistics().items()) if v}
        name = base + "_ortopt"
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        m.model.producer_name, m.model.producer_version = "onnxruntime.transformers", ""
        m.save_model_to_file(os.path.join(d, "model.onnx"))
        meta.update(name=name, source_fixture=base,
                    generator="test/models/gen_ort_optimized.py",
                    exporter=meta["exporter"] + " + onnxruntime.transformers optimizer "
                    "(model_type=%s, opt_level=0)" % model_type,
                    ort_fused_ops=stats)
        # The strata fusion passes must still reach the same semantic counts;
        # what the optimizer left unfused (GPT-2 attention) is ours to fuse.
        with open(os.path.join(d, "meta.json"), "w") as f:
            json.dump(meta, f, indent=1, sort_keys=True)
            f.write("\n")
        print("%-34s %s" % (name, stats))


if __name__ == "__main__":
    main()
