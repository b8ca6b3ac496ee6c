// RUN: strata-opt %s --verify-diagnostics \
// RUN:   --strata-quantize-weights="functions=prefill bits=4 group-size=32 activation-bits=8"

// Int8 activations pair with 8-bit weights, one scale per column.
// expected-error @+1 {{activation-bits must be 0, or 8 with bits=8 and group-size=0, got 8}}
module {
  func.func @prefill(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}
