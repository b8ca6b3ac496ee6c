// RUN: strata-opt %s --pass-pipeline='builtin.module(func.func(strata-lower-to-linalg))' | FileCheck %s

// A cache write is a loop over the rows, each row's keys inserted at its
// slot and position, after run-time checks of the slots (kind 8) and the
// positions (kind 9) against the cache's extents.
// CHECK-LABEL: func.func @write
//       CHECK:   strata.check %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {input = "slots", kind = 8 : i64
//       CHECK:   strata.check %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {input = "positions", kind = 9 : i64
//       CHECK:   %[[R:.+]] = scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[C:.+]] = %arg0)
//       CHECK:     %[[SLOT:.+]] = arith.index_cast
//       CHECK:     %[[POS:.+]] = arith.index_cast
//       CHECK:     %[[ROW:.+]] = tensor.extract_slice %arg1[%[[B]], 0, 0, 0] [1, 2, 1, 4]
//       CHECK:     tensor.insert_slice %[[ROW]] into %[[C]][%[[SLOT]], 0, %[[POS]], 0] [1, 2, 1, 4]
//       CHECK:   return %[[R]]
func.func @write(%cache: tensor<3x2x8x4xf32>, %new: tensor<?x2x1x4xf32>,
                 %slots: tensor<?xi64> {strata.name = "slots"},
                 %positions: tensor<?xi64> {strata.name = "positions"}) -> tensor<3x2x8x4xf32> {
  %0 = strata.cache_write %cache, %new, %slots, %positions : (tensor<3x2x8x4xf32>, tensor<?x2x1x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<3x2x8x4xf32>
  return %0 : tensor<3x2x8x4xf32>
}

// The generic cache attention: checks, each row's slot gathered, the keys
// a row sees (j <= t + length - T) as an i1 mask, then plain attention.
// CHECK-LABEL: func.func @attend
//       CHECK:   kind = 8 : i64
//       CHECK:   kind = 9 : i64
//       CHECK:   linalg.generic {{.+}} ins(%arg4 : tensor<?xi64>) outs(%{{.+}} : tensor<?x1x1x8xi1>)
//       CHECK:     linalg.index 2
//       CHECK:     linalg.index 3
//       CHECK:     arith.cmpi sle
//       CHECK:   strata.check
func.func @attend(%q: tensor<?x4x1x4xf32>, %k: tensor<3x2x8x4xf32>, %v: tensor<3x2x8x4xf32>,
                  %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x4xf32> {
  %0 = strata.cache_attention %q, %k, %v, %slots, %lengths : (tensor<?x4x1x4xf32>, tensor<3x2x8x4xf32>, tensor<3x2x8x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x4xf32>
  return %0 : tensor<?x4x1x4xf32>
}

// An int8 cache: each row's absolute maximum and non-finite flag reduced
// over the head dim, then rows of 4 values and 4 scale bytes (the value
// clamped, NaN to 0, rounded half away from zero and converted; the scale
// bitcast and shifted), written by the same loop.
// CHECK-LABEL: func.func @write_int8
//       CHECK:   math.absf
//       CHECK:   arith.cmpf ogt
//       CHECK:   arith.cmpf ugt
//       CHECK:   linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x1x8xi8>)
//       CHECK:     arith.cmpf ord
//       CHECK:     arith.fptosi {{.+}} : f32 to i32
//       CHECK:     arith.bitcast {{.+}} : f32 to i32
//       CHECK:     arith.shrui
//       CHECK:   scf.for
//       CHECK:     tensor.insert_slice {{.+}} [1, 2, 1, 8]
func.func @write_int8(%cache: tensor<3x2x8x8xi8>, %new: tensor<?x2x1x4xf32>,
                      %slots: tensor<?xi64> {strata.name = "slots"},
                      %positions: tensor<?xi64> {strata.name = "positions"}) -> tensor<3x2x8x8xi8> {
  %0 = strata.cache_write %cache, %new, %slots, %positions : (tensor<3x2x8x8xi8>, tensor<?x2x1x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<3x2x8x8xi8>
  return %0 : tensor<3x2x8x8xi8>
}

// A bf16 cache: the rows rounded (arith.truncf), then written.
// CHECK-LABEL: func.func @write_bf16
//       CHECK:   arith.truncf {{.+}} : f32 to bf16
//       CHECK:   scf.for
func.func @write_bf16(%cache: tensor<3x2x8x4xbf16>, %new: tensor<?x2x1x4xf32>,
                      %slots: tensor<?xi64> {strata.name = "slots"},
                      %positions: tensor<?xi64> {strata.name = "positions"}) -> tensor<3x2x8x4xbf16> {
  %0 = strata.cache_write %cache, %new, %slots, %positions : (tensor<3x2x8x4xbf16>, tensor<?x2x1x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<3x2x8x4xbf16>
  return %0 : tensor<3x2x8x4xbf16>
}

// The generic attention over an int8 cache decodes the gathered rows: the
// four scale bytes joined into an fp32, times each value.
// CHECK-LABEL: func.func @attend_int8
//       CHECK:   linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x8x4xf32>)
//       CHECK:     arith.extui
//       CHECK:     arith.shli
//       CHECK:     arith.bitcast {{.+}} : i32 to f32
//       CHECK:     arith.sitofp
//       CHECK:     arith.mulf
func.func @attend_int8(%q: tensor<?x4x1x4xf32>, %k: tensor<3x2x8x8xi8>, %v: tensor<3x2x8x8xi8>,
                       %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x4x1x4xf32> {
  %0 = strata.cache_attention %q, %k, %v, %slots, %lengths : (tensor<?x4x1x4xf32>, tensor<3x2x8x8xi8>, tensor<3x2x8x8xi8>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4x1x4xf32>
  return %0 : tensor<?x4x1x4xf32>
}

// A ring write (2 rows kept, 6 cycling) checks the positions against the
// ring's context (100) and the tokens against the 6 rows, then inserts
// token by token at position p's row: p below 2, else 2 + (p - 2) mod 6.
// CHECK-LABEL: func.func @ring_write
//       CHECK:   arith.constant 100 : i64
//       CHECK:   kind = 9 : i64
//       CHECK:   kind = 10 : i64
//       CHECK:   scf.for
//       CHECK:     scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step
//       CHECK:       %[[P:.+]] = arith.addi %{{.+}}, %[[T]] : index
//       CHECK:       arith.subi %[[P]], %c2
//       CHECK:       arith.remui %{{.+}}, %c6
//       CHECK:       arith.cmpi ult, %[[P]], %c2
//       CHECK:       %[[ROW:.+]] = arith.select
//       CHECK:       tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0, %[[ROW]], 0] [1, 2, 1, 4]
func.func @ring_write(%cache: tensor<3x2x8x4xf32>, %new: tensor<?x2x?x4xf32>,
                      %slots: tensor<?xi64> {strata.name = "slots"},
                      %positions: tensor<?xi64> {strata.name = "positions"}) -> tensor<3x2x8x4xf32> {
  %0 = strata.cache_write %cache, %new, %slots, %positions {ring_kept = 2 : i64, ring_context = 100 : i64} : (tensor<3x2x8x4xf32>, tensor<?x2x?x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<3x2x8x4xf32>
  return %0 : tensor<3x2x8x4xf32>
}

// The generic attention over a ring: the mask spans the 8 rows, each row
// j >= 2 standing for the latest position p = last - ((last - j) mod 6)
// its sequence wrote, hidden while p < 2 (not written yet); then the plain
// attention's lowering.
// CHECK-LABEL: func.func @ring_attend
//       CHECK:   linalg.generic {{.+}} outs(%{{.+}} : tensor<?x1x1x8xi1>)
//       CHECK:     arith.remsi
//       CHECK:     arith.remsi
//       CHECK:     arith.cmpi sge
//       CHECK:     arith.select
//       CHECK:     arith.cmpi sle
func.func @ring_attend(%q: tensor<?x2x1x4xf32>, %k: tensor<3x2x8x4xf32>, %v: tensor<3x2x8x4xf32>,
                       %slots: tensor<?xi64>, %lengths: tensor<?xi64>) -> tensor<?x2x1x4xf32> {
  %0 = strata.cache_attention %q, %k, %v, %slots, %lengths {window = 4 : i64, sinks = 2 : i64, ring_kept = 2 : i64, ring_context = 100 : i64} : (tensor<?x2x1x4xf32>, tensor<3x2x8x4xf32>, tensor<3x2x8x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x2x1x4xf32>
  return %0 : tensor<?x2x1x4xf32>
}

// A paged write (blocks of 4, 3 per row) checks every table entry against
// the pool's 6 blocks and the positions against the 12 a row reaches, then
// inserts token by token into block table[b, p / 4] at row p mod 4.
// CHECK-LABEL: func.func @paged_write
//       CHECK:   strata.check %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {input = "block_tables", kind = 8 : i64
//       CHECK:   arith.constant 12 : i64
//       CHECK:   strata.check %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} {input = "positions", kind = 9 : i64
//       CHECK:   scf.for %[[B:.+]] = %{{.+}} to %{{.+}} step
//       CHECK:     scf.for %[[T:.+]] = %{{.+}} to %{{.+}} step
//       CHECK:       %[[P:.+]] = arith.addi %{{.+}}, %[[T]] : index
//       CHECK:       %[[N:.+]] = arith.divui %[[P]], %c4
//       CHECK:       %[[E:.+]] = tensor.extract %arg2[%[[B]], %[[N]]]
//       CHECK:       %[[BLOCK:.+]] = arith.index_cast %[[E]]
//       CHECK:       %[[ROW:.+]] = arith.remui %[[P]], %c4
//       CHECK:       tensor.insert_slice %{{.+}} into %{{.+}}[%[[BLOCK]], 0, %[[ROW]], 0] [1, 2, 1, 4]
func.func @paged_write(%cache: tensor<6x2x4x4xf32>, %new: tensor<?x2x?x4xf32>,
                       %tables: tensor<?x3xi64> {strata.name = "block_tables"},
                       %positions: tensor<?xi64> {strata.name = "positions"}) -> tensor<6x2x4x4xf32> {
  %0 = strata.cache_write %cache, %new, %tables, %positions {block_size = 4 : i64} : (tensor<6x2x4x4xf32>, tensor<?x2x?x4xf32>, tensor<?x3xi64>, tensor<?xi64>) -> tensor<6x2x4x4xf32>
  return %0 : tensor<6x2x4x4xf32>
}

// The generic attention over a paged cache: each row's blocks gathered end
// to end into its 12 positions (element [b, h, j, e] from block
// table[b, j / 4], row j mod 4), then the causal mask over 12 keys.
// CHECK-LABEL: func.func @paged_attend
//       CHECK:   linalg.generic {{.+}} outs(%{{.+}} : tensor<?x2x12x4xf32>)
//       CHECK:     %[[J:.+]] = linalg.index 2
//       CHECK:     arith.divui %[[J]], %c4
//       CHECK:     tensor.extract %arg3
//       CHECK:     arith.remui %[[J]], %c4
//       CHECK:     tensor.extract %arg1
//       CHECK:   outs(%{{.+}} : tensor<?x1x1x12xi1>)
func.func @paged_attend(%q: tensor<?x2x1x4xf32>, %k: tensor<6x2x4x4xf32>, %v: tensor<6x2x4x4xf32>,
                        %tables: tensor<?x3xi64>, %lengths: tensor<?xi64>) -> tensor<?x2x1x4xf32> {
  %0 = strata.cache_attention %q, %k, %v, %tables, %lengths {block_size = 4 : i64} : (tensor<?x2x1x4xf32>, tensor<6x2x4x4xf32>, tensor<6x2x4x4xf32>, tensor<?x3xi64>, tensor<?xi64>) -> tensor<?x2x1x4xf32>
  return %0 : tensor<?x2x1x4xf32>
}
