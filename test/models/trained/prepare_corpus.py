#!/usr/bin/env python3
# ===- test/models/trained/prepare_corpus.py - byte-level training corpus ---===#
# Builds the training corpus for the trained byte-level GPT from the World
# English Bible (public domain), shipped by Debian's `sword-text-web` package
# and read with `diatheke` (Debian package `diatheke`).
#
# Output: <out>/train.txt and <out>/heldout.txt (UTF-8). Verse references are
# dropped; each chapter becomes "<Book> <chapter>\n" followed by its verses, one
# per line. Every 20th chapter (global chapter index % 20 == 7) is held out, so
# the held-out split samples every part of the book without sharing chapters
# with the training split. Deterministic: same package version, same bytes.
#
# Usage: python3 prepare_corpus.py OUT_DIR
import os
import re
import subprocess
import sys

MODULE = "engWEB2015eb"
REF = re.compile(r"^\s*((?:I{1,3} )?[A-Z][A-Za-z ]*?) (\d+):(\d+): ?(.*)$")


def dump():
    out = subprocess.run(
        ["diatheke", "-b", MODULE, "-f", "plain", "-k",
         "Genesis 1:1-Revelation of John 22:21"],
        check=True, capture_output=True, text=True).stdout
    return out.splitlines()


def chapters(lines):
    """Yields (book, chapter, [verse text]) in canonical order."""
    cur, verses = None, []
    for line in lines:
        if line.startswith("(" + MODULE + ")"):
            continue
        m = REF.match(line)
        if m:
            key = (m.group(1), int(m.group(2)))
            if key != cur:
                if cur is not None:
                    yield cur[0], cur[1], verses
                cur, verses = key, []
            verses.append(m.group(4).strip())
        elif cur is not None and line.strip():
            # Continuation line of a poetic verse.
            verses[-1] = (verses[-1] + " " + line.strip()).strip()
    if cur is not None:
        yield cur[0], cur[1], verses


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    train, held = [], []
    for i, (book, chap, verses) in enumerate(chapters(dump())):
        text = "%s %d\n%s\n\n" % (book, chap,
                                  "\n".join(v for v in verses if v))
        (held if i % 20 == 7 else train).append(text)
    for name, parts in (("train.txt", train), ("heldout.txt", held)):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write("".join(parts))
    print("train: %d chapters, heldout: %d chapters" % (len(train), len(held)))


if __name__ == "__main__":
    main()
