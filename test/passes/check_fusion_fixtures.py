"""The outside check of the fusion pipeline on every fixture model.

For each fixture with an "expected_after_fusion" entry in its meta.json,
runs `strata-compile MODEL --emit mlir --report` (import + fusion pipeline)
and checks that
  - the count of each fused op (attention, gelu, layer_norm, rms_norm;
    silu: one per layer in Llama-style models, else none, unless listed)
    equals the generator's expected count,
  - the fused GELUs use the approximation the generator recorded
    ("gelu_approximate": "none", "tanh" or a list of both),
  - no erf, tanh, softmax, reduce_mean, pow or sqrt is left outside a fused
    op (but those "allow_after_fusion" lists: a CNN's global average pool
    is a reduce_mean),
  - in a causal model ("causal": true) every fused attention has the
    `causal` attribute, and with grouped-query attention ("kv_heads" below
    "heads") every one takes the key/value heads unrepeated; with a
    "sliding_window" W every one has `window = W` (the export's own band
    mask read as the attribute, no option given); with "layer_windows"
    (one entry per layer, a window or null, for models alternating local
    and global layers) the N-th attention has exactly the N-th layer's
    window or none,
  - with "expected_folded_batch_norms" N, exactly N layers took the
    per-channel scale/shift ops of a BatchNormalization (4 each, as the
    importer writes one) into their weights, and
  - the report lists no unfused fusion candidate.
Usage: python check_fusion_fixtures.py MODELS_DIR STRATA_COMPILE
Prints one line per model and a closing "N passed, M failed"."""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

LEFTOVER = ("erf", "tanh", "softmax", "reduce_mean", "pow", "sqrt")
ATTENTION = re.compile(r"= strata\.attention [^{:]*(\{[^}]*\})? : \((.*)\) ->")
REPORT_ROW = re.compile(r"^\s+strata\.(\w+)\s+(\d+)\s+(\d+)$")
FOLDED = re.compile(r"folded into conv/linear weights: (\d+) on (\d+) layers")


def models_of(fixture_dir, meta):
    """The ONNX files of a fixture: model.onnx, or the trained model's
    prefill/decode pair named in its meta.json."""
    names = [meta[k] for k in ("prefill", "decode") if k in meta]
    if not names:
        names = ["model.onnx"]
    return [os.path.join(fixture_dir, n) for n in names]


def expected_gelu_modes(meta, count):
    mode = meta.get("gelu_approximate")
    if mode is None or count == 0:
        return None
    if isinstance(mode, list):
        return sorted(mode)
    return [mode] * count


def check_attention(ir, meta):
    """The causal attribute and the key/value head count of every fused
    attention against the generator's meta.json."""
    problems = []
    heads, kv_heads = meta.get("heads"), meta.get("kv_heads")
    layer_windows = meta.get("layer_windows")
    seen = 0
    for line in ir.splitlines():
        m = ATTENTION.search(line)
        if not m:
            continue
        attrs, operands = m.group(1) or "", m.group(2)
        if layer_windows is not None:
            want = layer_windows[seen] if seen < len(layer_windows) else None
            got = re.search(r"\bwindow = (\d+) : i64", attrs)
            got = int(got.group(1)) if got else None
            if got != want:
                problems.append("attention %d has window %s, expected %s"
                                % (seen, got, want))
        seen += 1
        if meta.get("causal") and not re.search(r"\bcausal\b", attrs):
            problems.append("an attention without 'causal'")
        window = meta.get("sliding_window")
        if window and not re.search(r"\bwindow = %d : i64" % window, attrs):
            problems.append("an attention without 'window = %d'" % window)
        types = re.findall(r"tensor<([^>]*)>", operands)
        if heads and kv_heads and kv_heads < heads and len(types) >= 2:
            key_heads = types[1].split("x")[1]
            if key_heads != str(kv_heads):
                problems.append("an attention with key heads %s, expected %d"
                                % (key_heads, kv_heads))
    if layer_windows is not None and seen != len(layer_windows):
        problems.append("%d attentions for %d layer windows"
                        % (seen, len(layer_windows)))
    return problems


def check_model(tool, model, meta, tmp):
    out = os.path.join(tmp, "fused.mlir")
    # The graph as exported: without the generation entries, which repeat
    # its fused ops.
    proc = subprocess.run([tool, model, "--emit", "mlir", "-o", out,
                           "--no-generation-entries",
                           "--report", "--quiet"], capture_output=True,
                          text=True, timeout=600)
    if proc.returncode != 0:
        return ["strata-compile failed: " +
                " | ".join(proc.stderr.strip().splitlines()[:3])], ""
    fused = {}
    missed = []
    in_missed = False
    folded = (0, 0)
    for line in proc.stdout.splitlines():
        row = REPORT_ROW.match(line)
        fold = FOLDED.search(line)
        if fold:
            folded = (int(fold.group(1)), int(fold.group(2)))
        elif row:
            fused[row.group(1)] = int(row.group(3))
        elif line.strip().startswith("unfused candidates:"):
            in_missed = True
        elif in_missed and line.startswith("    "):
            missed.append(line.strip())
    with open(out) as f:
        ir = f.read()
    problems = []
    counts = []
    expected = dict(meta["expected_after_fusion"])
    # The generators list no SiLU count: Llama-style MLPs gate with one SiLU
    # per layer (SwiGLU), the GPT-2/BERT ones have none.
    expected.setdefault(
        "silu", meta.get("layers", 0) if meta.get("family") in ("llama", "llama8", "mistral", "qwen2") else 0)
    for op, want in sorted(expected.items()):
        got = fused.get(op)
        counts.append(f"{op} {got}/{want}")
        if got != want:
            problems.append(f"{op}: {got} fused, expected {want}")
    modes = sorted("tanh" if 'approximate = "tanh"' in line else "none"
                   for line in ir.splitlines() if "strata.gelu " in line)
    want_modes = expected_gelu_modes(meta, len(modes))
    if want_modes is not None and modes != want_modes:
        problems.append(f"gelu approximations {modes}, expected {want_modes}")
    problems += check_attention(ir, meta)
    want_folds = meta.get("expected_folded_batch_norms")
    if want_folds is not None:
        counts.append(f"folded batch norms {folded[1]}/{want_folds}")
        if folded != (4 * want_folds, want_folds):
            problems.append(f"{folded[0]} ops folded into {folded[1]} layers, "
                            f"expected {4 * want_folds} into {want_folds}")
    for op in LEFTOVER:
        if op in meta.get("allow_after_fusion", ()):
            continue
        n = len(re.findall(r"= strata\." + op + r" ", ir))
        if n:
            problems.append(f"{n} strata.{op} left after fusion")
    problems += ["unfused candidate: " + m for m in missed]
    return problems, ", ".join(counts)


def main():
    models_dir, tool = sys.argv[1], sys.argv[2]
    metas = sorted(glob.glob(os.path.join(models_dir, "**", "meta.json"),
                             recursive=True))
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for meta_path in metas:
            with open(meta_path) as f:
                meta = json.load(f)
            if "expected_after_fusion" not in meta:
                continue
            for model in models_of(os.path.dirname(meta_path), meta):
                rel = os.path.relpath(model, models_dir)
                problems, counts = check_model(tool, model, meta, tmp)
                if problems:
                    failed += 1
                    print("FAIL", rel, "; ".join(problems))
                else:
                    passed += 1
                    print("PASS", rel, counts)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
