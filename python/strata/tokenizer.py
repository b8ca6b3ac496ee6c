"""Text <-> token ids: the runtime's byte, GPT-2 BPE and SentencePiece
tokenizers."""
from __future__ import annotations

import os
from typing import List, Sequence, Union

from . import _strata


class Tokenizer:
    """A tokenizer: ``encode(text) -> ids``, ``decode(ids) -> text``. Make
    one with ``Tokenizer.byte()``, ``Tokenizer.gpt2(dir)`` or
    ``Tokenizer.sentencepiece(path)``."""

    def __init__(self, native: "_strata.Tokenizer", kind: str):
        self._native = native
        self.kind = kind

    @classmethod
    def byte(cls) -> "Tokenizer":
        """Token id = byte value (the byte-level test models)."""
        return cls(_strata.Tokenizer.byte(), "byte")

    @classmethod
    def gpt2(cls, directory: Union[str, os.PathLike]) -> "Tokenizer":
        """GPT-2's BPE from ``directory``/encoder.json and vocab.bpe."""
        d = os.fspath(directory)
        return cls(_strata.Tokenizer.gpt2(os.path.join(d, "encoder.json"),
                                          os.path.join(d, "vocab.bpe")),
                   "gpt2")

    @classmethod
    def sentencepiece(cls, path: Union[str, os.PathLike]) -> "Tokenizer":
        """A SentencePiece .model file (Llama-style vocabularies)."""
        return cls(_strata.Tokenizer.sentencepiece(os.fspath(path)),
                   "sentencepiece")

    @property
    def vocab_size(self) -> int:
        return self._native.vocab_size()

    def encode(self, text: str) -> List[int]:
        return list(self._native.encode(text))

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The bytes of ``ids``; a prefix may end inside a character."""
        return self._native.decode([int(i) for i in ids])

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids`` (an incomplete UTF-8 tail replaced)."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")
