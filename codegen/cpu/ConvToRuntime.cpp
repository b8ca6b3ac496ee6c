//===- ConvToRuntime.cpp - channels-last strata.conv -> the runtime -------===//
// SPDX-License-Identifier: Apache-2.0
// Runs on the strata dialect, before strata-lower-to-linalg: the generic
// lowering of a channels-last convolution copies its input into columns
// [N * P, K * C] (K taps) and multiplies those by the weight. A 3x3
// convolution's columns are 9 times its input, written to memory and read
// back (the largest part of ResNet-50's time outside the matmul tiles).
// strata_rt_conv_f32 gathers each block of columns as its matmul needs it
// from the input in place, and applies the bias, a residual add and a ReLU
// that follow the convolution in its C tiles; the weight is packed here, at
// compile time, into the matmul's panels.

#include "codegen/cpu/Passes.h"

#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/cpu/RuntimeCall.h"
#include "dialects/strata/IR/ConstantValues.h"
#include "dialects/strata/IR/StrataOps.h"
#include "passes/WeightContractions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include <cstring>
#include <string>

using namespace mlir;
using strata::ir::ConstantOp;
using strata::ir::ConvOp;

namespace strata::codegen::cpu {
namespace {

constexpr llvm::StringLiteral kConvImport = "strata_rt_conv_f32";
constexpr llvm::StringLiteral kWinogradImport = "strata_rt_conv_f32_winograd";

/// Whether |v|'s buffer is contiguous with the identity layout the kernel
/// reads: a function's argument, or a value computed into a fresh buffer
/// (the transposes to channels last, convolutions, poolings, elementwise
/// ops).
/// Views (slices, reshapes of views) keep the generic lowering.
bool freshlyComputed(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return isa<func::FuncOp>(arg.getOwner()->getParentOp());
  Operation *def = v.getDefiningOp();
  // to_tensor: a runtime call's fresh result (an earlier convolution's,
  // rewritten before this one).
  return isa<ir::TransposeOp, ConvOp, ir::PoolOp,
             bufferization::ToTensorOp>(def) ||
         ir::isFloatElementwiseOp(def);
}

/// The weight's elements as floats, if it is a constant with its data.
std::optional<std::vector<float>> constantFloats(Value weight) {
  auto constant = weight.getDefiningOp<ConstantOp>();
  if (!constant)
    return std::nullopt;
  std::optional<std::vector<char>> bytes = constantRawBytes(constant.getValue());
  if (!bytes || bytes->size() % sizeof(float) != 0)
    return std::nullopt;
  std::vector<float> values(bytes->size() / sizeof(float));
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
}

bool supported(ConvOp op) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getType());
  const int64_t spatial = in.getRank() - 2;
  return op.getChannelsLast() && in.getElementType().isF32() &&
         spatial >= 1 && spatial <= 3 &&
         llvm::none_of(in.getShape().drop_front(1), ShapedType::isDynamic) &&
         llvm::none_of(out.getShape().drop_front(1), ShapedType::isDynamic) &&
         freshlyComputed(op.getInput()) &&
         (!op.getBias() || op.getBias().getDefiningOp<ConstantOp>());
}

/// Whether |op| (supported) runs as Winograd's F(2x2, 3x3): a 2-D 3 x 3
/// kernel with unit strides and dilations, at least 16 channels in and out
/// (the products' k and panels), and outputs of at least 10 x 10. Smaller
/// outputs have few tiles per weight (ResNet-50's 7 x 7 stage: 16 tiles
/// for 49 outputs, and its 9.4 MB weight would grow to 16.8 MB).
bool winogradFits(ConvOp op) {
  auto in = cast<RankedTensorType>(op.getInput().getType());
  auto out = cast<RankedTensorType>(op.getType());
  auto weight = cast<RankedTensorType>(op.getWeight().getType());
  if (in.getRank() != 4 || weight.getRank() != 4)
    return false;
  return weight.getDimSize(0) == 3 && weight.getDimSize(1) == 3 &&
         llvm::all_of(op.getStrides(), [](int64_t s) { return s == 1; }) &&
         llvm::all_of(op.getDilations(), [](int64_t d) { return d == 1; }) &&
         in.getDimSize(3) >= 16 && out.getDimSize(3) >= 16 &&
         out.getDimSize(1) >= 10 && out.getDimSize(2) >= 10;
}

/// The ops a convolution's call absorbs: a residual add of a value shaped
/// as its result (the residual), then a ReLU, each the only reader of the
/// value before it.
struct Epilogue {
  Value residual;
  Operation *add = nullptr;
  Operation *relu = nullptr;
  /// The op whose result the call computes.
  Operation *last(ConvOp conv) const {
    return relu ? relu : add ? add : conv.getOperation();
  }
};

/// The only reader of |v|, if it has exactly one.
Operation *onlyUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

/// Whether |other| is the result of a convolution that comes after |conv|
/// and will be rewritten too: of two convolutions added together, the
/// later one takes the add, so that the earlier one's call has made the
/// buffer that the later call may write over (residualBufferToReuse).
bool laterRewrittenConv(ConvOp conv, Value other) {
  auto otherConv = other.getDefiningOp<ConvOp>();
  return otherConv && otherConv->getBlock() == conv->getBlock() &&
         conv->isBeforeInBlock(otherConv) && supported(otherConv);
}

Epilogue epilogueOf(ConvOp conv) {
  Epilogue e;
  Value value = conv.getResult();
  if (auto add = dyn_cast_or_null<ir::AddOp>(onlyUser(value))) {
    Value other = add.getLhs() == value ? add.getRhs() : add.getLhs();
    if (other != value && other.getType() == value.getType() &&
        add.getType() == value.getType() && freshlyComputed(other) &&
        !laterRewrittenConv(conv, other)) {
      e.residual = other;
      e.add = add;
      value = add.getResult();
    }
  }
  if (auto relu = dyn_cast_or_null<ir::ReluOp>(onlyUser(value)))
    e.relu = relu;
  return e;
}

/// The buffer of |e|'s residual when the call may write its result over
/// it (the residual read and the result written in one pass over the same
/// lines: a 25 MB stream less at ResNet-50's widest blocks, batch 8): the
/// residual is an earlier call's fresh buffer (to_tensor restrict) of the
/// result's type, not the convolution's input, and nothing reads it at or
/// after |at|, where the call goes. A read through an address (a runtime
/// call's params) lasts up to the call after its store. Null otherwise.
/// The call's result is then a second restrict to_tensor of that buffer:
/// sound, as no reader of the first is left at or after it.
Value residualBufferToReuse(const Epilogue &e, ConvOp conv, Operation *at,
                            MemRefType outType) {
  auto tensor = e.residual ? e.residual.getDefiningOp<bufferization::ToTensorOp>()
                           : nullptr;
  if (!tensor || !tensor.getRestrict())
    return nullptr;
  auto alloc = tensor.getBuffer().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc.getType() != outType ||
      alloc->getBlock() != at->getBlock())
    return nullptr;
  if (auto input = conv.getInput().getDefiningOp<bufferization::ToTensorOp>())
    if (input.getBuffer() == alloc.getResult())
      return nullptr;
  Block *block = at->getBlock();
  SmallVector<Value> worklist = {alloc.getResult()};
  llvm::SmallPtrSet<Value, 16> seen = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (user == e.add)
        continue;
      Operation *reads = ancestorIn(block, user);
      if (reads && isa<memref::StoreOp, func::CallOp>(user))
        reads = nextCall(reads);
      if (!reads || !reads->isBeforeInBlock(at))
        return nullptr;
      for (Value result : user->getResults())
        if (seen.insert(result).second)
          worklist.push_back(result);
    }
  }
  return alloc.getResult();
}

class Rewriter {
public:
  Rewriter(ModuleOp module, bool winograd)
      : symbols_(module), winograd_(winograd),
        call_(module, symbols_, kConvImport, STRATA_CONV_PARAM_COUNT),
        winogradCall_(module, symbols_, kWinogradImport,
                      STRATA_CONV_PARAM_COUNT) {}

  /// Rewrites every supported convolution; returns the calls made.
  unsigned run() {
    SmallVector<ConvOp> ops;
    symbols_.getOp()->walk([&](ConvOp op) {
      if (supported(op))
        ops.push_back(op);
    });
    unsigned calls = 0;
    for (ConvOp op : ops)
      calls += rewrite(op);
    return calls;
  }

  /// Of the calls, those that absorbed a ReLU and a residual add.
  unsigned reluCalls = 0, residualCalls = 0;
  /// Of those with a residual, the calls that write over it.
  unsigned inPlaceCalls = 0;
  /// Of the calls, those of strata_rt_conv_f32_winograd.
  unsigned winogradCalls = 0;

private:
  /// The weight [K..., C, M] packed as the (K * C) x M B of the matmul;
  /// with |winograd|, its transform, the (16 * C) x M matrix
  /// strata_rt_conv_f32_winograd multiplies.
  Value packedWeight(OpBuilder &b, ConvOp op, bool winograd) {
    std::optional<std::vector<float>> values = constantFloats(op.getWeight());
    if (!values)
      return {};
    auto type = cast<RankedTensorType>(op.getWeight().getType());
    const int64_t m = type.getDimSize(type.getRank() - 1);
    int64_t k = type.getNumElements() / m;
    if (winograd) {
      const int64_t c = type.getDimSize(type.getRank() - 2);
      k = STRATA_WINOGRAD_F23_POINTS * c;
      std::vector<float> transformed(k * m);
      strata_winograd_f23_weight(values->data(), c, m, transformed.data());
      *values = std::move(transformed);
    }
    const uint64_t count = strata_packed_b_f32_elements(k, m);
    AsmResourceBlob blob = HeapAsmResourceBlob::allocate(
        count * sizeof(float), alignof(std::max_align_t),
        /*dataIsMutable=*/true);
    strata_pack_b_f32(values->data(), k, m, /*sk=*/m, /*sn=*/1,
                      reinterpret_cast<float *>(blob.getMutableData().data()));
    const char *suffix = winograd ? ".winograd" : ".packed";
    std::string name = std::string("conv_weight") + suffix;
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(
            op.getWeight().getDefiningOp<ConstantOp>().getValue()))
      name = resource.getRawHandle().getKey().str() + suffix;
    auto packedType =
        RankedTensorType::get({int64_t(count)}, b.getF32Type());
    return ConstantOp::create(
        b, op.getLoc(),
        DenseResourceElementsAttr::get(packedType, name, std::move(blob)));
  }

  bool rewrite(ConvOp op) {
    auto func = op->getParentOfType<func::FuncOp>();
    if (!func)
      return false;
    // The call sits where the last absorbed op was: a residual computed
    // after the convolution (a downsampling branch) is ready there.
    const Epilogue epilogue = epilogueOf(op);
    Operation *last = epilogue.last(op);
    OpBuilder b(last);
    const bool winograd = winograd_ && winogradFits(op);
    Value weight = packedWeight(b, op, winograd);
    if (!weight)
      return false;
    Location loc = op.getLoc();
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto address = [&](Value tensor) {
      return readOnlyContiguousAddress(b, loc, tensor, calls_);
    };
    auto in = cast<RankedTensorType>(op.getInput().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    auto weightType = cast<RankedTensorType>(op.getWeight().getType());
    const int64_t rank = in.getRank(), spatial = rank - 2;
    Value images = tensor::DimOp::create(b, loc, op.getInput(), 0);
    SmallVector<Value> dynamic;
    if (resultType.isDynamicDim(0))
      dynamic.push_back(images);
    auto outType = MemRefType::get(resultType.getShape(), b.getF32Type());
    Value out = residualBufferToReuse(epilogue, op, last, outType);
    const bool inPlace = out != nullptr;
    if (!inPlace)
      out = memref::AllocOp::create(b, loc, outType, dynamic);
    Value outAddress = f32ElementAddress(
        b, loc, out, memref::ExtractStridedMetadataOp::create(b, loc, out));

    SmallVector<std::pair<int64_t, Value>> fields = {
        {STRATA_CONV_FLAGS, idx(epilogue.relu ? STRATA_CONV_FLAG_RELU : 0)},
        {STRATA_CONV_BATCH, images},
        {STRATA_CONV_SPATIAL, idx(spatial)},
        {STRATA_CONV_CHANNELS, idx(in.getDimSize(rank - 1))},
        {STRATA_CONV_OUT_CHANNELS, idx(resultType.getDimSize(rank - 1))},
        {STRATA_CONV_INPUT, address(op.getInput())},
        {STRATA_CONV_WEIGHT, address(weight)},
        {STRATA_CONV_BIAS, op.getBias() ? address(op.getBias()) : idx(0)},
        {STRATA_CONV_OUTPUT, outAddress},
        {STRATA_CONV_RESIDUAL, inPlace             ? outAddress
                               : epilogue.residual ? address(epilogue.residual)
                                                   : idx(0)},
    };
    for (int64_t d = 0; d < 3; ++d) {
      const bool used = d < spatial;
      fields.push_back(
          {STRATA_CONV_IN_SIZES + d, idx(used ? in.getDimSize(d + 1) : 0)});
      fields.push_back({STRATA_CONV_OUT_SIZES + d,
                        idx(used ? resultType.getDimSize(d + 1) : 0)});
      fields.push_back(
          {STRATA_CONV_KERNEL + d, idx(used ? weightType.getDimSize(d) : 0)});
      fields.push_back(
          {STRATA_CONV_STRIDES + d, idx(used ? op.getStrides()[d] : 0)});
      fields.push_back(
          {STRATA_CONV_DILATIONS + d, idx(used ? op.getDilations()[d] : 0)});
      fields.push_back(
          {STRATA_CONV_PADS_BEGIN + d, idx(used ? op.getPads()[d] : 0)});
    }
    (winograd ? winogradCall_ : call_).emit(b, loc, func, fields);
    auto result = bufferization::ToTensorOp::create(b, loc, resultType, out);
    result.setRestrict(true);
    result.setWritable(true);
    last->getResult(0).replaceAllUsesWith(result.getResult());
    Operation *oldWeight = op.getWeight().getDefiningOp();
    reluCalls += epilogue.relu != nullptr;
    residualCalls += epilogue.add != nullptr;
    inPlaceCalls += inPlace;
    winogradCalls += winograd;
    if (epilogue.relu)
      epilogue.relu->erase();
    if (epilogue.add)
      epilogue.add->erase();
    op->erase();
    if (oldWeight->use_empty())
      oldWeight->erase();
    ++calls_;
    return true;
  }

  SymbolTable symbols_;
  bool winograd_;
  RuntimeCall call_, winogradCall_;
  int64_t calls_ = 0;
};

} // namespace

#define GEN_PASS_DEF_CONVTORUNTIMEPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct ConvToRuntimePass : impl::ConvToRuntimePassBase<ConvToRuntimePass> {
  using ConvToRuntimePassBase::ConvToRuntimePassBase;
  ConvToRuntimePass(CpuCodegenStats *stats, bool useWinograd) : stats(stats) {
    winograd = useWinograd;
  }
  void runOnOperation() override {
    Rewriter rewriter(getOperation(), winograd);
    unsigned calls = rewriter.run();
    numCalls += calls;
    numWinograd += rewriter.winogradCalls;
    if (stats) {
      stats->convCalls += calls;
      stats->convReluCalls += rewriter.reluCalls;
      stats->convResidualCalls += rewriter.residualCalls;
      stats->convInPlaceCalls += rewriter.inPlaceCalls;
      stats->convWinogradCalls += rewriter.winogradCalls;
    }
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createConvToRuntimePass(CpuCodegenStats *stats,
                                              bool winograd) {
  return std::make_unique<ConvToRuntimePass>(stats, winograd);
}

} // namespace strata::codegen::cpu
