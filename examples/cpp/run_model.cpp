//===- run_model.cpp - Load an artifact and run one entry (C++ wrapper) ---===//
// SPDX-License-Identifier: Apache-2.0
// run_model_cpp ARTIFACT [ENTRY]
// The C example (examples/c/run_model.c) with the header-only RAII wrapper
// strata/runtime/runtime.hpp: the same inputs, the same output lines.
// Every failure is a strata::Status, printed as "run_model: CODE: message"
// with exit status 1.
// Loading an artifact runs its native code: load only trusted artifacts.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <strata/runtime/runtime.hpp>

namespace {

// Symbolic dims take this value, or their compiled maximum if smaller.
constexpr int64_t kExampleDim = 2;
// Values printed per output.
constexpr size_t kExamplePrint = 16;

// f32/f64 elements count 0, 1, ..., 9, 0, ...; integers and bool are 1;
// other dtypes stay 0.
void fillInput(strata::Tensor& tensor) {
  const size_t count = tensor.elementCount();
  switch (tensor.dtype()) {
    case STRATA_DTYPE_F32:
      for (size_t i = 0; i < count; ++i)
        tensor.data<float>()[i] = static_cast<float>(i % 10);
      break;
    case STRATA_DTYPE_F64:
      for (size_t i = 0; i < count; ++i)
        tensor.data<double>()[i] = static_cast<double>(i % 10);
      break;
    case STRATA_DTYPE_I64:
      for (size_t i = 0; i < count; ++i) tensor.data<int64_t>()[i] = 1;
      break;
    case STRATA_DTYPE_I32:
      for (size_t i = 0; i < count; ++i) tensor.data<int32_t>()[i] = 1;
      break;
    case STRATA_DTYPE_I8:
    case STRATA_DTYPE_U8:
    case STRATA_DTYPE_BOOL:
    case STRATA_DTYPE_I4:
    case STRATA_DTYPE_U4:
      std::memset(tensor.data<uint8_t>(), 1, count);
      break;
    default:
      break;
  }
}

// One line per output: "name dtype [dims]: values".
void printOutput(const char* name, const strata::Tensor& tensor) {
  const std::vector<int64_t> dims = tensor.dims();
  const size_t count = tensor.elementCount();
  const size_t shown = count < kExamplePrint ? count : kExamplePrint;
  std::printf("%s %s [", name, strata_dtype_name(tensor.dtype()));
  for (size_t d = 0; d < dims.size(); ++d)
    std::printf("%s%lld", d ? ", " : "", static_cast<long long>(dims[d]));
  std::printf("]:");
  for (size_t i = 0; i < shown; ++i) {
    switch (tensor.dtype()) {
      case STRATA_DTYPE_F32:
        std::printf(" %g", tensor.data<float>()[i]);
        break;
      case STRATA_DTYPE_F64:
        std::printf(" %g", tensor.data<double>()[i]);
        break;
      case STRATA_DTYPE_I64:
        std::printf(" %lld", static_cast<long long>(tensor.data<int64_t>()[i]));
        break;
      case STRATA_DTYPE_I32:
        std::printf(" %d", tensor.data<int32_t>()[i]);
        break;
      default:
        std::printf(" 0x%02x", tensor.data<uint8_t>()[i]);
        break;
    }
  }
  std::printf("%s\n", shown < count ? " ..." : "");
}

// --8<-- [start:run_model]
// Loads |path|, runs |entryName| (null: the first entry) once and prints
// its outputs. The handles release everything on every path.
strata::Status runModel(const std::string& path, const char* entryName) {
  strata::Module module;
  if (strata::Status s = strata::Module::loadFile(path, &module); !s.ok())
    return s;
  const strata_entry_signature_t* entry = module.entry(0);
  if (entryName) {
    if (strata::Status s = module.findEntry(entryName, &entry); !s.ok())
      return s;
  }
  strata::Session session;
  if (strata::Status s = strata::Session::create(module, &session); !s.ok())
    return s;

  std::vector<strata::Tensor> inputs(entry->input_count);
  std::vector<const strata::Tensor*> inputRefs;
  for (size_t i = 0; i < entry->input_count; ++i) {
    const strata_tensor_signature_t& signature = entry->inputs[i];
    std::vector<int64_t> dims;
    for (uint32_t d = 0; d < signature.rank; ++d) {
      const strata_dim_t& dim = signature.dims[d];
      dims.push_back(!dim.symbol ? dim.extent
                                 : std::min<int64_t>(dim.max, kExampleDim));
    }
    if (strata::Status s =
            strata::Tensor::create(signature.dtype, dims, &inputs[i]);
        !s.ok())
      return s;
    fillInput(inputs[i]);
    inputRefs.push_back(&inputs[i]);
  }

  std::vector<strata::Tensor> outputs;
  if (strata::Status s = session.run(entry->name, inputRefs, &outputs); !s.ok())
    return s;
  std::printf("entry %s\n", entry->name);
  for (size_t i = 0; i < outputs.size(); ++i)
    printOutput(entry->outputs[i].name, outputs[i]);
  return strata::Status();
}
// --8<-- [end:run_model]

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: run_model_cpp ARTIFACT [ENTRY]\n");
    return 2;
  }
  strata::Status status = runModel(argv[1], argc == 3 ? argv[2] : nullptr);
  if (!status.ok()) {
    // e.g. "DATA_LOSS: model.strata: header checksum mismatch"
    std::fprintf(stderr, "run_model: %s\n", status.toString().c_str());
    return 1;
  }
  return 0;
}
