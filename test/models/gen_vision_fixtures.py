#!/usr/bin/env python3
# ===- test/models/gen_vision_fixtures.py - CNN / ViT / UNet / OCR / audio ===#
# Exports small random-weight vision and audio models with torch.onnx.export
# (dynamo=False, opset 17, eval mode, a dynamic batch dim), the way current
# torch spells them:
#   vision_resnet_op17  a ResNet-style CNN: conv-BN-ReLU stem, max pooling,
#                       two basic blocks (one strided, with a 1x1
#                       downsampling conv), a BatchNorm after a residual add
#                       (so one BatchNormalization stays unfolded), global
#                       average pooling and a linear head
#   vision_vit_op17     a ViT-style encoder: a Conv patch embedding (kernel =
#                       stride = 8), class token and learned positions, two
#                       pre-LN transformer blocks, a head on the class token
#   vision_resnet_bn_op17  the same CNN with every BatchNormalization kept
#                       as a node (TrainingMode.PRESERVE in eval mode, as
#                       exporters that do not fold them emit it): Strata
#                       folds the six after a convolution into its weights
#   vision_unet_op17    a UNet-style block: strided conv down, ConvTranspose
#                       up, bilinear Resize, skip concat, grouped conv
#   vision_crnn_op17    a CRNN text recognizer as OCR toolkits build it: a
#                       conv-BN-ReLU backbone pooled to one row, the columns
#                       as a sequence through a bidirectional LSTM and a
#                       bidirectional GRU, per-column class log-probabilities
#   audio_whisper_op17  a Whisper-style audio encoder: two Conv1d + GELU
#                       (the second strided), sinusoidal positions, two
#                       pre-LN transformer blocks, a final LayerNorm
# Each lands in fixtures/<name>/ as model.onnx plus meta.json;
# make_references.py writes the onnxruntime references (random normal
# pixels). Weights: std 1/sqrt(fan-in) so activations stay O(1); BN running
# statistics random with positive variances.
#
# Needs current torch (exported with torch 2.15.0 from the bench venv,
# ~/.cache/strata/bench-venv). Not run in CI.
#
# Usage: ~/.cache/strata/bench-venv/bin/python gen_vision_fixtures.py \
#            [OUT_DIR] [--only NAME...]
import argparse
import io
import json
import os
import warnings

import torch
from torch import nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17
SEED = 20261204
IMAGE = 32


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.l1 = Basic(16, 16, 1)
        self.l2 = Basic(16, 32, 2)
        self.post = nn.BatchNorm2d(32)
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.bn(self.stem(x))))
        x = self.l2(self.l1(x))
        x = self.post(x + 1.0)
        return self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        split = lambda z: z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
        a = torch.softmax(split(q) @ split(k).transpose(-1, -2) /
                          (d // self.heads) ** 0.5, dim=-1) @ split(v)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


class ViT(nn.Module):
    def __init__(self, d=48, heads=4, patch=8):
        super().__init__()
        self.embed = nn.Conv2d(3, d, patch, patch)
        self.cls = nn.Parameter(torch.zeros(1, 1, d))
        self.pos = nn.Parameter(torch.zeros(1, (IMAGE // patch) ** 2 + 1, d))
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(2)])
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 10)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0])


class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inc = nn.Conv2d(3, 8, 3, 1, 1)
        self.down = nn.Conv2d(8, 16, 3, 2, 1)
        self.up = nn.ConvTranspose2d(16, 8, 2, 2)
        self.mix = nn.Conv2d(16, 8, 3, 1, 1, groups=2)
        self.out = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        a = F.relu(self.inc(x))
        b = F.relu(self.down(a))
        u = self.up(b) + F.interpolate(b[:, :8], scale_factor=2.0,
                                       mode="bilinear", align_corners=False)
        return self.out(F.relu(self.mix(torch.cat([a, u], dim=1))))


class CRNN(nn.Module):
    HEIGHT, WIDTH, CLASSES = 16, 48, 37

    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(
            nn.Conv2d(1, 16, 3, 1, 1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(16, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.MaxPool2d((2, 1), (2, 1)),
            nn.Conv2d(32, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(),
            nn.AvgPool2d((4, 1)))  # the 4 remaining rows to one
        self.lstm = nn.LSTM(32, 24, bidirectional=True)
        self.gru = nn.GRU(48, 16, bidirectional=True)
        self.head = nn.Linear(32, self.CLASSES)

    def forward(self, x):
        f = self.backbone(x).squeeze(2).permute(2, 0, 1)  # [W, B, C]
        y, _ = self.lstm(f)
        y, _ = self.gru(y)
        return F.log_softmax(self.head(y), dim=-1)


class WhisperEncoder(nn.Module):
    MELS, FRAMES, D = 16, 64, 48

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(self.MELS, self.D, 3, padding=1)
        self.conv2 = nn.Conv1d(self.D, self.D, 3, stride=2, padding=1)
        t = torch.arange(self.FRAMES // 2).float()[:, None]
        freq = torch.exp(-torch.arange(0, self.D, 2).float()
                         * (torch.log(torch.tensor(10000.0)) / self.D))
        pos = torch.cat([torch.sin(t * freq), torch.cos(t * freq)], dim=1)
        self.register_buffer("pos", pos[None])
        self.blocks = nn.ModuleList([Block(self.D, 4) for _ in range(2)])
        self.norm = nn.LayerNorm(self.D)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x)).transpose(1, 2) + self.pos
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


FIXTURES = {
    "vision_resnet_op17": ResNet,
    "vision_resnet_bn_op17": ResNet,
    "vision_vit_op17": ViT,
    "vision_unet_op17": UNet,
    "vision_crnn_op17": CRNN,
    "audio_whisper_op17": WhisperEncoder,
}

INPUTS = {
    "vision_crnn_op17": ("pixel_values", (2, 1, CRNN.HEIGHT, CRNN.WIDTH)),
    "audio_whisper_op17": ("input_features",
                           (2, WhisperEncoder.MELS, WhisperEncoder.FRAMES)),
}


def build(name):
    torch.manual_seed(SEED)
    model = FIXTURES[name]()
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for pname, p in sorted(model.named_parameters()):
            fan_in = p[0].numel() if p.dim() > 1 else p.numel()
            if pname.endswith(("n1.weight", "n2.weight", "norm.weight")) or (
                    isinstance(p, torch.Tensor) and pname.endswith("weight")
                    and p.dim() == 1):
                p.copy_(1 + 0.1 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) * fan_in ** -0.5)
        for bname, buf in sorted(model.named_buffers()):
            if bname.endswith("running_mean"):
                buf.copy_(0.1 * torch.randn(buf.shape, generator=g))
            elif bname.endswith("running_var"):
                buf.copy_(0.5 + torch.rand(buf.shape, generator=g))
    return model.eval()


def export(name, out_dir):
    model = build(name)
    input_name, shape = INPUTS.get(name, ("pixel_values", (2, 3, IMAGE, IMAGE)))
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    # The CRNN's output is [columns, batch, classes].
    out_batch = 1 if name == "vision_crnn_op17" else 0
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (x,), buf, opset_version=OPSET,
                          input_names=[input_name], output_names=["output"],
                          dynamic_axes={input_name: {0: "batch"},
                                        "output": {out_batch: "batch"}},
                          do_constant_folding=True, dynamo=False,
                          training=(torch.onnx.TrainingMode.PRESERVE
                                    if name == "vision_resnet_bn_op17"
                                    else torch.onnx.TrainingMode.EVAL))
    d = os.path.join(out_dir, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(buf.getvalue())
    meta = {"name": name, "kind": name.split("_")[0], "opset": OPSET,
            "exporter": "torch.onnx.export dynamo=False (torch %s)"
                        % torch.__version__.split("+")[0],
            "generator": "test/models/gen_vision_fixtures.py",
            "inputs": [input_name], "outputs": ["output"],
            "dim_names": {input_name: {"0": "batch"},
                          "output": {str(out_batch): "batch"}},
            "input_shape": list(shape[1:])}
    if name == "vision_resnet_bn_op17":
        # The BatchNormalization after the residual add stays (its sqrt),
        # as does the global average pool (a reduce_mean).
        meta.update({"expected_folded_batch_norms": 6,
                     "allow_after_fusion": ["reduce_mean", "sqrt"],
                     "expected_after_fusion": {"layer_norm": 0, "rms_norm": 0,
                                               "gelu": 0, "attention": 0}})
    if name in ("vision_vit_op17", "audio_whisper_op17"):
        # The encoder's norms, exact GELUs (Whisper's two after its convs
        # too) and non-causal attentions fuse.
        meta.update({"causal": False, "gelu_approximate": "none",
                     "expected_after_fusion": {
                         "layer_norm": 5, "rms_norm": 0, "attention": 2,
                         "gelu": 4 if name == "audio_whisper_op17" else 2}})
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    return len(buf.getvalue())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", default=os.path.join(HERE, "fixtures"))
    ap.add_argument("--only", nargs="*")
    a = ap.parse_args()
    torch.set_num_threads(1)
    for name in a.only or FIXTURES:
        print("%-24s %7d bytes" % (name, export(name, a.out)))


if __name__ == "__main__":
    main()
