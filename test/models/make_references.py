#!/usr/bin/env python3
# ===- test/models/make_references.py - write onnxruntime reference outputs --===#
# For every fixtures/<name>/meta.json, builds seeded inputs and saves
# onnxruntime's outputs (graph optimizations off, one thread) as .npy under
# fixtures/<name>/ref/<case>/. Random-weight models get teacher-forced outputs
# (logits, present.*, hidden states); the trained model also gets a greedy
# generation case (prompt ids + 32 generated ids). Run with the venv python.
#
# Input sizes differ from the torch export sizes on purpose (see
# gen_torch_fixtures.py), so a traced constant shape fails here.
#
# Usage: .venv/bin/python test/models/make_references.py [FIXTURES_DIR] [--only NAME...]
import argparse
import json
import os
import shutil
import zlib

import numpy as np
import onnx

import refs

HERE = os.path.dirname(os.path.abspath(__file__))

CASES = {
    "past": [dict(batch=3, sequence=1, past_sequence=9),
             dict(batch=1, sequence=4, past_sequence=6)],
    "default": [dict(batch=3, sequence=11, past_sequence=0)],
}
PROMPTS = [b"In the beginning", b"The LORD said to", b"And it happened ", b"Blessed are the "]


def graph_inputs(path):
    m = onnx.load(path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    out = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = [d.dim_param or d.dim_value for d in t.shape.dim]
        out.append((i.name, onnx.helper.tensor_dtype_to_np_dtype(t.elem_type), dims))
    return out


def make_inputs(path, meta, dims, rng):
    b, s, p = dims["batch"], dims["sequence"], dims["past_sequence"]
    env = {"batch": b, "sequence": s, "past_sequence": p, "total_sequence": p + s}
    # Hugging Face spellings (gen_transformers_fixtures.py).
    env.update({"batch_size": b, "sequence_length": s, "past_sequence_length": p,
                "total_sequence_length": p + s})
    feeds = {}
    for name, dtype, shape in graph_inputs(path):
        shp = [env[d] if isinstance(d, str) else d for d in shape]
        if name == "input_ids":
            v = rng.integers(0, meta["vocab"], size=shp)
        elif name == "attention_mask":
            v = np.ones(shp)
            if p:  # left padding inside the history of row 0
                v[0, :2] = 0
            else:  # right padding on the last row
                v[-1, -3:] = 0
        elif name == "position_ids":
            v = np.tile(np.arange(p, p + s), (b, 1))
        elif name == "token_type_ids":
            v = rng.integers(0, 2, size=shp)
        else:
            v = rng.standard_normal(shp)
        feeds[name] = np.asarray(v).astype(dtype)
    return feeds


def write_case(case_dir, case, arrays):
    os.makedirs(case_dir, exist_ok=True)
    for name, arr in arrays.items():
        np.save(os.path.join(case_dir, name + ".npy"), arr)
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(case, f, indent=1, sort_keys=True)
        f.write("\n")


def teacher_forced(fdir, meta, model="model.onnx", kinds=None):
    path = os.path.join(fdir, model)
    sess = refs.session(path)
    outputs = [o.name for o in sess.get_outputs()]
    n = 0
    for dims in kinds or CASES.get(meta["kind"], CASES["default"]):
        rng = np.random.default_rng(zlib.crc32(("%s/%s/%r" % (meta["name"], model, dims)).encode()))
        feeds = make_inputs(path, meta, dims, rng)
        outs = sess.run(outputs, feeds)
        tag = "b%d_s%d_p%d" % (dims["batch"], dims["sequence"], dims["past_sequence"])
        case = {"kind": "outputs", "model": model, "inputs": sorted(feeds),
                "outputs": outputs, "rtol": 1e-4, "atol": 1e-4}
        write_case(os.path.join(fdir, "ref", os.path.splitext(model)[0] + "_" + tag), case,
                   {**feeds, **dict(zip(outputs, outs))})
        n += 1
    return n


def trained(fdir, meta):
    n = teacher_forced(fdir, meta, meta["prefill"], [dict(batch=1, sequence=48, past_sequence=0)])
    n += teacher_forced(fdir, meta, meta["decode"], [dict(batch=1, sequence=1, past_sequence=31)])
    prompt = np.array([list(p) for p in PROMPTS], np.int64)  # equal lengths: one batch
    pre = refs.session(os.path.join(fdir, meta["prefill"]))
    dec = refs.session(os.path.join(fdir, meta["decode"]))
    gen = refs.greedy(pre, dec, prompt, 32)
    case = {"kind": "greedy", "prefill": meta["prefill"], "decode": meta["decode"],
            "steps": 32}
    write_case(os.path.join(fdir, "ref", "greedy32"), case,
               {"prompt_ids": prompt, "generated_ids": gen})
    for row_p, row_g in zip(prompt, gen):
        print("   %r -> %r" % (bytes(row_p.tolist()).decode("utf-8", "replace"),
                               bytes(row_g.tolist()).decode("utf-8", "replace")))
    return n + 1


def split_case(fixtures, name, meta):
    """For a with-past fixture whose prefill twin exists (same weights), check
    prefill(all) == prefill(head) + decode(tail)."""
    if meta["kind"] == "trained":
        prefill, decode = meta["prefill"], meta["decode"]
    elif meta["kind"] == "past" and "_past" in name:
        twin = name.replace("_past", "_prefill")
        if not os.path.exists(os.path.join(fixtures, twin, "model.onnx")):
            return 0
        prefill, decode = "../%s/model.onnx" % twin, "model.onnx"
    else:
        return 0
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    ids = rng.integers(0, meta["vocab"], size=(2, 12)).astype(np.int64)
    case = {"kind": "split", "prefill": prefill, "decode": decode, "split": 8, "atol": 1e-4}
    write_case(os.path.join(fixtures, name, "ref", "split8"), case, {"input_ids": ids})
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fixtures", nargs="?", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    for name in sorted(os.listdir(a.fixtures)):
        fdir = os.path.join(a.fixtures, name)
        mpath = os.path.join(fdir, "meta.json")
        if not os.path.exists(mpath) or (a.only and name not in a.only):
            continue
        with open(mpath) as f:
            meta = json.load(f)
        shutil.rmtree(os.path.join(fdir, "ref"), ignore_errors=True)
        n = trained(fdir, meta) if meta["kind"] == "trained" else teacher_forced(fdir, meta)
        n += split_case(a.fixtures, name, meta)
        print("%-32s %d case(s)" % (name, n))


if __name__ == "__main__":
    main()
