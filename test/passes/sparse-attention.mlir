// RUN: strata-opt %s --strata-sparse-attention="window=256 sinks=4" | FileCheck %s
// RUN: strata-opt %s --strata-sparse-attention="window=64 layers=1" | FileCheck %s --check-prefix=LAYER
// RUN: strata-opt %s --strata-sparse-attention | FileCheck %s --check-prefix=DENSE
// RUN: not strata-opt %s --strata-sparse-attention="sinks=4" 2>&1 | FileCheck %s --check-prefix=NOWINDOW
// RUN: not strata-opt %s --strata-sparse-attention="window=-1" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: strata-opt %s --strata-sparse-attention="window=16 sinks=2 global-topk=3 global-block=4" | FileCheck %s --check-prefix=GLOBAL
// RUN: not strata-opt %s --strata-sparse-attention="global-topk=3" 2>&1 | FileCheck %s --check-prefix=GLOBALNOWINDOW
// RUN: not strata-opt %s --strata-sparse-attention="window=16 global-topk=3 global-block=0" 2>&1 | FileCheck %s --check-prefix=GLOBALBLOCK

// Causal attention gets the window and sinks; the encoder-style
// (non-causal) op and the one with the model's own window keep theirs.
// Layers count attention ops in program order per function.
// CHECK-LABEL: func.func @decoder
//       CHECK:   strata.attention {{.+}} {causal, sinks = 4 : i64, window = 256 : i64}
//       CHECK:   strata.attention {{.+}} {causal, sinks = 4 : i64, window = 256 : i64}
//       CHECK:   strata.attention {{.+}} {causal, window = 8 : i64}
//       CHECK:   strata.attention %{{[^{]+}} : (
// LAYER-LABEL: func.func @decoder
//       LAYER:   strata.attention {{.+}} {causal} :
//       LAYER:   strata.attention {{.+}} {causal, window = 64 : i64}
//       LAYER:   strata.attention {{.+}} {causal, window = 8 : i64}
// DENSE-NOT: window = 256
// NOWINDOW: error: attention sinks need a window (--attention-window)
// NEGATIVE: error: attention window and sinks must be >= 0, got -1 and 0
// Top-k global blocks go with the window onto the ops it windows.
// GLOBAL-LABEL: func.func @decoder
//       GLOBAL:   strata.attention {{.+}} {causal, global_block = 4 : i64, global_topk = 3 : i64, sinks = 2 : i64, window = 16 : i64}
//       GLOBAL:   strata.attention {{.+}} {causal, global_block = 4 : i64, global_topk = 3 : i64, sinks = 2 : i64, window = 16 : i64}
//       GLOBAL:   strata.attention {{.+}} {causal, window = 8 : i64}
// GLOBALNOWINDOW: error: global blocks need a window (--attention-window)
// GLOBALBLOCK: error: global top-k must be >= 0 and the global block >= 1, got 3 and 0
func.func @decoder(%q: tensor<1x2x8x4xf32>) -> (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) {
  %a = strata.attention %q, %q, %q {causal} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %b = strata.attention %a, %a, %a {causal} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %c = strata.attention %b, %b, %b {causal, window = 8 : i64} : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  %d = strata.attention %c, %c, %c : (tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x8x4xf32>
  return %a, %b, %c, %d : tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}
