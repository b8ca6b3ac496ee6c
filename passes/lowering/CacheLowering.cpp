//===- CacheLowering.cpp - KV cache ops to tensor and linalg ---------------===//
// SPDX-License-Identifier: Apache-2.0
// strata.cache_write becomes a loop of tensor.insert_slice over the rows
// (each row lands at its own slot and position, so no single slice does);
// the cache is a writable state argument, so bufferization writes it in
// place. strata.cache_attention, when the runtime kernel does not take it
// (codegen/cpu/AttentionToRuntime.cpp reads the slots in place), becomes
// a gather of the rows' slots and a plain attention with a mask of the keys
// each row sees: a copy of the cache rows, acceptable for the generic path.
// A compressed cache's rows are encoded before the write and decoded after
// the gather (CacheEncoding.cpp). A ring cache is written token by token
// (a write may wrap around the ring) and its mask derives from each row's
// length which position every ring row holds. A paged cache is written
// token by token too (a write may cross a block's end), and read through
// a gather of each row's blocks in table order.

#include "passes/lowering/GlobalBlocks.h"
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/RuntimeChecks.h"

#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace strata::ir;

namespace strata::lowering {
namespace {

Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The row of a ring cache holding position |position| (an index):
/// position itself below |kept|, then cycling through [kept, rows).
Value ringRow(OpBuilder &b, Location loc, Value position, int64_t kept,
              int64_t rows) {
  Value keptValue = indexConstant(b, loc, kept);
  Value cycled = arith::AddIOp::create(
      b, loc, keptValue,
      arith::RemUIOp::create(
          b, loc, arith::SubIOp::create(b, loc, position, keptValue),
          indexConstant(b, loc, rows - kept)));
  Value inPlace = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        position, keptValue);
  return arith::SelectOp::create(b, loc, inPlace, position, cycled);
}

FailureOr<Value> lowerCacheWrite(CacheWriteOp op, CacheWriteOp::Adaptor adaptor,
                                 ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value cache = adaptor.getCache(), update = adaptor.getUpdate();
  Value slots = adaptor.getSlots(), positions = adaptor.getPositions();
  RankedTensorType cacheType = typeOf(cache);
  // A compressed cache stores the rows encoded (bf16, or int8 with scales).
  update = encodeCacheRows(rewriter, loc, update, cacheType.getElementType());
  Value count = dimValue(rewriter, loc, update, 2);
  std::optional<int64_t> ringKept = op.getRingKept();
  std::optional<int64_t> blockSize = op.getBlockSize();
  const int64_t rows = cacheType.getDimSize(2);
  checkCacheRows(rewriter, loc, slots, positions, count,
                 cacheType.getDimSize(0), op.getPositionCapacity());
  if (ringKept)
    checkRingWrite(rewriter, loc, count, rows - *ringKept);
  Value zero = indexConstant(rewriter, loc, 0);
  Value one = indexConstant(rewriter, loc, 1);
  Value batch = dimValue(rewriter, loc, update, 0);
  // A ring or a paged cache takes one token at a time (its slice may wrap
  // or cross a block's end), a linear cache a row's tokens at once.
  const bool byToken = ringKept || blockSize;
  OpFoldResult tokens =
      byToken ? rewriter.getIndexAttr(1) : getAsOpFoldResult(count);
  SmallVector<OpFoldResult> sizes = {
      rewriter.getIndexAttr(1), rewriter.getIndexAttr(cacheType.getDimSize(1)),
      tokens, rewriter.getIndexAttr(cacheType.getDimSize(3))};
  SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
  auto insert = [&](OpBuilder &b, Location l, Value into, Value row,
                    OpFoldResult token, Value slot, Value position) -> Value {
    SmallVector<OpFoldResult> from = {row, b.getIndexAttr(0), token,
                                      b.getIndexAttr(0)};
    SmallVector<OpFoldResult> to = {slot, b.getIndexAttr(0), position,
                                    b.getIndexAttr(0)};
    Value part =
        tensor::ExtractSliceOp::create(b, l, update, from, sizes, strides);
    return tensor::InsertSliceOp::create(b, l, part, into, to, sizes, strides);
  };
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, batch, one, ValueRange{cache},
      [&](OpBuilder &b, Location l, Value row, ValueRange carried) {
        auto element = [&](Value tensor) -> Value {
          Value v = tensor::ExtractOp::create(b, l, tensor, ValueRange{row});
          return arith::IndexCastOp::create(b, l, b.getIndexType(), v);
        };
        // A paged row's blocks come token by token from its table row.
        Value slot = blockSize ? Value() : element(slots);
        Value position = element(positions);
        if (!byToken) {
          scf::YieldOp::create(
              b, l,
              insert(b, l, carried[0], row, b.getIndexAttr(0), slot, position));
          return;
        }
        auto tokenLoop = scf::ForOp::create(
            b, l, zero, count, one, ValueRange{carried[0]},
            [&](OpBuilder &nb, Location nl, Value token, ValueRange into) {
              Value p = arith::AddIOp::create(nb, nl, position, token);
              if (!blockSize) {
                Value at = ringRow(nb, nl, p, *ringKept, rows);
                scf::YieldOp::create(
                    nb, nl, insert(nb, nl, into[0], row, token, slot, at));
                return;
              }
              // Block slots[row, p / size], row p mod size of it.
              Value size = indexConstant(nb, nl, *blockSize);
              Value entry = tensor::ExtractOp::create(
                  nb, nl, slots,
                  ValueRange{row, arith::DivUIOp::create(nb, nl, p, size)});
              Value block = arith::IndexCastOp::create(
                  nb, nl, nb.getIndexType(), entry);
              Value at = arith::RemUIOp::create(nb, nl, p, size);
              scf::YieldOp::create(
                  nb, nl, insert(nb, nl, into[0], row, token, block, at));
            });
        scf::YieldOp::create(b, l, tokenLoop.getResult(0));
      });
  return loop.getResult(0);
}

/// Each row's blocks of a paged cache laid end to end, [B, H, N * size, D]:
/// element [b, h, j, e] from block slots[b, j / size], row j mod size.
Value gatherBlocks(OpBuilder &b, Location loc, Value cache, Value table,
                   Value query, int64_t size) {
  RankedTensorType t = typeOf(cache);
  RankedTensorType q = typeOf(query);
  auto type = RankedTensorType::get(
      {q.getDimSize(0), t.getDimSize(1), typeOf(table).getDimSize(1) * size,
       t.getDimSize(3)},
      t.getElementType());
  SmallVector<Value> dynamic;
  if (q.isDynamicDim(0))
    dynamic.push_back(dimValue(b, loc, query, 0));
  Value init = emptyTensor(b, loc, type, dynamic);
  SmallVector<AffineMap> maps = {AffineMap::getMultiDimIdentityMap(4, b.getContext())};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, ValueRange{}, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location l, ValueRange) {
        Value row = linalg::IndexOp::create(nb, l, 0);
        Value head = linalg::IndexOp::create(nb, l, 1);
        Value j = linalg::IndexOp::create(nb, l, 2);
        Value e = linalg::IndexOp::create(nb, l, 3);
        Value blockSize = indexConstant(nb, l, size);
        Value entry = tensor::ExtractOp::create(
            nb, l, table,
            ValueRange{row, arith::DivUIOp::create(nb, l, j, blockSize)});
        Value block =
            arith::IndexCastOp::create(nb, l, nb.getIndexType(), entry);
        Value value = tensor::ExtractOp::create(
            nb, l, cache,
            ValueRange{block, head, arith::RemUIOp::create(nb, l, j, blockSize),
                       e});
        linalg::YieldOp::create(nb, l, value);
      });
  return generic.getResult(0);
}

/// The keys row b sees at query t: j <= t + lengths[b] - T, narrowed by a
/// window (and widened by its sinks) as strata.attention defines them;
/// over a ring's |context| rows, key j is the position that row holds.
/// With global blocks (|ranks| from globalBlockRanks), a query also sees
/// the keys of the blocks it chose: the mask is then per head.
Value visibleKeysMask(OpBuilder &b, Location loc, CacheAttentionOp op,
                      Value query, Value lengths, int64_t context,
                      std::optional<GlobalBlocks> global, Value ranks) {
  MLIRContext *ctx = b.getContext();
  RankedTensorType q = typeOf(query);
  auto maskType = RankedTensorType::get(
      {q.getDimSize(0), global ? q.getDimSize(1) : 1, q.getDimSize(2),
       context},
      b.getI1Type());
  SmallVector<Value> dynamic;
  if (q.isDynamicDim(0))
    dynamic.push_back(dimValue(b, loc, query, 0));
  if (q.isDynamicDim(2))
    dynamic.push_back(dimValue(b, loc, query, 2));
  Value init = emptyTensor(b, loc, maskType, dynamic);
  Value queries = dimValue(b, loc, query, 2);
  std::optional<int64_t> window = op.getWindow();
  int64_t sinks = op.getSinks().value_or(0);
  auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {d(0)}, ctx),
                                 AffineMap::getMultiDimIdentityMap(4, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{maskType}, ValueRange{lengths}, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nb, Location l, ValueRange args) {
        Value length =
            arith::IndexCastOp::create(nb, l, nb.getIndexType(), args[0]);
        Value t = linalg::IndexOp::create(nb, l, 2);
        Value j = linalg::IndexOp::create(nb, l, 3);
        Value diagonal = arith::SubIOp::create(
            nb, l, arith::AddIOp::create(nb, l, t, length), queries);
        Value held = Value();  // a ring row that holds no position yet
        if (std::optional<int64_t> kept = op.getRingKept()) {
          // Row j >= kept holds the latest position p <= length - 1 with
          // p = j (mod ring), p >= kept: p = last - ((last - j) mod ring).
          Value ring = indexConstant(nb, l, context - *kept);
          Value last =
              arith::SubIOp::create(nb, l, length, indexConstant(nb, l, 1));
          Value back = arith::RemSIOp::create(
              nb, l, arith::SubIOp::create(nb, l, last, j), ring);
          back = arith::RemSIOp::create(
              nb, l, arith::AddIOp::create(nb, l, back, ring), ring);
          Value cycled = arith::SubIOp::create(nb, l, last, back);
          Value keptValue = indexConstant(nb, l, *kept);
          Value inPlace = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::slt, j, keptValue);
          held = arith::OrIOp::create(
              nb, l, inPlace,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, cycled,
                                    keptValue));
          j = arith::SelectOp::create(nb, l, inPlace, j, cycled);
        }
        Value visible = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                              j, diagonal);
        if (held)
          visible = arith::AndIOp::create(nb, l, visible, held);
        if (window)
          visible = arith::AndIOp::create(
              nb, l, visible,
              isKeptByWindow(nb, l, j, diagonal, *window, sinks, global,
                             ranks, linalg::IndexOp::create(nb, l, 0),
                             linalg::IndexOp::create(nb, l, 1), t));
        linalg::YieldOp::create(nb, l, visible);
      });
  return generic.getResult(0);
}

FailureOr<Value> lowerCacheAttention(CacheAttentionOp op,
                                     CacheAttentionOp::Adaptor adaptor,
                                     ConversionPatternRewriter &rewriter) {
  Location loc = op.getLoc();
  Value query = adaptor.getQuery(), slots = adaptor.getSlots(),
        lengths = adaptor.getLengths();
  RankedTensorType cacheType = typeOf(adaptor.getKeyCache());
  std::optional<int64_t> blockSize = op.getBlockSize();
  // The keys each row's view holds: a ring's rows, a paged row's blocks
  // laid end to end, else the cache's context.
  int64_t context =
      blockSize ? op.getPositionCapacity() : cacheType.getDimSize(2);
  Value queries = dimValue(rewriter, loc, query, 2);
  std::optional<int64_t> ringKept = op.getRingKept();
  checkCacheLengths(rewriter, loc, slots, lengths, queries,
                    cacheType.getDimSize(0), op.getPositionCapacity());
  if (ringKept)
    checkRingWrite(rewriter, loc, queries,
                   context - *ringKept - *op.getWindow() + 1);
  // Each row's slot, all of its context; the mask hides what it has not
  // written.
  auto gathered = [&](Value cache) -> Value {
    RankedTensorType t = typeOf(cache);
    if (blockSize)
      return gatherBlocks(rewriter, loc, cache, slots, query, *blockSize);
    auto type = RankedTensorType::get({typeOf(query).getDimSize(0),
                                       t.getDimSize(1), t.getDimSize(2),
                                       t.getDimSize(3)},
                                      t.getElementType());
    return GatherOp::create(rewriter, loc, type, cache, slots,
                            rewriter.getI64IntegerAttr(0));
  };
  // A compressed cache's rows decode to fp32 after the gather.
  Value keys = decodeCacheRows(rewriter, loc, gathered(adaptor.getKeyCache()));
  Value values =
      decodeCacheRows(rewriter, loc, gathered(adaptor.getValueCache()));
  std::optional<GlobalBlocks> global;
  Value ranks;
  if (std::optional<int64_t> topk = op.getGlobalTopk()) {
    std::optional<int64_t> block = op.getGlobalBlock(),
                           window = op.getWindow(), sinks = op.getSinks();
    global = GlobalBlocks{*topk, *block, *window, sinks.value_or(0)};
    // Query t of row b sees up to key t + lengths[b] - T.
    ranks = globalBlockRanks(
        rewriter, loc, query, keys, *global,
        [&](OpBuilder &b, Location l, Value row, Value t) -> Value {
          Value length = arith::IndexCastOp::create(
              b, l, b.getIndexType(),
              tensor::ExtractOp::create(b, l, lengths, ValueRange{row}));
          return arith::SubIOp::create(
              b, l, arith::AddIOp::create(b, l, t, length), queries);
        });
  }
  Value mask = visibleKeysMask(rewriter, loc, op, query, lengths, context,
                               global, ranks);
  auto attention = AttentionOp::create(
      rewriter, loc, op.getType(), query, keys, values, mask,
      op.getScaleAttr(), /*causal=*/nullptr, /*window=*/nullptr,
      /*sinks=*/nullptr, /*mask_hidden=*/nullptr, /*global_topk=*/nullptr,
      /*global_block=*/nullptr);
  return attention.getResult();
}

} // namespace

void populateCacheLoweringPatterns(RewritePatternSet &patterns) {
  patterns.add<OneResultLowering<CacheWriteOp, lowerCacheWrite>,
               OneResultLowering<CacheAttentionOp, lowerCacheAttention>>(
      patterns.getContext());
}

} // namespace strata::lowering
