//===- CopiesToLinalg.cpp - memref.copy -> linalg.copy --------------------===//
// SPDX-License-Identifier: Apache-2.0
// See Passes.td (strata-cpu-copies-to-linalg).

#include "codegen/cpu/Passes.h"

using namespace mlir;

namespace strata::codegen::cpu {

#define GEN_PASS_DEF_COPIESTOLINALGPASS
#include "codegen/cpu/Passes.h.inc"

namespace {

struct CopiesToLinalgPass : impl::CopiesToLinalgPassBase<CopiesToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    for (memref::CopyOp copy : copies) {
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    }
  }
};

} // namespace
} // namespace strata::codegen::cpu
