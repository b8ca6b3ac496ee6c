"""docs/python.md's tutorial: every ```python block, in order, in one
namespace, in a temporary directory (it writes block.onnx there). Needs
torch, as the tutorial does."""
import os
import re


from conftest import ROOT

import torch  # noqa: F401  (the tutorial exports with it)


def tutorial_blocks():
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def test_tutorial_runs(tmp_path, monkeypatch, capsys):
    blocks = tutorial_blocks()
    assert len(blocks) >= 6
    monkeypatch.chdir(tmp_path)
    namespace = {"STRATA_ROOT": ROOT}
    for i, block in enumerate(blocks):
        exec(compile(block, f"docs/python.md block {i + 1}", "exec"),
             namespace)
    out = capsys.readouterr().out
    assert "x ('batch', 16, 64) 4" in out
    assert "['decode', 'main', 'prefill', 'verify']" in out
