//===- MatmulToRuntime.cpp - Contractions -> the runtime's matmul ---------===//
// SPDX-License-Identifier: Apache-2.0
// Runs after bufferization. The matmul-class generics produced by
// strata-lower-to-linalg (matmul, linear, attention's products) are
// recognized by their indexing maps and body, not by their origin, so any
// contraction with one reduction dim qualifies. Why a runtime kernel and not
// generated tiles: docs/design/cpu-matmul.md.

#include "codegen/cpu/Passes.h"

#include "codegen/abi/strata_kernel_abi.h"
#include "codegen/cpu/RuntimeCall.h"
#include "compiler/dispatch/DispatchRegions.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cstring>

using namespace mlir;

namespace strata::codegen::cpu {
namespace {

constexpr llvm::StringLiteral kMatmulImport = "strata_rt_matmul_f32";
constexpr llvm::StringLiteral kMatmulI8Import = "strata_rt_matmul_f32_i8";
constexpr llvm::StringLiteral kMatmulI4Import = "strata_rt_matmul_f32_i4";
constexpr llvm::StringLiteral kMatmulW8A8Import = "strata_rt_matmul_f32_w8a8";
constexpr llvm::StringLiteral kMatmulBf16Import = "strata_rt_matmul_f32_bf16";

/// Which kernel a quantized contraction calls.
// kInt8: weight-only int8, fp32 activations; kInt8Blocks: int8 activations
// per block (both strata_rt_matmul_f32_i8, in two layouts).
enum class QuantizedForm { kInt8, kInt8Blocks, kInt4, kW8A8 };

struct MatmulLoweringStats {
  unsigned calls = 0;         // contractions replaced
  unsigned int8Calls = 0;     // of which read a weight-only int8 weight
  unsigned int4Calls = 0;     // of which read an int4 weight
  unsigned w8a8Calls = 0;     // of which quantize their activations too
  unsigned bf16Calls = 0;     // of which read a bf16 weight
  unsigned packedCalls = 0;   // of which read a pre-packed weight
  unsigned packedWeights = 0; // distinct packed weights
};

// Where one loop dim appears in an operand: the memref dim it indexes, or
// -1 if the operand does not depend on it.
struct OperandDims {
  SmallVector<int64_t> memrefDimOf; // per loop dim
};

// A recognized contraction: loop dims of each role.
struct Contraction {
  int64_t m = -1, n = -1, k = -1;
  SmallVector<int64_t> batch;
  OperandDims a, b, c;
  // Weight-only quantized B (strata.quantized_linear): B holds integers,
  // |scales| one fp32 value per |group| k rows of each column.
  Value scales;
  int64_t group = 0;
};

bool isF32Memref(Type t) {
  auto m = dyn_cast<MemRefType>(t);
  return m && m.getElementType().isF32();
}

// The product of a multiply-accumulate body over |arguments| block
// arguments (dispatch::accumulatedProduct).
arith::MulFOp accumulatedProduct(linalg::GenericOp op, unsigned arguments) {
  if (op.getRegion().front().getNumArguments() != arguments)
    return nullptr;
  return dispatch::accumulatedProduct(op);
}

// yield(acc + a * b) with acc the output block argument, in either order.
bool isMultiplyAccumulate(linalg::GenericOp op) {
  arith::MulFOp mul = accumulatedProduct(op, 3);
  if (!mul)
    return false;
  Block &body = op.getRegion().front();
  Value x = body.getArgument(0), y = body.getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == y) ||
         (mul.getLhs() == y && mul.getRhs() == x);
}

// Maps each loop dim to the operand dim it indexes; fails on any index
// expression other than a dim or the constant 0 (a broadcast size-1 dim).
std::optional<OperandDims> operandDims(AffineMap map, unsigned loops) {
  OperandDims dims;
  dims.memrefDimOf.assign(loops, -1);
  for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
      if (dims.memrefDimOf[dim.getPosition()] != -1)
        return std::nullopt; // diagonal access
      dims.memrefDimOf[dim.getPosition()] = static_cast<int64_t>(pos);
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(expr);
    if (!constant || constant.getValue() != 0)
      return std::nullopt;
  }
  return dims;
}

// yield(acc + x * (sitofp(q) * s)), products in either order: the body
// strata.quantized_linear lowers to (arguments x, q, s, acc).
bool isQuantizedMultiplyAccumulate(linalg::GenericOp op) {
  arith::MulFOp mul = accumulatedProduct(op, 4);
  if (!mul)
    return false;
  Block &body = op.getRegion().front();
  Value x = body.getArgument(0);
  Value scaled = mul.getLhs() == x   ? mul.getRhs()
                 : mul.getRhs() == x ? mul.getLhs()
                                     : Value();
  auto dequant = scaled ? scaled.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!dequant)
    return false;
  auto isWeight = [&](Value v) {
    auto cast = v.getDefiningOp<arith::SIToFPOp>();
    return cast && cast.getIn() == body.getArgument(1);
  };
  Value s = body.getArgument(2);
  return (isWeight(dequant.getLhs()) && dequant.getRhs() == s) ||
         (isWeight(dequant.getRhs()) && dequant.getLhs() == s);
}

std::optional<Contraction> classify(linalg::GenericOp op, AffineMap aMap,
                                    AffineMap bMap, AffineMap cMap);

std::optional<Contraction> matchContraction(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumResults() != 0)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (op.getNumDpsInputs() == 3) {
    // x [.., k] f32, q [k, n] i8, scales [k floordiv G, n] f32.
    auto q = dyn_cast<MemRefType>(op.getDpsInputs()[1].getType());
    if (!isF32Memref(op.getDpsInputs()[0].getType()) || !q ||
        !q.getElementType().isInteger(8) ||
        !isF32Memref(op.getDpsInputs()[2].getType()) ||
        !isF32Memref(op.getDpsInits()[0].getType()) ||
        !isQuantizedMultiplyAccumulate(op))
      return std::nullopt;
    std::optional<Contraction> c = classify(op, maps[0], maps[1], maps[3]);
    if (!c || c->n < 0 || maps[2].getNumResults() != 2)
      return std::nullopt;
    auto group = dyn_cast<AffineBinaryOpExpr>(maps[2].getResult(0));
    auto kExpr = group ? dyn_cast<AffineDimExpr>(group.getLHS()) : nullptr;
    auto size = group ? dyn_cast<AffineConstantExpr>(group.getRHS()) : nullptr;
    auto nExpr = dyn_cast<AffineDimExpr>(maps[2].getResult(1));
    if (!group || group.getKind() != AffineExprKind::FloorDiv || !kExpr ||
        kExpr.getPosition() != c->k || !size || size.getValue() < 1 ||
        !nExpr || nExpr.getPosition() != c->n)
      return std::nullopt;
    c->scales = op.getDpsInputs()[2];
    c->group = size.getValue();
    return c;
  }
  if (op.getNumDpsInputs() != 2)
    return std::nullopt;
  for (Value v : op->getOperands())
    if (!isF32Memref(v.getType()))
      return std::nullopt;
  if (!isMultiplyAccumulate(op))
    return std::nullopt;
  return classify(op, maps[0], maps[1], maps[2]);
}

// The roles of the loop dims of a contraction with operand maps A, B, C.
std::optional<Contraction> classify(linalg::GenericOp op, AffineMap aMap,
                                    AffineMap bMap, AffineMap cMap) {
  unsigned loops = op.getNumLoops();
  auto a = operandDims(aMap, loops), b = operandDims(bMap, loops),
       c = operandDims(cMap, loops);
  if (!a || !b || !c)
    return std::nullopt;
  Contraction result;
  result.a = *a;
  result.b = *b;
  result.c = *c;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  // M / N: among the dims only A (only B) depends on, the one innermost in
  // C; the others become batch dims with a zero stride in the other operand.
  int64_t mPos = -1, nPos = -1;
  for (unsigned d = 0; d < loops; ++d) {
    bool inA = result.a.memrefDimOf[d] >= 0, inB = result.b.memrefDimOf[d] >= 0;
    int64_t inC = result.c.memrefDimOf[d];
    if (iterators[d] == utils::IteratorType::reduction) {
      if (result.k >= 0 || inC >= 0 || !inA || !inB)
        return std::nullopt;
      result.k = d;
      continue;
    }
    if (inC < 0)
      return std::nullopt;
    if (inA && !inB && inC > mPos) {
      mPos = inC;
      result.m = d;
    } else if (inB && !inA && inC > nPos) {
      nPos = inC;
      result.n = d;
    }
  }
  if (result.k < 0)
    return std::nullopt;
  for (unsigned d = 0; d < loops; ++d)
    if (int64_t(d) != result.k && int64_t(d) != result.m &&
        int64_t(d) != result.n)
      result.batch.push_back(d);
  if (result.batch.size() > STRATA_MM_MAX_BATCH)
    return std::nullopt;
  return result;
}

// The weight global a B operand reads, if B is a memref.get_global of a
// constant dense_resource global (the importer's weights), or a collapsed
// view of one (a convolution's [M, C, K...] weight read as [M, C * K]: the
// same elements in the same order).
memref::GlobalOp weightGlobal(Value b, SymbolTable &symbols) {
  if (auto view = b.getDefiningOp<memref::CollapseShapeOp>())
    b = view.getSrc();
  auto get = b.getDefiningOp<memref::GetGlobalOp>();
  if (!get)
    return nullptr;
  auto global = symbols.lookup<memref::GlobalOp>(get.getName());
  if (!global || !global.getConstant())
    return nullptr;
  auto init = dyn_cast_if_present<DenseResourceElementsAttr>(
      global.getInitialValue().value_or(Attribute()));
  if (!init || !init.getRawHandle().getBlob())
    return nullptr;
  return global;
}

// The params-block fields of one contraction call that do not depend on
// B's form: flags, extents, A and C, batch dims (B's batch strides 0).
class ContractionFields {
public:
  ContractionFields(OpBuilder &b, Location loc, const Contraction &c, Value a,
                    Value out)
      : b_(b), loc_(loc), c_(c),
        aMeta_(memref::ExtractStridedMetadataOp::create(b, loc, a)),
        cMeta_(memref::ExtractStridedMetadataOp::create(b, loc, out)),
        a_(a), out_(out) {}

  Value idx(int64_t v) {
    return arith::ConstantIndexOp::create(b_, loc_, v).getResult();
  }
  // Extent of loop dim d, from C (parallel dims) or A (k).
  Value extent(int64_t d) {
    if (d < 0)
      return idx(1);
    if (c_.c.memrefDimOf[d] >= 0)
      return cMeta_.getSizes()[c_.c.memrefDimOf[d]];
    return aMeta_.getSizes()[c_.a.memrefDimOf[d]];
  }
  Value stride(memref::ExtractStridedMetadataOp meta, const OperandDims &dims,
               int64_t d) {
    if (d < 0 || dims.memrefDimOf[d] < 0)
      return idx(0);
    return meta.getStrides()[dims.memrefDimOf[d]];
  }

  // |bias|: a 1-D memref of N floats (unit stride) that C starts from.
  SmallVector<std::pair<int64_t, Value>> common(bool accumulate,
                                                Value bias = {}) {
    Value biasAddress = idx(0);
    if (bias) {
      auto meta = memref::ExtractStridedMetadataOp::create(b_, loc_, bias);
      biasAddress = f32ElementAddress(b_, loc_, bias, meta);
    }
    SmallVector<std::pair<int64_t, Value>> fields = {
        {STRATA_MM_FLAGS, idx(accumulate ? STRATA_MM_FLAG_ACCUMULATE : 0)},
        {STRATA_MM_BIAS, biasAddress},
        {STRATA_MM_M, extent(c_.m)},
        {STRATA_MM_N, extent(c_.n)},
        {STRATA_MM_K, extent(c_.k)},
        {STRATA_MM_BATCH_RANK, idx(int64_t(c_.batch.size()))},
        {STRATA_MM_A_ADDR, f32ElementAddress(b_, loc_, a_, aMeta_)},
        {STRATA_MM_A_STRIDE_M, stride(aMeta_, c_.a, c_.m)},
        {STRATA_MM_A_STRIDE_K, stride(aMeta_, c_.a, c_.k)},
        {STRATA_MM_C_ADDR, f32ElementAddress(b_, loc_, out_, cMeta_)},
        {STRATA_MM_C_STRIDE_M, stride(cMeta_, c_.c, c_.m)},
        {STRATA_MM_C_STRIDE_N, stride(cMeta_, c_.c, c_.n)},
        // The params buffer is reused: every field a kernel reads is set.
        {STRATA_MM_A_SCALES, idx(0)},
        {STRATA_MM_B_ZERO_POINTS, idx(0)},
    };
    for (int64_t i = 0; i < STRATA_MM_MAX_BATCH; ++i) {
      int64_t d = i < int64_t(c_.batch.size()) ? c_.batch[i] : -1;
      fields.push_back({STRATA_MM_BATCH_SIZES + i, extent(d)});
      fields.push_back({STRATA_MM_A_BATCH_STRIDES + i, stride(aMeta_, c_.a, d)});
      fields.push_back({STRATA_MM_C_BATCH_STRIDES + i, stride(cMeta_, c_.c, d)});
    }
    return fields;
  }

private:
  OpBuilder &b_;
  Location loc_;
  const Contraction &c_;
  memref::ExtractStridedMetadataOp aMeta_, cMeta_;
  Value a_, out_;
};

class Rewriter {
public:
  explicit Rewriter(ModuleOp module)
      : module_(module), symbols_(module),
        call_(module, symbols_, kMatmulImport, STRATA_MM_PARAM_COUNT),
        callI8_(module, symbols_, kMatmulI8Import, STRATA_MM_PARAM_COUNT),
        callI4_(module, symbols_, kMatmulI4Import, STRATA_MM_PARAM_COUNT),
        callW8A8_(module, symbols_, kMatmulW8A8Import, STRATA_MM_PARAM_COUNT),
        callBf16_(module, symbols_, kMatmulBf16Import, STRATA_MM_PARAM_COUNT) {}

  LogicalResult run(MatmulLoweringStats &stats) {
    SmallVector<linalg::GenericOp> generics;
    module_.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics) {
      std::optional<Contraction> c = matchContraction(op);
      if (!c)
        continue;
      bool packed = false, bf16 = false;
      if (c->scales) {
        bool rewritten = false;
        QuantizedForm form = QuantizedForm::kInt8;
        if (failed(rewriteQuantized(op, *c, rewritten, form)))
          return failure();
        stats.calls += rewritten;
        (form == QuantizedForm::kInt4   ? stats.int4Calls
         : form == QuantizedForm::kW8A8 ? stats.w8a8Calls
                                        : stats.int8Calls) += rewritten;
        stats.packedCalls += rewritten;
        continue;
      }
      if (failed(rewrite(op, *c, packed, bf16)))
        return failure();
      ++stats.calls;
      stats.packedCalls += packed;
      stats.bf16Calls += bf16;
    }
    stats.packedWeights = packed_.size() + packedQuantized_.size();
    eraseUnusedWeights();
    return success();
  }

private:
  // The packed copy of |global|'s K x N weight read with strides (sk, sn):
  // fp32 panels, or bf16 pairs (rounded to nearest even) with |bf16|.
  FailureOr<memref::GlobalOp> packedWeight(memref::GlobalOp global, int64_t k,
                                           int64_t n, int64_t sk, int64_t sn,
                                           MemRefType type, bool bf16) {
    std::string key = (global.getSymName() + "/" + std::to_string(k) + "x" +
                       std::to_string(n) + "/" + std::to_string(sk) + "," +
                       std::to_string(sn) + (bf16 ? "/bf16" : ""))
                          .str();
    if (auto it = packed_.find(key); it != packed_.end())
      return it->second;
    auto init = cast<DenseResourceElementsAttr>(*global.getInitialValue());
    ArrayRef<char> raw = init.getRawHandle().getBlob()->getData();
    int64_t elements = type.getNumElements();
    if (raw.size() != size_t(elements) * sizeof(float))
      return global.emitError() << "weight '" << global.getSymName()
                                << "' has " << raw.size()
                                << " bytes, expected " << elements * 4;
    // Weights are blobs aligned for their element type (the importer's
    // invariant); an unaligned one is copied first.
    const float *source = reinterpret_cast<const float *>(raw.data());
    std::vector<float> aligned;
    if (reinterpret_cast<uintptr_t>(raw.data()) % alignof(float) != 0) {
      aligned.resize(elements);
      std::memcpy(aligned.data(), raw.data(), raw.size());
      source = aligned.data();
    }
    // Packed straight into the new blob.
    OpBuilder b(global);
    uint64_t packedCount;
    AsmResourceBlob blob;
    Type element = b.getF32Type();
    if (bf16) {
      packedCount = strata_packed_b_bf16_pairs_elements(k, n);
      blob = HeapAsmResourceBlob::allocate(packedCount * sizeof(uint16_t),
                                           64, /*dataIsMutable=*/true);
      strata_pack_b_bf16_pairs(
          source, k, n, sk, sn,
          reinterpret_cast<uint16_t *>(blob.getMutableData().data()));
      element = b.getBF16Type();
    } else {
      packedCount = strata_packed_b_f32_elements(k, n);
      blob = HeapAsmResourceBlob::allocate(packedCount * sizeof(float),
                                           alignof(float),
                                           /*dataIsMutable=*/true);
      strata_pack_b_f32(
          source, k, n, sk, sn,
          reinterpret_cast<float *>(blob.getMutableData().data()));
    }
    auto packedType = RankedTensorType::get({int64_t(packedCount)}, element);
    std::string name =
        (global.getSymName() + (bf16 ? "_packed_bf16" : "_packed")).str();
    auto attr =
        DenseResourceElementsAttr::get(packedType, name, std::move(blob));
    auto memrefType = MemRefType::get({int64_t(packedCount)}, element);
    auto packedGlobal = memref::GlobalOp::create(
        b, global.getLoc(), name, b.getStringAttr("private"), memrefType, attr,
        /*constant=*/true, /*alignment=*/b.getI64IntegerAttr(64));
    symbols_.insert(packedGlobal); // renames on a clash
    packed_[key] = packedGlobal;
    return packedGlobal;
  }

  // A blob global named after |like| holding |bytes| bytes of |type|.
  memref::GlobalOp newGlobal(memref::GlobalOp like, llvm::StringRef suffix,
                             Type element, int64_t count,
                             AsmResourceBlob blob) {
    OpBuilder b(like);
    std::string name = (like.getSymName() + suffix).str();
    auto attr = DenseResourceElementsAttr::get(
        RankedTensorType::get({count}, element), name, std::move(blob));
    auto global = memref::GlobalOp::create(
        b, like.getLoc(), name, b.getStringAttr("private"),
        MemRefType::get({count}, element), attr, /*constant=*/true,
        /*alignment=*/b.getI64IntegerAttr(64));
    symbols_.insert(global); // renames on a clash
    return global;
  }

  // A quantized weight as its kernel reads it: the packed values, the
  // padded scales (null when they are inside the packed values) and the
  // layout.
  struct PackedQuantized {
    memref::GlobalOp values, scales;
    int64_t layout;
  };

  // The packed copy of int8 weight |global| (K x N, strides sk, sn) for
  // |form|'s kernel and its scales ([groups, N] → [groups, ldS], zero past
  // N). int4 weights whose scales are all binary16 values (those of
  // strata-quantize-weights, MatMulNBits' fp16 scales) carry them inside
  // their panels as fp16: one stream, 10% fewer bytes.
  FailureOr<PackedQuantized>
  packedQuantizedWeight(memref::GlobalOp q, memref::GlobalOp scales,
                        int64_t k, int64_t n, int64_t sk, int64_t sn,
                        int64_t group, QuantizedForm form) {
    const bool int4 = form == QuantizedForm::kInt4;
    const bool quads =
        form == QuantizedForm::kW8A8 || form == QuantizedForm::kInt8Blocks;
    const char *suffix = int4 ? "_panels_i4" : quads ? "_quads" : "_panels";
    std::string key = (q.getSymName() + "/" + scales.getSymName() + "/" +
                       std::to_string(k) + "x" + std::to_string(n) + "/" +
                       std::to_string(sk) + "," + std::to_string(sn) + "/" +
                       suffix)
                          .str();
    if (auto it = packedQuantized_.find(key); it != packedQuantized_.end())
      return it->second;
    ArrayRef<char> raw = cast<DenseResourceElementsAttr>(*q.getInitialValue())
                             .getRawHandle()
                             .getBlob()
                             ->getData();
    ArrayRef<char> rawScales =
        cast<DenseResourceElementsAttr>(*scales.getInitialValue())
            .getRawHandle()
            .getBlob()
            ->getData();
    const int64_t groups = (k + group - 1) / group;
    if (raw.size() != size_t(k * n) ||
        rawScales.size() != size_t(groups * n) * sizeof(float))
      return q.emitError() << "weight '" << q.getSymName()
                           << "' or its scales do not hold a " << k << "x"
                           << n << " int8 weight in groups of " << group;
    const int64_t panels = (n + STRATA_PACK_PANEL_WIDTH - 1) /
                           STRATA_PACK_PANEL_WIDTH;
    const int64_t ldS = panels * STRATA_PACK_PANEL_WIDTH;
    const auto *values = reinterpret_cast<const int8_t *>(raw.data());
    if (int4)
      for (size_t i = 0; i < raw.size(); ++i)
        if (values[i] < -8 || values[i] > 7)
          return q.emitError() << "weight '" << q.getSymName()
                               << "' is marked 4-bit but holds " << int(values[i]);
    std::vector<float> scaleValues(size_t(groups * n));
    std::memcpy(scaleValues.data(), rawScales.data(), rawScales.size());
    const bool f16Blocks =
        int4 && llvm::all_of(scaleValues, [](float s) {
          return strata_f16_to_f32(strata_f32_to_f16(s)) == s;
        });
    const int64_t packedBytes =
        f16Blocks ? int64_t(strata_packed_b_i4_f16_blocks_bytes(k, n, group))
        : int4    ? int64_t(strata_packed_b_i4_bytes(k, n, group))
        : quads   ? int64_t(strata_packed_b_i8_quads_bytes(k, n))
                  : panels * k * STRATA_PACK_PANEL_WIDTH;
    AsmResourceBlob packed =
        HeapAsmResourceBlob::allocate(size_t(packedBytes), 64, true);
    OpBuilder b(q);
    if (f16Blocks) {
      strata_pack_b_i4_f16_blocks(
          values, k, n, sk, sn, group, scaleValues.data(),
          reinterpret_cast<uint8_t *>(packed.getMutableData().data()));
      PackedQuantized result{newGlobal(q, "_blocks_i4", b.getI8Type(),
                                       packedBytes, std::move(packed)),
                             nullptr, STRATA_MM_LAYOUT_PANEL_I4_F16_BLOCKS};
      packedQuantized_[key] = result;
      return result;
    }
    if (int4)
      strata_pack_b_i4(values, k, n, sk, sn, group,
                       reinterpret_cast<uint8_t *>(
                           packed.getMutableData().data()));
    else if (quads)
      strata_pack_b_i8_quads(values, k, n, sk, sn,
                             reinterpret_cast<int8_t *>(
                                 packed.getMutableData().data()));
    else
      strata_pack_b_i8(values, k, n, sk, sn,
                       reinterpret_cast<int8_t *>(
                           packed.getMutableData().data()));
    // One padded copy of the scales, whichever layouts read the weight.
    memref::GlobalOp &paddedScales = paddedScales_[scales.getSymName()];
    if (!paddedScales) {
      AsmResourceBlob padded = HeapAsmResourceBlob::allocate(
          size_t(groups * ldS) * sizeof(float), 64, true);
      auto *dst = reinterpret_cast<float *>(padded.getMutableData().data());
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t j = 0; j < ldS; ++j)
          dst[g * ldS + j] = j < n ? scaleValues[g * n + j] : 0.0f;
      paddedScales = newGlobal(scales, "_padded", b.getF32Type(),
                               groups * ldS, std::move(padded));
    }
    PackedQuantized result{
        newGlobal(q, suffix, b.getI8Type(), packedBytes, std::move(packed)),
        paddedScales,
        int4    ? STRATA_MM_LAYOUT_PANEL_I4_GROUPS
        : quads ? STRATA_MM_LAYOUT_PANEL_I8_QUADS
                : STRATA_MM_LAYOUT_PANEL_I8};
    packedQuantized_[key] = result;
    return result;
  }

  // A quantized contraction whose weight and scales are constant globals →
  // strata_rt_matmul_f32_i8 (weight-only int8), strata_rt_matmul_f32_i4
  // (4-bit values in groups of a multiple of 4 rows) or
  // strata_rt_matmul_f32_w8a8 (int8 activations, one scale per column);
  // any other form stays loops.
  LogicalResult rewriteQuantized(linalg::GenericOp op, const Contraction &c,
                                 bool &rewritten, QuantizedForm &form) {
    auto bits = op->getAttrOfType<IntegerAttr>(ir::kWeightBitsAttr);
    auto activationBits =
        op->getAttrOfType<IntegerAttr>(ir::kActivationBitsAttr);
    const int64_t weightBits = bits ? bits.getInt() : 8;
    form = QuantizedForm::kInt8;
    if (weightBits == 4 && c.group % 4 == 0)
      form = QuantizedForm::kInt4;
    auto func = op->getParentOfType<func::FuncOp>();
    Value a = op.getDpsInputs()[0], q = op.getDpsInputs()[1],
          out = op.getDpsInits()[0];
    memref::GlobalOp qGlobal = weightGlobal(q, symbols_);
    memref::GlobalOp sGlobal = weightGlobal(c.scales, symbols_);
    auto qType = cast<MemRefType>(q.getType());
    bool bOnlyKN = llvm::all_of(c.batch, [&](int64_t d) {
      return c.b.memrefDimOf[d] < 0;
    });
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!func || !qGlobal || !sGlobal || !bOnlyKN || !qType.hasStaticShape() ||
        !qType.getLayout().isIdentity() ||
        failed(qType.getStridesAndOffset(strides, offset)) || offset != 0 ||
        !cast<MemRefType>(c.scales.getType()).getLayout().isIdentity())
      return success();
    int64_t kDim = c.b.memrefDimOf[c.k], nDim = c.b.memrefDimOf[c.n];
    // Past the kernel's K its int32 sums could overflow: weight-only then.
    auto activationBlock =
        op->getAttrOfType<IntegerAttr>(ir::kActivationBlockAttr);
    const bool int8Activations =
        activationBits && activationBits.getInt() == 8 && weightBits == 8;
    if (int8Activations && !activationBlock &&
        c.group == qType.getDimSize(kDim) &&
        qType.getDimSize(kDim) <= STRATA_MM_W8A8_MAX_K)
      form = QuantizedForm::kW8A8;
    // Per block: the _i8 import's integer products, whose runtime block
    // (strata_i8_activation_group) must not exceed the op's; other groups
    // keep fp32 activations, more exact than asked.
    if (int8Activations && activationBlock && c.group % 16 == 0 &&
        strata_i8_activation_group(c.group) <= activationBlock.getInt())
      form = QuantizedForm::kInt8Blocks;
    auto packed = packedQuantizedWeight(
        qGlobal, sGlobal, qType.getDimSize(kDim), qType.getDimSize(nDim),
        strides[kDim], strides[nDim], c.group, form);
    if (failed(packed))
      return failure();

    Location loc = op.getLoc();
    OpBuilder builder(op);
    auto globalAddress = [&](memref::GlobalOp g) -> Value {
      Value view = memref::GetGlobalOp::create(builder, loc, g.getType(),
                                               g.getSymName());
      return memref::ExtractAlignedPointerAsIndexOp::create(builder, loc,
                                                            view);
    };
    ContractionFields f(builder, loc, c, a, out);
    const StartOfC start = subsumeStartOfC(op, c, out);
    SmallVector<std::pair<int64_t, Value>> fields =
        f.common(start.accumulate, start.bias);
    fields.append({
        {STRATA_MM_B_LAYOUT, f.idx(packed->layout)},
        {STRATA_MM_B_ADDR, globalAddress(packed->values)},
        {STRATA_MM_GROUP_SIZE, f.idx(c.group)},
        // Every call of the function shares one params buffer: 0, not
        // another call's scales, when they are inside B.
        {STRATA_MM_B_SCALES,
         packed->scales ? globalAddress(packed->scales) : f.idx(0)},
    });
    RuntimeCall &import = form == QuantizedForm::kInt4   ? callI4_
                          : form == QuantizedForm::kW8A8 ? callW8A8_
                                                         : callI8_;
    func::CallOp call = import.emit(builder, loc, func, fields);
    if (Attribute region = op->getAttr(dispatch::kDispatchAttr))
      call->setAttr(dispatch::kDispatchAttr, region);
    op.erase();
    rewritten = true;
    return success();
  }

  // What C starts from, written just before |op| and absorbed by its call:
  // a zero fill (erased; the call overwrites C) or a bias broadcast over
  // C's rows (erased; the call takes the bias). Else C is added to.
  struct StartOfC {
    bool accumulate = true;
    Value bias;
  };
  static StartOfC subsumeStartOfC(linalg::GenericOp op, const Contraction &c,
                                  Value out) {
    Operation *init = lastWriteBefore(op);
    if (!init)
      return {};
    if (auto fill = dyn_cast<linalg::FillOp>(init)) {
      if (fill.getDpsInits()[0] != out ||
          !matchPattern(fill.getDpsInputs()[0], m_AnyZeroFloat()))
        return {};
      fill.erase();
      return {false, {}};
    }
    auto generic = dyn_cast<linalg::GenericOp>(init);
    if (Value bias = generic ? biasBroadcast(generic, c, out) : Value()) {
      generic.erase();
      return {false, bias};
    }
    return {};
  }

  // The first op before |op| that is not pure (what may write C), or null.
  static Operation *lastWriteBefore(Operation *op) {
    for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode())
      if (!isPure(prev))
        return prev;
    return nullptr;
  }

  // The bias of |generic| if it is the bias broadcast strata-lower-to-linalg
  // writes to init a linear layer's output: out[..., n] = bias[n] over every
  // row, n C's innermost dim and the contraction's N, bias a unit-stride
  // 1-D f32 memref. Else null.
  static Value biasBroadcast(linalg::GenericOp generic, const Contraction &c,
                             Value out) {
    auto outType = dyn_cast<MemRefType>(out.getType());
    if (!outType || c.n < 0 || outType.getRank() < 1 ||
        c.c.memrefDimOf[c.n] != outType.getRank() - 1 ||
        generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
        generic.getDpsInits()[0] != out || generic.getNumReductionLoops() != 0)
      return {};
    Value bias = generic.getDpsInputs()[0];
    auto biasType = dyn_cast<MemRefType>(bias.getType());
    SmallVector<int64_t> strides;
    int64_t offset;
    if (!biasType || biasType.getRank() != 1 ||
        !biasType.getElementType().isF32() ||
        failed(biasType.getStridesAndOffset(strides, offset)) ||
        strides[0] != 1)
      return {};
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    const unsigned rank = outType.getRank();
    if (!maps[1].isIdentity() || maps[0].getNumDims() != rank ||
        maps[0].getNumResults() != 1 ||
        maps[0].getResult(0) !=
            getAffineDimExpr(rank - 1, generic.getContext()))
      return {};
    // The body only passes the bias element on.
    Block &body = generic.getRegion().front();
    auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
    if (body.getOperations().size() != 1 || !yield ||
        yield.getNumOperands() != 1 || yield.getOperand(0) != body.getArgument(0))
      return {};
    return bias;
  }

  // |bf16|: the contraction, marked strata.compute_type = bf16 over a
  // packable weight, now calls the bf16 kernel.
  LogicalResult rewrite(linalg::GenericOp op, const Contraction &c,
                        bool &packedB, bool &bf16) {
    auto func = op->getParentOfType<func::FuncOp>();
    if (!func)
      return success();
    Location loc = op.getLoc();
    Value a = op.getDpsInputs()[0], bIn = op.getDpsInputs()[1],
          out = op.getDpsInits()[0];
    OpBuilder builder(op);
    ContractionFields f(builder, loc, c, a, out);

    // A weight B whose only dims are k and n is packed at compile time.
    Value bAddress;
    std::optional<memref::ExtractStridedMetadataOp> bMeta;
    auto bType = cast<MemRefType>(bIn.getType());
    memref::GlobalOp weight = weightGlobal(bIn, symbols_);
    bool bOnlyKN = c.n >= 0 && llvm::all_of(c.batch, [&](int64_t d) {
      return c.b.memrefDimOf[d] < 0;
    });
    if (weight && bOnlyKN && bType.hasStaticShape() &&
        bType.getLayout().isIdentity()) {
      SmallVector<int64_t> strides;
      int64_t offset;
      if (succeeded(bType.getStridesAndOffset(strides, offset)) &&
          offset == 0) {
        int64_t kDim = c.b.memrefDimOf[c.k], nDim = c.b.memrefDimOf[c.n];
        auto computeType = op->getAttrOfType<TypeAttr>(ir::kComputeTypeAttr);
        bf16 = computeType && computeType.getValue().isBF16();
        FailureOr<memref::GlobalOp> packed =
            packedWeight(weight, bType.getDimSize(kDim),
                         bType.getDimSize(nDim), strides[kDim], strides[nDim],
                         bType, bf16);
        if (failed(packed))
          return failure();
        Value view = memref::GetGlobalOp::create(
            builder, loc, packed->getType(), packed->getSymName());
        bAddress = memref::ExtractAlignedPointerAsIndexOp::create(builder, loc,
                                                                  view);
        packedB = true;
      }
    }
    if (!bAddress) {
      bMeta = memref::ExtractStridedMetadataOp::create(builder, loc, bIn);
      bAddress = f32ElementAddress(builder, loc, bIn, *bMeta);
    }

    // A zero fill or bias broadcast into C just before: the call's.
    const StartOfC start = subsumeStartOfC(op, c, out);
    SmallVector<std::pair<int64_t, Value>> fields =
        f.common(start.accumulate, start.bias);
    fields.push_back({STRATA_MM_B_LAYOUT,
                      f.idx(bf16      ? STRATA_MM_LAYOUT_PANEL_BF16_PAIRS
                            : packedB ? STRATA_MM_LAYOUT_PANEL_F32
                                      : STRATA_MM_LAYOUT_STRIDED)});
    fields.push_back({STRATA_MM_B_ADDR, bAddress});
    if (bMeta) {
      fields.push_back({STRATA_MM_B_STRIDE_K, f.stride(*bMeta, c.b, c.k)});
      fields.push_back({STRATA_MM_B_STRIDE_N, f.stride(*bMeta, c.b, c.n)});
    }
    for (int64_t i = 0; i < STRATA_MM_MAX_BATCH; ++i) {
      int64_t d = i < int64_t(c.batch.size()) ? c.batch[i] : -1;
      fields.push_back({STRATA_MM_B_BATCH_STRIDES + i,
                        bMeta ? f.stride(*bMeta, c.b, d) : f.idx(0)});
    }
    func::CallOp call =
        (bf16 ? callBf16_ : call_).emit(builder, loc, func, fields);
    // The call is the contraction's dispatch region now.
    if (Attribute region = op->getAttr(dispatch::kDispatchAttr))
      call->setAttr(dispatch::kDispatchAttr, region);
    op.erase();
    return success();
  }

  // Weights now read only in packed form leave the image.
  void eraseUnusedWeights() {
    SmallVector<memref::GetGlobalOp> deadGets;
    module_.walk([&](memref::GetGlobalOp get) {
      if (get->use_empty())
        deadGets.push_back(get);
    });
    for (memref::GetGlobalOp get : deadGets)
      get.erase();
    llvm::StringSet<> used;
    module_.walk([&](memref::GetGlobalOp get) { used.insert(get.getName()); });
    SmallVector<memref::GlobalOp> dead;
    for (auto global : module_.getOps<memref::GlobalOp>())
      if (!used.contains(global.getSymName()))
        dead.push_back(global);
    for (memref::GlobalOp global : dead)
      global.erase();
  }

  ModuleOp module_;
  SymbolTable symbols_;
  RuntimeCall call_, callI8_, callI4_, callW8A8_, callBf16_;
  llvm::StringMap<memref::GlobalOp> packed_;
  llvm::StringMap<PackedQuantized> packedQuantized_;
  llvm::StringMap<memref::GlobalOp> paddedScales_;
};

} // namespace

#define GEN_PASS_DEF_MATMULTORUNTIMEPASS
#include "codegen/cpu/Passes.h.inc"

namespace {
struct MatmulToRuntimePass
    : impl::MatmulToRuntimePassBase<MatmulToRuntimePass> {
  MatmulToRuntimePass() = default;
  explicit MatmulToRuntimePass(CpuCodegenStats *stats) : stats(stats) {}
  void runOnOperation() override {
    MatmulLoweringStats counts;
    if (failed(Rewriter(getOperation()).run(counts)))
      return signalPassFailure();
    numCalls += counts.calls;
    numPackedCalls += counts.packedCalls;
    numPackedWeights += counts.packedWeights;
    numInt8Calls += counts.int8Calls;
    numInt4Calls += counts.int4Calls;
    numW8A8Calls += counts.w8a8Calls;
    numBf16Calls += counts.bf16Calls;
    if (stats) {
      stats->bf16MatmulCalls += counts.bf16Calls;
      stats->int8MatmulCalls += counts.int8Calls;
      stats->int4MatmulCalls += counts.int4Calls;
      stats->w8a8MatmulCalls += counts.w8a8Calls;
      stats->matmulCalls += counts.calls;
      stats->packedMatmulCalls += counts.packedCalls;
      stats->packedWeights += counts.packedWeights;
    }
  }
  CpuCodegenStats *stats = nullptr;
};
} // namespace

std::unique_ptr<Pass> createMatmulToRuntimePass(CpuCodegenStats *stats) {
  return std::make_unique<MatmulToRuntimePass>(stats);
}

} // namespace strata::codegen::cpu
