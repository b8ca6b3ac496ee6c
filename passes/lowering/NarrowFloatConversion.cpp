//===- NarrowFloatConversion.cpp - fp8/fp4 <-> f32 in integer arithmetic --===//
// SPDX-License-Identifier: Apache-2.0
// ONNX Cast between f32 and the fp8 and fp4 types, built from integer bit
// operations: arith.extf/truncf on them have no CPU lowering (LLVM has no
// fp8/fp4 types; their values are i8/i4 there).

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
//  - Ieee: S.11111.00 is infinity, other all-ones exponents NaN (E5M2);
//  - Finite: neither NaN nor infinity; ONNX casts NaN to +max (E2M1).
enum class Kind { Fn, Fnuz, Ieee, Finite };

struct Format {
  int64_t bits; // 8 or 4; the sign is the top bit
  int64_t mantissaBits;
  int64_t bias;
  int64_t maxCode; // the largest finite magnitude's code
  Kind kind;
};

std::optional<Format> formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return Format{8, 3, 7, 0x7E, Kind::Fn};
  if (isa<Float8E4M3FNUZType>(t))
    return Format{8, 3, 8, 0x7F, Kind::Fnuz};
  if (isa<Float8E5M2Type>(t))
    return Format{8, 2, 15, 0x7B, Kind::Ieee};
  if (isa<Float8E5M2FNUZType>(t))
    return Format{8, 2, 16, 0x7F, Kind::Fnuz};
  if (isa<Float4E2M1FNType>(t))
    return Format{4, 1, 1, 0x7, Kind::Finite};
  return std::nullopt;
}

// Small builders over i32 scalars.
struct I32 {
  OpBuilder &b;
  Location l;
  Value c(int64_t v) {
    return arith::ConstantIntOp::create(b, l, b.getI32Type(), v);
  }
  Value f(float v) {
    return arith::ConstantFloatOp::create(b, l, b.getF32Type(), APFloat(v));
  }
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

bool isNarrowFloat(Type t) { return formatOf(t).has_value(); }

// code -> sign | exponent | mantissa; a normal number's f32 bits are the
// fields moved into place with the bias changed, a subnormal one is
// mantissa * 2^(1 - bias - mantissaBits) (exact in f32).
Value extendNarrowFloat(OpBuilder &b, Location l, Value x) {
  Format f = *formatOf(x.getType());
  I32 i{b, l};
  int64_t mb = f.mantissaBits, signBit = f.bits - 1;
  int64_t expMask = (1 << (signBit - mb)) - 1;
  Value u = arith::ExtUIOp::create(
      b, l, b.getI32Type(),
      arith::BitcastOp::create(b, l, b.getIntegerType(f.bits), x));
  Value sign = i.shr(u, signBit);
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
  case Kind::Fn:
    return i.sel(i.eq(i.band(u, i.c(0x7F)), 0x7F), nan, v);
  case Kind::Fnuz:
    return i.sel(i.eq(u, 0x80), nan, v);
  case Kind::Ieee: {
    float inf = std::numeric_limits<float>::infinity();
    Value special = i.sel(i.eq(m, 0), i.sel(negative, i.f(-inf), i.f(inf)),
                          nan);
    return i.sel(i.eq(e, expMask), special, v);
  }
  case Kind::Finite:
    return v;
  }
  llvm_unreachable("covered switch");
}

// f32 -> code, rounding to nearest even (ONNX Cast, saturate=1): out of
// range values and infinities become the largest finite value of their
// sign, NaN the format's NaN (+max without one), -0 is 0 where the format
// has no -0.
Value truncateToNarrowFloat(OpBuilder &b, Location l, Value x, Type to) {
  Format f = *formatOf(to);
  I32 i{b, l};
  int64_t mb = f.mantissaBits, drop = 23 - mb, signBit = f.bits - 1;
  Value bits = arith::BitcastOp::create(b, l, b.getI32Type(), x);
  Value sign = i.shl(i.shr(bits, 31), signBit);
  Value a = i.band(bits, i.c(0x7FFFFFFF));
  // Normal results: round the f32 bits at the kept mantissa's last bit
  // (adding half minus one, plus the kept lsb, rounds ties to even), then
  // rebias the exponent. A carry out of the mantissa bumps the exponent.
  Value rounded =
      i.add(a, i.add(i.c((1 << (drop - 1)) - 1), i.band(i.shr(a, drop), i.c(1))));
  Value normal = i.sub(i.shr(rounded, drop), i.c((127 - f.bias) << mb));
  // Subnormal results: scale so that one code step is 1.0 and round to an
  // integer with the f32 adder (x + 2^23 - 2^23 rounds ties to even for
  // 0 <= x < 2^23); the code 2^mb this may reach is the smallest normal
  // number, as it should.
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
  switch (f.kind) {
  case Kind::Fnuz:
    result = i.sel(i.eq(code, 0), i.c(0), result);
    result = i.sel(isNaN, i.c(0x80), result);
    break;
  case Kind::Fn:
  case Kind::Ieee:
    result = i.sel(isNaN, i.bor(sign, i.c(0x7F)), result);
    break;
  case Kind::Finite:
    result = i.sel(isNaN, i.c(f.maxCode), result);
    break;
  }
  Value narrow = arith::TruncIOp::create(b, l, b.getIntegerType(f.bits), result);
  return arith::BitcastOp::create(b, l, to, narrow);
}

// f32 -> int4/uint4: saturate to the type's range, then round to nearest
// even with the f32 adder (|x| <= 15 < 2^22, so x + 1.5 * 2^23 has unit
// ulp); NaN becomes 0.
Value truncateToInt4(OpBuilder &b, Location l, Value x, bool isUnsigned) {
  I32 i{b, l};
  Value isNaN =
      arith::CmpFOp::create(b, l, arith::CmpFPredicate::UNO, x, x);
  Value v = i.sel(isNaN, i.f(0.0f), x);
  v = arith::MinimumFOp::create(b, l, v, i.f(isUnsigned ? 15.0f : 7.0f));
  v = arith::MaximumFOp::create(b, l, v, i.f(isUnsigned ? 0.0f : -8.0f));
  Value magic = i.f(12582912.0f);
  v = arith::SubFOp::create(b, l, arith::AddFOp::create(b, l, v, magic),
                            magic);
  Value wide = arith::FPToSIOp::create(b, l, b.getI32Type(), v);
  return arith::TruncIOp::create(b, l, b.getIntegerType(4), wide);
}

} // namespace strata::lowering
