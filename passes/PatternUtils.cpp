//===- PatternUtils.cpp - Helpers shared by the fusion patterns -----------===//
// SPDX-License-Identifier: Apache-2.0
// See PatternUtils.h.

#include "passes/PatternUtils.h"

#include "dialects/strata/IR/StrataOps.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata {

std::optional<double> getSplatFloatConstant(Value v) {
  auto constant = v.getDefiningOp<ir::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return std::nullopt;
  return dense.getSplatValue<APFloat>().convertToDouble();
}

bool isFloatConstant(Value v, double expected, double relTol) {
  std::optional<double> value = getSplatFloatConstant(v);
  return value && std::fabs(*value - expected) <= relTol * std::fabs(expected);
}

bool matchEitherOrder(Value a, Value b, bool commutative,
                      llvm::function_ref<bool(Value, Value)> match) {
  return match(a, b) || (commutative && match(b, a));
}

Operation *soleUser(Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

Value matchDivideBySqrt(Value v, Value n, SmallVectorImpl<Operation *> &ops) {
  Operation *user = soleUser(v);
  auto mulBy = [&](Value r) -> Value {
    auto mul = dyn_cast_if_present<MulOp>(soleUser(r));
    if (!mul || !matchEitherOrder(mul.getLhs(), mul.getRhs(), true,
                                  [&](Value a, Value b) {
                                    return a == n && b == r;
                                  }))
      return {};
    ops.push_back(mul);
    return mul.getResult();
  };
  if (auto rsqrt = dyn_cast_if_present<RsqrtOp>(user)) {
    ops.push_back(rsqrt);
    return mulBy(rsqrt.getResult());
  }
  auto sqrt = dyn_cast_if_present<SqrtOp>(user);
  if (!sqrt)
    return {};
  ops.push_back(sqrt);
  Value s = sqrt.getResult();
  Operation *next = soleUser(s);
  if (auto recip = dyn_cast_if_present<ReciprocalOp>(next)) {
    ops.push_back(recip);
    return mulBy(recip.getResult());
  }
  auto div = dyn_cast_if_present<DivOp>(next);
  if (!div || div.getRhs() != s)
    return {};
  ops.push_back(div);
  if (div.getLhs() == n)
    return div.getResult();
  if (isFloatConstant(div.getLhs(), 1.0, 0.0))
    return mulBy(div.getResult());
  return {};
}

} // namespace strata
