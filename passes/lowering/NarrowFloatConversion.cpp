//===- Float8Conversion.cpp - fp8 <-> f32 scalars in integer arithmetic ---===//
// SPDX-License-Identifier: Apache-2.0
// ONNX Cast between f32 and the four fp8 types, built from integer bit
// operations: arith.extf/truncf on fp8 have no CPU lowering (LLVM has no
// fp8 type; its fp8 values are i8).

#include "passes/lowering/LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace strata::lowering {
namespace {

// How a format spells NaN, infinity and -0:
//  - Fn: no infinity; S.1111.111 is NaN (E4M3FN);
//  - Fnuz: no infinity, no -0; 0x80 is the only NaN (E4M3FNUZ, E5M2FNUZ);
//  - Ieee: S.11111.00 is infinity, other all-ones exponents NaN (E5M2).
enum class Float8Kind { Fn, Fnuz, Ieee };

struct Float8Format {
  int64_t mantissaBits;
  int64_t bias;
  int64_t maxCode; // the largest finite magnitude's code
  Float8Kind kind;
};

std::optional<Float8Format> formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return Float8Format{3, 7, 0x7E, Float8Kind::Fn};
  if (isa<Float8E4M3FNUZType>(t))
    return Float8Format{3, 8, 0x7F, Float8Kind::Fnuz};
  if (isa<Float8E5M2Type>(t))
    return Float8Format{2, 15, 0x7B, Float8Kind::Ieee};
  if (isa<Float8E5M2FNUZType>(t))
    return Float8Format{2, 16, 0x7F, Float8Kind::Fnuz};
  return std::nullopt;
}

// Small builders over i32 scalars.
struct I32 {
  OpBuilder &b;
  Location l;
  Value c(int64_t v) {
    return arith::ConstantIntOp::create(b, l, b.getI32Type(), v);
  }
  Value f(float v) { return arith::ConstantFloatOp::create(
                         b, l, b.getF32Type(), APFloat(v)); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, l, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, l, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, l, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, l, x, y); }
  Value shl(Value x, int64_t n) { return arith::ShLIOp::create(b, l, x, c(n)); }
  Value shr(Value x, int64_t n) {
    return arith::ShRUIOp::create(b, l, x, c(n));
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, l, p, x, y);
  }
  Value eq(Value x, int64_t v) { return cmp(arith::CmpIPredicate::eq, x, c(v)); }
  Value sel(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, l, cond, x, y);
  }
};

} // namespace

bool isFloat8(Type t) { return formatOf(t).has_value(); }

// code -> sign | exponent | mantissa; a normal number's f32 bits are the
// fields moved into place with the bias changed, a subnormal one is
// mantissa * 2^(1 - bias - mantissaBits) (exact in f32).
Value extendFloat8(OpBuilder &b, Location l, Value x) {
  Float8Format f = *formatOf(x.getType());
  I32 i{b, l};
  int64_t mb = f.mantissaBits, expMask = (1 << (7 - mb)) - 1;
  Value u = arith::ExtUIOp::create(
      b, l, b.getI32Type(), arith::BitcastOp::create(b, l, b.getI8Type(), x));
  Value sign = i.shr(u, 7);
  Value e = i.band(i.shr(u, mb), i.c(expMask));
  Value m = i.band(u, i.c((1 << mb) - 1));
  Value normal = arith::BitcastOp::create(
      b, l, b.getF32Type(),
      i.bor(i.shl(sign, 31), i.bor(i.shl(i.add(e, i.c(127 - f.bias)), 23),
                                   i.shl(m, 23 - mb))));
  Value tiny = arith::MulFOp::create(
      b, l, arith::UIToFPOp::create(b, l, b.getF32Type(), m),
      i.f(std::ldexp(1.0f, 1 - f.bias - mb)));
  Value negative = i.eq(sign, 1);
  tiny = i.sel(negative, arith::NegFOp::create(b, l, tiny), tiny);
  Value v = i.sel(i.eq(e, 0), tiny, normal);
  Value nan = i.f(std::numeric_limits<float>::quiet_NaN());
  switch (f.kind) {
  case Float8Kind::Fn:
    return i.sel(i.eq(i.band(u, i.c(0x7F)), 0x7F), nan, v);
  case Float8Kind::Fnuz:
    return i.sel(i.eq(u, 0x80), nan, v);
  case Float8Kind::Ieee: {
    float inf = std::numeric_limits<float>::infinity();
    Value special = i.sel(i.eq(m, 0), i.sel(negative, i.f(-inf), i.f(inf)),
                          nan);
    return i.sel(i.eq(e, expMask), special, v);
  }
  }
  llvm_unreachable("covered switch");
}

// f32 -> code, rounding to nearest even (ONNX Cast, saturate=1): out of
// range values and infinities become the largest finite value of their
// sign, NaN the format's NaN, -0 is 0 where the format has no -0.
Value truncateToFloat8(OpBuilder &b, Location l, Value x, Type to) {
  Float8Format f = *formatOf(to);
  I32 i{b, l};
  int64_t mb = f.mantissaBits, drop = 23 - mb;
  Value bits = arith::BitcastOp::create(b, l, b.getI32Type(), x);
  Value sign = i.shl(i.shr(bits, 31), 7);
  Value a = i.band(bits, i.c(0x7FFFFFFF));
  // Normal results: round the f32 bits at the kept mantissa's last bit
  // (adding half minus one, plus the kept lsb, rounds ties to even), then
  // rebias the exponent. A carry out of the mantissa bumps the exponent.
  Value rounded =
      i.add(a, i.add(i.c((1 << (drop - 1)) - 1), i.band(i.shr(a, drop), i.c(1))));
  Value normal = i.sub(i.shr(rounded, drop), i.c((127 - f.bias) << mb));
  // Subnormal results: scale so that one code step is 1.0 and round to an
  // integer with the f32 adder (x + 2^23 - 2^23 rounds ties to even); the
  // code 2^mb this may reach is the smallest normal number, as it should.
  Value magnitude = arith::BitcastOp::create(b, l, b.getF32Type(), a);
  Value scaled = arith::MulFOp::create(
      b, l, magnitude, i.f(std::ldexp(1.0f, f.bias - 1 + mb)));
  Value twoPow23 = i.f(8388608.0f);
  Value integral = arith::SubFOp::create(
      b, l, arith::AddFOp::create(b, l, scaled, twoPow23), twoPow23);
  Value tiny = arith::FPToUIOp::create(b, l, b.getI32Type(), integral);
  Value isTiny = i.cmp(arith::CmpIPredicate::ult, a, i.c((128 - f.bias) << 23));
  Value code = i.sel(isTiny, tiny, normal);
  // Saturate: infinities and anything rounding past the largest finite
  // value (the unselected branches may be garbage for such inputs).
  Value overflow = i.cmp(arith::CmpIPredicate::ugt, a, i.c(0x7F7FFFFF));
  overflow = arith::OrIOp::create(
      b, l, overflow, i.cmp(arith::CmpIPredicate::sgt, code, i.c(f.maxCode)));
  code = i.sel(overflow, i.c(f.maxCode), code);
  Value result = i.bor(sign, code);
  Value isNaN = i.cmp(arith::CmpIPredicate::ugt, a, i.c(0x7F800000));
  if (f.kind == Float8Kind::Fnuz) {
    result = i.sel(i.eq(code, 0), i.c(0), result);
    result = i.sel(isNaN, i.c(0x80), result);
  } else {
    result = i.sel(isNaN, i.bor(sign, i.c(0x7F)), result);
  }
  Value byte = arith::TruncIOp::create(b, l, b.getI8Type(), result);
  return arith::BitcastOp::create(b, l, to, byte);
}

} // namespace strata::lowering
