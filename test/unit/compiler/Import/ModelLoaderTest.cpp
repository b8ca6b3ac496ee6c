//===- ModelLoaderTest.cpp - Model files and external data safety ---------===//
// SPDX-License-Identifier: Apache-2.0
// The loader must turn every malformed file or hostile external-data
// location into an error (these tests also run under ASan+UBSan).

#include "compiler/import/ModelLoader.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

using strata::import::ModelStorage;

namespace {

class ModelLoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(
        llvm::sys::fs::createUniqueDirectory("strata-loader-test", dir));
    llvm::sys::path::append(modelDir, dir, "model");
    ASSERT_FALSE(llvm::sys::fs::create_directory(modelDir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef relative) {
    llvm::SmallString<256> p(modelDir);
    llvm::sys::path::append(p, relative);
    return p.str().str();
  }
  void writeFile(const std::string &p, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(p, ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }
  /// Loads |model| (serialized to model.onnx) and returns the error text.
  std::string loadError(llvm::StringRef bytes) {
    writeFile(path("model.onnx"), bytes);
    llvm::Error err = storage.load(path("model.onnx"));
    return err ? llvm::toString(std::move(err)) : std::string();
  }
  /// A tensor of four floats stored externally at |location|.
  onnx::TensorProto externalTensor(const std::string &location,
                                   int64_t offset = 0, int64_t length = 16) {
    onnx::TensorProto t;
    t.set_name("w");
    t.set_data_type(onnx::TensorProto::FLOAT);
    t.add_dims(4);
    t.set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [&](const char *k, const std::string &v) {
      auto *e = t.add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", location);
    add("offset", std::to_string(offset));
    add("length", std::to_string(length));
    return t;
  }
  /// A serialized model with one set field (an all-default proto is empty).
  static std::string minimalModel() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    return model.SerializeAsString();
  }
  std::string externalError(const onnx::TensorProto &t) {
    auto data = storage.externalData(t);
    return data ? std::string() : llvm::toString(data.takeError());
  }

  llvm::SmallString<128> dir, modelDir;
  ModelStorage storage;
};

TEST_F(ModelLoaderTest, RejectsEmptyAndCorruptFiles) {
  EXPECT_NE(loadError("").find("is empty, not an ONNX model"),
            std::string::npos);
  EXPECT_NE(loadError("\xff\xff\xff\xff garbage").find(
                "is not a valid ONNX protobuf"),
            std::string::npos);
}

TEST_F(ModelLoaderTest, RejectsMissingFile) {
  llvm::Error err = storage.load(path("does-not-exist.onnx"));
  ASSERT_TRUE(!!err);
  EXPECT_NE(llvm::toString(std::move(err)).find("cannot read"),
            std::string::npos);
}

TEST_F(ModelLoaderTest, ReadsExternalDataInsideTheFolder) {
  ASSERT_EQ(loadError(minimalModel()), "");
  writeFile(path("w.bin"), llvm::StringRef("0123456789abcdefXYZ", 19));
  auto data = storage.externalData(externalTensor("w.bin", 2, 16));
  ASSERT_TRUE(!!data) << llvm::toString(data.takeError());
  EXPECT_EQ(llvm::StringRef(data->data(), data->size()), "23456789abcdefXY");
}

TEST_F(ModelLoaderTest, RejectsEscapingLocations) {
  ASSERT_EQ(loadError(minimalModel()), "");
  writeFile(dir.str().str() + "/secret.bin", "0123456789abcdef");
  for (const char *location : {"../secret.bin", "/etc/passwd", "./w.bin",
                               "sub/../../secret.bin", ""}) {
    EXPECT_NE(externalError(externalTensor(location))
                  .find("must be a relative path inside the model's folder"),
              std::string::npos)
        << location;
  }
}

TEST_F(ModelLoaderTest, RejectsSymlinkEscape) {
  ASSERT_EQ(loadError(minimalModel()), "");
  std::string secret = dir.str().str() + "/secret.bin";
  writeFile(secret, "0123456789abcdef");
  ASSERT_FALSE(llvm::sys::fs::create_link(secret, path("link.bin")));
  EXPECT_NE(externalError(externalTensor("link.bin"))
                .find("resolves outside the model's folder"),
            std::string::npos);
}

TEST_F(ModelLoaderTest, RejectsOutOfBoundsRanges) {
  ASSERT_EQ(loadError(minimalModel()), "");
  writeFile(path("w.bin"), "0123456789abcdef");
  EXPECT_NE(externalError(externalTensor("w.bin", 100)).find("past the end"),
            std::string::npos);
  EXPECT_NE(externalError(externalTensor("w.bin", 8, 16))
                .find("runs past the end"),
            std::string::npos);
  EXPECT_NE(externalError(externalTensor("missing.bin")).find("cannot open"),
            std::string::npos);
}

} // namespace
