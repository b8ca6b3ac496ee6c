//===- AttentionToRuntime.cpp - strata.attention -> the runtime -----------===//
// SPDX-License-Identifier: Apache-2.0
// Runs on the strata dialect, before strata-lower-to-linalg: the generic
// lowering spells attention as scores, mask, softmax and a second product,
// which materializes every score and cannot skip the keys a causal mask
// hides. The runtime kernel does both products and the softmax per block
// of query rows (docs/design/cpu-attention.md).

#include "codegen/cpu/Passes.h"

#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/cpu/RuntimeCall.h"
#include "passes/lowering/RuntimeChecks.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using strata::ir::AttentionOp;
using strata::ir::CacheAttentionOp;
using strata::ir::ConcatOp;

namespace strata::codegen::cpu {
namespace {

constexpr llvm::StringLiteral kAttentionImport = "strata_rt_attention_f32";
constexpr llvm::StringLiteral kCompressedCacheImport = "strata_rt_attention_kv";
constexpr llvm::StringLiteral kRingCacheImport = "strata_rt_attention_ring";
constexpr llvm::StringLiteral kGlobalBlocksImport =
    "strata_rt_attention_global";
constexpr llvm::StringLiteral kAppendImport = "strata_rt_attention_append";
constexpr llvm::StringLiteral kPagedCacheImport = "strata_rt_attention_paged";

// A ring cache's kept rows and the positions its sequences reach.
struct RingLayout {
  int64_t kept, context;
};

// A paged cache: positions per block, and positions a row reaches.
struct PagedLayout {
  int64_t blockSize, capacity;
};

// Top-k global blocks: the blocks each query adds and their keys.
struct GlobalLayout {
  int64_t topk, block;
};

std::optional<GlobalLayout> globalLayoutOf(std::optional<int64_t> topk,
                                           std::optional<int64_t> block) {
  if (!topk || !block)
    return std::nullopt;
  return GlobalLayout{*topk, *block};
}

bool isF32Rank4(Type t) {
  auto r = dyn_cast<RankedTensorType>(t);
  return r && r.getRank() == 4 && r.getElementType().isF32();
}

// A with-past export's key or value: Concat(past, new) along the sequence,
// feeding |attention| as that operand only and otherwise read only after
// it in its block (the present output), so that the kernel can write it.
ConcatOp grownCache(Value operand, AttentionOp attention) {
  auto concat = operand.getDefiningOp<ConcatOp>();
  if (!concat || concat.getAxis() != 2 || concat.getInputs().size() != 2 ||
      !llvm::all_of(concat.getInputs().getTypes(), isF32Rank4) ||
      attention.getQuery() == operand || attention.getMask() == operand)
    return nullptr;
  for (Operation *user : concat->getUsers())
    if (user != attention.getOperation() &&
        (user->getBlock() != attention->getBlock() ||
         !attention->isBeforeInBlock(user)))
      return nullptr;
  return concat;
}

// The past and new parts of an attention's key and value (grownCache).
struct AppendParts {
  ConcatOp key, value;
};

class Rewriter {
public:
  explicit Rewriter(ModuleOp module)
      : symbols_(module),
        call_(module, symbols_, kAttentionImport, STRATA_ATTN_PARAM_COUNT),
        callKv_(module, symbols_, kCompressedCacheImport,
                STRATA_ATTN_KV_PARAM_COUNT),
        callRing_(module, symbols_, kRingCacheImport,
                  STRATA_ATTN_RING_PARAM_COUNT),
        callGlobal_(module, symbols_, kGlobalBlocksImport,
                    STRATA_ATTN_GLOBAL_PARAM_COUNT),
        callAppend_(module, symbols_, kAppendImport,
                    STRATA_ATTN_APPEND_PARAM_COUNT),
        callPaged_(module, symbols_, kPagedCacheImport,
                   STRATA_ATTN_PAGED_PARAM_COUNT) {}

  unsigned run() {
    SmallVector<AttentionOp> ops;
    symbols_.getOp()->walk([&](AttentionOp op) {
      if (supported(op))
        ops.push_back(op);
    });
    SmallVector<CacheAttentionOp> cached;
    symbols_.getOp()->walk([&](CacheAttentionOp op) {
      if (supported(op))
        cached.push_back(op);
    });
    for (AttentionOp op : ops)
      rewrite(op);
    for (CacheAttentionOp op : cached)
      rewrite(op);
    return ops.size() + cached.size();
  }

private:
  static bool supported(AttentionOp op) {
    if (!isF32Rank4(op.getQuery().getType()) ||
        !isF32Rank4(op.getKey().getType()) ||
        !isF32Rank4(op.getValue().getType()) || !isF32Rank4(op.getType()))
      return false;
    if (Value mask = op.getMask(); mask && !isF32Rank4(mask.getType()))
      return false;
    auto q = cast<RankedTensorType>(op.getQuery().getType());
    auto k = cast<RankedTensorType>(op.getKey().getType());
    if (q.isDynamicDim(1) || k.isDynamicDim(1) || k.getDimSize(1) <= 0 ||
        q.getDimSize(1) % k.getDimSize(1) != 0)
      return false;
    // The default scale needs a static head dim.
    return op.getScale() || !q.isDynamicDim(3);
  }

  // fp32 caches, or bf16 / int8 ones (strata_rt_attention_kv).
  static bool supported(CacheAttentionOp op) {
    auto cache = cast<RankedTensorType>(op.getKeyCache().getType());
    Type element = cache.getElementType();
    return isF32Rank4(op.getQuery().getType()) &&
           (element.isF32() || element.isBF16() || element.isInteger(8)) &&
           (op.getScale() ||
            !cast<RankedTensorType>(op.getQuery().getType()).isDynamicDim(3));
  }

  void rewrite(AttentionOp op) {
    OpBuilder b(op);
    std::optional<AppendParts> append;
    if (!op.getGlobalTopk()) {
      ConcatOp key = grownCache(op.getKey(), op);
      ConcatOp value = grownCache(op.getValue(), op);
      if (key && value && key != value)
        append = AppendParts{key, value};
    }
    if (append)
      lowering::checkAttentionAppendOperands(
          b, op.getLoc(), op.getQuery(), append->key.getInputs()[0],
          append->key.getInputs()[1], append->value.getInputs()[0],
          append->value.getInputs()[1], op.getMask());
    else
      lowering::checkAttentionOperands(b, op.getLoc(), op.getQuery(),
                                       op.getKey(), op.getValue(),
                                       op.getMask());
    emitCall(op, op.getQuery(), op.getKey(), op.getValue(), op.getMask(),
             /*cacheRows=*/{}, op.getScale(), op.getCausal(), op.getWindow(),
             op.getSinks(), op.getMaskHidden(), /*ring=*/std::nullopt,
             globalLayoutOf(op.getGlobalTopk(), op.getGlobalBlock()), append);
  }

  // Row b reads slot slots[b] of the caches in place (a paged cache: the
  // blocks of its table row) and sees its first lengths[b] keys.
  void rewrite(CacheAttentionOp op) {
    OpBuilder b(op);
    auto cache = cast<RankedTensorType>(op.getKeyCache().getType());
    Value queries = tensor::DimOp::create(b, op.getLoc(), op.getQuery(), 2);
    std::optional<RingLayout> ring;
    if (std::optional<int64_t> kept = op.getRingKept())
      ring = RingLayout{*kept, *op.getRingContext()};
    std::optional<PagedLayout> paged;
    if (std::optional<int64_t> size = op.getBlockSize())
      paged = PagedLayout{*size, op.getPositionCapacity()};
    lowering::checkCacheLengths(b, op.getLoc(), op.getSlots(), op.getLengths(),
                                queries, cache.getDimSize(0),
                                op.getPositionCapacity());
    if (ring)
      lowering::checkRingWrite(b, op.getLoc(), queries,
                               cache.getDimSize(2) - ring->kept -
                                   *op.getWindow() + 1);
    emitCall(op, op.getQuery(), op.getKeyCache(), op.getValueCache(), Value(),
             std::pair{op.getSlots(), op.getLengths()}, op.getScale(),
             /*causal=*/true, op.getWindow(), op.getSinks(),
             /*maskHidden=*/false, ring,
             globalLayoutOf(op.getGlobalTopk(), op.getGlobalBlock()),
             /*append=*/std::nullopt, paged);
  }

  void emitCall(Operation *op, Value query, Value key, Value value,
                Value maskTensor, std::optional<std::pair<Value, Value>> rows,
                std::optional<APFloat> scaleAttr, bool causal,
                std::optional<int64_t> window, std::optional<int64_t> sinks,
                bool maskHidden, std::optional<RingLayout> ring,
                std::optional<GlobalLayout> global,
                std::optional<AppendParts> append = std::nullopt,
                std::optional<PagedLayout> paged = std::nullopt) {
    auto func = op->getParentOfType<func::FuncOp>();
    if (!func)
      return;
    Location loc = op->getLoc();
    MLIRContext *ctx = op->getContext();
    OpBuilder b(op);
    auto idx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    // A read-only view of a tensor operand with whatever strides it has.
    auto buffer = [&](Value tensor) -> Value {
      auto t = cast<RankedTensorType>(tensor.getType());
      SmallVector<int64_t> strides(t.getRank(), ShapedType::kDynamic);
      auto layout = StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides);
      auto type = MemRefType::get(t.getShape(), t.getElementType(), layout);
      auto op = bufferization::ToBufferOp::create(b, loc, type, tensor);
      op.setReadOnly(true);
      // Bufferization sees the read here, right before the call. A unique
      // tag keeps CSE from merging it with another call's identical view
      // of the same tensor, which would let an op between the two calls
      // overwrite the tensor's buffer in place before the second call.
      op->setAttr("strata.runtime_call", b.getI64IntegerAttr(calls_));
      return op;
    };
    auto qType = cast<RankedTensorType>(query.getType());
    auto kType = cast<RankedTensorType>(key.getType());
    // A compressed cache (bf16, or int8 rows followed by their 4-byte
    // scales) goes to strata_rt_attention_kv.
    Type kvElement = kType.getElementType();
    const bool int8Cache = kvElement.isInteger(8);
    const bool compressed = int8Cache || kvElement.isBF16();
    const int64_t kvBytes = int8Cache ? 1 : kvElement.isBF16() ? 2 : 4;
    // An append reads K and V from their past parts (then the new ones).
    if (append) {
      key = append->key.getInputs()[0];
      value = append->value.getInputs()[0];
    }
    Value q = buffer(query), k = buffer(key), v = buffer(value);
    Value mask = maskTensor ? buffer(maskTensor) : Value();
    auto metadata = [&](Value m) {
      return memref::ExtractStridedMetadataOp::create(b, loc, m);
    };
    auto qMeta = metadata(q), kMeta = metadata(k), vMeta = metadata(v);

    // The result: a fresh buffer of [B, H, Sq, Dv].
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    SmallVector<Value> dynamic;
    // An int8 cache row holds the values, then 4 bytes of scale.
    Value valueDim = int8Cache ? idx(resultType.getDimSize(3))
                               : Value(vMeta.getSizes()[3]);
    Value resultSizes[4] = {qMeta.getSizes()[0], qMeta.getSizes()[1],
                            qMeta.getSizes()[2], valueDim};
    for (int64_t d = 0; d < 4; ++d)
      if (resultType.isDynamicDim(d))
        dynamic.push_back(resultSizes[d]);
    auto outType =
        MemRefType::get(resultType.getShape(), resultType.getElementType());
    Value out = memref::AllocOp::create(b, loc, outType, dynamic);
    auto oMeta = metadata(out);

    double scale = scaleAttr ? scaleAttr->convertToDouble()
                             : 1.0 / std::sqrt(double(qType.getDimSize(3)));
    float scale32 = static_cast<float>(scale);
    uint32_t scaleBits;
    std::memcpy(&scaleBits, &scale32, sizeof(scaleBits));
    // The bf16 precision policy's mark (strata-bf16-contractions): the
    // products may read bf16-rounded operands.
    auto computeType = op->getAttrOfType<TypeAttr>(ir::kComputeTypeAttr);
    const bool bf16Products = computeType && computeType.getValue().isBF16();
    int64_t flags = (causal ? STRATA_ATTN_FLAG_CAUSAL : 0) |
                    (window ? STRATA_ATTN_FLAG_WINDOW : 0) |
                    (maskHidden ? STRATA_ATTN_FLAG_MASK_HIDDEN : 0) |
                    (bf16Products ? STRATA_ATTN_FLAG_BF16_PRODUCTS : 0);

    // An append's keys: past and new rows.
    Value kNew, vNew;
    memref::ExtractStridedMetadataOp kNewMeta, vNewMeta;
    Value keys = kMeta.getSizes()[2];
    if (append) {
      kNew = buffer(append->key.getInputs()[1]);
      vNew = buffer(append->value.getInputs()[1]);
      kNewMeta = metadata(kNew);
      vNewMeta = metadata(vNew);
      keys = arith::AddIOp::create(b, loc, keys, kNewMeta.getSizes()[2]);
    }

    SmallVector<std::pair<int64_t, Value>> fields = {
        {STRATA_ATTN_FLAGS, idx(flags)},
        {STRATA_ATTN_BATCH, qMeta.getSizes()[0]},
        {STRATA_ATTN_HEADS, idx(qType.getDimSize(1))},
        {STRATA_ATTN_KV_HEADS, idx(kType.getDimSize(1))},
        {STRATA_ATTN_SQ, qMeta.getSizes()[2]},
        // A ring's or a paged cache's rows are not its keys: SK bounds the
        // lengths.
        {STRATA_ATTN_SK, ring    ? idx(ring->context)
                         : paged ? idx(paged->capacity)
                                 : keys},
        {STRATA_ATTN_HEAD_DIM, qMeta.getSizes()[3]},
        {STRATA_ATTN_VALUE_DIM, valueDim},
        {STRATA_ATTN_SCALE, idx(int64_t(scaleBits))},
        {STRATA_ATTN_WINDOW, idx(window.value_or(0))},
        {STRATA_ATTN_SINKS, idx(sinks.value_or(0))},
    };
    if (rows) {
      // Row b reads batch slots[b] of the caches, its first lengths[b] keys.
      // Contiguous (identity layout): the kernel reads them as arrays.
      auto address = [&](Value tensor) {
        return readOnlyContiguousAddress(b, loc, tensor, calls_);
      };
      // A paged row names its blocks in the table instead.
      fields.push_back(
          {STRATA_ATTN_KV_SLOTS, paged ? idx(0) : address(rows->first)});
      fields.push_back(
          {STRATA_ATTN_KV_SLOT_COUNT, paged ? idx(0) : kMeta.getSizes()[0]});
      fields.push_back({STRATA_ATTN_KV_LENGTHS, address(rows->second)});
      if (paged) {
        auto table = cast<RankedTensorType>(rows->first.getType());
        fields.push_back({STRATA_ATTN_BLOCK_TABLE, address(rows->first)});
        fields.push_back(
            {STRATA_ATTN_BLOCKS_PER_ROW, idx(table.getDimSize(1))});
        fields.push_back({STRATA_ATTN_BLOCK_SIZE, idx(paged->blockSize)});
        fields.push_back({STRATA_ATTN_BLOCK_COUNT, kMeta.getSizes()[0]});
      }
    } else {
      // Row b reads K/V batch b, all SK keys.
      fields.push_back({STRATA_ATTN_KV_SLOTS, idx(0)});
      fields.push_back({STRATA_ATTN_KV_SLOT_COUNT, idx(0)});
      fields.push_back({STRATA_ATTN_KV_LENGTHS, idx(0)});
    }
    auto operand = [&](int64_t slot, Value memref,
                       memref::ExtractStridedMetadataOp meta,
                       bool broadcastUnitDims, int64_t bytes = 4) {
      fields.push_back({slot, elementAddress(b, loc, memref, meta, bytes)});
      for (int64_t d = 0; d < 4; ++d) {
        Value stride = meta.getStrides()[d];
        if (broadcastUnitDims) {
          // A size-1 mask dim broadcasts: stride 0.
          Value unit = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             meta.getSizes()[d], idx(1));
          stride = arith::SelectOp::create(b, loc, unit, idx(0), stride);
        }
        fields.push_back({slot + 1 + d, stride});
      }
    };
    operand(STRATA_ATTN_Q, q, qMeta, false);
    operand(STRATA_ATTN_K, k, kMeta, false, kvBytes);
    operand(STRATA_ATTN_V, v, vMeta, false, kvBytes);
    operand(STRATA_ATTN_O, out, oMeta, false);
    if (mask) {
      operand(STRATA_ATTN_MASK, mask, metadata(mask), true);
    } else {
      for (int64_t i = 0; i < 5; ++i)
        fields.push_back({STRATA_ATTN_MASK + i, idx(0)});
    }
    // The grown caches, written by the kernel: [B, HKV, past + new, D].
    SmallVector<std::pair<ConcatOp, Value>> presents;
    if (append) {
      // Dynamic extents from the past part (|meta|), the keys from both.
      auto present = [&](ConcatOp concat,
                         memref::ExtractStridedMetadataOp meta, int64_t slot) {
        auto type = cast<RankedTensorType>(concat.getType());
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < 4; ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(d == 2 ? keys : meta.getSizes()[d]);
        Value buffer = memref::AllocOp::create(
            b, loc, MemRefType::get(type.getShape(), type.getElementType()),
            sizes);
        operand(slot, buffer, metadata(buffer), false);
        presents.push_back({concat, buffer});
      };
      operand(STRATA_ATTN_K_NEW, kNew, kNewMeta, false);
      operand(STRATA_ATTN_V_NEW, vNew, vNewMeta, false);
      present(append->key, kMeta, STRATA_ATTN_K_PRESENT);
      present(append->value, vMeta, STRATA_ATTN_V_PRESENT);
      fields.push_back({STRATA_ATTN_PAST, kMeta.getSizes()[2]});
      callAppend_.emit(b, loc, func, fields);
    } else if (compressed || ring || global || paged) {
      fields.push_back(
          {STRATA_ATTN_KV_DTYPE,
           idx(int8Cache            ? STRATA_DTYPE_I8
               : kvElement.isBF16() ? STRATA_DTYPE_BF16
                                    : STRATA_DTYPE_F32)});
      // Each int8 row's scale sits after its values: the row's address plus
      // its value count, with the cache's strides counted in floats (a row
      // of D + 4 bytes, D a multiple of 4, keeps every scale aligned).
      auto scales = [&](int64_t slot, Value memref,
                        memref::ExtractStridedMetadataOp meta, Value dim) {
        if (!int8Cache) {
          for (int64_t i = 0; i < 4; ++i)
            fields.push_back({slot + i, idx(0)});
          return;
        }
        Value values = elementAddress(b, loc, memref, meta, 1);
        fields.push_back(
            {slot, arith::AddIOp::create(b, loc, values, dim).getResult()});
        for (int64_t d = 0; d < 3; ++d)
          fields.push_back(
              {slot + 1 + d,
               arith::DivUIOp::create(b, loc, meta.getStrides()[d], idx(4))
                   .getResult()});
      };
      scales(STRATA_ATTN_K_SCALES, k, kMeta, qMeta.getSizes()[3]);
      scales(STRATA_ATTN_V_SCALES, v, vMeta, valueDim);
      if (paged) {
        callPaged_.emit(b, loc, func, fields);
      } else if (ring) {
        fields.push_back({STRATA_ATTN_RING_KEPT, idx(ring->kept)});
        fields.push_back({STRATA_ATTN_RING_ROWS, kMeta.getSizes()[2]});
        callRing_.emit(b, loc, func, fields);
      } else if (global) {
        fields.push_back({STRATA_ATTN_GLOBAL_TOPK, idx(global->topk)});
        fields.push_back({STRATA_ATTN_GLOBAL_BLOCK, idx(global->block)});
        callGlobal_.emit(b, loc, func, fields);
      } else {
        callKv_.emit(b, loc, func, fields);
      }
    } else {
      call_.emit(b, loc, func, fields);
    }
    auto result = bufferization::ToTensorOp::create(b, loc, resultType, out);
    result.setRestrict(true);
    result.setWritable(true);
    op->getResult(0).replaceAllUsesWith(result.getResult());
    // The concatenations' other readers (the present outputs) read the
    // kernel's copies.
    for (auto [concat, buffer] : presents) {
      auto grown =
          bufferization::ToTensorOp::create(b, loc, concat.getType(), buffer);
      grown.setRestrict(true);
      grown.setWritable(true);
      concat.getResult().replaceUsesWithIf(
          grown.getResult(),
          [&](OpOperand &use) { return use.getOwner() != op; });
    }
    op->erase();
    for (auto [concat, buffer] : presents)
      concat.erase();
    ++calls_;
  }

  SymbolTable symbols_;
  RuntimeCall call_, callKv_, callRing_, callGlobal_, callAppend_, callPaged_;
  int64_t calls_ = 0;
};

} // namespace

#define GEN_PASS_DEF_ATTENTIONTORUNTIMEPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct AttentionToRuntimePass
    : impl::AttentionToRuntimePassBase<AttentionToRuntimePass> {
  AttentionToRuntimePass() = default;
  explicit AttentionToRuntimePass(CpuCodegenStats *stats) : stats(stats) {}
  void runOnOperation() override {
    unsigned calls = Rewriter(getOperation()).run();
    numCalls += calls;
    if (stats)
      stats->attentionCalls += calls;
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createAttentionToRuntimePass(CpuCodegenStats *stats) {
  return std::make_unique<AttentionToRuntimePass>(stats);
}

} // namespace strata::codegen::cpu
