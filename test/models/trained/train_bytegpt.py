#!/usr/bin/env python3
# ===- test/models/trained/train_bytegpt.py - train the byte-level GPT -------===#
# Trains the small byte-level GPT (test/models/arch.py GPT2LMHeadModel, vocab =
# 256 bytes) on the corpus made by prepare_corpus.py. Runs with Debian's
# /usr/bin/python3 (torch 1.13) on 2 threads in <= 15 minutes wall.
#
# Recipe (seeded; bit-identity is not promised, see docs/models.md):
#   6 layers, hidden 256, 8 heads, context 256, erf GELU, tied embeddings;
#   AdamW(lr 2e-3, betas 0.9/0.95, wd 0.1 on matrices), batch 16 x 256 bytes,
#   bf16 autocast for matmuls (fp32 master weights), 100 warmup steps, cosine
#   decay to 10% over 1200 steps (4.9M bytes seen). The schedule runs over
#   max(step / --steps, elapsed / --budget-min): --budget-min caps the wall
#   time (the learning rate still decays fully) on a machine too slow or too
#   busy for the step count.
#
# Usage: python3 train_bytegpt.py CORPUS_DIR OUT_DIR [--steps N] [--budget-min M]
# Writes OUT_DIR/bytegpt.pt (state dict + config) and OUT_DIR/train_log.json.
import argparse
import json
import math
import os
import sys
import time

# Passive OpenMP waits: on a shared 2-core machine spinning threads make a
# step 3x slower; on an idle one the cost is small.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from arch import GPT2Config, GPT2LMHeadModel  # noqa: E402

CONFIG = dict(vocab=256, n_positions=256, hidden=256, layers=6, heads=8, act="erf")


def load_bytes(path):
    with open(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8).long()


@torch.no_grad()
def bits_per_byte(model, data, ctx, stride=None, max_bytes=None):
    """Held-out bits/byte with sliding windows of ctx bytes: after the first
    window, each byte is scored with at least ctx - stride bytes of context."""
    stride = stride or ctx // 2
    if max_bytes:
        data = data[:max_bytes]
    model.eval()
    total, count, prev_end = 0.0, 0, 0
    while prev_end < len(data):
        end = min(len(data), ctx + 1 if prev_end == 0 else prev_end + stride)
        start = max(0, end - ctx - 1)
        chunk = data[start:end]
        logits = model(chunk[:-1].unsqueeze(0))[0][0]
        logp = F.log_softmax(logits.float(), dim=-1)
        nll = -logp.gather(1, chunk[1:].unsqueeze(1)).squeeze(1)
        new = end - max(prev_end, 1)  # targets data[max(prev_end, 1):end]
        total += nll[-new:].sum().item()
        count += new
        prev_end = end
    model.train()
    return total / count / math.log(2), count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=1200)
    ap.add_argument("--budget-min", type=float, default=40.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--threads", type=int, default=2)
    # A smaller model of the same corpus and tokenizer (the speculative
    # decoding draft) overrides these.
    ap.add_argument("--layers", type=int, default=CONFIG["layers"])
    ap.add_argument("--hidden", type=int, default=CONFIG["hidden"])
    ap.add_argument("--heads", type=int, default=CONFIG["heads"])
    args = ap.parse_args()
    config = dict(CONFIG, layers=args.layers, hidden=args.hidden, heads=args.heads)

    t_start = time.time()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    os.makedirs(args.out, exist_ok=True)
    train = load_bytes(os.path.join(args.corpus, "train.txt"))
    held = load_bytes(os.path.join(args.corpus, "heldout.txt"))
    cfg = GPT2Config(**config)
    ctx = cfg.n_positions
    model = GPT2LMHeadModel(cfg)
    with torch.no_grad():  # GPT-2 init: N(0, 0.02), residual projections scaled.
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                std = 0.02 / math.sqrt(2 * cfg.layers) if name.endswith("c_proj.weight") else 0.02
                p.normal_(0.0, std)
    n_params = sum(p.numel() for p in model.parameters())
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(args.seed)
    budget = args.budget_min * 60.0
    warmup = 100
    log = []
    step, progress, ema = 0, 0.0, None
    t_train = time.time()
    while progress < 1.0:
        lr_scale = min(1.0, (step + 1) / warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))
        for gparam in opt.param_groups:
            gparam["lr"] = args.lr * lr_scale
        ix = torch.randint(0, len(train) - ctx - 1, (args.batch,), generator=gen)
        x = torch.stack([train[i:i + ctx + 1] for i in ix.tolist()])
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x[:, :-1])[0]
        loss = F.cross_entropy(logits.float().reshape(-1, 256), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        ema = loss.item() if ema is None else 0.98 * ema + 0.02 * loss.item()
        elapsed = time.time() - t_train
        progress = max(step / args.steps, elapsed / budget)
        if step % 50 == 0:
            rec = dict(step=step, elapsed_s=round(elapsed, 1), lr=args.lr * lr_scale,
                       train_bpb_ema=ema / math.log(2))
            if step % 400 == 0:
                rec["heldout_bpb_64k"] = bits_per_byte(model, held, ctx, max_bytes=65536)[0]
            log.append(rec)
            print(json.dumps(rec), flush=True)
    train_s = time.time() - t_train
    bpb, nbytes = bits_per_byte(model, held, ctx)
    summary = dict(config=config, params=n_params, seed=args.seed, steps=step,
                   batch=args.batch, lr=args.lr, threads=args.threads,
                   tokens_seen=step * args.batch * ctx, train_seconds=round(train_s, 1),
                   total_seconds=round(time.time() - t_start, 1),
                   heldout_bytes=nbytes, heldout_bpb_torch=bpb,
                   train_bytes=len(train), torch=torch.__version__, log=log)
    torch.save({"config": config, "state_dict": model.state_dict()},
               os.path.join(args.out, "bytegpt.pt"))
    with open(os.path.join(args.out, "train_log.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("params %d steps %d train %.0fs heldout bpb %.4f" % (n_params, step, train_s, bpb))


if __name__ == "__main__":
    main()
