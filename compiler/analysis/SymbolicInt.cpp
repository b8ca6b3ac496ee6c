//===- SymbolicInt.cpp - Integers as functions of input dims --------------===//
// SPDX-License-Identifier: Apache-2.0
// Each operation keeps the exact expression when the result is affine in
// the symbols (or a product of them, or a quotient of such products that
// divides exactly), and always an interval; comparisons are decided from
// the expressions' difference or the intervals.

#include "compiler/analysis/SymbolicInt.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>

using namespace mlir;

namespace strata::symbolic {

// Values beyond this are treated as unknown (keeps products of extents
// from overflowing; no real extent comes close).
constexpr int64_t kLimit = int64_t{1} << 42;

namespace {
struct Interval {
  __int128 lo, hi;
};
} // namespace

// The range of |e| over the symbols' ranges; nullopt if unbounded.
static std::optional<Interval> intervalOf(AffineExpr e, const Env &env) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return Interval{c.getValue(), c.getValue()};
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    if (s.getPosition() >= env.ranges.size())
      return std::nullopt;
    auto [lo, hi] = env.ranges[s.getPosition()];
    return Interval{lo, hi};
  }
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  std::optional<Interval> a = intervalOf(bin.getLHS(), env);
  std::optional<Interval> b = intervalOf(bin.getRHS(), env);
  if (!a || !b)
    return std::nullopt;
  Interval r;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    r = {a->lo + b->lo, a->hi + b->hi};
    break;
  case AffineExprKind::Mul: {
    __int128 c[] = {a->lo * b->lo, a->lo * b->hi, a->hi * b->lo, a->hi * b->hi};
    r = {*std::min_element(std::begin(c), std::end(c)),
         *std::max_element(std::begin(c), std::end(c))};
    break;
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
    // Non-negative by a positive divisor: monotone in both.
    if (a->lo < 0 || b->lo < 1)
      return std::nullopt;
    if (e.getKind() == AffineExprKind::FloorDiv)
      r = {a->lo / b->hi, a->hi / b->lo};
    else
      r = {(a->lo + b->hi - 1) / b->hi, (a->hi + b->lo - 1) / b->lo};
    break;
  case AffineExprKind::Mod:
    if (a->lo < 0 || b->lo < 1)
      return std::nullopt;
    r = {0, std::min(a->hi, b->hi - 1)};
    break;
  default:
    return std::nullopt;
  }
  if (r.lo < -kLimit || r.hi > kLimit)
    return std::nullopt;
  return r;
}

// |e| in a canonical form (affine parts flattened to a sum of terms), so
// that (a + b) - b is a and equal values compare equal.
static AffineExpr canonical(AffineExpr e) {
  if (!e)
    return e;
  unsigned symbols = 0;
  e.walk([&](AffineExpr sub) {
    if (auto s = dyn_cast<AffineSymbolExpr>(sub))
      symbols = std::max(symbols, s.getPosition() + 1);
  });
  return simplifyAffineExpr(e, /*numDims=*/0, symbols);
}

Sym make(AffineExpr expr, __int128 lo, __int128 hi, const Env &env) {
  expr = canonical(expr);
  // The whole expression's interval can be tighter than the one built
  // step by step ((a + b) - b).
  if (expr)
    if (std::optional<Interval> r = intervalOf(expr, env)) {
      lo = std::max<__int128>(lo, r->lo);
      hi = std::min<__int128>(hi, r->hi);
    }
  if (expr)
    if (auto c = dyn_cast<AffineConstantExpr>(expr))
      lo = hi = c.getValue();
  // Past int64 the generated code's arithmetic wraps: then the value may
  // be anything, which is what nothing known means. Within int64 but past
  // kLimit (a Slice end of INT64_MAX, an extent read from data before its
  // clamp) only the interval is kept, so expressions never overflow.
  if (lo < INT64_MIN || hi > INT64_MAX || lo > hi)
    return std::nullopt;
  bool small = lo >= -kLimit && hi <= kLimit;
  return SymbolicInt{small ? expr : AffineExpr(), int64_t(lo), int64_t(hi)};
}

bool isConst(const Sym &a) { return a && a->lo == a->hi; }

// expr of |a| or its constant.
static AffineExpr exprOf(const Sym &a, const Env &env) {
  if (a->expr)
    return a->expr;
  bool small = a->lo >= -kLimit && a->lo <= kLimit;
  return a->lo == a->hi && small ? getAffineConstantExpr(a->lo, env.ctx)
                                 : AffineExpr();
}

// c * s_i * s_j * ...: the coefficient and the sorted symbol positions.
namespace {
struct Monomial {
  int64_t coef = 1;
  SmallVector<unsigned> symbols;
};
} // namespace

static std::optional<Monomial> monomialOf(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return Monomial{c.getValue(), {}};
  if (auto s = dyn_cast<AffineSymbolExpr>(e))
    return Monomial{1, {s.getPosition()}};
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin || bin.getKind() != AffineExprKind::Mul)
    return std::nullopt;
  auto l = monomialOf(bin.getLHS()), r = monomialOf(bin.getRHS());
  if (!l || !r)
    return std::nullopt;
  l->coef *= r->coef;
  l->symbols.append(r->symbols);
  llvm::sort(l->symbols);
  return l;
}

// a / b when both are monomials and b divides a (the -1 of a reshape is
// count / product of the other extents).
static AffineExpr divideMonomials(AffineExpr a, AffineExpr b, const Env &env) {
  auto ma = monomialOf(a), mb = monomialOf(b);
  if (!ma || !mb || mb->coef <= 0 || ma->coef % mb->coef)
    return AffineExpr();
  SmallVector<unsigned> rest;
  size_t j = 0;
  for (unsigned s : ma->symbols) {
    if (j < mb->symbols.size() && mb->symbols[j] == s)
      ++j;
    else
      rest.push_back(s);
  }
  if (j != mb->symbols.size())
    return AffineExpr();
  AffineExpr q = getAffineConstantExpr(ma->coef / mb->coef, env.ctx);
  for (unsigned s : rest)
    q = q * getAffineSymbolExpr(s, env.ctx);
  return q;
}

// -1, 0 or 1 when a < b, a == b, a > b is certain.
static std::optional<int> compare(const Sym &a, const Sym &b, const Env &env) {
  if (!a || !b)
    return std::nullopt;
  if (isConst(a) && isConst(b))
    return a->lo < b->lo ? -1 : a->lo > b->lo;
  AffineExpr ea = exprOf(a, env), eb = exprOf(b, env);
  if (ea && eb) {
    AffineExpr diff = canonical(ea - eb);
    if (auto c = dyn_cast<AffineConstantExpr>(diff))
      return c.getValue() < 0 ? -1 : c.getValue() > 0;
    if (std::optional<Interval> r = intervalOf(diff, env)) {
      if (r->hi < 0)
        return -1;
      if (r->lo > 0)
        return 1;
    }
  }
  if (a->hi < b->lo)
    return -1;
  if (a->lo > b->hi)
    return 1;
  return std::nullopt;
}

Sym add(const Sym &a, const Sym &b, const Env &env) {
  if (!a || !b)
    return std::nullopt;
  AffineExpr ea = exprOf(a, env), eb = exprOf(b, env);
  return make(ea && eb ? ea + eb : AffineExpr(), __int128(a->lo) + b->lo,
              __int128(a->hi) + b->hi, env);
}

Sym sub(const Sym &a, const Sym &b, const Env &env) {
  if (!a || !b)
    return std::nullopt;
  AffineExpr ea = exprOf(a, env), eb = exprOf(b, env);
  return make(ea && eb ? ea - eb : AffineExpr(), __int128(a->lo) - b->hi,
              __int128(a->hi) - b->lo, env);
}

Sym mul(const Sym &a, const Sym &b, const Env &env) {
  if (!a || !b)
    return std::nullopt;
  __int128 c[] = {__int128(a->lo) * b->lo, __int128(a->lo) * b->hi,
                  __int128(a->hi) * b->lo, __int128(a->hi) * b->hi};
  AffineExpr ea = exprOf(a, env), eb = exprOf(b, env);
  return make(ea && eb ? ea * eb : AffineExpr(),
              *std::min_element(std::begin(c), std::end(c)),
              *std::max_element(std::begin(c), std::end(c)), env);
}

// |a| divided by a positive |b|, rounded as |rounding| says. The quotient
// is monotone in each operand over the box, so its corners bound it.
Sym divide(const Sym &a, const Sym &b, Rounding rounding, const Env &env) {
  if (!a || !b || b->lo < 1)
    return std::nullopt;
  AffineExpr ea = exprOf(a, env), eb = exprOf(b, env), q;
  // Truncation is floor only for a non-negative dividend.
  bool floorLike = rounding == Rounding::Floor ||
                   (rounding == Rounding::TowardZero && a->lo >= 0);
  if (ea && eb && (floorLike || rounding == Rounding::Ceil)) {
    if (auto c = dyn_cast<AffineConstantExpr>(eb))
      q = rounding == Rounding::Ceil ? ea.ceilDiv(c.getValue())
                                     : ea.floorDiv(c.getValue());
    else
      q = divideMonomials(ea, eb, env); // exact, so the rounding is moot
  }
  auto div = [&](__int128 x, __int128 y) {
    __int128 t = x / y; // C++ truncates toward zero, as divsi does
    bool inexact = t * y != x;
    if (rounding == Rounding::Floor && inexact && x < 0)
      return t - 1;
    if (rounding == Rounding::Ceil && inexact && x > 0)
      return t + 1;
    return t;
  };
  __int128 c[] = {div(a->lo, b->lo), div(a->lo, b->hi), div(a->hi, b->lo),
                  div(a->hi, b->hi)};
  return make(q, *std::min_element(std::begin(c), std::end(c)),
              *std::max_element(std::begin(c), std::end(c)), env);
}

Sym remainder(const Sym &a, const Sym &b, const Env &env) {
  if (!a || !b || a->lo < 0 || b->lo < 1)
    return std::nullopt;
  AffineExpr ea = exprOf(a, env);
  if (ea && isConst(b))
    return make(ea % b->lo, 0, std::min(a->hi, b->lo - 1), env);
  return make(AffineExpr(), 0, std::min(a->hi, b->hi - 1), env);
}

Sym pick(const Sym &cond, const Sym &t, const Sym &f, const Env &env) {
  if (isConst(cond))
    return cond->lo ? t : f;
  if (!t || !f)
    return std::nullopt;
  AffineExpr e = t->expr && t->expr == f->expr ? t->expr : AffineExpr();
  return make(e, std::min(t->lo, f->lo), std::max(t->hi, f->hi), env);
}

Sym maxOrMin(const Sym &a, const Sym &b, bool isMax, const Env &env) {
  if (std::optional<int> c = compare(a, b, env))
    return (*c >= 0) == isMax ? a : b;
  // An unknown side is any int64: a clamp still bounds one end (the
  // lowering clamps Slice starts and ends read from data this way).
  auto lo = [](const Sym &x) { return x ? x->lo : INT64_MIN; };
  auto hi = [](const Sym &x) { return x ? x->hi : INT64_MAX; };
  return isMax ? make(AffineExpr(), std::max(lo(a), lo(b)),
                      std::max(hi(a), hi(b)), env)
               : make(AffineExpr(), std::min(lo(a), lo(b)),
                      std::min(hi(a), hi(b)), env);
}

static Sym boolean(std::optional<bool> value) {
  if (!value)
    return SymbolicInt{AffineExpr(), 0, 1};
  return SymbolicInt{AffineExpr(), *value, *value};
}

static Sym comparison(arith::CmpIPredicate p, const Sym &a, const Sym &b,
                      const Env &env) {
  std::optional<int> c = compare(a, b, env);
  if (!c)
    return boolean(std::nullopt);
  switch (p) {
  case arith::CmpIPredicate::eq:
    return boolean(*c == 0);
  case arith::CmpIPredicate::ne:
    return boolean(*c != 0);
  case arith::CmpIPredicate::slt:
    return boolean(*c < 0);
  case arith::CmpIPredicate::sle:
    return boolean(*c <= 0);
  case arith::CmpIPredicate::sgt:
    return boolean(*c > 0);
  case arith::CmpIPredicate::sge:
    return boolean(*c >= 0);
  default: // unsigned orders: only for non-negative operands
    if (a->lo < 0 || b->lo < 0)
      return boolean(std::nullopt);
    if (p == arith::CmpIPredicate::ult)
      return boolean(*c < 0);
    if (p == arith::CmpIPredicate::ule)
      return boolean(*c <= 0);
    if (p == arith::CmpIPredicate::ugt)
      return boolean(*c > 0);
    return boolean(*c >= 0);
  }
}

// The value of a scalar integer op from its operands' values; nullopt for
// an op this does not model.
Sym applyScalar(Operation *op, ArrayRef<Sym> in, const Env &env) {
  auto at = [&](unsigned i) { return i < in.size() ? in[i] : Sym(); };
  if (isa<arith::IndexCastOp, arith::ExtSIOp>(op))
    return at(0);
  // Zero extension and truncation keep values that fit the narrower type
  // as non-negative numbers; others change them.
  if (isa<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp>(op)) {
    Sym a = at(0);
    auto bitsOf = [](Type t) {
      return t.isIndex() ? 64u : t.getIntOrFloatBitWidth();
    };
    unsigned bits = std::min(bitsOf(op->getOperand(0).getType()),
                             bitsOf(op->getResult(0).getType()));
    // Booleans are 0 and 1; wider values must stay below the sign bit.
    int64_t limit = bits == 1    ? 1
                    : bits >= 64 ? INT64_MAX
                                 : (int64_t{1} << (bits - 1)) - 1;
    if (!a || a->lo < 0 || a->hi > limit)
      return std::nullopt;
    return a;
  }
  if (isa<arith::AddIOp>(op))
    return add(at(0), at(1), env);
  if (isa<arith::SubIOp>(op))
    return sub(at(0), at(1), env);
  if (isa<arith::MulIOp>(op))
    return mul(at(0), at(1), env);
  // Unsigned divisions agree with signed ones on non-negative operands.
  bool unsignedOp = isa<arith::DivUIOp, arith::CeilDivUIOp>(op);
  if (unsignedOp && (!at(0) || at(0)->lo < 0))
    return std::nullopt;
  if (isa<arith::DivSIOp, arith::DivUIOp>(op))
    return divide(at(0), at(1), Rounding::TowardZero, env);
  if (isa<arith::FloorDivSIOp>(op))
    return divide(at(0), at(1), Rounding::Floor, env);
  if (isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op))
    return divide(at(0), at(1), Rounding::Ceil, env);
  if (isa<arith::RemSIOp, arith::RemUIOp>(op))
    return remainder(at(0), at(1), env);
  // Unsigned max/min agree with signed ones on non-negative operands.
  if (isa<arith::MaxUIOp, arith::MinUIOp>(op) &&
      (!at(0) || !at(1) || at(0)->lo < 0 || at(1)->lo < 0))
    return std::nullopt;
  if (isa<arith::MaxSIOp, arith::MaxUIOp>(op))
    return maxOrMin(at(0), at(1), /*isMax=*/true, env);
  if (isa<arith::MinSIOp, arith::MinUIOp>(op))
    return maxOrMin(at(0), at(1), /*isMax=*/false, env);
  if (isa<arith::SelectOp>(op))
    return pick(at(0), at(1), at(2), env);
  if (auto cmp = dyn_cast<arith::CmpIOp>(op))
    return comparison(cmp.getPredicate(), at(0), at(1), env);
  if (isa<arith::AndIOp, arith::OrIOp, arith::XOrIOp>(op) &&
      op->getResult(0).getType().isInteger(1)) {
    Sym a = at(0), b = at(1);
    bool isAnd = isa<arith::AndIOp>(op), isOr = isa<arith::OrIOp>(op);
    if (isConst(a) && isConst(b))
      return boolean(isAnd  ? (a->lo && b->lo)
                     : isOr ? (a->lo || b->lo)
                            : (a->lo != b->lo));
    // false && x, true || x are decided by one side.
    for (const Sym &s : {a, b})
      if (isConst(s) && ((isAnd && !s->lo) || (isOr && s->lo)))
        return boolean(bool(s->lo));
    return boolean(std::nullopt);
  }
  return std::nullopt;
}

Sym constantOf(Attribute attr, const Env &env) {
  auto i = dyn_cast<IntegerAttr>(attr);
  if (!i)
    return std::nullopt;
  int64_t v = i.getType().isInteger(1) ? i.getValue().getZExtValue()
                                       : i.getValue().getSExtValue();
  return make(getAffineConstantExpr(v, env.ctx), v, v, env);
}

Sym constant(int64_t value, const Env &env) {
  return make(getAffineConstantExpr(value, env.ctx), value, value, env);
}

std::optional<std::pair<int64_t, int64_t>> rangeOf(AffineExpr e,
                                                   const Env &env) {
  std::optional<Interval> r = intervalOf(canonical(e), env);
  if (!r)
    return std::nullopt;
  return std::make_pair(int64_t(r->lo), int64_t(r->hi));
}

} // namespace strata::symbolic
