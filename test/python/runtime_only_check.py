"""The strata-runtime package (python/runtime, STRATA_RUNTIME_ONLY): no
compiler inside, yet it loads an artifact strata-compile made and
generates the same tokens as strata-run generate.
Usage: runtime_only_check.py BUILD_BIN_DIR"""
import json
import os
import subprocess
import sys
import tempfile

import strata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def main():
    bin_dir = sys.argv[1]
    assert not strata.has_compiler
    try:
        strata.compile("model.onnx")
        raise AssertionError("a runtime-only build compiled")
    except strata.UnimplementedError:
        pass
    with tempfile.TemporaryDirectory() as tmp:
        artifact = os.path.join(tmp, "bytegpt.strata")
        subprocess.run([os.path.join(bin_dir, "strata-compile"),
                        os.path.join(ROOT, "test/models/fixtures/bytegpt/"
                                     "decode.onnx"),
                        "-o", artifact, "--max-batch", "1",
                        "--max-seq", "128"], check=True,
                       capture_output=True)
        prompt = list(b"And God said")
        cli = json.loads(subprocess.run(
            [os.path.join(bin_dir, "strata-run"), "generate", artifact,
             "--prompt-ids", ",".join(map(str, prompt)),
             "--max-new-tokens", "16", "--json"],
            check=True, capture_output=True, text=True).stdout.splitlines()[0])
        module = strata.load(artifact)
        got = strata.Generator(module).generate(prompt, max_new_tokens=16)
        assert got.tokens == cli["tokens"], (got.tokens, cli["tokens"])
    print("runtime-only package: loads, generates the CLI's tokens, "
          "refuses to compile")


if __name__ == "__main__":
    main()
