"""python -m strata compile|run|generate, and the package's typing files."""
import json
import os
import subprocess
import sys

import numpy as np

import strata

from conftest import fixture_path


def cli(*args, check=True):
    return subprocess.run([sys.executable, "-m", "strata", *map(str, args)],
                          capture_output=True, text=True, check=check)


def test_compile_and_run(tmp_path):
    artifact = tmp_path / "bert.strata"
    out = cli("compile", fixture_path("bert_op17", "model.onnx"), "-o",
              artifact, "--max-seq", "16", "--max-batch", "1").stdout
    assert "wrote" in out and artifact.exists()
    ids = np.arange(8, dtype=np.int64).reshape(1, 8)
    for name, value in {"input_ids": ids, "attention_mask": np.ones_like(ids),
                        "token_type_ids": np.zeros_like(ids)}.items():
        np.save(tmp_path / f"{name}.npy", value)
    out = cli("run", artifact, "--input", f"input_ids={tmp_path}/input_ids.npy",
              "--input", f"attention_mask={tmp_path}/attention_mask.npy",
              "--input", f"token_type_ids={tmp_path}/token_type_ids.npy",
              "--output-dir", tmp_path / "out").stdout
    assert "last_hidden_state: float32 [1, 8, 64]" in out
    assert np.load(tmp_path / "out" / "last_hidden_state.npy").shape == (1, 8, 64)


def test_compile_paged_kv_cache(tmp_path):
    # The compiler's paged-cache options, by strata-compile's flag names.
    artifact = tmp_path / "paged.strata"
    cli("compile", fixture_path("bytegpt_draft", "decode.onnx"), "-o",
        artifact, "--max-seq", "64", "--kv-block-size", "16", "--kv-blocks",
        "8")
    inputs = {t.name: t for t in
              strata.load(artifact).entries["decode"].inputs}
    assert "slots" not in inputs
    assert inputs["block_tables"].dims[1].max == 4
    bad = cli("compile", fixture_path("bytegpt_draft", "decode.onnx"), "-o",
              tmp_path / "x.strata", "--kv-blocks", "8", check=False)
    assert bad.returncode == 1
    assert "--kv-blocks only with --kv-block-size" in bad.stderr


def test_generate_and_errors(tmp_path, bytegpt_module):
    result = cli("generate", bytegpt_module.path, "--prompt", "And God said",
                 "--max-new-tokens", "8", "--json")
    record = json.loads(result.stdout)
    assert len(record["tokens"]) == 8 and record["text"]
    streamed = cli("generate", bytegpt_module.path, "--prompt",
                   "And God said", "--max-new-tokens", "8").stdout
    assert streamed.endswith("\n") and streamed[:-1] == record["text"]
    bad = cli("compile", tmp_path / "missing.onnx", "-o", tmp_path / "x",
              check=False)
    assert bad.returncode == 1 and "error" in bad.stderr


def test_typing_files():
    here = os.path.dirname(strata.__file__)
    for name in ("py.typed", "_strata.pyi"):
        assert os.path.isfile(os.path.join(here, name)), name
    if strata.has_compiler:
        assert os.path.isfile(os.path.join(here, "_strata_compiler.pyi"))
