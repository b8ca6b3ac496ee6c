//===- Passes.td - CPU code generation passes ------------------*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// Every step of the CPU back end, in pipeline order (CpuPipeline.cpp holds
// the order). Each has a lit test in test/codegen/cpu/<flag without
// strata-cpu->.mlir run through strata-opt. Functions the steps create or
// consume are found by attributes (Passes.h), never by name.

#ifndef STRATA_CODEGEN_CPU_PASSES_TD
#define STRATA_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// On the strata dialect, before strata-lower-to-linalg
//===----------------------------------------------------------------------===//

def AttentionToRuntimePass : Pass<"strata-cpu-attention-to-runtime",
                                  "mlir::ModuleOp"> {
  let summary = "fp32 strata.attention -> a call of the runtime's attention kernel";
  let description = [{
    Replaces every fp32 `strata.attention` of rank-4 operands (an absent or
    fp32 mask, static head counts) by a call to `strata_rt_attention_f32`
    (kernel ABI imports) on the operands' buffers: the tensors enter and
    leave through `bufferization.to_buffer` / `to_tensor`, so one-shot
    bufferization keeps them in place. The generic lowering spells
    attention as scores, mask, softmax and a second product, which
    materializes every score and cannot skip the keys a causal mask hides;
    the runtime kernel does both products and the softmax per block of
    query rows (docs/design/cpu-attention.md). A key and value that are
    each `strata.concat(past, new)` on the sequence axis, read otherwise
    only after the attention (a with-past export's present outputs), become
    one `strata_rt_attention_append` call that attends over the parts where
    they lie and writes the concatenations. Other attention ops are left
    to the generic lowering.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCalls", "calls", "attention ops replaced by a runtime call">];
}

def ConvToRuntimePass : Pass<"strata-cpu-conv-to-runtime", "mlir::ModuleOp"> {
  let summary = "channels-last fp32 strata.conv -> a call of the runtime's convolution";
  let description = [{
    Replaces every fp32 `strata.conv` with `channels_last` (1 to 3 spatial
    dims, static except the batch, a constant weight and bias, an input
    computed into a buffer of its own or an entry's argument) by a call to
    `strata_rt_conv_f32` (kernel ABI imports): the weight packed here into
    the matmul's panels, the input and bias read in place, the result a
    fresh buffer. The runtime multiplies the convolution's columns block by
    block as it gathers them from the input, so they are never stored, and
    starts its C tiles from the bias. A residual `strata.add` of a value
    shaped as the result and a `strata.relu` after it (each the only
    reader of what it reads) join the call, applied in its C tiles. Other
    convolutions are left to the generic lowering.

    A 2-D 3x3 convolution with unit strides and dilations over at least 16
    input and output channels and 10 x 10 outputs calls
    `strata_rt_conv_f32_winograd` instead (Winograd's F(2x2, 3x3): 16
    products per channel pair and 2 x 2 outputs instead of 36), its weight
    transformed here (`strata_winograd_f23_weight`) and packed; off with
    `winograd=false`.
  }];
  let options = [
    Option<"winograd", "winograd", "bool", /*default=*/"true",
           "3x3 convolutions with unit strides use Winograd's F(2x2, 3x3)">];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCalls", "calls", "convolutions replaced by a runtime call">,
    Statistic<"numWinograd", "winograd", "of those, Winograd's F(2x2, 3x3)">];
}

def CollectivesToRuntimePass : Pass<"strata-cpu-collectives-to-runtime",
                                    "mlir::ModuleOp"> {
  let summary = "strata.all_reduce / all_gather / send / recv -> the "
                "runtime's collectives and stage hand-overs";
  let description = [{
    Replaces every fp32 `strata.all_reduce` and `strata.all_gather` (rank
    1 to 4) by a call to `strata_rt_all_reduce_f32` / `strata_rt_all_gather_f32`
    (kernel ABI imports) on the input's buffer, as it lies (rank 4 with
    leading dims of 1, strides in elements), into a fresh contiguous result
    buffer: the runtime exchanges it over the session's communicator. A
    `strata.send` becomes `strata_rt_send_f32` on its input's buffer; a
    `strata.recv` becomes `strata_rt_recv_extents_f32` (the extents the
    type and the shape operand fix, checked against the message's) and
    `strata_rt_recv_f32` into a fresh buffer of the message's extents. The
    calls keep the ops' order, which every rank shares.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::tensor::TensorDialect"];
  let statistics = [
    Statistic<"numCalls", "calls",
              "collectives and hand-overs replaced by runtime calls">];
}

//===----------------------------------------------------------------------===//
// On linalg over tensors
//===----------------------------------------------------------------------===//

def EntryAbiPass : Pass<"strata-cpu-entry-abi", "mlir::ModuleOp"> {
  let summary = "give public functions the kernel ABI's calling convention";
  let description = [{
    Every public function gets MLIR's C interface (`llvm.emit_c_interface`)
    and loses its argument/result attributes (ONNX names, dim names: the
    manifest has them already). Every result must be a fresh buffer the
    caller frees: a result that would bufferize to a view of an argument, a
    constant or another buffer (a reshape, slice or cast of one) is copied
    into a fresh tensor, at tensor level so the deallocation pipeline sees
    the copy. State tensors (arguments marked `strata.state`, the session's
    memory) are the exception: a result marked with a state's name becomes
    `bufferization.materialize_in_destination` into that argument, which is
    made writable, so its buffer is updated in place and the result, now
    equivalent to the argument, is dropped after bufferization. Every other
    argument is made read-only (`bufferization.writable = false`): inputs
    belong to the caller.
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def OrderConstantGlobalsPass : Pass<"strata-cpu-order-constant-globals",
                                     "mlir::ModuleOp"> {
  let summary = "name and order bufferization's constant globals by first use";
  let description = [{
    One-shot bufferization makes a `memref.global` per distinct constant,
    named `__constant_<shape>_<n>` in the order it visits functions, which
    depends on pointer values when no function calls another (a module with
    several entries). This renames them `__constant_<k>` by their first
    `memref.get_global` in module order and puts them in that order, so that
    two compiles of one model give the same bytes. Such a constant that
    nothing reads is dropped.
  }];
}

def DropStateResultsPass : Pass<"strata-cpu-drop-state-results",
                                 "mlir::ModuleOp"> {
  let summary = "entry results that are their state arguments' buffers go";
  let description = [{
    After bufferization, an entry result that is one of the entry's own
    arguments is a state tensor written in place
    (`strata-cpu-entry-abi` made every other result a fresh buffer): the
    kernel ABI has no result for it, so it is removed from the return and
    the function type. MLIR's drop-equivalent-buffer-results leaves public
    functions alone, and entries are public.
  }];
}

def UnshareFillsPass : Pass<"strata-cpu-unshare-fills", "mlir::ModuleOp"> {
  let summary = "one linalg.fill per user";
  let description = [{
    CSE merges identical fills (a zero init per matmul) into one tensor with
    several destructive users; bufferization then keeps the fill once and
    copies it into a fresh buffer per user, which also hides the fill from
    strata-cpu-matmul-to-runtime (which drops a zero fill right before the
    call). A fill cloned right before each user (with its `tensor.empty`)
    bufferizes to one buffer each, whose lifetime starts at its user.
  }];
}

//===----------------------------------------------------------------------===//
// On memrefs, after bufferization
//===----------------------------------------------------------------------===//

def CopiesToLinalgPass : Pass<"strata-cpu-copies-to-linalg", "mlir::ModuleOp"> {
  let summary = "memref.copy -> linalg.copy";
  let description = [{
    `memref.copy` of strided views lowers to a call into MLIR's C runner
    library, which generated code must not depend on; `linalg.copy` becomes
    plain loops instead.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def EarlyDeallocPass : Pass<"strata-cpu-early-dealloc", "mlir::ModuleOp"> {
  let summary = "free every intermediate right after its last use";
  let description = [{
    Moves every `memref.dealloc` of a `memref.alloc` in the same block to
    just after the last op of that block that uses the buffer or any view of
    it (a raw address taken from it stays live up to the next call, which is
    how the runtime imports receive it). MLIR's deallocation pipeline frees
    at the end of the block, which keeps every intermediate of a model alive
    for the whole run; freed early, the runtime's buffer cache hands the
    block to the next allocation of its size.
  }];
  let statistics = [Statistic<"numMoved", "moved", "frees moved earlier">];
}

def MemoryPlanPass : Pass<"strata-cpu-memory-plan", "mlir::ModuleOp"> {
  let summary = "fixed arena offsets for intermediates with bounded sizes";
  let description = [{
    Places every intermediate buffer (a `memref.alloc` freed by a
    `memref.dealloc` in the same block, after strata-cpu-early-dealloc)
    whose size has a compile-time upper bound (static, or computed from
    input dims with maxima by +, -, *, /, max, min, select; the maxima come
    from the `strata.input_maxima` function attribute) at a fixed offset of
    one arena per entry function: buffers whose lifetimes overlap get
    disjoint ranges, others share (greedy, largest first). The arena is one
    allocation per run from the runtime (its buffer cache returns the same
    block every run). Buffers with data-dependent sizes stay separate
    allocations (docs/design/cpu-memory.md).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numPlanned", "planned", "intermediates placed in the arena">,
    Statistic<"numUnplanned", "unplanned",
              "intermediates with data-dependent sizes">];
}

def MatmulToRuntimePass : Pass<"strata-cpu-matmul-to-runtime",
                               "mlir::ModuleOp"> {
  let summary = "fp32 contractions -> calls of the runtime's matmul";
  let description = [{
    Replaces every fp32 contraction (a `linalg.generic` on memrefs computing
    `C[b.., m, n] += A[b.., m, k] * B[b.., k, n]` with any strides, found by
    its maps and body) by a call to `strata_rt_matmul_f32` (kernel ABI
    imports), or, for the weight-only contraction of
    `strata.quantized_linear` (`acc + x * (sitofp(q) * scale)`, int8 `q`),
    to `strata_rt_matmul_f32_i8` with the weight in int8 panels and its
    scales padded to the panels; marked `strata.weight_bits = 4` with
    groups of a multiple of 4 rows, to `strata_rt_matmul_f32_i4` with the
    weight two values a byte and its scales as fp16 beside each group
    (`PANEL_I4_F16_BLOCKS`, when every scale is a binary16 value; else
    `PANEL_I4_GROUPS` with fp32 scales apart); marked
    `strata.activation_bits = 8` (one scale per column), to
    `strata_rt_matmul_f32_w8a8` with the weight in quads of rows
    (`PANEL_I8_QUADS`). An fp32 contraction marked `strata.compute_type =
    bf16` over a weight calls `strata_rt_matmul_f32_bf16` with the weight
    rounded to bf16 in pairs of rows (`PANEL_BF16_PAIRS`). A B operand that is a weight is packed at compile time into
    the panel layout of the ABI header, in a new weight global; a zero fill
    of C right before the contraction is dropped (the call overwrites C).
    docs/design/cpu-matmul.md says why matmuls call the runtime.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [
    Statistic<"numCalls", "calls", "contractions replaced">,
    Statistic<"numPackedCalls", "packed-calls",
              "of which read a pre-packed weight">,
    Statistic<"numPackedWeights", "packed-weights", "distinct packed weights">,
    Statistic<"numInt8Calls", "int8-calls",
              "of which read a weight-only int8 weight (strata_rt_matmul_f32_i8)">,
    Statistic<"numInt4Calls", "int4-calls",
              "of which read an int4 weight (strata_rt_matmul_f32_i4)">,
    Statistic<"numW8A8Calls", "w8a8-calls",
              "of which quantize their activations to int8 too "
              "(strata_rt_matmul_f32_w8a8)">,
    Statistic<"numBf16Calls", "bf16-calls",
              "of which compute in bf16 (strata_rt_matmul_f32_bf16)">];
}

def ApproximateMathPass : Pass<"strata-cpu-approximate-math",
                               "mlir::ModuleOp"> {
  let summary = "exp, tanh, erf and log as inline polynomials";
  let description = [{
    Polynomials instead of libm calls, so that the elementwise loops around
    them (softmax, GELU) vectorize. MLIR's approximations are within a few
    ulp in fp32 and keep inf/NaN behaviour (checked by the e2e fixtures and
    the ONNX node tests of each op).
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::vector::VectorDialect"];
}

def ExternalizeWeightsPass : Pass<"strata-cpu-externalize-weights",
                                  "mlir::ModuleOp"> {
  let summary = "weights out of the code, into one image beside it";
  let description = [{
    Replaces every `memref.global` holding a `dense_resource` (a weight) by
    a view into a trailing `memref<?xi8>` argument of each public function,
    at the weight's offset in the weights image (each weight 64-byte
    aligned; one copy however many functions read it). The image's layout is
    recorded in the module attribute `strata.weights`: one
    `{offset, data}` dictionary per weight, in image order, from which code
    generation writes the artifact's weights section.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def OutlineKernelsPass : Pass<"strata-cpu-outline-kernels", "mlir::ModuleOp"> {
  let summary = "one private function per linalg op";
  let description = [{
    Moves every linalg op in a public function into a private `noinline`
    function of its own, marked `strata.kernel`, called in its place: it
    keeps each LLVM function small (optimizing one entry with every loop
    nest of a model inline costs superlinear time) and each kernel is the
    unit the thread pool splits. A generic whose first loop is parallel and
    indexes its outputs directly becomes a parallel kernel (marked
    `strata.parallel_kernel`): it takes `(begin, end, work)` first and runs
    a `[begin, end)` slice of that loop (every operand it indexes is sliced
    with a subview, `linalg.index 0` shifted by the slice's start); the call
    site passes the whole range and the output's element count. When its
    second loop qualifies too and is not the innermost, the kernel takes
    `(begin0, end0, begin1, end1, work)` and both loops are sliced
    (`strata.parallel_kernel_2d`): the pool then splits whichever is longer.
    Copies, transposes and broadcasts become generics first, so that they
    run in slices too.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
  let statistics = [Statistic<"numKernels", "kernels", "kernels outlined">];
}

def MergeIdenticalKernelsPass : Pass<"strata-cpu-merge-identical-kernels",
                                     "mlir::ModuleOp"> {
  let summary = "one function for outlined kernels with the same body";
  let description = [{
    The layers of a model, and the entries of a generation artifact (main,
    prefill, decode, verify), repeat the same loop nests: GPT-2-small's
    entries outline several hundred kernels of a few dozen distinct bodies.
    Kernels (`strata.kernel`, `strata.parallel_kernel`) with the same type,
    attributes (but their name and the `strata.dispatch` region they came
    from, which the ops inside lose here: nothing after outlining reads it)
    and body (locations aside) become the first of them in module order;
    calls are redirected to it and the others erased. Every later
    step, MLIR's lowering and above all LLVM's optimization and code
    generation, then works on each body once.
  }];
  let statistics = [Statistic<"numMerged", "merged", "kernels merged into an identical one">];
}

def ChecksToRuntimePass : Pass<"strata-cpu-checks-to-runtime",
                               "mlir::ModuleOp"> {
  let summary = "strata.check -> a branch to the runtime's check-failed import";
  let description = [{
    Replaces every `strata.check` by `scf.if %failed` around a call of
    `strata_rt_check_failed` (codegen/abi/strata_kernel_abi.h), with the
    node and input names as NUL-terminated constants. Runs after kernels are
    outlined: the checks stay in the entry function, on the thread that
    called it. The good path costs one compare and branch per check.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::func::FuncDialect"];
  let statistics = [Statistic<"numChecks", "checks", "checks lowered">];
}

//===----------------------------------------------------------------------===//
// On the LLVM dialect
//===----------------------------------------------------------------------===//

def DispatchParallelKernelsPass : Pass<"strata-cpu-dispatch-parallel-kernels",
                                       "mlir::ModuleOp"> {
  let summary = "calls of parallel kernels -> strata_rt_parallel_for";
  let description = [{
    Turns every call `k(begin, end, work, args...)` of an `llvm.func`
    marked `strata.parallel_kernel` into
    `strata_rt_parallel_for(k.task, slots, begin, end, work)`, where
    `slots` holds args in 8-byte slots (a stack block in the caller) and
    the new `k.task(context, slots, b, e)` (marked `strata.parallel_task`,
    the kernel ABI's task type) loads them and runs `k` on `[b, e)`. For a
    2-D kernel (`strata.parallel_kernel_2d`) the slots start with both
    loops' extents; the pool's range is loop 0's when it has 16 iterations
    or more or at least as many as loop 1, else loop 1's, and the task runs
    the other loop whole. On the
    LLVM dialect, where a kernel's memref arguments are plain scalars that
    fit one slot each and a function's address is a value. Runs before
    strata-cpu-pass-run-context, which adds the run context to the import
    call and hands the task's context to the kernel where it needs one.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def PassRunContextPass : Pass<"strata-cpu-pass-run-context", "mlir::ModuleOp"> {
  let summary = "the kernel ABI's run context, passed to every import";
  let description = [{
    `malloc`/`free` become the imports `strata_rt_alloc`/`strata_rt_free`
    (buffers come from the session's cache, which reuses them across runs).
    Then every call of a declaration marked `strata.runtime_import` gets the
    run context (`!llvm.ptr`) as a new first operand. Entry points (marked
    `strata.entry`) get it as a new first parameter; parallel tasks
    (`strata.parallel_task`) have it as their first parameter already; any
    other function that calls an import, directly or through other
    functions, gets a new first parameter too, and every call of it passes
    its caller's context. A function whose address is taken other than a
    task cannot get a parameter: an error. On the LLVM dialect, after
    strata-cpu-dispatch-parallel-kernels.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def BindRuntimeImportsPass : Pass<"strata-cpu-bind-runtime-imports",
                                  "mlir::ModuleOp"> {
  let summary = "runtime imports called through pointers the runtime sets";
  let description = [{
    Kernel ABI imports: every declaration marked `strata.runtime_import`
    gets an internal body that calls through the exported pointer
    `__strata_import_<name>` (set by the runtime after loading), and
    `__strata_import_count` exports their number. Pointers instead of
    undefined symbols: the dynamic loader would resolve undefined symbols
    only against libraries in the global scope, which a runtime opened with
    RTLD_LOCAL (Python's ctypes) is not. Runs before LLVM's optimizer, so
    the stubs inline.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // STRATA_CODEGEN_CPU_PASSES_TD
