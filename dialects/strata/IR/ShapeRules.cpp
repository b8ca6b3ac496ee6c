//===- ShapeRules.cpp - Broadcasting and shape inference rules -----------===//
// SPDX-License-Identifier: Apache-2.0
// Implementation of the shared shape helpers; see ShapeRules.h.

#include "dialects/strata/IR/ShapeRules.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using mlir::ShapedType;

namespace strata::ir {

static bool isDynamic(int64_t d) { return ShapedType::isDynamic(d); }

std::optional<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    // Align from the back: missing leading dims behave as 1.
    int64_t a = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t b = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (a == 1) {
      result[i] = b;
    } else if (b == 1) {
      result[i] = a;
    } else if (isDynamic(a)) {
      result[i] = b; // b is dynamic or a static N > 1 that a must equal
    } else if (isDynamic(b) || a == b) {
      result[i] = a;
    } else {
      return std::nullopt;
    }
  }
  return result;
}

bool isCompatibleShape(llvm::ArrayRef<int64_t> expected,
                       llvm::ArrayRef<int64_t> actual) {
  if (expected.size() != actual.size())
    return false;
  for (auto [e, a] : llvm::zip_equal(expected, actual))
    if (!isDynamic(e) && !isDynamic(a) && e != a)
      return false;
  return true;
}

bool isBroadcastableTo(llvm::ArrayRef<int64_t> from,
                       llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[i], t = to[offset + i];
    if (f == 1 || isDynamic(f) || isDynamic(t))
      continue;
    if (f != t)
      return false;
  }
  return true;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

std::optional<llvm::SmallVector<int64_t>>
inferMatmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return std::nullopt;
  // numpy promotes a 1-D lhs to [1, K] and a 1-D rhs to [K, 1], then drops
  // the promoted dim from the result.
  llvm::SmallVector<int64_t> a(lhs), b(rhs);
  bool lhsVector = a.size() == 1, rhsVector = b.size() == 1;
  if (lhsVector)
    a.insert(a.begin(), 1);
  if (rhsVector)
    b.push_back(1);
  int64_t k1 = a[a.size() - 1], k2 = b[b.size() - 2];
  if (!isDynamic(k1) && !isDynamic(k2) && k1 != k2)
    return std::nullopt;
  auto batch = broadcastShapes(llvm::ArrayRef(a).drop_back(2),
                               llvm::ArrayRef(b).drop_back(2));
  if (!batch)
    return std::nullopt;
  llvm::SmallVector<int64_t> result = std::move(*batch);
  if (!lhsVector)
    result.push_back(a[a.size() - 2]);
  if (!rhsVector)
    result.push_back(b[b.size() - 1]);
  return result;
}

llvm::SmallVector<int64_t> inferReduceShape(llvm::ArrayRef<int64_t> shape,
                                            llvm::ArrayRef<int64_t> normalizedAxes,
                                            bool keepDims) {
  llvm::SmallVector<int64_t> result;
  for (auto [i, d] : llvm::enumerate(shape)) {
    bool reduced = llvm::is_contained(normalizedAxes, (int64_t)i);
    if (!reduced)
      result.push_back(d);
    else if (keepDims)
      result.push_back(1);
  }
  return result;
}

int64_t sliceExtent(int64_t dim, int64_t start, int64_t end, int64_t step) {
  // Steps beyond the extent behave like +-dim; this also keeps -step and the
  // rounding below free of overflow for INT64_MIN/INT64_MAX.
  step = std::clamp<int64_t>(step, -std::max<int64_t>(dim, 1),
                             std::max<int64_t>(dim, 1));
  auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0)
      v = v < -dim ? -1 : v + dim; // -1 stays below the range for clamping
    return std::clamp(v, lo, hi);
  };
  if (step > 0) {
    start = clampIndex(start < -dim ? 0 : start, 0, dim);
    end = clampIndex(end < -dim ? 0 : end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = clampIndex(start, -1, dim - 1);
  end = clampIndex(end, -1, dim - 1);
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

int64_t windowExtent(int64_t size, int64_t kernel, int64_t stride,
                     int64_t dilation, int64_t begin, int64_t end, bool ceil) {
  if (mlir::ShapedType::isDynamic(size))
    return mlir::ShapedType::kDynamic;
  const int64_t span = size + begin + end - dilation * (kernel - 1) - 1;
  if (span < 0 || stride < 1)
    return -1;
  int64_t out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil && (out - 1) * stride >= size + begin)
    --out;
  return out;
}

std::optional<int64_t> staticElementCount(llvm::ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (isDynamic(d) || d < 0)
      return std::nullopt;
    if (llvm::MulOverflow(count, d, count))
      return std::nullopt;
  }
  return count;
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (i)
      text += 'x';
    text += isDynamic(d) ? std::string("?") : std::to_string(d);
  }
  return text;
}

} // namespace strata::ir
