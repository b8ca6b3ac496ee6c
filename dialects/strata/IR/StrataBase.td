//===- StrataBase.td - Strata dialect definition and base classes -*- tablegen -*-===//
// SPDX-License-Identifier: Apache-2.0
// The dialect record, the Strata_Op base class and the shared type constraints.

#ifndef STRATA_DIALECTS_STRATA_IR_STRATABASE_TD
#define STRATA_DIALECTS_STRATA_IR_STRATABASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Strata_Dialect : Dialect {
  let name = "strata";
  let cppNamespace = "::strata::ir";
  let summary = "tensor-level transformer graph ops, from ONNX import to fused form";
  let description = [{
    The `strata` dialect holds a transformer graph at tensor level: the ops
    the ONNX importer produces (elementwise math, matmul, reductions, shape
    manipulation) and the fused ops the fusion passes form (`layer_norm`,
    `rms_norm`, `gelu`, `attention`, `linear`). All ops are side-effect free
    and operate on ranked tensors; dynamic dims stand for the symbolic ONNX
    dims (batch, sequence, past length).
  }];
  let hasConstantMaterializer = 1;
}

// Every strata op is a pure function of its operands: tensors have value
// semantics until bufferization, which happens after leaving this dialect.
class Strata_Op<string mnemonic, list<Trait> traits = []>
    : Op<Strata_Dialect, mnemonic, !listconcat(traits, [Pure])>;

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// ONNX signed integers map to signless MLIR integers; unsigned ones to
// unsigned MLIR integers, so the signedness of comparisons and division stays
// visible.
def Strata_FloatTensor : RankedTensorOf<[F16, BF16, F32, F64]>;
// A KV cache: floats, or int8 rows that carry their scales (cache_write).
def Strata_CacheTensor : RankedTensorOf<[F16, BF16, F32, F64, I8]>;
def Strata_NumericTensor : RankedTensorOf<[F16, BF16, F32, F64, I8, I16, I32,
                                           I64, UI8, UI16, UI32, UI64]>;
def Strata_BoolTensor : RankedTensorOf<[I1]>;
def Strata_IntegerTensor : RankedTensorOf<[I8, I16, I32, I64, UI8, UI16, UI32,
                                           UI64]>;
def Strata_AnyTensor : RankedTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32,
                                       I64, UI8, UI16, UI32, UI64]>;
// What strata.cast converts between: every type above plus the 8- and 4-bit
// storage formats of quantized models (ONNX FLOAT8*, FLOAT4E2M1, INT4/UINT4).
def Strata_CastableTensor
    : RankedTensorOf<[F16, BF16, F32, F64, I1, I8, I16, I32, I64, UI8, UI16,
                      UI32, UI64, F8E4M3FN, F8E4M3FNUZ, F8E5M2, F8E5M2FNUZ,
                      F4E2M1FN, I<4>, UI<4>]>;
// Indices for gather (ONNX allows int32 and int64).
def Strata_IndexTensor : RankedTensorOf<[I32, I64]>;
// A 1-D int64 tensor holding a shape or per-axis values.
def Strata_ShapeTensor : TensorRankOf<[I64], [1]>;

//===----------------------------------------------------------------------===//
// Attribute constraints
//===----------------------------------------------------------------------===//

// strata.gelu's `approximate`, spelled as in ONNX Gelu-20.
def Strata_GeluApproximationAttr : StringBasedAttr<
    CPred<"::llvm::isa<::mlir::StringAttr>($_self) && "
          "::llvm::is_contained(::llvm::ArrayRef<::llvm::StringRef>{"
          "\"none\", \"tanh\"}, "
          "::llvm::cast<::mlir::StringAttr>($_self).getValue())">,
    "string attribute 'none' or 'tanh'">;

#endif // STRATA_DIALECTS_STRATA_IR_STRATABASE_TD
