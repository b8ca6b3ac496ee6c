// RUN: strata-opt %s --verify-diagnostics \
// RUN:   --strata-quantize-weights="functions=decode bits=3"

// Only 8- and 4-bit weights exist.
// expected-error @+1 {{bits must be 8 or 4, got 3}}
module {
  func.func @decode(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    return %x : tensor<2x4xf32>
  }
}
