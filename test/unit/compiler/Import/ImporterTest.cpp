//===- ImporterTest.cpp - TensorProto conversion and graph import ---------===//
// SPDX-License-Identifier: Apache-2.0
// Behaviour IR text cannot show: typed proto fields, size checks, and that
// a model built in memory imports into verifiable IR or fails cleanly.

#include "compiler/import/ModelLoader.h"
#include "compiler/import/OnnxImporter.h"
#include "compiler/import/TensorConversion.h"
#include "dialects/strata/IR/StrataOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

using namespace mlir;
using strata::import::convertTensor;
using strata::import::ModelStorage;

namespace {

class ImporterTest : public ::testing::Test {
protected:
  ImporterTest() {
    context.loadDialect<strata::ir::StrataDialect, func::FuncDialect>();
  }
  std::string tensorError(const onnx::TensorProto &t) {
    auto attr = convertTensor(t, storage, &context);
    return attr ? std::string() : llvm::toString(attr.takeError());
  }
  MLIRContext context;
  ModelStorage storage;
};

TEST_F(ImporterTest, TypedFieldsBecomeDenseAttributes) {
  onnx::TensorProto t;
  t.set_name("ids");
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(3);
  for (int64_t v : {7, -1, 42})
    t.add_int64_data(v);
  auto attr = convertTensor(t, storage, &context);
  ASSERT_TRUE(!!attr) << llvm::toString(attr.takeError());
  auto dense = dyn_cast<DenseIntElementsAttr>(*attr);
  ASSERT_TRUE(dense);
  SmallVector<int64_t> values(dense.getValues<int64_t>());
  EXPECT_EQ(values, SmallVector<int64_t>({7, -1, 42}));
}

TEST_F(ImporterTest, Float16BitsComeFromInt32Data) {
  onnx::TensorProto t;
  t.set_name("h");
  t.set_data_type(onnx::TensorProto::FLOAT16);
  t.add_dims(2);
  t.add_int32_data(0x3C00); // 1.0
  t.add_int32_data(0xC000); // -2.0
  auto attr = convertTensor(t, storage, &context);
  ASSERT_TRUE(!!attr);
  auto dense = cast<DenseFPElementsAttr>(*attr);
  SmallVector<double> values;
  for (const APFloat &v : dense.getValues<APFloat>())
    values.push_back(v.convertToDouble());
  EXPECT_EQ(values, SmallVector<double>({1.0, -2.0}));
}

TEST_F(ImporterTest, LargeFloatTensorsBecomeResourceBlobs) {
  onnx::TensorProto t;
  t.set_name("weight");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(8);
  t.add_dims(8);
  std::string raw(64 * sizeof(float), '\0');
  t.set_raw_data(raw);
  auto attr = convertTensor(t, storage, &context);
  ASSERT_TRUE(!!attr);
  EXPECT_TRUE(isa<DenseResourceElementsAttr>(*attr));
}

TEST_F(ImporterTest, SizeMismatchesAreErrors) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_raw_data(std::string(12, '\0'));
  EXPECT_EQ(tensorError(t), "tensor 'w' has 12 bytes of data, expected 16 for "
                            "FLOAT [4]");
  onnx::TensorProto huge;
  huge.set_name("huge");
  huge.set_data_type(onnx::TensorProto::FLOAT);
  huge.add_dims(int64_t{1} << 40);
  huge.add_dims(int64_t{1} << 40);
  EXPECT_EQ(tensorError(huge), "tensor 'huge' has invalid dims [1099511627776x"
                               "1099511627776] (dims must be non-negative "
                               "with at most 2^40 elements in all)");
  onnx::TensorProto negative;
  negative.set_name("neg");
  negative.set_data_type(onnx::TensorProto::FLOAT);
  negative.add_dims(-3);
  EXPECT_EQ(tensorError(negative), "tensor 'neg' has invalid dims [-3] (dims "
                                   "must be non-negative with at most 2^40 "
                                   "elements in all)");
  onnx::TensorProto text;
  text.set_name("s");
  text.set_data_type(onnx::TensorProto::STRING);
  EXPECT_EQ(tensorError(text), "tensor 's' has unsupported data type STRING");
}

// Builds Y = Relu(X + B) in memory, writes it, imports it.
TEST_F(ImporterTest, ImportsAnInMemoryModel) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto *g = model.mutable_graph();
  auto addInput = [&](const char *name, std::vector<int64_t> dims) {
    onnx::ValueInfoProto *v = g->add_input();
    v->set_name(name);
    auto *tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims)
      tt->mutable_shape()->add_dim()->set_dim_value(d);
  };
  addInput("X", {2, 4});
  addInput("B", {4});
  onnx::NodeProto *add = g->add_node();
  add->set_op_type("Add");
  add->add_input("X");
  add->add_input("B");
  add->add_output("S");
  onnx::NodeProto *relu = g->add_node();
  relu->set_op_type("Relu");
  relu->add_input("S");
  relu->add_output("Y");
  g->add_output()->set_name("Y");

  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("strata-import", "onnx",
                                                  path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << model.SerializeAsString();
  }
  ASSERT_FALSE(storage.load(path));
  OwningOpRef<ModuleOp> module = strata::import::importOnnxModel(context,
                                                                 storage);
  llvm::sys::fs::remove(path);
  ASSERT_TRUE(module);
  auto main = module->lookupSymbol<func::FuncOp>("main");
  ASSERT_TRUE(main);
  EXPECT_EQ(main.getFunctionType().getNumInputs(), 2u);
  int relus = 0;
  main.walk([&](strata::ir::ReluOp) { ++relus; });
  EXPECT_EQ(relus, 1);
}

TEST_F(ImporterTest, MissingOpsetImportIsAnError) {
  onnx::ModelProto model;
  model.mutable_graph();
  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("strata-import", "onnx",
                                                  path));
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    os << model.SerializeAsString();
  }
  // An all-default proto serializes to nothing, which load() refuses.
  llvm::Error err = storage.load(path);
  llvm::sys::fs::remove(path);
  if (err) {
    EXPECT_NE(llvm::toString(std::move(err)).find("is empty"),
              std::string::npos);
    return;
  }
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_FALSE(strata::import::importOnnxModel(context, storage));
  EXPECT_EQ(message, "the model has no opset_import for the default ONNX "
                     "domain");
}

} // namespace
