"""strata.Generator: text generation over a module's prefill and decode
entries, one token at a time, in the runtime.

The runtime prefills the prompt, decodes one token per step and samples it
(greedy, temperature, top-k, top-p, min-p, repetition penalty, seeded);
Python only steps it and collects tokens, so generation from Python runs
at the runtime's speed. ``stream=True`` yields tokens (or text pieces) as
they come; leaving the loop early cancels the sequence.
"""
from __future__ import annotations

import codecs
import weakref
from dataclasses import dataclass, field
from typing import Dict, Iterator, List, Optional, Sequence, Union

from . import _strata
from .errors import FailedPreconditionError, InvalidArgumentError
from .runtime import Module, Session
from .tokenizer import Tokenizer


@dataclass
class Generation:
    """A finished (or cancelled) generation: the new ``tokens`` (the prompt
    excluded), their ``text`` when there is a tokenizer, and the runtime's
    ``metrics`` (prompt_tokens, generated_tokens, ttft_ms, tpot_ms, p50_ms,
    p99_ms, tokens_per_second)."""
    tokens: List[int]
    text: Optional[str]
    metrics: Dict[str, float] = field(default_factory=dict)
    cancelled: bool = False


class Generator:
    """Generates from a module with ``prefill`` and ``decode`` entries
    (what strata.compile makes of a causal decoder). The KV cache lives in
    its session: a new one on ``threads`` threads for a Module, or the
    Session given, which then belongs to this generator (one generator per
    session; its prefill/decode entries and state are the generator's while
    it lives). ``tokenizer`` turns text prompts into ids and ids back into
    text."""

    def __init__(self, module: Union[Module, Session],
                 tokenizer: Optional[Tokenizer] = None, *, threads: int = 0,
                 prefill_chunk: int = 0):
        self.session = module if isinstance(module, Session) \
            else module.session(threads)
        owner = self.session._generator
        if owner is not None and owner() is not None:
            raise FailedPreconditionError(
                "this session already has a Generator: one per session (it "
                "owns the session's KV cache)", 9)
        self.tokenizer = tokenizer
        self._native = _strata.Generator(self.session._session, prefill_chunk)
        self.session._generator = weakref.ref(self)
        # Streams in progress: sequence id -> cancel requested.
        self._streams: Dict[int, bool] = {}
        # The Generation of the last stream, once it ended.
        self.last: Optional[Generation] = None

    def _prompt_ids(self, prompt: Union[str, Sequence[int]]) -> List[int]:
        if isinstance(prompt, str):
            if self.tokenizer is None:
                raise InvalidArgumentError(
                    "a text prompt needs a tokenizer (Generator(module, "
                    "tokenizer=...)); or pass token ids", 3)
            return self.tokenizer.encode(prompt)
        return [int(t) for t in prompt]

    def _start(self, prompt, max_new_tokens, temperature, top_k, top_p,
               min_p, repetition_penalty, seed, stop_tokens) -> int:
        return self._native.add_sequence(
            self._prompt_ids(prompt), float(temperature), int(top_k),
            float(top_p), float(min_p), float(repetition_penalty), int(seed),
            int(max_new_tokens), [int(t) for t in stop_tokens])

    def generate(self, prompt: Union[str, Sequence[int]],
                 max_new_tokens: int = 0, *, temperature: float = 0.0,
                 top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0,
                 repetition_penalty: float = 1.0, seed: int = 0,
                 stop_tokens: Sequence[int] = (), stream: bool = False,
                 text: bool = True
                 ) -> Union[Generation, Iterator[Union[int, str]]]:
        """Generates up to ``max_new_tokens`` (0: until a stop token or the
        context is full) after ``prompt`` (text, with a tokenizer, or ids).
        Returns a Generation; with ``stream=True`` an iterator of tokens
        instead (text pieces when there is a tokenizer and ``text``)."""
        if stream:
            args = (prompt, max_new_tokens, temperature, top_k, top_p, min_p,
                    repetition_penalty, seed, stop_tokens)
            return self._stream(args, text and self.tokenizer is not None)
        return self.generate_batch(
            [prompt], max_new_tokens, temperature=temperature, top_k=top_k,
            top_p=top_p, min_p=min_p, repetition_penalty=repetition_penalty,
            seed=seed, stop_tokens=stop_tokens)[0]

    def generate_batch(self, prompts: Sequence[Union[str, Sequence[int]]],
                       max_new_tokens: int = 0, *, temperature: float = 0.0,
                       top_k: int = 0, top_p: float = 1.0, min_p: float = 0.0,
                       repetition_penalty: float = 1.0, seed: int = 0,
                       stop_tokens: Sequence[int] = ()) -> List[Generation]:
        """Generates for every prompt, several at once: each decode step
        runs every sequence in flight as one batch, and a prompt waiting
        for a cache slot starts as soon as one frees (continuous batching;
        the slots are the compiled max_batch). Returns one Generation per
        prompt, in order; sequence i is seeded with ``seed + i``."""
        prompts = list(prompts)
        results: List[Optional[Generation]] = [None] * len(prompts)
        waiting = list(range(len(prompts)))
        running: Dict[int, int] = {}  # sequence id -> prompt index
        slots = self._native.slot_count()
        try:
            while waiting or running:
                while waiting and len(running) < slots:
                    i = waiting.pop(0)
                    sequence = self._start(
                        prompts[i], max_new_tokens, temperature, top_k, top_p,
                        min_p, repetition_penalty, seed + i, stop_tokens)
                    running[sequence] = i
                for sequence in [s for s in running
                                 if self._native.finished(s)]:
                    results[running.pop(sequence)] = self._result(
                        sequence, cancelled=False)
                    self._native.remove(sequence)
                if running:
                    self._native.step()
        finally:
            for sequence in running:  # an error: free the slots
                self._native.remove(sequence)
        return results  # type: ignore[return-value]

    def _stream(self, args, as_text: bool) -> Iterator[Union[int, str]]:
        sequence = self._start(*args)
        self._streams[sequence] = False
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        decoded = 0  # bytes of the sequence's text already decoded
        seen = 0
        completed = False
        try:
            while True:
                new = self._native.tokens(sequence, seen)
                if new:
                    seen += len(new)
                    if as_text:
                        # The whole sequence, then its new bytes: a piece's
                        # text may depend on its neighbours (SentencePiece's
                        # word-start space), and the streamed text must be
                        # Generation.text.
                        data = self.tokenizer.decode_bytes(
                            self._native.tokens(sequence, 0))
                        piece = decoder.decode(data[decoded:])
                        decoded = len(data)
                        if piece:
                            yield piece
                    else:
                        yield from new
                if self._native.finished(sequence):
                    break
                self._native.step()
            completed = True
            if as_text:
                tail = decoder.decode(b"", final=True)
                if tail:
                    yield tail
        finally:
            # Leaving early (break, an exception, close()) cancels it; the
            # slot is freed whatever happens.
            cancelled = self._streams.pop(sequence, False) or not completed
            try:
                self.last = self._result(sequence, cancelled)
            finally:
                self._native.remove(sequence)

    def cancel(self) -> None:
        """Stops the generations streams are producing: each stream ends
        after the tokens already made, and its ``last`` says cancelled.
        Callable from another thread; a decode step already running
        finishes first."""
        for sequence in list(self._streams):
            self._streams[sequence] = True
            self._native.cancel(sequence)

    def _result(self, sequence: int, cancelled: bool) -> Generation:
        tokens = list(self._native.tokens(sequence, 0))
        text = self.tokenizer.decode(tokens) if self.tokenizer else None
        return Generation(tokens, text, dict(self._native.metrics(sequence)),
                          cancelled)
