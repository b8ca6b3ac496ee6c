#!/usr/bin/env python3
# ===- check_accuracy.py - checks of strata-bench --accuracy output -------===#
# SPDX-License-Identifier: Apache-2.0
# bounds JSON: the reference scores 1.0 top-1 and 0 KL against itself, a
#   second copy of it (its own module and session) the same; the next
#   artifact (int8 decode) is within 1% of the reference's bits per byte
#   with top-1 agreement >= 0.99; every field is present and positions
#   count SLOTS x (LENGTH - 1).
# write-tokens TEXT SLOTS LENGTH OUT: the stretches --text scores, as a
#   token-id file (one stretch a line), placed as check_precision.py does.
# same A B: two runs of the same artifacts agree (bits, top-1, KL, positions).
import json
import sys

FIELDS = ["artifact", "positions", "nats_per_token", "bits_per_token",
          "ratio_to_reference", "top1_agreement", "mean_kl"]


def bounds(path):
    run = json.load(open(path))
    problems = []
    for key in ["reference", "data", "data_kind", "entry", "sequences",
                "slots", "length", "threads", "results"]:
        if key not in run:
            problems.append(f"no '{key}'")
    results = run["results"]
    for r in results:
        for key in FIELDS + ["bits_per_byte"]:
            if key not in r:
                problems.append(f"{r.get('artifact')}: no '{key}'")
    if problems:
        return problems
    want = run["slots"] * (run["length"] - 1)
    ref, copy, int8 = results[0], results[1], results[2]
    for r in results:
        if r["positions"] != want:
            problems.append(f"{r['artifact']}: {r['positions']} positions, "
                            f"expected {want}")
    for name, r in (("reference", ref), ("reference copy", copy)):
        if r["top1_agreement"] != 1.0 or r["mean_kl"] != 0.0 or \
                r["bits_per_byte"] != ref["bits_per_byte"]:
            problems.append(f"{name}: top-1 {r['top1_agreement']}, KL "
                            f"{r['mean_kl']}, {r['bits_per_byte']} bpb against "
                            f"{ref['bits_per_byte']}")
    if not 1.0 < ref["bits_per_byte"] < 3.0:
        problems.append(f"reference: {ref['bits_per_byte']} bpb is not a "
                        "trained model's")
    if not int8["bits_per_byte"] <= 1.01 * ref["bits_per_byte"]:
        problems.append(f"int8: {int8['bits_per_byte']} bpb > 1.01 x "
                        f"{ref['bits_per_byte']}")
    if not int8["top1_agreement"] >= 0.99:
        problems.append(f"int8: top-1 agreement {int8['top1_agreement']}")
    if not 0.0 < int8["mean_kl"] < 1e-3:
        problems.append(f"int8: mean KL {int8['mean_kl']}")
    return problems


def write_tokens(text, slots, length, out):
    data = open(text, "rb").read()
    step = (len(data) - length) // slots
    with open(out, "w") as f:
        for s in range(slots):
            f.write(" ".join(str(b) for b in
                             data[s * step:s * step + length]) + "\n")
    return []


def same(a_path, b_path):
    a, b = json.load(open(a_path)), json.load(open(b_path))
    problems = []
    for x, y in zip(a["results"], b["results"]):
        if x["positions"] != y["positions"] or \
                abs(x["bits_per_token"] - y["bits_per_token"]) > 1e-5 or \
                abs(x["top1_agreement"] - y["top1_agreement"]) > 1e-3 or \
                abs(x["mean_kl"] - y["mean_kl"]) > 1e-6:
            problems.append(f"{x['artifact']}: {x} against {y}")
    return problems


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "bounds":
        problems = bounds(*args)
    elif command == "write-tokens":
        problems = write_tokens(args[0], int(args[1]), int(args[2]), args[3])
    else:
        problems = same(*args)
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
