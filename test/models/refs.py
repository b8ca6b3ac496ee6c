# ===- test/models/refs.py - run fixtures with onnxruntime -------------------===#
# Shared by make_references.py (writes the .npy references) and
# check_references.py (re-runs onnxruntime and compares). Run with the project
# venv python (onnxruntime, numpy).
#
# A reference case is a folder fixtures/<name>/ref/<case>/ holding case.json
# and .npy files named after the tensors. case.json kinds:
#   "outputs": run `model` on the saved inputs, compare every listed output
#              with rtol/atol (teacher-forced logits, present.*, hidden states).
#   "split":   prefill on all of input_ids vs prefill on the first `split`
#              ids + the with-past model on the rest: logits and present.*
#              must agree (KV layout, causal mask with past, positions).
#   "greedy":  greedy generation with `prefill` + `decode` (with-past) models:
#              prompt_ids [B, L] -> generated_ids [B, steps], compared exactly.
import json
import os

import numpy as np
import onnxruntime as ort

LEVELS = {"disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
          "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL}


def session(path, level="disable", threads=1):
    so = ort.SessionOptions()
    so.graph_optimization_level = LEVELS[level]
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def greedy(prefill, decode, prompt, steps):
    """Greedy decoding with HF-style decoder + decoder-with-past models.
    Feeds attention_mask / position_ids when the model declares them."""
    b, n = prompt.shape
    names = {i.name for i in prefill.get_inputs()}
    feeds = {"input_ids": prompt.astype(np.int64)}
    if "attention_mask" in names:
        feeds["attention_mask"] = np.ones((b, n), np.int64)
    if "position_ids" in names:
        feeds["position_ids"] = np.tile(np.arange(n, dtype=np.int64), (b, 1))
    outs = prefill.run(None, feeds)
    out_names = [o.name for o in prefill.get_outputs()]
    generated = []
    total = n
    while True:
        logits = outs[out_names.index("logits")]
        nxt = logits[:, -1, :].argmax(-1).astype(np.int64)
        generated.append(nxt)
        if len(generated) == steps:
            break
        dnames = {i.name for i in decode.get_inputs()}
        feeds = {"input_ids": nxt[:, None]}
        total += 1
        if "attention_mask" in dnames:
            feeds["attention_mask"] = np.ones((b, total), np.int64)
        if "position_ids" in dnames:
            feeds["position_ids"] = np.full((b, 1), total - 1, np.int64)
        for name, val in zip(out_names, outs):
            if name.startswith("present."):
                feeds["past_key_values." + name[len("present."):]] = val
        outs = decode.run(None, feeds)
        out_names = [o.name for o in decode.get_outputs()]
    return np.stack(generated, axis=1)


def _feeds(sess, ids, past_len):
    b, s = ids.shape
    names = {i.name for i in sess.get_inputs()}
    f = {"input_ids": ids}
    if "attention_mask" in names:
        f["attention_mask"] = np.ones((b, past_len + s), np.int64)
    if "position_ids" in names:
        f["position_ids"] = np.tile(np.arange(past_len, past_len + s, dtype=np.int64), (b, 1))
    return f


def run_split(fixture, case, ids, level, threads):
    pre = session(os.path.join(fixture, case["prefill"]), level, threads)
    dec = session(os.path.join(fixture, case["decode"]), level, threads)
    k = case["split"]
    names = [o.name for o in pre.get_outputs()]
    full = dict(zip(names, pre.run(None, _feeds(pre, ids, 0))))
    head = dict(zip(names, pre.run(None, _feeds(pre, ids[:, :k], 0))))
    feeds = _feeds(dec, ids[:, k:], k)
    for n, v in head.items():
        if n.startswith("present."):
            feeds["past_key_values." + n[len("present."):]] = v
    dnames = [o.name for o in dec.get_outputs()]
    tail = dict(zip(dnames, dec.run(None, feeds)))
    worst = 0.0
    for n, got in tail.items():
        want = full[n][:, k:] if n == "logits" else full[n]
        atol = case["atol"] * max(1.0, float(np.abs(want).max()))
        err = float(np.abs(got - want).max())
        if got.shape != want.shape or err > atol:
            return False, "%s: prefill+decode differs from prefill by %.3g" % (n, err)
        worst = max(worst, err)
    return True, "split at %d, max abs diff %.2g" % (k, worst)


def run_case(case_dir, level="disable", threads=1):
    """Runs one case; returns (ok, message)."""
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    fixture = os.path.normpath(os.path.join(case_dir, "..", ".."))
    load = lambda n: np.load(os.path.join(case_dir, n + ".npy"))  # noqa: E731
    if case["kind"] == "greedy":
        pre = session(os.path.join(fixture, case["prefill"]), level, threads)
        dec = session(os.path.join(fixture, case["decode"]), level, threads)
        got = greedy(pre, dec, load("prompt_ids"), case["steps"])
        want = load("generated_ids")
        if got.shape != want.shape or not np.array_equal(got, want):
            bad = int((got != want).sum()) if got.shape == want.shape else -1
            return False, "generated ids differ (%d mismatches)" % bad
        return True, "%d x %d ids" % want.shape
    if case["kind"] == "split":
        return run_split(fixture, case, load("input_ids"), level, threads)
    sess = session(os.path.join(fixture, case["model"]), level, threads)
    feeds = {n: load(n) for n in case["inputs"]}
    outs = sess.run(case["outputs"], feeds)
    worst = 0.0
    for name, got in zip(case["outputs"], outs):
        want = load(name)
        if got.shape != want.shape:
            return False, "%s: shape %s, want %s" % (name, got.shape, want.shape)
        atol = case["atol"] * max(1.0, float(np.abs(want).max()))
        err = float(np.abs(got.astype(np.float64) - want).max())
        if not np.allclose(got, want, rtol=case["rtol"], atol=atol):
            return False, "%s: max abs error %.3g (atol %.3g)" % (name, err, atol)
        worst = max(worst, err)
    return True, "max abs error %.2g" % worst


def find_cases(models_dir):
    cases = []
    for root, _, files in os.walk(models_dir):
        if "case.json" in files:
            cases.append(root)
    return sorted(cases)
