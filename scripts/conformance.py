#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ONNX backend node-test conformance runner for strata-import.

Runs `strata-import` over the node tests shipped with the pinned pip `onnx`
package (onnx/backend/test/data/node/*/model.onnx) and writes the generated
docs/SupportedOps.md.  Run it with the project venv:

    .venv/bin/python scripts/conformance.py            # full run, rewrites doc
    .venv/bin/python scripts/conformance.py --check    # full run, compare to doc
    .venv/bin/python scripts/conformance.py --sample   # CI: one test per op

The supported-op list is parsed from the importer's own table,
compiler/import/OnnxOpRegistry.cpp (default-domain rows only).  A test belongs
to op X if its single node is X; an `_expanded` test (a decomposed function
body) belongs to the op of its base test.  The denominator is every node test
of a supported op.  A test passes when strata-import exits 0 and writes a
non-empty module (import + verification only for now).

Per-test results are `Result` records keyed by stage ("import"), so a later
`--run` mode can add a compile-and-run stage next to the import stage.

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
import subprocess
import sys
import tempfile

import onnx

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REGISTRY = os.path.join(REPO, "compiler", "import", "OnnxOpRegistry.cpp")
DOC = os.path.join(REPO, "docs", "SupportedOps.md")
EXPANDED_RE = re.compile(r"_expanded(_ver\d+)?$")
DEFAULT_DOMAINS = ("", "ai.onnx")


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
    stage: str  # "import" now; a --run mode adds "run"
    passed: bool
    reason: str = ""  # first error line, machine paths stripped
    bound: bool = False  # passed with parameters bound (--bind)


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
# Running the importer.
# ---------------------------------------------------------------------------


def first_error_line(stderr, case):
    """First diagnostic line, with the test's absolute path stripped."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    errors = [l for l in lines if "error" in l.lower()]
    line = (errors or lines or [""])[0]
    line = line.replace(case.path + ": ", "").replace(case.path, "model.onnx")
    line = line.replace(os.path.dirname(case.path) + os.sep, "")
    return line[:300]


def parameter_bindings(case):
    """--bind flags freezing the test's small integer inputs to their test
    data. Node tests feed axes/split/axis as graph inputs; Strata needs them
    at compile time, as a user binds them with `strata-import --bind`."""
    model = onnx.load(case.path, load_external_data=False)
    data_dir = os.path.join(os.path.dirname(case.path), "test_data_set_0")
    flags = []
    for i, value in enumerate(model.graph.input):
        pb = os.path.join(data_dir, f"input_{i}.pb")
        elem = value.type.tensor_type.elem_type
        if elem not in (onnx.TensorProto.INT32, onnx.TensorProto.INT64):
            continue
        if not os.path.isfile(pb):
            continue
        tensor = onnx.load_tensor(pb)
        if len(tensor.dims) <= 1 and onnx.numpy_helper.to_array(tensor).size <= 64:
            flags += ["--bind", f"{value.name}={pb}"]
    return flags


def run_import(binary, case, timeout, bind=False):
    """Run strata-import on one test; return a Result for stage "import".
    A test that fails only because a parameter must be a compile-time
    constant is retried with its integer parameters bound."""
    extra = parameter_bindings(case) if bind else []
    with tempfile.TemporaryDirectory(prefix="strata-conf-") as tmp:
        out = os.path.join(tmp, "out.mlir")
        try:
            proc = subprocess.run([binary, case.path, "-o", out] + extra,
                                  capture_output=True, text=True,
                                  errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired:
            return Result(case.name, case.op, case.opset, "import", False,
                          f"timeout after {timeout} s")
        nonempty = os.path.isfile(out) and os.path.getsize(out) > 0
    if proc.returncode == 0 and nonempty:
        return Result(case.name, case.op, case.opset, "import", True,
                      bound=bool(extra))
    if not bind and "must be a constant" in proc.stderr:
        retry = run_import(binary, case, timeout, bind=True)
        if retry.passed:
            return retry
    if proc.returncode < 0:
        reason = f"crashed with signal {-proc.returncode}"
    elif proc.returncode == 0:
        reason = "exit 0 but empty output"
    else:
        reason = (first_error_line(proc.stderr, case)
                  or f"exit {proc.returncode}, no message")
    return Result(case.name, case.op, case.opset, "import", False, reason)


def run_all(binary, cases, jobs, timeout):
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(lambda c: run_import(binary, c, timeout),
                                cases))
    return {r.name: r for r in results}


# ---------------------------------------------------------------------------
# The generated document and comparing against it.
# ---------------------------------------------------------------------------


def md_escape(text):
    return text.replace("|", "\\|").replace("`", "'")


def render_doc(supported, cases, results):
    """Markdown for docs/SupportedOps.md; deterministic (no dates)."""
    by_op = collections.defaultdict(list)
    for case in cases:
        if case.op in supported:
            by_op[case.op].append(case)
    total = sum(len(v) for v in by_op.values())
    passed = sum(results[c.name].passed for v in by_op.values() for c in v)
    pct = 100.0 * passed / total if total else 0.0
    in_range = [c for v in by_op.values() for c in v
                if supported[c.op][0] <= c.opset <= supported[c.op][1]]
    in_ok = sum(results[c.name].passed for c in in_range)
    in_pct = 100.0 * in_ok / len(in_range) if in_range else 0.0
    out = [
        "<!-- GENERATED by scripts/conformance.py; never edit by hand. -->",
        "# Supported ONNX ops",
        "",
        "Generated by `.venv/bin/python scripts/conformance.py`; do not edit.",
        f"ONNX backend node tests from onnx {onnx.__version__}; ops and "
        "opsets from `compiler/import/OnnxOpRegistry.cpp` (default domain).",
        "A test passes when `strata-import` imports and verifies it "
        "(compile-and-run is not checked yet).",
        "",
        f"**{passed} of {total} node tests of supported ops import and "
        f"verify ({pct:.1f}%)**",
        "",
        f"Of the {len(in_range)} tests whose model opset is inside the op's "
        f"supported range, {in_ok} pass ({in_pct:.1f}%).",
        "",
        f"{sum(r.passed and r.bound for r in results.values())} of the passing "
        "tests feed a parameter Strata needs at compile time (axes, split "
        "sizes, a CumSum axis) as a graph input; they pass with that input "
        "bound to its test data (`strata-import --bind NAME=FILE.pb`).",
        "",
        "| op | opsets supported | test opsets | status | passing/total |",
        "|---|---|---|---|---|",
    ]
    for op in sorted(supported):
        lo, hi = supported[op]
        tests = by_op.get(op, [])
        ok = sum(results[c.name].passed for c in tests)
        status = ("no tests" if not tests else "all pass" if ok == len(tests)
                  else "failing" if ok == 0 else "partial")
        opsets = ", ".join(str(o) for o in sorted({c.opset for c in tests}))
        out.append(f"| {op} | {lo}-{hi} | {opsets or '-'} | {status} | "
                   f"{ok}/{len(tests)} |")
    out += ["", "## Failing tests", ""]
    failing_ops = [op for op in sorted(by_op)
                   if any(not results[c.name].passed for c in by_op[op])]
    if not failing_ops:
        out.append("None.")
    for op in failing_ops:
        out += [f"### {op}", ""]
        for c in by_op[op]:
            r = results[c.name]
            if not r.passed:
                out.append(f"- `{c.name}` (opset {c.opset}): "
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
    """Return (ops in the table, failing test names) of a committed doc."""
    if not os.path.isfile(path):
        return set(), set()
    text = open(path, encoding="utf-8").read()
    ops = set(re.findall(r"^\| (\w+) \| \d+-\d+ \|", text, re.M))
    failing = set(re.findall(r"^- `(test_\w+)` \(opset", text, re.M))
    return ops, failing


def listed_passing(doc, case):
    ops, failing = doc
    return case.op in ops and case.name not in failing


def pick_sample(supported, cases, doc):
    """One test per supported op: the first alphabetically that the committed
    doc lists as passing, else the first alphabetically."""
    sample = {}
    for case in cases:  # cases are sorted by name
        if case.op not in supported:
            continue
        cur = sample.get(case.op)
        if cur is None or (not listed_passing(doc, cur)
                           and listed_passing(doc, case)):
            sample[case.op] = case
    return [sample[op] for op in sorted(sample)]


def regressions(cases, results, doc):
    return [c for c in cases
            if c.name in results and not results[c.name].passed
            and listed_passing(doc, c)]


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
    p.add_argument("--bin-dir", default=os.path.join(REPO, "build", "bin"),
                   help="directory holding strata-import "
                        "(default: <repo>/build/bin)")
    p.add_argument("--doc", default=DOC, help="generated markdown path")
    p.add_argument("--tests", default=None,
                   help="node test directory (default: the onnx package's)")
    p.add_argument("--filter", default=None,
                   help="only run tests whose name matches this regex "
                        "(full mode: the doc is not written)")
    p.add_argument("-j", "--jobs", type=int, default=2)
    p.add_argument("--timeout", type=int, default=20,
                   help="seconds per test")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every failing test")
    return p.parse_args()


def main():
    args = parse_args()
    binary = os.path.join(args.bin_dir, "strata-import")
    if not os.access(binary, os.X_OK):
        sys.exit(f"error: {binary} not found; build it with "
                 "`ninja -C build strata-import` or pass --bin-dir")
    supported = parse_registry(REGISTRY)
    cases = collect_tests(args.tests or node_test_dir())
    doc = parse_doc(args.doc)

    if args.sample:
        todo = pick_sample(supported, cases, doc)
    else:
        todo = [c for c in cases if c.op in supported]
    if args.filter:
        todo = [c for c in todo if re.search(args.filter, c.name)]
    results = run_all(binary, todo, args.jobs, args.timeout)

    failed = [r for r in results.values() if not r.passed]
    for r in sorted(failed, key=lambda r: r.name):
        if args.verbose or args.sample:
            print(f"FAIL {r.name} [{r.op}, opset {r.opset}]: {r.reason}")
    regressed = regressions(todo, results, doc)
    for c in regressed:
        print(f"REGRESSION {c.name}: listed as passing in "
              f"{shown(args.doc)}, now: "
              f"{results[c.name].reason}")
    passed = len(results) - len(failed)

    status = 0
    if args.sample:
        status = 1 if regressed else 0
    elif not args.filter:
        text = render_doc(supported, cases, results)
        pct = 100.0 * passed / len(results) if results else 0.0
        print(f"{passed} of {len(results)} node tests of supported ops "
              f"import and verify ({pct:.1f}%)")
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
    print(f"{passed} passed, {len(failed)} failed")
    return status


if __name__ == "__main__":
    sys.exit(main())
