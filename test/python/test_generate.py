"""strata.Generator on the trained byte-level model: the same tokens as
strata-run generate's engine, streaming, sampling and cancellation."""
import pytest

import strata

PROMPT = "In the beginning God created"


def test_greedy_generation(bytegpt_module):
    generator = strata.Generator(bytegpt_module, strata.Tokenizer.byte())
    g = generator.generate(PROMPT, max_new_tokens=24)
    assert len(g.tokens) == 24 and not g.cancelled
    assert g.text == bytes(g.tokens).decode("utf-8", "replace")
    assert g.metrics["generated_tokens"] == 24
    assert g.metrics["prompt_tokens"] == len(PROMPT)
    # Greedy decoding is deterministic: ids in, the same ids out.
    again = generator.generate(list(PROMPT.encode()), max_new_tokens=24)
    assert again.tokens == g.tokens


def test_stream_matches_the_whole_generation(bytegpt_module):
    generator = strata.Generator(bytegpt_module, strata.Tokenizer.byte())
    whole = generator.generate(PROMPT, max_new_tokens=16)
    pieces = list(generator.generate(PROMPT, max_new_tokens=16, stream=True))
    assert "".join(pieces) == whole.text
    ids = list(generator.generate(PROMPT, max_new_tokens=16, stream=True,
                                  text=False))
    assert ids == whole.tokens
    assert generator.last.tokens == whole.tokens


def test_seeded_sampling(bytegpt_module):
    generator = strata.Generator(bytegpt_module, strata.Tokenizer.byte())
    options = dict(max_new_tokens=20, temperature=0.8, top_k=40, top_p=0.95)
    a = generator.generate(PROMPT, seed=7, **options).tokens
    b = generator.generate(PROMPT, seed=7, **options).tokens
    assert a == b


def test_cancelled_generation(bytegpt_module):
    generator = strata.Generator(bytegpt_module, strata.Tokenizer.byte())
    stream = generator.generate(PROMPT, max_new_tokens=60, stream=True,
                                text=False)
    got = []
    for token in stream:
        got.append(token)
        if len(got) == 5:
            generator.cancel()
    assert len(got) == 5
    assert generator.last.cancelled and generator.last.tokens == got
    # Breaking out of a stream frees its slot too: the slots stay usable.
    for _ in range(3):
        for _token in generator.generate(PROMPT, max_new_tokens=60,
                                         stream=True):
            break
    assert len(generator.generate(PROMPT, max_new_tokens=3).tokens) == 3


def test_generation_errors(bytegpt_module):
    generator = strata.Generator(bytegpt_module)
    with pytest.raises(strata.InvalidArgumentError, match="tokenizer"):
        generator.generate("text without a tokenizer")
    with pytest.raises(strata.InvalidArgumentError):
        generator.generate([])
    with pytest.raises(strata.OutOfRangeError):
        generator.generate([65] * 100, max_new_tokens=100)  # context 128
    bert = strata.compile(
        __import__("conftest").fixture_path("bert_op17", "model.onnx"),
        max_seq=16).load()
    with pytest.raises(strata.FailedPreconditionError, match="prefill"):
        strata.Generator(bert)


def test_tokenizer():
    tokenizer = strata.Tokenizer.byte()
    assert tokenizer.encode("hé") == [104, 195, 169]
    assert tokenizer.decode([104, 195, 169]) == "hé"
    assert tokenizer.vocab_size == 256
    with pytest.raises(strata.InvalidArgumentError):
        tokenizer.decode([300])
    with pytest.raises(strata.NotFoundError):
        strata.Tokenizer.gpt2("/nonexistent")


def test_batch_generation_matches_one_at_a_time(bytegpt_module):
    # 5 prompts through 2 slots (max_batch=2): continuous batching, and
    # every greedy sequence equals its generation alone.
    generator = strata.Generator(bytegpt_module, strata.Tokenizer.byte())
    prompts = ["And God said", "In the beginning", "Blessed are the",
               "The LORD is my", "Jesus wept"]
    batch = generator.generate_batch(prompts, max_new_tokens=12)
    assert [len(g.tokens) for g in batch] == [12] * 5
    for prompt, g in zip(prompts, batch):
        assert g.tokens == generator.generate(prompt,
                                              max_new_tokens=12).tokens
    assert generator._native.active_count() == 0


def test_sentencepiece_tokenizer_and_streaming(bytegpt_module, tmp_path):
    # A model spm_train makes from the fixture's held-out text (as the C++
    # tokenizer tests do); streamed text must equal the whole text even
    # where pieces carry SentencePiece's word-start marker.
    import subprocess
    from conftest import fixture_path
    prefix = tmp_path / "spm"
    subprocess.run(
        ["spm_train", f"--input={fixture_path('bytegpt', 'heldout.txt')}",
         f"--model_prefix={prefix}", "--vocab_size=500",
         "--model_type=unigram", "--character_coverage=1.0",
         "--byte_fallback=true", "--normalization_rule_name=identity",
         "--remove_extra_whitespaces=false", "--minloglevel=2"],
        check=True, capture_output=True)
    tokenizer = strata.Tokenizer.sentencepiece(f"{prefix}.model")
    assert tokenizer.kind == "sentencepiece" and tokenizer.vocab_size == 500
    text = "And God said, Let there be light"
    ids = tokenizer.encode(text)
    assert len(ids) < len(text) and tokenizer.decode(ids) == text
    # bytegpt's 256 ids read as this vocabulary's first pieces (mostly its
    # byte-fallback pieces, ids 3-258): not meaningful text, but multi-byte
    # characters split across tokens.
    generator = strata.Generator(bytegpt_module, tokenizer)
    prompt = [3 + b for b in b"And God said"]
    whole = generator.generate(prompt, max_new_tokens=20)
    pieces = list(generator.generate(prompt, max_new_tokens=20, stream=True))
    assert len(pieces) > 1 and "".join(pieces) == whole.text
    with pytest.raises(strata.NotFoundError):
        strata.Tokenizer.sentencepiece(tmp_path / "missing.model")


def test_gpt2_tokenizer():
    from conftest import ROOT
    import os
    directory = os.path.join(os.path.dirname(ROOT), "shared", "data",
                             "gpt2-bpe")
    if not os.path.isfile(os.path.join(directory, "encoder.json")):
        pytest.skip("GPT-2's vocabulary (../shared/data/gpt2-bpe) is not "
                    "beside this checkout")
    tokenizer = strata.Tokenizer.gpt2(directory)
    assert tokenizer.vocab_size == 50257
    assert tokenizer.encode("Hello world") == [15496, 995]
    assert tokenizer.decode([15496, 995]) == "Hello world"
