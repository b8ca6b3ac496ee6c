#!/usr/bin/env python3
# ===- test/e2e/check_speculative.py - speculative decoding is exact -------===#
# On the trained byte-level pair (bytegpt and the 2-layer bytegpt_draft,
# same corpus and bytes), each compiled with default options:
# - greedy: 20 held-out prompts x 128 new tokens, four sequences in flight
#   at once (so one verify call carries rows with different draft counts),
#   generated plainly and speculatively with the draft model and with
#   prompt lookup, each adaptive and with a fixed 8 drafts per step: every
#   speculative output equals the plain one token for token, and the fixed
#   runs drafted (and the draft model had drafts accepted);
# - the same with ring caches (a 32-token window and 4 sinks, chunks of 16:
#   51 rows, passed several times over by 128 tokens: rejected drafts
#   overwrote ring rows that rollback must not need), with int8 keys and
#   values (rows quantized as a verify call computed them), and with a
#   paged cache (blocks of 16), also from a pool too small for the four
#   sequences at once (24 blocks of 16: drafting steps fall back to plain
#   ones, which preempt), and there also with a paged draft model, its pool
#   whole or short (18 blocks: sequences skip drafting, then catch up);
# - prompt lookup on prompts that quote themselves keeps most drafts;
# - seeded sampling with a draft runs to the end;
# - bad combinations give one clear error each: no verify entry, a draft
#   with fewer slots, both drafts at once, more drafts than the verify entry
#   takes (a draft of another vocabulary: generator_errors_test.cc).
#
# Usage: check_speculative.py FIXTURES_DIR BIN_DIR
import json
import os
import subprocess
import sys
import tempfile

PROMPTS = 20
PROMPT_BYTES = 48
NEW_TOKENS = 128


def run(cmd, timeout=600):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def compile_pair(bin_dir, fixture, out, *extra):
    proc = run([os.path.join(bin_dir, "strata-compile"),
                os.path.join(fixture, "prefill.onnx"),
                os.path.join(fixture, "decode.onnx"), "-o", out, "--quiet",
                "--max-batch", "4", "--max-seq", "256", *extra], timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"compile {fixture}: {proc.stderr.strip()}")


def generate(bin_dir, artifact, prompts_file, *extra):
    proc = run([os.path.join(bin_dir, "strata-run"), "generate", artifact,
                "--batch-prompt-ids", prompts_file, "--max-new-tokens",
                str(NEW_TOKENS), "--threads", "2", "--json", *extra])
    if proc.returncode != 0:
        raise RuntimeError(" ".join(extra) + ": " + proc.stderr.strip())
    return [json.loads(line) for line in proc.stdout.splitlines() if line]


def write_prompts(path, prompts):
    with open(path, "w") as f:
        for p in prompts:
            f.write(",".join(str(b) for b in p) + "\n")


def main():
    fixtures, bin_dir = sys.argv[1], sys.argv[2]
    target_dir = os.path.join(fixtures, "bytegpt")
    draft_dir = os.path.join(fixtures, "bytegpt_draft")
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        target = os.path.join(tmp, "target.strata")
        draft = os.path.join(tmp, "draft.strata")
        compile_pair(bin_dir, target_dir, target)
        compile_pair(bin_dir, draft_dir, draft)

        with open(os.path.join(target_dir, "heldout.txt"), "rb") as f:
            lines = [ln for ln in f.read().split(b"\n") if len(ln) > 2 * PROMPT_BYTES]
        step = len(lines) // PROMPTS
        prompts = [list(lines[i * step][:PROMPT_BYTES]) for i in range(PROMPTS)]
        prompts_file = os.path.join(tmp, "prompts.txt")
        write_prompts(prompts_file, prompts)

        plain = generate(bin_dir, target, prompts_file)
        if len(plain) != PROMPTS or any(len(p["tokens"]) != NEW_TOKENS for p in plain):
            problems.append("plain greedy: not %d x %d tokens" % (PROMPTS, NEW_TOKENS))
        variants = {
            "draft model, adaptive": ["--draft", draft],
            "draft model, 8 drafts": ["--draft", draft, "--fixed-draft-tokens",
                                      "--max-draft-tokens", "8"],
            "draft model, 3 drafts": ["--draft", draft, "--fixed-draft-tokens",
                                      "--max-draft-tokens", "3"],
            "prompt lookup, adaptive": ["--prompt-lookup"],
            "prompt lookup, 8 drafts": ["--prompt-lookup", "--fixed-draft-tokens",
                                        "--max-draft-tokens", "8"],
        }
        for name, flags in variants.items():
            got = generate(bin_dir, target, prompts_file, *flags)
            for i, (want, have) in enumerate(zip(plain, got)):
                if want["tokens"] != have["tokens"]:
                    first = next(j for j, (a, b) in enumerate(
                        zip(want["tokens"], have["tokens"])) if a != b)
                    problems.append(f"{name}: prompt {i} differs from plain "
                                    f"greedy at token {first}")
                    break
            drafted = sum(p["draft_tokens"] for p in got)
            accepted = sum(p["accepted_draft_tokens"] for p in got)
            steps = sum(p["target_steps"] for p in got)
            print(f"{name}: {drafted} drafted, {accepted} accepted "
                  f"({100.0 * accepted / max(drafted, 1):.1f}%), "
                  f"{(PROMPTS * (NEW_TOKENS - 1)) / max(steps, 1):.2f} tokens "
                  f"per target step")
            if "fixed" in " ".join(flags) and drafted == 0:
                problems.append(f"{name}: nothing drafted")
            if flags[0] == "--draft" and accepted == 0:
                problems.append(f"{name}: no draft accepted")

        paged_draft = os.path.join(tmp, "paged_draft.strata")
        compile_pair(bin_dir, draft_dir, paged_draft, "--kv-block-size", "16")
        short_draft = os.path.join(tmp, "short_draft.strata")
        compile_pair(bin_dir, draft_dir, short_draft, "--kv-block-size", "16",
                     "--kv-blocks", "18")
        # Ring caches; int8 caches; paged caches.
        for cache, extra in {
                "ring caches": ["--attention-window", "32", "--attention-sinks",
                                "4", "--prefill-chunk", "16"],
                "int8 caches": ["--kv-cache-precision", "int8"],
                "paged caches": ["--kv-block-size", "16"],
                "paged caches, a short pool": ["--kv-block-size", "16",
                                               "--kv-blocks", "24"]}.items():
            variant = os.path.join(
                tmp, cache.replace(" ", "_").replace(",", "") + ".strata")
            compile_pair(bin_dir, target_dir, variant, *extra)
            plain_variant = generate(bin_dir, variant, prompts_file)
            sources = {
                "draft model": ["--draft", draft, "--fixed-draft-tokens"],
                "prompt lookup": ["--prompt-lookup", "--fixed-draft-tokens"]}
            if cache.startswith("paged"):
                sources["paged draft model"] = ["--draft", paged_draft,
                                                "--fixed-draft-tokens"]
                sources["paged draft model, a short pool"] = [
                    "--draft", short_draft, "--fixed-draft-tokens"]
            for name, flags in sources.items():
                got = generate(bin_dir, variant, prompts_file, *flags)
                if [p["tokens"] for p in plain_variant] != [p["tokens"] for p in got]:
                    problems.append(f"{cache}, {name}: differs from plain greedy")
                print(f"{cache}, {name}: "
                      f"{sum(p['accepted_draft_tokens'] for p in got)} of "
                      f"{sum(p['draft_tokens'] for p in got)} drafts kept")

        # Prompts that quote themselves: a verse, a newline, then its
        # first words again; the model goes on copying and lookup pays.
        quoting = [p + [10] + p[:12] for p in prompts]
        quoting_file = os.path.join(tmp, "quoting.txt")
        write_prompts(quoting_file, quoting)
        plain_quoting = generate(bin_dir, target, quoting_file)
        looked = generate(bin_dir, target, quoting_file, "--prompt-lookup")
        if [p["tokens"] for p in plain_quoting] != [p["tokens"] for p in looked]:
            problems.append("prompt lookup on quoting prompts differs from plain")
        drafted = sum(p["draft_tokens"] for p in looked)
        accepted = sum(p["accepted_draft_tokens"] for p in looked)
        print(f"prompt lookup on quoting prompts: {drafted} drafted, {accepted} "
              f"accepted")
        if drafted == 0 or accepted < drafted // 2:
            problems.append(f"prompt lookup on quoting prompts kept {accepted} "
                            f"of {drafted} drafts")

        sampled = generate(bin_dir, target, prompts_file, "--draft", draft,
                           "--temperature", "0.8", "--seed", "3")
        if any(len(p["tokens"]) != NEW_TOKENS for p in sampled):
            problems.append("sampling with a draft: not %d tokens each" % NEW_TOKENS)

        # Bad combinations.
        no_verify = os.path.join(tmp, "noverify.strata")
        compile_pair(bin_dir, target_dir, no_verify, "--verify-length", "0")
        small_draft = os.path.join(tmp, "small.strata")
        compile_pair(bin_dir, draft_dir, small_draft, "--max-batch", "2")
        bad = [
            ([no_verify, "--prompt-lookup"], "no entry 'verify'"),
            ([target, "--draft", small_draft], "compile the draft with at least "
                                               "the target's --max-batch"),
            ([target, "--draft", draft, "--prompt-lookup"],
             "give one source of drafts"),
            ([target, "--prompt-lookup", "--max-draft-tokens", "9"],
             "max_draft_tokens is 9, outside [0, 8]"),
        ]
        for args, message in bad:
            proc = run([os.path.join(bin_dir, "strata-run"), "generate", *args,
                        "--prompt-ids", "72,101,108,108,111", "--max-new-tokens", "4"])
            if proc.returncode == 0 or message not in proc.stderr:
                problems.append(f"{' '.join(args[1:])}: expected '{message}', got "
                                f"rc {proc.returncode}: {proc.stderr.strip()}")
            elif proc.returncode < 0:
                problems.append(f"{' '.join(args[1:])}: signal {-proc.returncode}")

    for p in problems:
        print("FAIL", p)
    print("PASS" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
