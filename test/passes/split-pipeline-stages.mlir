// RUN: strata-opt %s --strata-split-pipeline-stages="stages=2 stage=0" | FileCheck %s --check-prefix=STAGE0
// RUN: strata-opt %s --strata-split-pipeline-stages="stages=2 stage=1" | FileCheck %s --check-prefix=STAGE1
// RUN: strata-opt %s --strata-split-pipeline-stages="stages=4 stage=2" | FileCheck %s --check-prefix=QUARTER
// RUN: strata-opt %s --strata-split-pipeline-stages="stages=1 stage=0" | FileCheck %s --check-prefix=WHOLE
// RUN: not strata-opt %s --strata-split-pipeline-stages="stages=7 stage=0" 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// RUN: not strata-opt %s --strata-split-pipeline-stages="stages=2 stage=2" 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: pipeline stage 2 of 2 is not a stage of the model
// TOO-MANY: entry 'decode' can be cut in 5 places (where one activation crosses), 7 stages need 6

// A two-layer decode step over a KV cache (each layer: a projection, a
// cache write, attention and a residual add, then an MLP and a residual
// add). The residual stream is the only activation between the two
// layers; the weights divide evenly after the first layer's MLP. Stage 0
// runs layer 0, keeps its cache and sends the stream to stage 1, which
// runs layer 1 and sends the output back. Both know the extents of what
// they receive from their inputs ([batch of %x, 1, 4]).
// STAGE0-LABEL: func.func @decode(
//  STAGE0-SAME:     {strata.state = "kv_cache.0.key"}
//   STAGE0-NOT:     kv_cache.1
//       STAGE0:   strata.cache_attention
//   STAGE0-NOT:   strata.cache_attention
//       STAGE0:   strata.send %{{.+}} {stage = 1 : i64} : tensor<?x1x4xf32>
//       STAGE0:   %[[B:.+]] = strata.shape %arg0 {end = 1 : i64}
//       STAGE0:   %[[SHAPE:.+]] = strata.concat %[[B]],
//       STAGE0:   %[[OUT:.+]] = strata.recv %[[SHAPE]] {stage = 1 : i64} : (tensor<3xi64>) -> tensor<?x1x4xf32>
//       STAGE0:   return %[[OUT]], %{{.+}} : tensor<?x1x4xf32>, tensor<2x1x8x4xf32>
// STAGE1-LABEL: func.func @decode(
//  STAGE1-SAME:     {strata.state = "kv_cache.1.key"}
//   STAGE1-NOT:     kv_cache.0
//       STAGE1:   %[[IN:.+]] = strata.recv %{{.+}} {stage = 0 : i64} : (tensor<3xi64>) -> tensor<?x1x4xf32>
//       STAGE1:   strata.matmul %[[IN]]
//       STAGE1:   strata.cache_attention
//   STAGE1-NOT:   strata.cache_attention
//       STAGE1:   strata.send %[[OUT:.+]] {stage = 0 : i64} : tensor<?x1x4xf32>
//       STAGE1:   return %[[OUT]], %{{.+}} : tensor<?x1x4xf32>, tensor<2x1x8x4xf32>
// The places to cut: after layer 0's attention and its reshape (its input
// is an input of the entry, on every stage), after each residual add but
// layer 1's attention's. Four stages take three, evenly: stage 2 runs layer 1's
// attention; it receives from stage 1, sends to stage 3, then receives
// the output from stage 3.
// QUARTER-LABEL: func.func @decode(
//       QUARTER:   strata.recv %{{.+}} {stage = 1 : i64}
//       QUARTER:   strata.cache_attention
//   QUARTER-NOT:   strata.matmul
//       QUARTER:   strata.send %{{.+}} {stage = 3 : i64}
//       QUARTER:   strata.recv {{.*}}{stage = 3 : i64}
// WHOLE-LABEL: func.func @decode(
//   WHOLE-NOT:   strata.send
//   WHOLE-NOT:   strata.recv
func.func @decode(%x: tensor<?x1x4xf32>, %slots: tensor<?xi64>, %pos: tensor<?xi64>,
                  %k0: tensor<2x1x8x4xf32> {strata.state = "kv_cache.0.key"},
                  %k1: tensor<2x1x8x4xf32> {strata.state = "kv_cache.1.key"})
    -> (tensor<?x1x4xf32>, tensor<2x1x8x4xf32> {strata.state = "kv_cache.0.key"},
        tensor<2x1x8x4xf32> {strata.state = "kv_cache.1.key"}) {
  %wq0 = strata.constant dense<0.25> : tensor<4x4xf32>
  %wm0 = strata.constant dense<0.5> : tensor<4x4xf32>
  %wq1 = strata.constant dense<0.125> : tensor<4x4xf32>
  %wm1 = strata.constant dense<0.75> : tensor<4x4xf32>
  %s4 = strata.constant dense<[0, 0, 1, 4]> : tensor<4xi64>
  %s3 = strata.constant dense<[0, 0, 4]> : tensor<3xi64>
  %q0 = strata.matmul %x, %wq0 : (tensor<?x1x4xf32>, tensor<4x4xf32>) -> tensor<?x1x4xf32>
  %q0h = strata.reshape %q0, %s4 : (tensor<?x1x4xf32>, tensor<4xi64>) -> tensor<?x1x1x4xf32>
  %kc0 = strata.cache_write %k0, %q0h, %slots, %pos : (tensor<2x1x8x4xf32>, tensor<?x1x1x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<2x1x8x4xf32>
  %o0 = strata.cache_attention %q0h, %kc0, %kc0, %slots, %pos : (tensor<?x1x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x1x1x4xf32>
  %o0m = strata.reshape %o0, %s3 : (tensor<?x1x1x4xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %h1 = strata.add %x, %o0m : (tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %m0 = strata.matmul %h1, %wm0 : (tensor<?x1x4xf32>, tensor<4x4xf32>) -> tensor<?x1x4xf32>
  %h2 = strata.add %h1, %m0 : (tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %q1 = strata.matmul %h2, %wq1 : (tensor<?x1x4xf32>, tensor<4x4xf32>) -> tensor<?x1x4xf32>
  %q1h = strata.reshape %q1, %s4 : (tensor<?x1x4xf32>, tensor<4xi64>) -> tensor<?x1x1x4xf32>
  %kc1 = strata.cache_write %k1, %q1h, %slots, %pos : (tensor<2x1x8x4xf32>, tensor<?x1x1x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<2x1x8x4xf32>
  %o1 = strata.cache_attention %q1h, %kc1, %kc1, %slots, %pos : (tensor<?x1x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x1x1x4xf32>
  %o1m = strata.reshape %o1, %s3 : (tensor<?x1x1x4xf32>, tensor<3xi64>) -> tensor<?x1x4xf32>
  %h3 = strata.add %h2, %o1m : (tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  %m1 = strata.matmul %h3, %wm1 : (tensor<?x1x4xf32>, tensor<4x4xf32>) -> tensor<?x1x4xf32>
  %h4 = strata.add %h3, %m1 : (tensor<?x1x4xf32>, tensor<?x1x4xf32>) -> tensor<?x1x4xf32>
  return %h4, %kc0, %kc1 : tensor<?x1x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>
}
