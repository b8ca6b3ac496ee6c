//===- SignalConverters.cpp - ONNX Hann/Hamming/Blackman windows ----------===//
// SPDX-License-Identifier: Apache-2.0
// The window functions as constants: their only input is the (constant)
// size, so the importer evaluates w[n] = sum_j (-1)^j a_j cos(2 pi j n / D)
// with D = size (periodic) or size - 1 (symmetric).

#include "compiler/import/OnnxOpConverters.h"

#include "compiler/import/ConverterUtils.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/StrataOps.h"

#include <onnx/onnx_pb.h>

#include <cmath>

using namespace mlir;
using namespace strata::ir;

namespace strata::import {

LogicalResult convertWindowFunction(ImportContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  std::optional<SmallVector<int64_t>> size = ctx.inputConstInts(0);
  if (!size || size->size() != 1)
    return ctx.error() << "'size' must be a constant scalar";
  const int64_t n = (*size)[0];
  if (n < 0 || n > (int64_t{1} << 24))
    return ctx.error() << "'size' " << n << " is out of range";
  FailureOr<int64_t> periodic = ctx.intAttr("periodic", 1);
  FailureOr<int64_t> dtype = ctx.intAttr("output_datatype", 1);
  if (failed(periodic) || failed(dtype))
    return failure();
  Type element = convertElementType(static_cast<int32_t>(*dtype), ctx.context());
  if (!element || !isa<FloatType, IntegerType>(element) || element.isInteger(1))
    return ctx.error() << "unsupported 'output_datatype' " << *dtype;
  // The cosine terms' coefficients, alternating in sign.
  StringRef op = ctx.node().op_type();
  SmallVector<double> a;
  if (op == "HannWindow")
    a = {0.5, 0.5};
  else if (op == "HammingWindow")
    a = {25.0 / 46.0, 21.0 / 46.0};
  else
    a = {0.42, 0.5, 0.08};
  const double denominator = *periodic ? n : n - 1;
  SmallVector<double> values;
  for (int64_t i = 0; i < n; ++i) {
    double w = 0;
    for (size_t j = 0; j < a.size(); ++j)
      w += (j % 2 ? -1.0 : 1.0) * a[j] *
           std::cos(2.0 * M_PI * static_cast<double>(j) *
                    static_cast<double>(i) / denominator);
    values.push_back(w);
  }
  if (isa<FloatType>(element)) {
    ctx.setOutput(0, ctx.constFloats(element, {n}, values));
    return success();
  }
  // Integer outputs truncate, as the reference's cast.
  SmallVector<APInt> ints;
  for (double v : values)
    ints.push_back(APInt(element.getIntOrFloatBitWidth(),
                         static_cast<int64_t>(v), /*isSigned=*/true,
                         /*implicitTrunc=*/true));
  ctx.setOutput(0, ConstantOp::create(
                       ctx.b(), ctx.loc(),
                       DenseElementsAttr::get(
                           RankedTensorType::get({n}, element), ints)));
  return success();
}

} // namespace strata::import
