"""python -m strata compile|run|generate: the CLI tools' main commands
through the Python package (same flag names as strata-compile and
strata-run)."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import List, Optional

import numpy as np

from . import (CompileError, Generator, StrataError, Tokenizer, compile,
               load)


def _key_values(items: List[str], what: str):
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise SystemExit(f"{what} expects NAME=VALUE, got '{item}'")
        out[name] = value
    return out


def _compile(a) -> int:
    dims = {k: int(v) for k, v in _key_values(a.dim, "--dim").items()}
    artifact = compile(
        a.model, a.output, max_batch=a.max_batch, max_seq=a.max_seq,
        dims=dims, target_cpu=a.target_cpu,
        prefill_precision=a.prefill_precision,
        decode_precision=a.decode_precision,
        kv_cache_precision=a.kv_cache_precision, int4_group=a.int4_group,
        window=a.attention_window, sinks=a.attention_sinks,
        generation_entries=False if a.no_generation_entries else None,
        prefill_chunk=a.prefill_chunk, verify_length=a.verify_length,
        kv_block_size=a.kv_block_size, kv_blocks=a.kv_blocks)
    for d in artifact.warnings:
        print(f"warning: {d.location}: {d.message}", file=sys.stderr)
    print(f"wrote {artifact.path} ({artifact.size} bytes)")
    return 0


def _run(a) -> int:
    module = load(a.artifact)
    session = module.session(a.threads)
    inputs = {name: np.load(path)
              for name, path in _key_values(a.input, "--input").items()}
    outputs = session.run(inputs, entry=a.entry)
    for name, value in outputs.items():
        print(f"{name}: {value.dtype} {list(value.shape)}")
        if a.output_dir:
            os.makedirs(a.output_dir, exist_ok=True)
            np.save(os.path.join(a.output_dir, name + ".npy"), value)
    return 0


def _tokenizer(name: Optional[str]) -> Optional[Tokenizer]:
    if name is None or name == "byte":
        return Tokenizer.byte()
    if name == "gpt2":
        return Tokenizer.gpt2(os.environ.get("STRATA_GPT2_BPE_DIR", "."))
    return Tokenizer.sentencepiece(name)


def _generate(a) -> int:
    module = load(a.artifact)
    tokenizer = _tokenizer(a.tokenizer)
    generator = Generator(module, tokenizer, threads=a.threads)
    prompt = ([int(t) for t in a.prompt_ids.split(",")]
              if a.prompt_ids else a.prompt)
    options = dict(max_new_tokens=a.max_new_tokens,
                   temperature=a.temperature, top_k=a.top_k, top_p=a.top_p,
                   seed=a.seed)
    if a.json:
        g = generator.generate(prompt, **options)
        print(json.dumps({"tokens": g.tokens, "text": g.text, **g.metrics}))
        return 0
    for piece in generator.generate(prompt, stream=True, **options):
        print(piece, end="", flush=True)
    print()
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m strata")
    sub = p.add_subparsers(dest="command", required=True)

    c = sub.add_parser("compile", help="ONNX model -> .strata artifact")
    c.add_argument("model")
    c.add_argument("-o", "--output", required=True)
    c.add_argument("--max-batch", type=int)
    c.add_argument("--max-seq", type=int)
    c.add_argument("--dim", action="append", default=[],
                   metavar="NAME=MAX")
    c.add_argument("--target-cpu")
    c.add_argument("--prefill-precision")
    c.add_argument("--decode-precision")
    c.add_argument("--kv-cache-precision")
    c.add_argument("--int4-group", type=int)
    c.add_argument("--attention-window", type=int)
    c.add_argument("--attention-sinks", type=int)
    c.add_argument("--no-generation-entries", action="store_true")
    c.add_argument("--prefill-chunk", type=int)
    c.add_argument("--verify-length", type=int)
    c.add_argument("--kv-block-size", type=int, default=0)
    c.add_argument("--kv-blocks", type=int, default=0)
    c.set_defaults(func=_compile)

    r = sub.add_parser("run", help="run an entry on .npy inputs")
    r.add_argument("artifact")
    r.add_argument("--entry")
    r.add_argument("--input", action="append", default=[],
                   metavar="NAME=FILE.npy")
    r.add_argument("--output-dir")
    r.add_argument("--threads", type=int, default=0)
    r.set_defaults(func=_run)

    g = sub.add_parser("generate", help="generate text or token ids")
    g.add_argument("artifact")
    prompt = g.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt")
    prompt.add_argument("--prompt-ids")
    g.add_argument("--tokenizer", help="byte (default), gpt2 (reads "
                   "$STRATA_GPT2_BPE_DIR) or a SentencePiece .model")
    g.add_argument("--max-new-tokens", type=int, default=0)
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--top-k", type=int, default=0)
    g.add_argument("--top-p", type=float, default=1.0)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--threads", type=int, default=0)
    g.add_argument("--json", action="store_true")
    g.set_defaults(func=_generate)

    a = p.parse_args(argv)
    try:
        return a.func(a)
    except CompileError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except StrataError as e:
        print(f"error [{type(e).__name__}]: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
