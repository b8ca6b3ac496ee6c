#!/usr/bin/env python3
# ===- make_two_entries.py - a two-entry strata module sharing a weight ---===#
# Writes DIR/two_entries.mlir: strata IR (as strata-import writes it) with
# two public functions, @prefill (x[sequence, 256] @ W) and @decode
# (x[1, 256] @ W + b), that use the same 256x256 f32 weight W, a
# dense_resource blob stored once; plus inputs and the expected outputs
# (numpy, float64 accumulation) as .npy files.
#
# Usage: make_two_entries.py DIR
import os
import sys

import numpy as np

N = 256


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    w = rng.standard_normal((N, N)).astype(np.float32) / np.float32(16)
    b = rng.standard_normal(N).astype(np.float32)
    # A blob's hex form: its alignment (u32, little-endian), then the bytes.
    blob = "0x" + (4).to_bytes(4, "little").hex() + w.tobytes().hex()
    f32 = "f32"
    text = f"""module {{
  func.func @prefill(%x: tensor<?x{N}x{f32}> {{strata.name = "x", strata.dims = ["sequence", ""]}})
      -> (tensor<?x{N}x{f32}> {{strata.name = "y", strata.dims = ["sequence", ""]}}) {{
    %w = strata.constant dense_resource<shared_w> : tensor<{N}x{N}x{f32}>
    %y = strata.matmul %x, %w : (tensor<?x{N}x{f32}>, tensor<{N}x{N}x{f32}>) -> tensor<?x{N}x{f32}>
    return %y : tensor<?x{N}x{f32}>
  }}
  func.func @decode(%x: tensor<1x{N}x{f32}> {{strata.name = "x"}}, %b: tensor<{N}x{f32}> {{strata.name = "b"}})
      -> (tensor<1x{N}x{f32}> {{strata.name = "y"}}) {{
    %w = strata.constant dense_resource<shared_w> : tensor<{N}x{N}x{f32}>
    %m = strata.matmul %x, %w : (tensor<1x{N}x{f32}>, tensor<{N}x{N}x{f32}>) -> tensor<1x{N}x{f32}>
    %y = strata.add %m, %b : (tensor<1x{N}x{f32}>, tensor<{N}x{f32}>) -> tensor<1x{N}x{f32}>
    return %y : tensor<1x{N}x{f32}>
  }}
}}

{{-#
  dialect_resources: {{
    builtin: {{
      shared_w: "{blob}"
    }}
  }}
#-}}
"""
    with open(os.path.join(out, "two_entries.mlir"), "w") as f:
        f.write(text)
    xp = rng.standard_normal((5, N)).astype(np.float32)
    xd = rng.standard_normal((1, N)).astype(np.float32)
    np.save(os.path.join(out, "prefill_x.npy"), xp)
    np.save(os.path.join(out, "decode_x.npy"), xd)
    np.save(os.path.join(out, "decode_b.npy"), b)
    w64 = w.astype(np.float64)
    np.save(os.path.join(out, "prefill_y.npy"), xp.astype(np.float64) @ w64)
    np.save(os.path.join(out, "decode_y.npy"),
            xd.astype(np.float64) @ w64 + b.astype(np.float64))


if __name__ == "__main__":
    main()
