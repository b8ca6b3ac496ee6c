#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ONNX backend node-test conformance runner: import, compile and run.

Runs every ONNX backend node test shipped with the pinned pip `onnx` package
(onnx/backend/test/data/node/*/model.onnx) whose op Strata supports through
two stages and writes the generated docs/SupportedOps.md.  Run it with the
project venv:

    .venv/bin/python scripts/conformance.py            # full run, rewrites doc
    .venv/bin/python scripts/conformance.py --check    # full run, compare to doc
    .venv/bin/python scripts/conformance.py --sample   # CI: one test per op
    .venv/bin/python scripts/conformance.py --no-run   # import stage only

Stages (each a `Result` record):
  import  `strata-import` exits 0 and writes a non-empty module.
  run     `strata-compile model.onnx -o t.strata` succeeds, `strata-run`
          runs it on test_data_set_0's inputs (converted to .npy), and every
          output matches output_*.pb within the tolerance of its dtype
          (TOLERANCES below; integers and bools exactly; NaNs and infinities
          in the same places).  A test that fails to import fails both.

The supported-op list is parsed from the importer's own table,
compiler/import/OnnxOpRegistry.cpp (default-domain rows only).  A test belongs
to op X if its first node is X; an `_expanded` test (a decomposed function
body) belongs to the op of its base test.  The denominator is every node test
of a supported op.  Node tests feed some compile-time parameters (axes,
split sizes, a CumSum axis) as graph inputs; a test whose import says such a
parameter "must be a constant" is retried with its small integer inputs
bound to their test data (`--bind NAME=FILE.pb`), as a user would.

Exit status: full mode 0; --sample 1 if a sampled test that the committed doc
lists as passing now fails; --check 1 on any such regression or if the
committed doc differs from what this run would generate.
"""

import argparse
import collections
import concurrent.futures
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import onnx
import onnx.numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY = os.path.join(REPO, "compiler", "import", "OnnxOpRegistry.cpp")
DOC = os.path.join(REPO, "docs", "SupportedOps.md")
EXPANDED_RE = re.compile(r"_expanded(_ver\d+)?$")
DEFAULT_DOMAINS = ("", "ai.onnx")
STAGES = ("import", "run")

# Output tolerances by ONNX element type: an output passes when
# max|y - ref| <= rtol * max(1, max|ref|) over its finite elements.
#  - FLOAT, DOUBLE: 1e-4, the fixtures' fp32 tolerance (a few hundred
#    ulps of fp32 rounding over a reduction; norms compute in fp32 even for
#    double, so double gets the same bound).
#  - FLOAT16: 2e-3, two fp16 ulps at the largest magnitude (2^-10 each):
#    the reference rounds once from fp32/fp64, Strata may round per step.
#  - BFLOAT16: 1.6e-2, two bf16 ulps (2^-7 each).
#  - the fp8 types: 0, the decoded values exactly (they come from Cast).
# Every other type (integers, BOOL) must match exactly.
FLOAT8 = {
    onnx.TensorProto.FLOAT8E4M3FN: {},
    onnx.TensorProto.FLOAT8E4M3FNUZ: {"uz": True},
    onnx.TensorProto.FLOAT8E5M2: {},
    onnx.TensorProto.FLOAT8E5M2FNUZ: {"fn": True, "uz": True},
}
# 4-bit types travel one element per byte (onnx's unpacked form); the
# bits above the low four of an output byte are not part of the value.
FOUR_BIT = {onnx.TensorProto.INT4, onnx.TensorProto.UINT4,
            onnx.TensorProto.FLOAT4E2M1}
TOLERANCES = {
    onnx.TensorProto.FLOAT: 1e-4,
    onnx.TensorProto.DOUBLE: 1e-4,
    onnx.TensorProto.FLOAT16: 2e-3,
    onnx.TensorProto.BFLOAT16: 1.6e-2,
    **{elem: 0.0 for elem in FLOAT8},
    onnx.TensorProto.FLOAT4E2M1: 0.0,
}
# Per-test exceptions: {test name: (rtol, why)}; each is listed in the doc.
TEST_TOLERANCES = {}

# Element types the runtime's tensors (and strata-run's .npy files) carry.
NPY_TYPES = {
    onnx.TensorProto.FLOAT: np.float32,
    onnx.TensorProto.FLOAT16: np.float16,
    onnx.TensorProto.DOUBLE: np.float64,
    onnx.TensorProto.BFLOAT16: np.uint16,  # raw bits, as strata-run reads it
    onnx.TensorProto.INT8: np.int8,
    onnx.TensorProto.INT16: np.int16,
    onnx.TensorProto.INT32: np.int32,
    onnx.TensorProto.INT64: np.int64,
    onnx.TensorProto.UINT8: np.uint8,
    onnx.TensorProto.UINT16: np.uint16,
    onnx.TensorProto.UINT32: np.uint32,
    onnx.TensorProto.UINT64: np.uint64,
    onnx.TensorProto.BOOL: np.bool_,
    # fp8 and fp4 as raw codes, as bf16 is carried as raw uint16.
    **{elem: np.uint8 for elem in FLOAT8},
    onnx.TensorProto.FLOAT4E2M1: np.uint8,
    onnx.TensorProto.INT4: np.int8,
    onnx.TensorProto.UINT4: np.uint8,
}


@dataclasses.dataclass
class TestCase:
    name: str  # directory name, e.g. test_add_bcast
    path: str  # absolute path of model.onnx
    op: str  # op the test belongs to ("domain::Op" for other domains)
    domain: str
    opset: int  # default-domain opset of the model
    expanded: bool


@dataclasses.dataclass
class Result:
    name: str
    op: str
    opset: int
    stage: str  # "import" or "run"
    passed: bool
    reason: str = ""  # first error line, machine paths stripped
    bound: bool = False  # passed with parameters bound (--bind)
    error: float = 0.0  # run: worst error relative to the tolerance bound


# ---------------------------------------------------------------------------
# Inputs: the importer's op table and the node tests.
# ---------------------------------------------------------------------------


def parse_registry(path):
    """Return {op: (min_opset, max_opset)} for default-domain table rows."""
    text = open(path, encoding="utf-8").read()
    consts = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"constexpr\s+int64_t\s+(\w+)\s*=\s*(\d+)\s*;", text)}
    ops = {}
    # Rows may wrap across lines: {"", "Op", 7, kMax, convertFoo},
    row = re.compile(r'\{\s*("[^"]*"|\w+)\s*,\s*"(\w+)"\s*,\s*(\w+)\s*,'
                     r'\s*(\w+)\s*,\s*\w+\s*\}', re.S)
    for m in row.finditer(text):
        domain, op, lo, hi = m.groups()
        if not domain.startswith('"') or domain.strip('"') != "":
            continue  # kMs (com.microsoft) and other domains
        lo = int(lo) if lo.isdigit() else consts[lo]
        hi = int(hi) if hi.isdigit() else consts[hi]
        old = ops.get(op, (lo, hi))
        ops[op] = (min(old[0], lo), max(old[1], hi))
    if not ops:
        sys.exit(f"error: no op rows found in {path}")
    return ops


def node_test_dir():
    return os.path.join(os.path.dirname(onnx.__file__),
                        "backend", "test", "data", "node")


def model_opset(model):
    for imp in model.opset_import:
        if imp.domain in DEFAULT_DOMAINS:
            return imp.version
    return 0


def collect_tests(root):
    """Classify every node test directory into a TestCase."""
    names = sorted(n for n in os.listdir(root)
                   if os.path.isfile(os.path.join(root, n, "model.onnx")))
    base_op = {}
    cases = []
    for name in names:
        path = os.path.join(root, name, "model.onnx")
        model = onnx.load(path, load_external_data=False)
        expanded = bool(EXPANDED_RE.search(name))
        node = model.graph.node[0] if model.graph.node else None
        domain = node.domain if node is not None else ""
        op = node.op_type if node is not None else "<empty>"
        if domain not in DEFAULT_DOMAINS:
            op = f"{domain}::{op}"
        cases.append(TestCase(name, path, op, domain, model_opset(model),
                              expanded))
        if not expanded:
            base_op[name] = (op, domain)
    for case in cases:
        base = EXPANDED_RE.sub("", case.name)
        if case.expanded and base in base_op:
            case.op, case.domain = base_op[base]
    return cases


# ---------------------------------------------------------------------------
# Stage 1: import.
# ---------------------------------------------------------------------------


def strip_paths(line, case):
    line = line.replace(case.path + ": ", "").replace(case.path, "model.onnx")
    return line.replace(os.path.dirname(case.path) + os.sep, "")


def first_error_line(stderr, case):
    """First diagnostic line, with the test's absolute path stripped."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if "error" in l.lower()]
    line = (errors or lines or [""])[0]
    return strip_paths(line, case)[:300]


def data_dir(case):
    return os.path.join(os.path.dirname(case.path), "test_data_set_0")


def parameter_bindings(case):
    """{input name: .pb path} freezing the test's parameters to their test
    data: integer and float inputs of rank <= 1 and at most 64 elements,
    and scalars of any type. Node tests feed axes, split sizes, a CumSum
    axis, Range's bounds, Dropout's ratio or Resize's scales and roi as
    graph inputs; Strata needs them at compile time, as a user binds them
    with `--bind`."""
    model = onnx.load(case.path, load_external_data=False)
    bound = {}
    for i, value in enumerate(model.graph.input):
        pb = os.path.join(data_dir(case), f"input_{i}.pb")
        elem = value.type.tensor_type.elem_type
        if not os.path.isfile(pb):
            continue
        tensor = onnx.load_tensor(pb)
        size = onnx.numpy_helper.to_array(tensor).size
        small = elem in (onnx.TensorProto.INT32, onnx.TensorProto.INT64,
                         onnx.TensorProto.FLOAT)
        if ((small and len(tensor.dims) <= 1 and size <= 64)
                or (len(tensor.dims) == 0 and elem in NPY_TYPES)):
            bound[value.name] = pb
    return bound


def bind_flags(bound):
    flags = []
    for name, pb in bound.items():
        flags += ["--bind", f"{name}={pb}"]
    return flags


def failure_reason(proc, case):
    if proc.returncode < 0:
        return f"crashed with signal {-proc.returncode}"
    return (first_error_line(proc.stderr, case)
            or f"exit {proc.returncode}, no message")


def run_import(binary, case, timeout, tmp, bind=False):
    """Run strata-import on one test; return (Result for stage "import",
    the bindings it used). A test that fails only because a parameter must
    be a compile-time constant is retried with its integer inputs bound."""
    bound = parameter_bindings(case) if bind else {}
    out = os.path.join(tmp, "out.mlir")
    if os.path.exists(out):
        os.remove(out)
    result = lambda ok, why="": Result(case.name, case.op, case.opset,
                                       "import", ok, why, bool(bound))
    try:
        proc = subprocess.run([binary, case.path, "-o", out]
                              + bind_flags(bound),
                              capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return result(False, f"timeout after {timeout} s"), bound
    nonempty = os.path.isfile(out) and os.path.getsize(out) > 0
    if proc.returncode == 0 and nonempty:
        return result(True), bound
    if not bind and "must be a constant" in proc.stderr:
        # The retry's error, if any, is the more telling one.
        retry, retry_bound = run_import(binary, case, timeout, tmp, True)
        if retry.passed or retry_bound:
            return retry, retry_bound
    if proc.returncode == 0:
        return result(False, "exit 0 but empty output"), bound
    return result(False, failure_reason(proc, case)), bound


# ---------------------------------------------------------------------------
# Stage 2: compile, run and compare.
# ---------------------------------------------------------------------------


def to_npy_array(tensor_proto, elem):
    """The array strata-run reads or writes for a TensorProto of type elem:
    bf16 and fp8 as raw bits (onnx hands them out in tagged dtypes)."""
    array = onnx.numpy_helper.to_array(tensor_proto)
    if (elem in FLOAT8 or elem in FOUR_BIT
            or elem == onnx.TensorProto.BFLOAT16):
        return np.array(array.view(NPY_TYPES[elem]), order="C")
    # np.array, not np.ascontiguousarray: that one makes scalars 1-d.
    return np.array(array, dtype=NPY_TYPES[elem], order="C")


def elem_name(elem):
    return onnx.TensorProto.DataType.Name(elem)


def output_file(out_dir, name):
    """strata-run's file for output NAME (odd characters become '_')."""
    return os.path.join(out_dir, re.sub(r"[^A-Za-z0-9._-]", "_", name)
                        + ".npy")


def as_float(array, elem):
    """float64 values of an array of ONNX type elem (bf16, fp8 as raw
    bits)."""
    if elem == onnx.TensorProto.FLOAT4E2M1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return onnx.numpy_helper.unpacked_float4e2m1_to_float32(
                array).astype(np.float64)
    if elem in FLOAT8:
        decode = (onnx.numpy_helper.float8e4m3_to_float32
                  if elem in (onnx.TensorProto.FLOAT8E4M3FN,
                              onnx.TensorProto.FLOAT8E4M3FNUZ)
                  else onnx.numpy_helper.float8e5m2_to_float32)
        with warnings.catch_warnings():  # deprecated in onnx 1.18, kept
            warnings.simplefilter("ignore")
            return decode(array, **FLOAT8[elem]).astype(np.float64)
    if elem == onnx.TensorProto.BFLOAT16:
        bits = array.astype(np.uint32) << 16
        return bits.view(np.float32).astype(np.float64)
    return array.astype(np.float64)


def compare(name, got, ref, elem, rtol):
    """None if got matches ref, else a one-line reason. Also returns the
    worst error as a fraction of the allowed bound (0 for exact types)."""
    if got.shape != ref.shape:
        return f"output '{name}': shape {list(got.shape)}, " \
               f"expected {list(ref.shape)}", 0.0
    want_dtype = np.dtype(NPY_TYPES[elem])
    if got.dtype != want_dtype:
        return f"output '{name}': dtype {got.dtype}, expected " \
               f"{want_dtype}", 0.0
    if elem in FOUR_BIT:  # keep the low four bits (sign-extended for INT4)
        low = got.view(np.uint8) & 0xF
        got = (((low ^ 8).astype(np.int8) - 8) if elem == onnx.TensorProto.INT4
               else low)
    if elem not in TOLERANCES:
        bad = got != ref
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"output '{name}': {int(bad.sum())} of {ref.size} "
                    f"elements differ, first at {list(idx)}: "
                    f"{got[idx]!r} vs {ref[idx]!r}"), 0.0
        return None, 0.0
    g, r = as_float(got, elem), as_float(ref, elem)
    if (np.isnan(g) != np.isnan(r)).any():
        return f"output '{name}': NaN at different positions", 0.0
    inf = np.isinf(r) | np.isinf(g)
    if (g[inf] != r[inf]).any():
        return f"output '{name}': infinities differ", 0.0
    finite = ~(np.isnan(r) | inf)
    if not finite.any():
        return None, 0.0
    scale = max(1.0, float(np.abs(r[finite]).max()))
    err = float(np.abs(g[finite] - r[finite]).max())
    bound = rtol * scale
    if not err <= bound:
        return (f"output '{name}': max abs error {err:.3g} > "
                f"{rtol:g} * {scale:.3g}"), err / bound if bound else 0.0
    return None, err / bound if bound else 0.0


def attention_reference(model, feeds):
    """Expected outputs of a single Attention node with 3-D inputs or grouped
    KV heads, per the ONNX spec rather than onnx 1.18's stored data.

    onnx 1.18's reference (and so its stored outputs, and its function body
    that the `_expanded` tests inline) reshapes 3-D [B, S, H*D] inputs
    straight to [B, H, S, D] without the transpose (onnx/onnx#7118) and
    tiles KV heads for GQA ([h0, h1, h0, h1]) where the spec, onnxruntime
    and PyTorch repeat them ([h0, h0, h1, h1]) (onnx/onnx#7274); both are
    fixed upstream. This feeds onnx's own `_compute_attention` 4-D inputs
    already split into heads and with KV heads repeated, so neither bug is
    reached, and merges the heads of Y back. Returns {output name: array},
    or None when the node needs no correction."""
    from onnx.reference.ops import op_attention

    node = model.graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a)
             for a in node.attribute}
    names = list(node.input) + [""] * (6 - len(node.input))
    q, k, v = (feeds[n] for n in names[:3])
    mask, past_k, past_v = (feeds.get(n) if n else None for n in names[3:6])
    three_d = q.ndim == 3
    if three_d:
        def heads(x, h):
            b, s, e = x.shape
            return x.reshape(b, s, h, e // h).transpose(0, 2, 1, 3)
        q = heads(q, attrs["q_num_heads"])
        k = heads(k, attrs["kv_num_heads"])
        v = heads(v, attrs["kv_num_heads"])
    group = q.shape[1] // k.shape[1]
    if not three_d and group == 1:
        return None
    present_k = k if past_k is None else np.concatenate((past_k, k), axis=2)
    present_v = v if past_v is None else np.concatenate((past_v, v), axis=2)
    rep = lambda x: None if x is None else np.repeat(x, group, axis=1)
    y, _, _, qk = op_attention._compute_attention(
        q, rep(k), rep(v), attn_mask=mask, past_key=rep(past_k),
        past_value=rep(past_v), scale=attrs.get("scale"),
        is_causal=attrs.get("is_causal", 0),
        softmax_precision=attrs.get("softmax_precision"),
        softcap=attrs.get("softcap"),
        qk_matmul_output_mode=attrs.get("qk_matmul_output_mode"))
    if three_d:
        b, h, s, d = y.shape
        y = y.transpose(0, 2, 1, 3).reshape(b, s, h * d)
    values = [y, present_k, present_v, qk]
    return {name: values[i] for i, name in enumerate(node.output) if name}


def corrected_reference(case, model, feeds):
    """{output name: array} replacing the stored outputs of a test whose
    stored outputs are known to be wrong, else None (see CORRECTED)."""
    if case.op == "Attention" and not case.expanded:
        return attention_reference(model, feeds)
    return None


def run_stage(bin_dir, case, timeout, tmp, bound):
    """Compile one imported test, run it and compare; a Result "run"."""
    result = lambda ok, why="", err=0.0: Result(
        case.name, case.op, case.opset, "run", ok, why, bool(bound), err)
    model = onnx.load(case.path, load_external_data=False)
    init = {t.name for t in model.graph.initializer}
    inputs = []  # (name, .npy path) for every fed graph input
    feeds = {}  # name -> array, for corrected_reference
    for i, value in enumerate(v for v in model.graph.input
                              if v.name not in init):
        if value.name in bound or not value.name:
            continue
        if not value.type.HasField("tensor_type"):
            return result(False, f"input '{value.name}' is not a tensor")
        elem = value.type.tensor_type.elem_type
        if elem not in NPY_TYPES:
            return result(False, f"input '{value.name}' has element type "
                          f"{elem_name(elem)}, which the runtime lacks")
        pb = os.path.join(data_dir(case), f"input_{i}.pb")
        if not os.path.isfile(pb):
            return result(False, f"no test data for input '{value.name}'")
        tensor = onnx.load_tensor(pb)
        feeds[value.name] = onnx.numpy_helper.to_array(tensor)
        npy = os.path.join(tmp, f"input_{i}.npy")
        np.save(npy, to_npy_array(tensor, elem))
        inputs.append((value.name, npy))
    for value in model.graph.output:
        elem = value.type.tensor_type.elem_type
        if value.type.HasField("tensor_type") and elem not in NPY_TYPES:
            return result(False, f"output '{value.name}' has element type "
                          f"{elem_name(elem)}, which the runtime lacks")

    artifact = os.path.join(tmp, "t.strata")
    cmd = [os.path.join(bin_dir, "strata-compile"), case.path, "-o",
           artifact, "--quiet"] + bind_flags(bound)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return result(False, f"compile: timeout after {timeout} s")
    if proc.returncode != 0:
        return result(False, "compile: " + failure_reason(proc, case))

    out_dir = os.path.join(tmp, "out")
    cmd = [os.path.join(bin_dir, "strata-run"), artifact, "--output-dir",
           out_dir]
    for name, npy in inputs:
        cmd += ["--input", f"{name}={npy}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return result(False, f"run: timeout after {timeout} s")
    if proc.returncode != 0:
        return result(False, "run: " + failure_reason(proc, case).replace(
            tmp + os.sep, ""))

    rtol_of = lambda elem: TEST_TOLERANCES.get(case.name, (None,))[0] \
        or TOLERANCES.get(elem)
    corrected = corrected_reference(case, model, feeds)
    worst = 0.0
    for i, value in enumerate(model.graph.output):
        elem = value.type.tensor_type.elem_type
        pb = os.path.join(data_dir(case), f"output_{i}.pb")
        path = output_file(out_dir, value.name)
        if not os.path.isfile(path):
            return result(False, f"run: no output '{value.name}' written")
        ref = corrected[value.name].astype(NPY_TYPES[elem]) if corrected \
            else to_npy_array(onnx.load_tensor(pb), elem)
        why, err = compare(value.name, np.load(path), ref, elem,
                           rtol_of(elem))
        if why:
            return result(False, "mismatch: " + why, err)
        worst = max(worst, err)
    return result(True, "corrected reference" if corrected else "",
                  err=worst)


def run_case(bin_dir, case, timeout, do_run):
    """Both stages of one test, in a private temporary directory. Runs in a
    worker process; returns {stage: Result}."""
    with tempfile.TemporaryDirectory(prefix="strata-conf-") as tmp:
        imported, bound = run_import(os.path.join(bin_dir, "strata-import"),
                                     case, timeout, tmp)
        results = {"import": imported}
        if not do_run:
            return results
        if not imported.passed:
            results["run"] = dataclasses.replace(imported, stage="run")
        else:
            try:
                run = run_stage(bin_dir, case, timeout, tmp, bound)
                # An output extent computed from an input's values (a
                # Reshape/Expand/Tile shape given as a graph input) has no
                # compiled maximum; retry with those parameters bound.
                if (not run.passed and not bound
                        and "above the maximum" in run.reason):
                    retry_bound = parameter_bindings(case)
                    if retry_bound:
                        retry = run_stage(bin_dir, case, timeout, tmp,
                                          retry_bound)
                        run = retry if retry.passed else run
                results["run"] = run
            except Exception as e:  # a broken test file, not a Strata bug
                results["run"] = Result(case.name, case.op, case.opset, "run",
                                        False, f"harness: {e!r}"[:300])
        return results


def run_all(bin_dir, cases, jobs, timeout, do_run, progress):
    """{stage: {test name: Result}} over a process pool."""
    out = {stage: {} for stage in STAGES}
    with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_case, bin_dir, c, timeout, do_run)
                   for c in cases]
        for n, future in enumerate(concurrent.futures.as_completed(futures)):
            for stage, result in future.result().items():
                out[stage][result.name] = result
            if progress and (n + 1) % 50 == 0:
                print(f"  {n + 1}/{len(cases)}", file=sys.stderr, flush=True)
    return out


# ---------------------------------------------------------------------------
# The generated document and comparing against it.
# ---------------------------------------------------------------------------


def md_escape(text):
    return text.replace("|", "\\|").replace("`", "'")


def pct(n, d):
    return 100.0 * n / d if d else 0.0


def tolerance_lines():
    names = {onnx.TensorProto.FLOAT: "float32",
             onnx.TensorProto.DOUBLE: "float64",
             onnx.TensorProto.FLOAT16: "float16",
             onnx.TensorProto.BFLOAT16: "bfloat16"}
    lines = ["Tolerances (`max|y - ref| <= rtol * max(1, max|ref|)` over the "
             "finite elements; NaNs and infinities must sit in the same "
             "places): " + ", ".join(f"{names[e]} {r:g}"
                                     for e, r in TOLERANCES.items()
                                     if e in names) +
             "; the fp8 types (decoded), integers and bools exactly. "
             "float16 and bfloat16 allow two "
             "units in the last place of the largest output; float64 shares "
             "float32's bound because normalizations compute in float32."]
    if TEST_TOLERANCES:
        lines += ["", "Per-test tolerances:", ""]
        lines += [f"- `{t}`: {r:g} ({why})"
                  for t, (r, why) in sorted(TEST_TOLERANCES.items())]
    else:
        lines += ["", "No test needs a looser tolerance."]
    return lines


def corrected_lines(cases, run):
    names = [c.name for c in cases if c.name in run
             and run[c.name].reason == "corrected reference"]
    if not names:
        return []
    return [
        f"{len(names)} Attention tests (3-D inputs, or fewer KV heads than "
        "query heads) are compared with outputs recomputed by onnx's own "
        "reference on inputs split into heads with reshape + transpose and "
        "with each KV head repeated for its query group "
        "(`attention_reference` in the script). Their stored outputs follow "
        "two bugs of the onnx 1.18 reference, fixed upstream: 3-D inputs "
        "reshaped to heads without the transpose "
        "([onnx/onnx#7118](https://github.com/onnx/onnx/issues/7118)) and KV "
        "heads tiled instead of repeated "
        "([onnx/onnx#7274](https://github.com/onnx/onnx/pull/7274)). "
        "onnxruntime 1.23 agrees with the recomputed outputs. The "
        "`_expanded` variants inline onnx 1.18's function body, which has the "
        "same two bugs, so they keep the stored outputs.",
        "",
        "<details><summary>the tests</summary>",
        "",
        ", ".join(f"`{n}`" for n in names),
        "",
        "</details>",
    ]


def render_doc(supported, cases, results):
    """Markdown for docs/SupportedOps.md; deterministic (no dates)."""
    imp, run = results["import"], results["run"]
    by_op = collections.defaultdict(list)
    for case in cases:
        if case.op in supported:
            by_op[case.op].append(case)
    total = sum(len(v) for v in by_op.values())
    all_cases = [c for v in by_op.values() for c in v]
    imported = sum(imp[c.name].passed for c in all_cases)
    ran = sum(run[c.name].passed for c in all_cases)
    in_range = [c for c in all_cases
                if supported[c.op][0] <= c.opset <= supported[c.op][1]]
    in_ok = sum(run[c.name].passed for c in in_range)
    type_blocked = sum(
        not run[c.name].passed
        and ("which the runtime does not support yet" in run[c.name].reason
             or "which the runtime lacks" in run[c.name].reason)
        for c in all_cases)
    every = len(cases)
    out = [
        "<!-- GENERATED by scripts/conformance.py; never edit by hand. -->",
        "# Supported ONNX ops",
        "",
        "Generated by `.venv/bin/python scripts/conformance.py`; do not edit.",
        f"ONNX backend node tests from onnx {onnx.__version__}; ops and "
        "opsets from `compiler/import/OnnxOpRegistry.cpp` (default domain).",
        "Two stages per test: **import** (`strata-import` imports and "
        "verifies the model) and **run** (`strata-compile` builds a CPU "
        "artifact, `strata-run` runs it on `test_data_set_0` and every "
        "output matches the expected one).",
        "",
        f"**{ran} of {total} node tests of supported ops compile, run and "
        f"match ({pct(ran, total):.1f}%); {imported} import and verify "
        f"({pct(imported, total):.1f}%).**",
        "",
        f"**Over all {every} node tests (the unsupported ops' included): "
        f"{ran} pass ({pct(ran, every):.1f}%).**",
        "",
    ] + ([
        f"{type_blocked} of the failing tests stop only because "
        "`strata-compile`'s artifact signature or the runtime has no "
        "element type for a graph input or output.",
        "",
    ] if type_blocked else []) + [
        f"Of the {len(in_range)} tests whose model opset is inside the op's "
        f"supported range, {in_ok} run and match "
        f"({pct(in_ok, len(in_range)):.1f}%).",
        "",
        f"{sum(r.passed and r.bound for r in run.values())} of the passing "
        "tests feed a parameter Strata needs at compile time (axes, split "
        "sizes, a CumSum axis, Range bounds, a Dropout ratio, the target "
        "shape of Reshape/Expand/Tile/ConstantOfShape, whose output extents "
        "would otherwise have no compiled maximum) as a graph input; they "
        "pass with that input bound to its test data (`--bind "
        "NAME=FILE.pb` of `strata-import` and `strata-compile`).",
        "",
    ] + tolerance_lines() + [""] + corrected_lines(cases, run) + [
        "",
        "| op | opsets supported | test opsets | import | run | status |",
        "|---|---|---|---|---|---|",
    ]
    for op in sorted(supported):
        lo, hi = supported[op]
        tests = by_op.get(op, [])
        n_imp = sum(imp[c.name].passed for c in tests)
        n_run = sum(run[c.name].passed for c in tests)
        status = ("no tests" if not tests else "all pass"
                  if n_run == len(tests) else "failing" if n_run == 0
                  else "partial")
        opsets = ", ".join(str(o) for o in sorted({c.opset for c in tests}))
        out.append(f"| {op} | {lo}-{hi} | {opsets or '-'} | "
                   f"{n_imp}/{len(tests)} | {n_run}/{len(tests)} | "
                   f"{status} |")
    out += ["", "## Failing tests", "",
            "Each line names the stage that failed first (`import`, or "
            "`run` with `compile:`, `run:` or `mismatch:`).", ""]
    failing_ops = [op for op in sorted(by_op)
                   if any(not run[c.name].passed for c in by_op[op])]
    if not failing_ops:
        out.append("None.")
    for op in failing_ops:
        out += [f"### {op}", ""]
        for c in by_op[op]:
            stage = "import" if not imp[c.name].passed else "run"
            r = results[stage][c.name]
            if not r.passed:
                out.append(f"- `{c.name}` (opset {c.opset}, {stage}): "
                           f"{md_escape(r.reason)}")
        out.append("")
    unsupported = collections.Counter(
        c.op for c in cases if c.op not in supported)
    out += ["## Ops in the node tests that are not supported", "",
            f"{len(unsupported)} ops, {sum(unsupported.values())} tests "
            "(including `_expanded` variants); test count in parentheses.", ""]
    out += [f"- {op} ({n})" for op, n in sorted(unsupported.items())]
    return "\n".join(out).rstrip() + "\n"


def parse_doc(path):
    """Return (ops in the table, {stage: failing test names}) of a committed
    doc. A test failing import fails run too."""
    failing = {stage: set() for stage in STAGES}
    if not os.path.isfile(path):
        return set(), failing
    text = open(path, encoding="utf-8").read()
    ops = set(re.findall(r"^\| (\w+) \| \d+-\d+ \|", text, re.M))
    for name, stage in re.findall(
            r"^- `(test_\w+)` \(opset \d+(?:, (import|run))?\)", text, re.M):
        stage = stage or "import"  # the import-only doc had no stage
        failing["run"].add(name)
        if stage == "import":
            failing["import"].add(name)
    return ops, failing


def listed_passing(doc, case, stage):
    ops, failing = doc
    return case.op in ops and case.name not in failing[stage]


def pick_sample(supported, cases, doc, stage):
    """One test per supported op: the first alphabetically that the committed
    doc lists as passing, else the first alphabetically."""
    sample = {}
    for case in cases:  # cases are sorted by name
        if case.op not in supported:
            continue
        cur = sample.get(case.op)
        if cur is None or (not listed_passing(doc, cur, stage)
                           and listed_passing(doc, case, stage)):
            sample[case.op] = case
    return [sample[op] for op in sorted(sample)]


def regressions(cases, results, doc, stage):
    got = results[stage]
    return [c for c in cases
            if c.name in got and not got[c.name].passed
            and listed_passing(doc, c, stage)]


# ---------------------------------------------------------------------------
# Driver.
# ---------------------------------------------------------------------------


def shown(path):
    """A path relative to the repo when inside it, for messages."""
    path = os.path.abspath(path)
    inside = path.startswith(REPO + os.sep)
    return os.path.relpath(path, REPO) if inside else path


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sample", action="store_true",
                      help="one test per supported op; fail on regressions")
    mode.add_argument("--check", action="store_true",
                      help="full run compared with the committed doc; "
                           "does not rewrite it")
    p.add_argument("--no-run", action="store_true",
                   help="import stage only (no strata-compile/strata-run); "
                        "the doc is not written")
    p.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"),
                   help="directory holding strata-import, strata-compile "
                        "and strata-run (default: <repo>/build/bin)")
    p.add_argument("--doc", default=DOC, help="generated markdown path")
    p.add_argument("--tests", default=None,
                   help="node test directory (default: the onnx package's)")
    p.add_argument("--filter", default=None,
                   help="only run tests whose name matches this regex "
                        "(full mode: the doc is not written)")
    p.add_argument("-j", "--jobs", type=int, default=2,
                   help="worker processes (default 2)")
    p.add_argument("--timeout", type=int, default=120,
                   help="seconds per tool invocation")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every failing test")
    return p.parse_args()


def main():
    args = parse_args()
    tools = ["strata-import"] + ([] if args.no_run
                                 else ["strata-compile", "strata-run"])
    for tool in tools:
        binary = os.path.join(args.bin_dir, tool)
        if not os.access(binary, os.X_OK):
            sys.exit(f"error: {binary} not found; build it with "
                     f"`ninja -C build {tool}` or pass --bin-dir")
    stage = "import" if args.no_run else "run"
    supported = parse_registry(REGISTRY)
    cases = collect_tests(args.tests or node_test_dir())
    doc = parse_doc(args.doc)

    if args.sample:
        todo = pick_sample(supported, cases, doc, stage)
    else:
        todo = [c for c in cases if c.op in supported]
    if args.filter:
        todo = [c for c in todo if re.search(args.filter, c.name)]
    full = not (args.sample or args.filter)
    results = run_all(args.bin_dir, todo, args.jobs, args.timeout,
                      not args.no_run, progress=full)

    final = results[stage]
    failed = [r for r in final.values() if not r.passed]
    for r in sorted(failed, key=lambda r: r.name):
        if args.verbose or args.sample:
            where = "import" if not results["import"][r.name].passed \
                else stage
            print(f"FAIL {r.name} [{r.op}, opset {r.opset}, {where}]: "
                  f"{r.reason}")
    regressed = regressions(todo, results, doc, stage)
    for c in regressed:
        print(f"REGRESSION {c.name}: listed as passing in "
              f"{shown(args.doc)}, now: {final[c.name].reason}")
    passed = len(final) - len(failed)
    imported = sum(r.passed for r in results["import"].values())

    status = 0
    if args.sample:
        status = 1 if regressed else 0
    elif full and not args.no_run:
        text = render_doc(supported, cases, results)
        print(f"{passed} of {len(final)} node tests of supported ops "
              f"compile, run and match ({pct(passed, len(final)):.1f}%); "
              f"{imported} import ({pct(imported, len(final)):.1f}%)")
        if args.check:
            old = open(args.doc, encoding="utf-8").read() \
                if os.path.isfile(args.doc) else ""
            if old != text:
                print(f"{shown(args.doc)} is out of date; "
                      "rerun without --check to regenerate it")
                status = 1
            status = 1 if regressed else status
        else:
            with open(args.doc, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {shown(args.doc)}")
    print(f"{passed} passed, {len(failed)} failed"
          + ("" if args.no_run else f" ({imported} imported)"))
    return status


if __name__ == "__main__":
    sys.exit(main())
