// RUN: strata-opt %s --strata-cpu-pipeline | FileCheck %s
// RUN: strata-opt %s --strata-cpu-pipeline=runtime-attention=false | FileCheck %s --check-prefix=NOATTN

// The whole CPU pipeline on the strata dialect after fusion: only the LLVM
// dialect is left, with the C interface of the entry, the matmul and the
// attention as runtime calls, the elementwise tanh as a parallel kernel on
// the runtime's pool, and one pointer slot per runtime import. The entry's
// C interface takes the run context first (kernel ABI v3) and the imports
// take it too.
// CHECK-NOT:   = strata.
// CHECK-NOT:   strata.attention
// CHECK-NOT:   linalg.
// CHECK-NOT:   memref.
// CHECK-DAG:   llvm.func internal @strata_rt_alloc(%{{.+}}: !llvm.ptr, %{{.+}}: i64) -> !llvm.ptr attributes {strata.runtime_import}
// CHECK-DAG:   llvm.func internal @strata_rt_matmul_f32(%{{.+}}: !llvm.ptr, %{{.+}}: i64) attributes {strata.runtime_import}
// CHECK-DAG:   llvm.func internal @strata_rt_attention_f32({{.*}}) attributes {strata.runtime_import}
// CHECK-DAG:   llvm.func internal @strata_rt_parallel_for({{.*}}) attributes {strata.runtime_import}
// CHECK-DAG:   llvm.func @_mlir_ciface_main(%{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr, %{{.+}}: !llvm.ptr) attributes {{{.*}}strata.entry
// CHECK-DAG:   llvm.func @strata_pkernel_{{[0-9]+}}({{.*}}) attributes {passthrough = ["noinline"], strata.dispatch = {id = {{[0-9]+}} : i64, kind = "elementwise"}, strata.parallel_kernel
// CHECK-DAG:   llvm.mlir.global external @__strata_import_strata_rt_matmul_f32()
// CHECK-DAG:   llvm.mlir.global external constant @__strata_import_count
// Without the runtime's attention kernel, attention is loops and matmuls.
// NOATTN-NOT:  strata_rt_attention_f32
func.func @main(%x: tensor<1x2x?x16xf32>, %w: tensor<16x16xf32>) -> tensor<1x2x?x16xf32> {
  %y = strata.matmul %x, %w : (tensor<1x2x?x16xf32>, tensor<16x16xf32>) -> tensor<1x2x?x16xf32>
  %a = strata.attention %y, %y, %y {causal} : (tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>) -> tensor<1x2x?x16xf32>
  %z = strata.tanh %a : tensor<1x2x?x16xf32>
  return %z : tensor<1x2x?x16xf32>
}
