#!/usr/bin/env python3
# ===- test/serve/check_serve_ranks.py - strata-serve over MPI ranks -----===#
# A model split over ranks served by `mpirun -np N strata-serve`: rank 0
# serves HTTP and its scheduler leads the others', which make its
# generator calls in step. On a GPT-2-shaped decoder split by tensor
# parallelism (2 ranks), pipeline stages (2) and both (4), and a
# Llama-shaped one with grouped-query attention (2 tensor ranks):
# - concurrent requests (more than the slots, so prompts queue and join
#   running ones) get the greedy tokens of one process serving the whole
#   model; with pipeline stages only (the same bits as one process) so do
#   seeded sampled requests;
# - a stream its client abandons is cancelled on every rank: the requests
#   after it still get their tokens (a rank that missed the cancel would
#   run other rows and the collectives would not meet);
# - SIGUSR1 to mpirun (which passes it on; on SIGTERM it kills the job
#   after a second) drains rank 0; every rank exits 0.
#
# Usage: check_serve_ranks.py MODELS_DIR BIN_DIR
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from check_tensor_parallel import compile_model  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_harness import Server, open_stream, post_all  # noqa: E402

# (fixture, tensor ranks, pipeline stages)
CASES = [("gpt2_op17_past", 2, 1), ("gpt2_op17_past", 1, 2),
         ("gpt2_op17_past", 2, 2), ("transformers_llama8_op17_past", 2, 1)]
SLOTS = 4  # compile_model's --max-batch


class RankServer(Server):
    """strata-serve as the |ranks| processes of one mpirun."""

    def __init__(self, bin_dir, artifact, ranks, *extra):
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_rmaps_base_oversubscribe="1")
        # A session of its own, so that a kill reaches the ranks too.
        self.proc = subprocess.Popen(
            ["mpirun", "-np", str(ranks), "--bind-to", "none", "--mca",
             "mpi_yield_when_idle", "1",
             os.path.join(bin_dir, "strata-serve"), artifact, "--port", "0",
             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env, start_new_session=True)
        line = self.proc.stdout.readline()
        match = re.search(r"http://([^:]+):(\d+)", line)
        if not match:
            self.kill()
            raise RuntimeError(f"mpirun strata-serve did not start: {line!r} "
                               f"{self.proc.stderr.read()!r}")
        self.host, self.port = match.group(1), int(match.group(2))

    def kill(self):
        """SIGKILL to mpirun and every rank."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()


def requests_for(vocab, sampled):
    """(body, label) of each request: prompts of 2-11 tokens."""
    out = []
    for i in range(10):
        prompt = [(7 * i + 3 * k + 1) % vocab for k in range(2 + i)]
        body = {"prompt": prompt, "max_tokens": 4 + i % 6, "temperature": 0}
        if sampled and i % 3 == 1:
            body.update(temperature=0.9, seed=100 + i)
        out.append(body)
    return out


def completions(server, bodies):
    """Token ids per request, all sent at once."""
    tokens = []
    for answer in post_all(server, bodies):
        if isinstance(answer, str):
            raise RuntimeError(answer)
        tokens.append(answer["choices"][0]["token_ids"])
    return tokens


def abandon_stream(server, vocab):
    """Starts a long stream, reads its first event and hangs up."""
    body = {"prompt": [1 % vocab, 2 % vocab, 3 % vocab], "max_tokens": 24,
            "temperature": 0, "stream": True}
    conn, resp = open_stream(server.host, server.port, body)
    resp.readline()
    conn.sock.shutdown(2)
    conn.close()


def check(bin_dir, models_dir, fixture, ranks, stages, tmp):
    d = os.path.join(models_dir, "fixtures", fixture)
    with open(os.path.join(d, "meta.json")) as f:
        vocab = json.load(f)["vocab"]
    model = os.path.join(d, "model.onnx")
    whole = os.path.join(tmp, fixture + ".whole.strata")
    if not os.path.exists(whole):
        compile_model(bin_dir, model, whole, 1)
    split = os.path.join(tmp, f"{fixture}.tp{ranks}pp{stages}.strata")
    compile_model(bin_dir, model, split, ranks, stages)
    # Pipeline stages compute one process's bits: sampling draws match too.
    bodies = requests_for(vocab, sampled=ranks == 1)
    extra = ["--tokenizer", "none", "--threads", "1"]
    reference = Server(bin_dir, whole, *extra)
    try:
        want = completions(reference, bodies)
    finally:
        reference.stop()
    problems = []
    try:
        server = RankServer(bin_dir, split, ranks * stages, *extra)
    except RuntimeError as e:
        return [str(e)]
    try:
        got = completions(server, bodies)
        if got != want:
            problems.append(f"tokens {got} != one process's {want}")
        abandon_stream(server, vocab)
        again = completions(server, bodies[:SLOTS])
        if again != want[:SLOTS]:
            problems.append(f"after an abandoned stream: {again} != "
                            f"{want[:SLOTS]}")
    except RuntimeError as e:
        problems.append(str(e))
    finally:
        server.proc.send_signal(signal.SIGUSR1)
        try:
            code = server.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            code = None
    if code != 0:
        problems.append(f"mpirun exited {code} after SIGUSR1: "
                        f"{server.proc.stderr.read()[-2000:]}")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models_dir")
    ap.add_argument("bin_dir")
    a = ap.parse_args()
    if not shutil.which("mpirun"):
        print("SKIP: mpirun not found")
        return 77
    failed = 0
    tmp = tempfile.mkdtemp(prefix="strata-serve-ranks-")
    try:
        for fixture, ranks, stages in CASES:
            label = f"{fixture} tp{ranks} pp{stages}"
            problems = check(a.bin_dir, a.models_dir, fixture, ranks, stages,
                             tmp)
            print(("FAIL " if problems else "ok   ") + label)
            for p in problems:
                print("     " + p)
            failed += bool(problems)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
