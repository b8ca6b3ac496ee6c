//===- MemoryPlan.cpp - One arena for intermediates -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Runs after bufferization and freeBuffersEarly, before the matmul and
// attention calls take raw addresses and before kernels are outlined. Sizes
// are bounded by interval arithmetic over the index values that compute
// them; a buffer's lifetime is [its alloc, its dealloc] in block order.

#include "codegen/cpu/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace strata::codegen::cpu {
namespace {

struct MemoryPlanStats {
  unsigned planned = 0;      // intermediates placed in the arena
  unsigned unplanned = 0;    // left to the runtime's buffer cache
  uint64_t arenaBytes = 0;   // arena size at the maxima (sum over entries)
  uint64_t plannedBytes = 0; // what the planned buffers would take unshared
};

constexpr int64_t kAlignment = 64;
// Bounds above this are treated as unknown (keeps products from overflowing).
constexpr int64_t kLimit = int64_t{1} << 42;

struct Range {
  int64_t lo, hi;
};

class Bounds {
public:
  explicit Bounds(func::FuncOp func) : func_(func) {
    if (auto maxima = func->getAttrOfType<ArrayAttr>(kInputMaximaAttr))
      for (Attribute a : maxima)
        if (auto dims = dyn_cast<DenseI64ArrayAttr>(a))
          maxima_.push_back(SmallVector<int64_t>(dims.asArrayRef()));
  }

  std::optional<Range> of(Value v, int depth = 0) {
    if (auto it = memo_.find(v); it != memo_.end())
      return it->second;
    std::optional<Range> r = depth > 64 ? std::nullopt : compute(v, depth);
    if (r && (r->hi > kLimit || r->lo < -kLimit))
      r = std::nullopt;
    memo_[v] = r;
    return r;
  }

  // Bytes of |type| with dynamic sizes |sizes|, at most.
  std::optional<int64_t> bytes(MemRefType type, ValueRange sizes) {
    unsigned bits = type.getElementTypeBitWidth();
    if (bits == 0)
      return std::nullopt;
    int64_t count = 1;
    unsigned next = 0;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t extent = type.getDimSize(d);
      if (ShapedType::isDynamic(extent)) {
        std::optional<Range> r = of(sizes[next++]);
        if (!r)
          return std::nullopt;
        extent = std::max<int64_t>(r->hi, 0);
      }
      if (extent > 0 && count > kLimit / extent)
        return std::nullopt;
      count *= extent;
    }
    return count * int64_t((bits + 7) / 8);
  }

private:
  std::optional<Range> dimOf(Value source, int64_t d, int depth) {
    auto type = dyn_cast<MemRefType>(source.getType());
    if (!type || d < 0 || d >= type.getRank())
      return std::nullopt;
    if (!type.isDynamicDim(d))
      return Range{type.getDimSize(d), type.getDimSize(d)};
    if (auto arg = dyn_cast<BlockArgument>(source)) {
      if (arg.getOwner()->getParentOp() != func_.getOperation() ||
          arg.getArgNumber() >= maxima_.size() ||
          d >= int64_t(maxima_[arg.getArgNumber()].size()))
        return std::nullopt;
      int64_t max = maxima_[arg.getArgNumber()][d];
      if (max < 0)
        return std::nullopt;
      return Range{0, max};
    }
    if (auto cast = source.getDefiningOp<memref::CastOp>())
      return dimOf(cast.getSource(), d, depth + 1);
    if (auto alloc = source.getDefiningOp<memref::AllocOp>()) {
      unsigned index = 0;
      for (int64_t i = 0; i < d; ++i)
        index += type.isDynamicDim(i);
      return of(alloc.getDynamicSizes()[index], depth + 1);
    }
    return std::nullopt;
  }

  std::optional<Range> compute(Value v, int depth) {
    APInt constant;
    if (matchPattern(v, m_ConstantInt(&constant)))
      return Range{constant.getSExtValue(), constant.getSExtValue()};
    Operation *op = v.getDefiningOp();
    if (!op)
      return std::nullopt;
    auto operand = [&](unsigned i) { return of(op->getOperand(i), depth + 1); };
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      return index ? dimOf(dim.getSource(), *index, depth) : std::nullopt;
    }
    if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
      return operand(0);
    if (isa<arith::SelectOp>(op)) {
      auto a = operand(1), b = operand(2);
      if (!a || !b)
        return std::nullopt;
      return Range{std::min(a->lo, b->lo), std::max(a->hi, b->hi)};
    }
    if (op->getNumOperands() != 2)
      return std::nullopt;
    auto a = operand(0), b = operand(1);
    if (!a || !b)
      return std::nullopt;
    if (isa<arith::AddIOp>(op))
      return Range{a->lo + b->lo, a->hi + b->hi};
    if (isa<arith::SubIOp>(op))
      return Range{a->lo - b->hi, a->hi - b->lo};
    if (isa<arith::MaxSIOp>(op))
      return Range{std::max(a->lo, b->lo), std::max(a->hi, b->hi)};
    if (isa<arith::MinSIOp>(op))
      return Range{std::min(a->lo, b->lo), std::min(a->hi, b->hi)};
    if (a->lo < 0 || b->lo < 0)
      return std::nullopt; // products and quotients of non-negatives only
    if (isa<arith::MulIOp>(op)) {
      if (b->hi > 0 && a->hi > kLimit / b->hi)
        return std::nullopt;
      return Range{a->lo * b->lo, a->hi * b->hi};
    }
    if (b->lo < 1)
      return std::nullopt;
    if (isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp>(op))
      return Range{a->lo / b->hi, a->hi / b->lo};
    if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
      return Range{(a->lo + b->hi - 1) / b->hi, (a->hi + b->lo - 1) / b->lo};
    if (isa<arith::RemSIOp, arith::RemUIOp>(op))
      return Range{0, std::min(a->hi, b->hi - 1)};
    return std::nullopt;
  }

  func::FuncOp func_;
  SmallVector<SmallVector<int64_t>> maxima_;
  llvm::DenseMap<Value, std::optional<Range>> memo_;
};

struct Buffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t start, end, bytes, offset = 0;
};

// Greedy offsets: largest first, each at the lowest offset that does not
// overlap a placed buffer whose lifetime overlaps its own.
int64_t assignOffsets(SmallVector<Buffer> &buffers) {
  SmallVector<Buffer *> order;
  for (Buffer &b : buffers)
    order.push_back(&b);
  llvm::stable_sort(order, [](Buffer *x, Buffer *y) {
    return x->bytes != y->bytes ? x->bytes > y->bytes : x->start < y->start;
  });
  SmallVector<Buffer *> placed;
  int64_t arena = 0;
  for (Buffer *b : order) {
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (Buffer *p : placed)
      if (p->start <= b->end && b->start <= p->end)
        taken.push_back({p->offset, p->offset + p->bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (offset + b->bytes <= lo)
        break;
      offset = std::max(offset, (hi + kAlignment - 1) / kAlignment * kAlignment);
    }
    b->offset = offset;
    arena = std::max(arena, offset + b->bytes);
    placed.push_back(b);
  }
  return arena;
}

void planFunction(func::FuncOp func, MemoryPlanStats &stats) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return;
  Block &body = func.getBody().front();
  Bounds bounds(func);
  llvm::DenseMap<Operation *, int64_t> position;
  int64_t index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  SmallVector<Buffer> buffers;
  for (auto alloc : body.getOps<memref::AllocOp>()) {
    memref::DeallocOp dealloc;
    for (Operation *user : alloc->getUsers())
      if (auto d = dyn_cast<memref::DeallocOp>(user);
          d && d->getBlock() == &body)
        dealloc = d;
    if (!dealloc)
      continue; // a result: the caller owns it
    MemRefType type = alloc.getType();
    std::optional<int64_t> bytes =
        type.getLayout().isIdentity() && !type.getMemorySpace()
            ? bounds.bytes(type, alloc.getDynamicSizes())
            : std::nullopt;
    if (!bytes) {
      ++stats.unplanned;
      continue;
    }
    int64_t rounded = std::max<int64_t>(
        (*bytes + kAlignment - 1) / kAlignment * kAlignment, kAlignment);
    buffers.push_back({alloc, dealloc, position[alloc], position[dealloc],
                       rounded});
  }
  if (buffers.empty())
    return;
  int64_t arenaBytes = assignOffsets(buffers);

  // One arena per run: allocated first, freed before the return.
  OpBuilder b(&body, body.begin());
  Location loc = func.getLoc();
  auto arenaType = MemRefType::get({arenaBytes}, b.getI8Type());
  auto arena = memref::AllocOp::create(b, loc, arenaType,
                                       b.getI64IntegerAttr(kAlignment));
  b.setInsertionPoint(body.getTerminator());
  memref::DeallocOp::create(b, loc, arena);
  for (Buffer &buffer : buffers) {
    b.setInsertionPoint(buffer.alloc);
    Value offset =
        arith::ConstantIndexOp::create(b, buffer.alloc.getLoc(), buffer.offset);
    Value view = memref::ViewOp::create(b, buffer.alloc.getLoc(),
                                        buffer.alloc.getType(), arena, offset,
                                        buffer.alloc.getDynamicSizes());
    buffer.alloc.replaceAllUsesWith(view);
    buffer.dealloc.erase();
    buffer.alloc.erase();
    ++stats.planned;
    stats.plannedBytes += buffer.bytes;
  }
  stats.arenaBytes += arenaBytes;
}

void planModule(ModuleOp module, MemoryPlanStats &stats) {
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isPrivate())
      planFunction(func, stats);
}

} // namespace

#define GEN_PASS_DEF_MEMORYPLANPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct MemoryPlanPass : impl::MemoryPlanPassBase<MemoryPlanPass> {
  MemoryPlanPass() = default;
  explicit MemoryPlanPass(CpuCodegenStats *stats) : stats(stats) {}
  void runOnOperation() override {
    MemoryPlanStats plan;
    planModule(getOperation(), plan);
    numPlanned += plan.planned;
    numUnplanned += plan.unplanned;
    if (stats) {
      stats->plannedBuffers += plan.planned;
      stats->unplannedBuffers += plan.unplanned;
      stats->arenaBytes += plan.arenaBytes;
      stats->plannedBytes += plan.plannedBytes;
    }
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createMemoryPlanPass(CpuCodegenStats *stats) {
  return std::make_unique<MemoryPlanPass>(stats);
}

} // namespace strata::codegen::cpu
