#!/usr/bin/env python3
# ===- test/e2e/check_hostile_inputs.py - hostile input tensors vs ORT -----===#
# Well-formed fixture artifacts fed hostile input tensors (ids out of the
# vocabulary, empty dims, sequences at and past the compiled maxima, fully
# padded masks, no past): every case runs onnxruntime (CPU, graph
# optimizations off, the fixture's ONNX file) and strata-run on the same
# inputs, built from the fixture's first saved "outputs" reference case.
#
# Verdicts:
#   onnxruntime succeeds: strata-run exits 0 and every output has the same
#     dtype and shape and matches like check_fixtures.py (fp32: max|y - ref|
#     <= 1e-4 * max(1, max|ref|) over the finite elements; NaN and infinities
#     in the same places: onnxruntime's NaN for a fully masked row of an ONNX
#     Attention is the defined result).
#   onnxruntime fails: strata-run exits 1 with "INVALID_ARGUMENT" on stderr;
#     for an index out of range (a planted id, a position past the learned
#     ones, or onnxruntime's "idx=N") also the word "node" and an offending
#     value in decimal.
#   empty (batch 0, sequence 0): as above, except that where onnxruntime
#     refuses, exit 0 with empty outputs (a zero dim; outputs that append
#     to a past keep it) passes as well.
#   over_max: strata-run exits 1 with the runtime's "above the compiled
#     maximum" refusal (onnxruntime is not run: it has no maxima); at_max
#     must not get that refusal.
#   Always a failure: a signal, a timeout, "ERROR: AddressSanitizer" or
#     "runtime error:" on stderr.
#
# Usage: check_hostile_inputs.py MODELS_DIR BIN_DIR [--run-bin DIR]
#                                [--filter REGEX] [-v]
# BIN_DIR's strata-compile builds the artifacts (each fixture once, default
# maxima as in check_fixtures.py); --run-bin's strata-run (default BIN_DIR's)
# runs them, so a sanitized strata-run can run normally compiled code.
# Prints one line per case and closes with "N passed, M failed".
"""Cases (fixture/<case>; the planted value sits in the last element):

 1 id_beyond_vocab     input_ids = vocab + 99999
 2 id_2pow40           input_ids = 2**40
 3 id_below_neg_vocab  input_ids = -vocab - 1
 4 id_minus_one        input_ids = -1 (counts from the end: both succeed)
 5 position_plus_1e5   position_ids + 100000 (every element)
 6 token_type_7        token_type_ids = 7
 7 seq_past_positions  batch 1, sequence max_positions + 72 (200)
 8 batch_0             batch 0 (every input)
 9 seq_0               sequence 0 (the mask keeps the past columns)
10 seq_at_max          batch 1, sequence (past + sequence for with-past
                       models) at the compiled maximum: beyond the learned
                       positions too on these fixtures, so onnxruntime
                       refuses an index, which strata-run must do as well
11 seq_over_max        one beyond: over_max
12 batch_at_max        batch at the compiled maximum, past + sequence =
                       max_positions (every learned position): at_max
13 mask_all_zero       attention_mask all zeros
14 past_0              past length 0 (past_key_values [B, H, 0, D])

Exception: opset23_llama_past/position_plus_1e5 is judged as a refused
index whatever onnxruntime does: its RotaryEmbedding reads cos_cache at
position_ids unchecked, so its output there is no reference.

Fixtures: GPT-2 prefill and with-past, Llama prefill and with-past, BERT
(op17 torch exports), opset23_llama_past (ONNX Attention, RotaryEmbedding)
bert_op17_ortopt (com.microsoft.Attention) and the transformers Llama
exports (sizes through shape tensors, HF's causal-and-padding mask), and
Llamas with clamped scores and with K/V repeated by Tile/Concat; the op14, var_*, newgelu
and other ortopt fixtures reach the same Gathers and masks.
"""
import argparse
import glob
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))
from check_fixtures import TOLERANCE, compile_model  # noqa: E402
import refs  # noqa: E402  (test/models/refs.py: onnxruntime sessions)

FIXTURES = ["gpt2_op17_prefill", "gpt2_op17_past", "llama_op17_prefill",
            "llama_op17_past", "bert_op17", "opset23_llama_past",
            "bert_op17_ortopt", "transformers_llama_op17_prefill",
            "transformers_llama_op17_past", "llama_clamp_qkscale_op17_past",
            "llama_kv_tile_op17_past"]
RUN_TIMEOUT = 120  # seconds; an ASan run of the largest case takes a few
SANITIZER = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
             "runtime error:")
OVER_MAX = "above the compiled maximum"
# onnxruntime's answer is no reference here: judged as a refusal of an index.
ORT_UNCHECKED = {
    ("opset23_llama_past", "position_plus_1e5"):
        "its RotaryEmbedding does not bound position_ids (reads past "
        "cos_cache)",
}


class Fixture:
    def __init__(self, models_dir, name):
        self.name = name
        self.dir = os.path.join(models_dir, "fixtures", name)
        self.meta = json.load(open(os.path.join(self.dir, "meta.json")))
        self.vocab = self.meta["vocab"]
        self.positions = self.meta["max_positions"]
        ref = os.path.join(self.dir, "ref")
        for case in sorted(os.listdir(ref)):
            spec = json.load(open(os.path.join(ref, case, "case.json")))
            if spec.get("kind") == "outputs":
                break
        else:
            raise RuntimeError("no \"outputs\" reference case")
        self.model = os.path.join(self.dir, spec["model"])
        self.base = {n: np.load(os.path.join(ref, case, n + ".npy"))
                     for n in spec["inputs"]}
        past = [n for n in self.base if n.startswith("past_key_values.")]
        self.past = self.base[past[0]].shape[2] if past else None
        self.sess = refs.session(self.model, "disable")
        self.onnx_dims = {i.name: i.shape for i in self.sess.get_inputs()}
        self.sig = None  # parse_inspect() of the artifact, once compiled

    def dynamic(self, name, axis):
        return isinstance(self.onnx_dims[name][axis], str)


def parse_inspect(run_bin, artifact):
    """{input name: [(symbol or None, extent or max)]} from --inspect."""
    proc = subprocess.run([os.path.join(run_bin, "strata-run"), artifact,
                           "--inspect"], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError("--inspect: " + proc.stderr.strip())
    sig = {}
    for m in re.finditer(r"^\s*input\s+(\S+): \w+\[([^\]]*)\]", proc.stdout,
                         re.M):
        dims = []
        for d in filter(None, (x.strip() for x in m.group(2).split(","))):
            sym = re.fullmatch(r"(\S+)<=(\d+)", d)
            dims.append((sym.group(1), int(sym.group(2))) if sym
                        else (None, int(d)))
        sig[m.group(1)] = dims
    return sig


# --- input builders ---------------------------------------------------------

def planted(fx, name, value):
    feeds = {n: v.copy() for n, v in fx.base.items()}
    feeds[name][-1, -1] = value
    return feeds, {value}, "ort"


def with_sequence(fx, length, batch=None):
    """The base inputs with `length` new tokens (past kept): ids and token
    types tiled from row 0, positions continuing, the mask's new columns 1."""
    b = fx.base
    rows = slice(None) if batch is None else slice(0, batch)
    past = fx.past or 0
    feeds = {}
    for n, v in b.items():
        v = v[rows]
        if n in ("input_ids", "token_type_ids"):
            v = np.resize(v[0], (v.shape[0], length))
        elif n == "position_ids":
            v = v[:, :1] + np.arange(length, dtype=v.dtype)
        elif n == "attention_mask":
            v = np.concatenate([v[:, :past], np.ones((v.shape[0], length),
                                                     v.dtype)], axis=1)
        feeds[n] = v
    return feeds


def out_of_positions(fx, feeds):
    """Every position index a learned or rotary table of max_positions rows
    cannot hold: the offending values of the long-sequence cases."""
    total = (fx.past or 0) + feeds["input_ids"].shape[1]
    return set(range(fx.positions, total))


def seq_max(fx):
    """The largest new-token count the compiled maxima allow (batch 1)."""
    seq = fx.sig["input_ids"][1][1]
    if "attention_mask" in fx.sig and fx.past is not None:
        seq = min(seq, fx.sig["attention_mask"][1][1] - fx.past)
    return seq


def case_list(fx):
    """[(name, builder)]: builder() -> (feeds, offending values, mode); mode
    is "ort", "at_max" or "over_max". Builders read the compiled maxima, so
    they run after the compile."""
    cases = []
    add = lambda name, build: cases.append((name, build))  # noqa: E731
    add("id_beyond_vocab", lambda: planted(fx, "input_ids", fx.vocab + 99999))
    add("id_2pow40", lambda: planted(fx, "input_ids", 2**40))
    add("id_below_neg_vocab", lambda: planted(fx, "input_ids", -fx.vocab - 1))
    add("id_minus_one", lambda: (planted(fx, "input_ids", -1)[0], set(),
                                 "ort"))
    if "position_ids" in fx.base:
        def positions():
            feeds = {n: v.copy() for n, v in fx.base.items()}
            feeds["position_ids"] += 100000
            return feeds, set(feeds["position_ids"].ravel().tolist()), "ort"
        add("position_plus_1e5", positions)
    if "token_type_ids" in fx.base:
        add("token_type_7", lambda: planted(fx, "token_type_ids", 7))

    def long_case(length, mode):
        feeds = with_sequence(fx, length, batch=1)
        return feeds, out_of_positions(fx, feeds), mode
    add("seq_past_positions",
        lambda: long_case(fx.positions + 72, "ort"))
    if fx.dynamic("input_ids", 0):
        add("batch_0", lambda: ({n: v[:0] for n, v in fx.base.items()}, set(),
                                "empty"))
    if fx.dynamic("input_ids", 1):
        add("seq_0", lambda: (with_sequence(fx, 0), set(), "empty"))
        add("seq_at_max", lambda: long_case(seq_max(fx), "at_max"))
        add("seq_over_max", lambda: long_case(seq_max(fx) + 1, "over_max"))
    if fx.dynamic("input_ids", 0):
        def batch_max():
            feeds = with_sequence(fx, fx.positions - (fx.past or 0))
            rows = fx.sig["input_ids"][0][1]
            return ({n: np.resize(v, (rows,) + v.shape[1:])
                     for n, v in feeds.items()}, set(), "at_max")
        add("batch_at_max", batch_max)
    if "attention_mask" in fx.base:
        def mask_zero():
            feeds = dict(fx.base)
            feeds["attention_mask"] = np.zeros_like(fx.base["attention_mask"])
            return feeds, set(), "ort"
        add("mask_all_zero", mask_zero)
    if fx.past:
        def past_0():
            feeds = {}
            for n, v in fx.base.items():
                if n.startswith("past_key_values."):
                    v = v[:, :, :0]
                elif n == "attention_mask":
                    v = v[:, fx.past:]
                elif n == "position_ids":
                    v = v - fx.past
                feeds[n] = v
            return feeds, set(), "ort"
        add("past_0", past_0)
    return cases


# --- running and verdicts ---------------------------------------------------

def run_ort(sess, feeds):
    """(outputs dict, None) or (None, error text)."""
    quiet = ort.RunOptions()
    quiet.log_severity_level = 4  # its refusals are results here, not noise
    try:
        outs = sess.run(None, feeds, quiet)
    except Exception as e:  # onnxruntime's refusal is a result, not a crash
        return None, str(e)
    return dict(zip([o.name for o in sess.get_outputs()], outs)), None


def ort_summary(err):
    m = re.search(r"running (\w+) node\. Name:'([^']*)' Status Message: "
                  r"(?:\S+\.(?:h|cc):\d+ .*?\) (?:const )?)?(.*)", err, re.S)
    text = f"{m.group(1)} '{m.group(2)}': {m.group(3)}" if m else err
    return " ".join(text.split())[:160]


def run_strata(run_bin, artifact, feeds, work):
    cmd = [os.path.join(run_bin, "strata-run"), artifact, "--output-dir",
           os.path.join(work, "out")]
    os.makedirs(os.path.join(work, "out"))
    for n, v in feeds.items():
        path = os.path.join(work, re.sub(r"[^A-Za-z0-9._-]", "_", n) + ".npy")
        np.save(path, np.ascontiguousarray(v))
        cmd += ["--input", f"{n}={path}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stderr


def compare(name, ref, path):
    if not os.path.isfile(path):
        return f"missing output {name}"
    got = np.load(path)
    if got.dtype != ref.dtype or got.shape != ref.shape:
        return (f"{name}: {got.dtype}{list(got.shape)} != "
                f"{ref.dtype}{list(ref.shape)}")
    if ref.dtype.kind not in "fc":
        return None if (got == ref).all() else f"{name}: values differ"
    special = ~np.isfinite(ref)
    differ = (np.isnan(got) != np.isnan(ref)) | (np.isfinite(got) != ~special)
    differ |= special & ~np.isnan(ref) & (got != ref)  # the sign of an inf
    if differ.any():
        return f"{name}: NaN/inf at other places ({int(differ.sum())} elements)"
    finite = ref[~special].astype(np.float64)
    if finite.size == 0:
        return None
    tol = TOLERANCE.get(str(ref.dtype), 0.0) * max(1.0,
                                                    float(np.abs(finite).max()))
    err = float(np.abs(got[~special].astype(np.float64) - finite).max())
    return None if err <= tol else (f"{name}: max abs error {err:.3g} > "
                                    f"{tol:.3g}")


def number_in(value, text):
    # Whole numbers only: not a digit of a longer one, nor a node's "_7".
    return re.search(r"(?<![\w.-])" + re.escape(str(value)) + r"(?![\w.])",
                     text) is not None


def verdict(mode, offending, ort_out, ort_err, rc, stderr, out_dir):
    """None on pass, else why it fails."""
    last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
    if rc is None:
        return f"timeout after {RUN_TIMEOUT}s"
    if rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = str(-rc)
        return f"killed by {sig}"
    for marker in SANITIZER:
        if marker in stderr:
            line = next(x for x in stderr.splitlines() if marker in x)
            return f"sanitizer: {line.strip()}"
    if mode == "over_max":
        if rc != 1 or not ("INVALID_ARGUMENT" in stderr and
                           OVER_MAX in stderr):
            return f"exit {rc}, expected the max-dim refusal" + (
                f": {last}" if last else "")
        return None
    if mode == "at_max" and OVER_MAX in stderr:
        return f"refused at the maximum: {last}"
    if ort_err is None:
        if rc != 0:
            return f"exit {rc} (onnxruntime succeeds): {last}"
        for name, ref in ort_out.items():
            path = os.path.join(out_dir, re.sub(r"[^A-Za-z0-9._-]", "_", name)
                                + ".npy")
            bad = compare(name, ref, path)
            if bad:
                return bad
        return None
    why = f" (onnxruntime: {ort_summary(ort_err)})"
    if mode == "empty" and rc == 0:
        # An empty batch or sequence that onnxruntime refuses (a Reshape
        # that cannot infer -1 from 0 elements, an Attention that wants
        # rows) may also give empty outputs, as ONNX's broadcasting defines.
        # (Outputs that concatenate a past are not empty.)
        outputs = glob.glob(os.path.join(out_dir, "*.npy"))
        if not any(np.load(f).size == 0 for f in outputs):
            return "exit 0 without an empty output" + why
        return None
    if rc != 1:
        return f"exit {rc}, expected exit 1 (a refusal)" + why
    if "INVALID_ARGUMENT" not in stderr:
        return f"exit 1 without INVALID_ARGUMENT: {last}" + why
    idx = re.search(r"idx=(-?\d+)", ort_err)
    if idx:
        offending = offending | {int(idx.group(1))}
    if offending:
        if not re.search(r"\bnode\b", stderr):
            return f"refusal names no node: {last}"
        if not any(number_in(v, stderr) for v in offending):
            return f"refusal shows no offending value: {last}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    ap.add_argument("--run-bin", default=None,
                    help="folder of the strata-run to use (default BIN_DIR)")
    ap.add_argument("--filter", default="")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    run_bin = a.run_bin or a.bin_dir
    passed = failed = 0
    start = time.monotonic()

    def report(label, bad, detail=""):
        nonlocal passed, failed
        passed += bad is None
        failed += bad is not None
        if bad is None:
            print(f"PASS {label}" + (f" ({detail})" if a.verbose and detail
                                      else ""))
        else:
            print(f"FAIL {label}: {bad}")
        sys.stdout.flush()

    with tempfile.TemporaryDirectory(prefix="strata-hostile-") as tmp:
        for name in FIXTURES:
            try:
                fx = Fixture(a.models_dir, name)
            except (OSError, RuntimeError, KeyError) as e:
                report(name, f"fixture: {e}")
                continue
            cases = [(c, build) for c, build in case_list(fx)
                     if re.search(a.filter, f"{name}/{c}")]
            if not cases:
                continue
            artifact = os.path.join(tmp, name + ".strata")
            # main only: the generation entries' inputs have their own
            # hostile cases (check_generation.py).
            ok, msg = compile_model(a.bin_dir, fx.model, artifact,
                                    ["--no-generation-entries"])
            if not ok:
                report(name, "compile: " + (msg.splitlines()[-1] if msg
                                            else ""))
                continue
            try:
                fx.sig = parse_inspect(run_bin, artifact)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                report(name, str(e))
                continue
            for case, build in cases:
                label = f"{name}/{case}"
                feeds, offending, mode = build()
                ort_out = ort_err = None
                if (name, case) in ORT_UNCHECKED:
                    ort_err = "unchecked: " + ORT_UNCHECKED[(name, case)]
                elif mode != "over_max":
                    ort_out, ort_err = run_ort(fx.sess, feeds)
                work = tempfile.mkdtemp(dir=tmp)
                rc, stderr = run_strata(run_bin, artifact, feeds, work)
                bad = verdict(mode, offending, ort_out, ort_err, rc, stderr,
                              os.path.join(work, "out"))
                detail = ("over the maximum" if mode == "over_max" else
                          "onnxruntime: " + ort_summary(ort_err) if ort_err
                          else "onnxruntime ok")
                if rc:
                    last = stderr.strip().splitlines()
                    detail += f"; strata-run exit {rc}" + (
                        f": {last[-1]}" if last else "")
                report(label, bad, detail)
    if a.verbose:
        print(f"time {time.monotonic() - start:.1f}s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
