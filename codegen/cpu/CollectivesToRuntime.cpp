//===- CollectivesToRuntime.cpp - Collectives -> the runtime --------------===//
// SPDX-License-Identifier: Apache-2.0
// Runs on the strata dialect, before strata-lower-to-linalg: a tensor-
// parallel rank's all-reduces and all-gathers exchange data with the other
// ranks, which only the runtime can reach (through the communicator the
// embedder gave the session). Each op becomes one import call on the
// input's buffer as it lies and a fresh contiguous result.

#include "codegen/cpu/Passes.h"

#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/cpu/RuntimeCall.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_COLLECTIVESTORUNTIMEPASS
#include "codegen/cpu/Passes.h.inc"

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kAllReduceImport = "strata_rt_all_reduce_f32";
constexpr llvm::StringLiteral kAllGatherImport = "strata_rt_all_gather_f32";
constexpr llvm::StringLiteral kSendImport = "strata_rt_send_f32";
constexpr llvm::StringLiteral kRecvExtentsImport = "strata_rt_recv_extents_f32";
constexpr llvm::StringLiteral kRecvImport = "strata_rt_recv_f32";
constexpr int64_t kViewRank = 4;

bool supported(Operation *op) {
  auto in = cast<RankedTensorType>(isa<ir::RecvOp>(op)
                                       ? op->getResult(0).getType()
                                       : op->getOperand(0).getType());
  return in.getElementType().isF32() && in.getRank() <= kViewRank &&
         (in.getRank() >= 1 || isa<ir::SendOp, ir::RecvOp>(op));
}

/// A read-only strided view of tensor |input| and its metadata; |tag|
/// keeps CSE from merging two calls' views of one tensor.
std::pair<Value, memref::ExtractStridedMetadataOp>
viewOf(OpBuilder &b, Location loc, Value input, int64_t tag) {
  auto inType = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> strides(inType.getRank(), ShapedType::kDynamic);
  auto view = bufferization::ToBufferOp::create(
      b, loc,
      MemRefType::get(inType.getShape(), inType.getElementType(),
                      StridedLayoutAttr::get(b.getContext(),
                                             ShapedType::kDynamic, strides)),
      input);
  view.setReadOnly(true);
  view->setAttr("strata.runtime_call", b.getI64IntegerAttr(tag));
  return {view, memref::ExtractStridedMetadataOp::create(b, loc, view)};
}

/// Hands a tensor to another pipeline stage: strata_rt_send_f32 on its
/// buffer as it lies.
void lowerSend(ir::SendOp op, RuntimeCall &send, int64_t tag) {
  auto func = op->getParentOfType<func::FuncOp>();
  Location loc = op.getLoc();
  OpBuilder b(op);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto [view, meta] = viewOf(b, loc, op.getInput(), tag);
  const int64_t rank = op.getInput().getType().getRank();
  const int64_t pad = kViewRank - rank;
  SmallVector<std::pair<int64_t, Value>> fields = {
      {STRATA_P2P_BUF, f32ElementAddress(b, loc, view, meta)},
      {STRATA_P2P_STAGE, idx(op.getStage())},
  };
  for (int64_t d = 0; d < kViewRank; ++d) {
    const bool real = d >= pad;
    fields.push_back(
        {STRATA_P2P_SIZES + d, real ? Value(meta.getSizes()[d - pad]) : idx(1)});
    fields.push_back({STRATA_P2P_STRIDES + d,
                      real ? Value(meta.getStrides()[d - pad]) : idx(0)});
  }
  send.emit(b, loc, func, fields);
  op.erase();
}

/// Takes a tensor from another pipeline stage: its extents first
/// (strata_rt_recv_extents_f32 checks the ones the type fixes), then the
/// elements into a buffer of those extents (strata_rt_recv_f32).
void lowerRecv(ir::RecvOp op, RuntimeCall &recvExtents, RuntimeCall &recv) {
  auto func = op->getParentOfType<func::FuncOp>();
  Location loc = op.getLoc();
  OpBuilder b(op);
  auto idx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto type = cast<RankedTensorType>(op.getResult().getType());
  const int64_t rank = type.getRank();
  const int64_t pad = kViewRank - rank;
  // The extents the code knows: the type's, and those the shape operand
  // computes from the inputs (then the buffer is allocated from them, not
  // from the message, so its extents stay known in terms of the inputs).
  SmallVector<Value> known(rank);
  if (Value shape = op.getShape())
    for (int64_t d = 0; d < rank; ++d)
      if (type.isDynamicDim(d))
        known[d] = tensor::ExtractOp::create(b, loc, shape, ValueRange{idx(d)});
  Value extents = memref::AllocaOp::create(
      b, loc, MemRefType::get({kViewRank}, b.getI64Type()));
  for (int64_t d = 0; d < kViewRank; ++d) {
    Value expected;
    if (d >= pad && known[d - pad])
      expected = known[d - pad];
    else
      expected = arith::ConstantIntOp::create(
          b, loc,
          d < pad ? 1
                  : (type.isDynamicDim(d - pad) ? -1
                                                : type.getDimSize(d - pad)),
          64);
    memref::StoreOp::create(b, loc, expected, extents, ValueRange{idx(d)});
  }
  auto extentsMeta = memref::ExtractStridedMetadataOp::create(b, loc, extents);
  recvExtents.emit(b, loc, func,
                   {{STRATA_P2P_STAGE, idx(op.getStage())},
                    {STRATA_P2P_EXTENTS,
                     i64ElementAddress(b, loc, extents, extentsMeta)}});
  SmallVector<Value> sizes, dynamic;
  for (int64_t d = 0; d < rank; ++d) {
    if (!type.isDynamicDim(d)) {
      sizes.push_back(idx(type.getDimSize(d)));
      continue;
    }
    Value loaded =
        known[d] ? known[d]
                 : Value(memref::LoadOp::create(b, loc, extents,
                                                ValueRange{idx(pad + d)}));
    sizes.push_back(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), loaded));
    dynamic.push_back(sizes.back());
  }
  Value out = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamic);
  auto outMeta = memref::ExtractStridedMetadataOp::create(b, loc, out);
  SmallVector<std::pair<int64_t, Value>> fields = {
      {STRATA_P2P_BUF, f32ElementAddress(b, loc, out, outMeta)},
      {STRATA_P2P_STAGE, idx(op.getStage())},
  };
  for (int64_t d = 0; d < kViewRank; ++d)
    fields.push_back({STRATA_P2P_SIZES + d, d < pad ? idx(1) : sizes[d - pad]});
  recv.emit(b, loc, func, fields);
  auto result = bufferization::ToTensorOp::create(b, loc, type, out);
  result.setRestrict(true);
  result.setWritable(true);
  op.getResult().replaceAllUsesWith(result.getResult());
  op.erase();
}

struct CollectivesToRuntimePass
    : impl::CollectivesToRuntimePassBase<CollectivesToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<Operation *> ops;
    module.walk([&](Operation *op) {
      if (isa<ir::AllReduceOp, ir::AllGatherOp, ir::SendOp, ir::RecvOp>(op))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    SymbolTable symbols(module);
    RuntimeCall reduce(module, symbols, kAllReduceImport,
                       STRATA_COLL_PARAM_COUNT);
    RuntimeCall gather(module, symbols, kAllGatherImport,
                       STRATA_COLL_PARAM_COUNT);
    RuntimeCall send(module, symbols, kSendImport, STRATA_P2P_PARAM_COUNT);
    RuntimeCall recvExtents(module, symbols, kRecvExtentsImport,
                            STRATA_P2P_PARAM_COUNT);
    RuntimeCall recv(module, symbols, kRecvImport, STRATA_P2P_PARAM_COUNT);
    int64_t calls = 0;
    for (Operation *op : ops) {
      if (!supported(op)) {
        op->emitError("a collective or stage hand-over of an fp32 tensor "
                      "of rank 1 to 4 (0 to 4 for a hand-over) is supported, "
                      "not ")
            << (isa<ir::RecvOp>(op) ? op->getResult(0).getType()
                                    : op->getOperand(0).getType());
        return signalPassFailure();
      }
      if (auto s = dyn_cast<ir::SendOp>(op)) {
        lowerSend(s, send, calls++);
        continue;
      }
      if (auto r = dyn_cast<ir::RecvOp>(op)) {
        lowerRecv(r, recvExtents, recv);
        ++calls;
        continue;
      }
      auto func = op->getParentOfType<func::FuncOp>();
      Location loc = op->getLoc();
      MLIRContext *ctx = op->getContext();
      OpBuilder b(op);
      auto idx = [&](int64_t v) {
        return arith::ConstantIndexOp::create(b, loc, v).getResult();
      };
      Value input = op->getOperand(0);
      auto inType = cast<RankedTensorType>(input.getType());
      const int64_t rank = inType.getRank();
      SmallVector<int64_t> strides(rank, ShapedType::kDynamic);
      auto view = bufferization::ToBufferOp::create(
          b, loc,
          MemRefType::get(inType.getShape(), inType.getElementType(),
                          StridedLayoutAttr::get(ctx, ShapedType::kDynamic,
                                                 strides)),
          input);
      view.setReadOnly(true);
      // A unique tag keeps CSE from merging two calls' views of one tensor.
      view->setAttr("strata.runtime_call", b.getI64IntegerAttr(calls));
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, view);

      auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
      const int64_t axis =
          isa<ir::AllGatherOp>(op)
              ? int64_t(cast<ir::AllGatherOp>(op).getAxis())
              : 0;
      const int64_t ranks =
          isa<ir::AllGatherOp>(op)
              ? int64_t(cast<ir::AllGatherOp>(op).getRanks())
              : int64_t(cast<ir::AllReduceOp>(op).getRanks());
      SmallVector<Value> dynamic;
      for (int64_t d = 0; d < rank; ++d)
        if (resultType.isDynamicDim(d)) {
          Value size = meta.getSizes()[d];
          if (d == axis && isa<ir::AllGatherOp>(op))
            size = arith::MulIOp::create(b, loc, size, idx(ranks));
          dynamic.push_back(size);
        }
      Value out = memref::AllocOp::create(
          b, loc,
          MemRefType::get(resultType.getShape(), resultType.getElementType()),
          dynamic);
      auto outMeta = memref::ExtractStridedMetadataOp::create(b, loc, out);

      // Rank 4 with leading unit dims.
      const int64_t pad = kViewRank - rank;
      SmallVector<std::pair<int64_t, Value>> fields = {
          {STRATA_COLL_IN, f32ElementAddress(b, loc, view, meta)},
          {STRATA_COLL_OUT, f32ElementAddress(b, loc, out, outMeta)},
          {STRATA_COLL_AXIS, idx(axis + pad)},
          {STRATA_COLL_RANKS, idx(ranks)},
      };
      for (int64_t d = 0; d < kViewRank; ++d) {
        const bool real = d >= pad;
        fields.push_back({STRATA_COLL_SIZES + d,
                          real ? Value(meta.getSizes()[d - pad]) : idx(1)});
        fields.push_back({STRATA_COLL_STRIDES + d,
                          real ? Value(meta.getStrides()[d - pad]) : idx(0)});
      }
      (isa<ir::AllGatherOp>(op) ? gather : reduce).emit(b, loc, func, fields);
      auto result = bufferization::ToTensorOp::create(b, loc, resultType, out);
      result.setRestrict(true);
      result.setWritable(true);
      op->getResult(0).replaceAllUsesWith(result.getResult());
      op->erase();
      ++calls;
    }
    numCalls += calls;
  }
};

} // namespace

} // namespace strata::codegen::cpu
