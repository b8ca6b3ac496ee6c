//===- MemoryPlan.cpp - One arena for intermediates -----------------------===//
// SPDX-License-Identifier: Apache-2.0
// Runs after bufferization and freeBuffersEarly, before the matmul and
// attention calls take raw addresses and before kernels are outlined. Sizes
// are bounded by symbolic arithmetic over the index values that compute
// them (compiler/analysis/SymbolicInt.h); a buffer's lifetime is [its
// alloc, its dealloc] in block order.

#include "codegen/cpu/Passes.h"
#include "compiler/analysis/SymbolicInt.h"

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

/// Upper bounds of the index values that size buffers, by the shared
/// symbolic arithmetic (compiler/analysis/SymbolicInt.h): each dynamic
/// input dim is a symbol over [0, its maximum] (inputs may be empty), so
/// differences such as (a + b) - b cancel instead of widening.
class Bounds {
public:
  explicit Bounds(func::FuncOp func) : func_(func) {
    if (auto maxima = func->getAttrOfType<ArrayAttr>(kInputMaximaAttr))
      for (Attribute a : maxima)
        if (auto dims = dyn_cast<DenseI64ArrayAttr>(a))
          maxima_.push_back(SmallVector<int64_t>(dims.asArrayRef()));
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
        symbolic::Sym r = of(sizes[next++]);
        if (!r || r->hi > kLimit)
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
  symbolic::Env env() { return {func_.getContext(), ranges_}; }

  symbolic::Sym of(Value v, int depth = 0) {
    if (auto it = memo_.find(v); it != memo_.end())
      return it->second;
    symbolic::Sym r = depth > 64 ? std::nullopt : compute(v, depth);
    memo_[v] = r;
    return r;
  }

  // Dim |d| of input |arg|: a symbol over [0, its maximum].
  symbolic::Sym inputDim(BlockArgument arg, int64_t d) {
    unsigned index = arg.getArgNumber();
    if (index >= maxima_.size() || d >= int64_t(maxima_[index].size()) ||
        maxima_[index][d] < 0)
      return std::nullopt;
    auto [it, added] = symbols_.try_emplace({index, d}, ranges_.size());
    if (added)
      ranges_.push_back({0, maxima_[index][d]});
    return symbolic::make(getAffineSymbolExpr(it->second, func_.getContext()),
                          0, maxima_[index][d], env());
  }

  symbolic::Sym dimOf(Value source, int64_t d, int depth) {
    auto type = dyn_cast<MemRefType>(source.getType());
    if (!type || d < 0 || d >= type.getRank())
      return std::nullopt;
    if (!type.isDynamicDim(d))
      return symbolic::constant(type.getDimSize(d), env());
    if (auto arg = dyn_cast<BlockArgument>(source))
      return arg.getOwner()->getParentOp() == func_.getOperation()
                 ? inputDim(arg, d)
                 : std::nullopt;
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

  symbolic::Sym compute(Value v, int depth) {
    APInt constant;
    if (matchPattern(v, m_ConstantInt(&constant)))
      return symbolic::constant(constant.getSExtValue(), env());
    Operation *op = v.getDefiningOp();
    if (!op || op->getNumResults() != 1)
      return std::nullopt;
    if (auto dim = dyn_cast<memref::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      return index ? dimOf(dim.getSource(), *index, depth) : std::nullopt;
    }
    SmallVector<symbolic::Sym> operands;
    for (Value operand : op->getOperands())
      operands.push_back(of(operand, depth + 1));
    return symbolic::applyScalar(op, operands, env());
  }

  func::FuncOp func_;
  SmallVector<SmallVector<int64_t>> maxima_;
  llvm::DenseMap<std::pair<unsigned, int64_t>, unsigned> symbols_;
  SmallVector<std::pair<int64_t, int64_t>> ranges_;
  llvm::DenseMap<Value, symbolic::Sym> memo_;
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
