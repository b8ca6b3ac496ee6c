// Statistics that do not fit the model are errors that change nothing.
// RUN: not strata-opt %s --pass-pipeline='builtin.module(strata-apply-activation-scales{statistics=%S/Inputs/activation-scales-wrong-channels.json functions=scaled})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=CHANNELS
// RUN: not strata-opt %s --pass-pipeline='builtin.module(strata-apply-activation-scales{statistics=%S/Inputs/activation-scales-unknown.json functions=scaled})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=UNKNOWN
// RUN: not strata-opt %s --pass-pipeline='builtin.module(strata-apply-activation-scales{statistics=%S/Inputs/missing.json functions=scaled})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// RUN: not strata-opt %s --pass-pipeline='builtin.module(strata-apply-activation-scales{statistics=%s functions=scaled})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=JSON

// CHANNELS: error: loc("q_proj"): 'strata.linear' op activation statistics of 'q_proj' have 3 channels, the contraction's input has 4
// UNKNOWN: error: activation statistics name 'no_such_node', which is no weight contraction of the scaled functions
// MISSING: error: cannot read activation statistics '{{.*}}missing.json': No such file or directory
// JSON: error: activation statistics are not valid JSON: {{.+}}
func.func @scaled(%x: tensor<?x4xf32>) -> tensor<?x2xf32> {
  %w = strata.constant dense<0.5> : tensor<4x2xf32>
  %c = strata.constant dense<0.0> : tensor<2xf32>
  %y = strata.linear %x, %w, %c : (tensor<?x4xf32>, tensor<4x2xf32>, tensor<2xf32>) -> tensor<?x2xf32> loc("q_proj")
  return %y : tensor<?x2xf32>
}
