//===- MemoryPlan.h - kInputMaximaAttr (see Passes.h) ----------*- C++ -*-===//
// SPDX-License-Identifier: Apache-2.0
#ifndef STRATA_CODEGEN_CPU_MEMORYPLAN_H_
#define STRATA_CODEGEN_CPU_MEMORYPLAN_H_
#include "codegen/cpu/Passes.h"
#endif // STRATA_CODEGEN_CPU_MEMORYPLAN_H_
