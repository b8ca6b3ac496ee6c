//===- contract.cc - What the generator needs of a prefill/decode module --===//
// SPDX-License-Identifier: Apache-2.0
// Each check names the entry, tensor or dim it is about, so that a module
// compiled without the split (or by an older split pass) says what it lacks.

#include "generate/contract.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "strata/runtime/tensor.h"

namespace strata::runtime {
namespace {

__attribute__((format(printf, 1, 2))) strata_status_t contractError(
    const char* format, ...) {
  char message[320];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return STRATA_MAKE_STATUS(
      STRATA_STATUS_FAILED_PRECONDITION,
      "the module does not follow the prefill/decode entry contract: %s",
      message);
}

// One expected dim: a static extent, or a symbolic dim by name.
struct DimSpec {
  int64_t extent;
  const char* symbol;
};

// What one input or output must be.
struct TensorSpec {
  const char* name;
  strata_dtype_t dtype;
  uint32_t rank;
  DimSpec dims[3];
  const char* shape;  // for messages: "[batch, 1]"
};


const strata_tensor_signature_t* findTensor(
    const strata_tensor_signature_t* tensors, size_t count, const char* name) {
  for (size_t i = 0; i < count; ++i) {
    if (tensors[i].name && std::strcmp(tensors[i].name, name) == 0) {
      return &tensors[i];
    }
  }
  return nullptr;
}

strata_status_t checkTensor(const char* entry, const char* role,
                            const strata_tensor_signature_t* tensors,
                            size_t count, const TensorSpec& spec) {
  const strata_tensor_signature_t* tensor =
      findTensor(tensors, count, spec.name);
  if (!tensor) {
    return contractError("entry '%s' has no %s '%s' (%s%s)", entry, role,
                         spec.name, strata_dtype_name(spec.dtype), spec.shape);
  }
  if (tensor->dtype != spec.dtype || tensor->rank != spec.rank) {
    return contractError("%s '%s' of entry '%s' must be %s%s", role, spec.name,
                         entry, strata_dtype_name(spec.dtype), spec.shape);
  }
  for (uint32_t d = 0; d < spec.rank; ++d) {
    const DimSpec& want = spec.dims[d];
    const strata_dim_t& have = tensor->dims[d];
    bool same = want.symbol
                    ? have.symbol && std::strcmp(have.symbol, want.symbol) == 0
                    : !have.symbol && have.extent == want.extent;
    // Any static vocab is fine: the logits' last dim is checked by caller.
    if (!want.symbol && want.extent < 0) same = !have.symbol && have.extent > 0;
    if (!same) {
      return contractError(
          "%s '%s' of entry '%s' must be %s%s (dim %u differs)", role,
          spec.name, entry, strata_dtype_name(spec.dtype), spec.shape, d);
    }
  }
  return nullptr;
}

// Where each row of a decode or verify call is: its slot, or its blocks.
TensorSpec rowsSpec(bool paged) {
  if (paged) {
    return {"block_tables",
            STRATA_DTYPE_I64,
            2,
            {{-1, "batch"}, {-1, nullptr}},
            "[batch, N]"};
  }
  return {"slots", STRATA_DTYPE_I64, 1, {{-1, "batch"}}, "[batch]"};
}

const strata_entry_signature_t* entryNamed(const strata_module_t* module,
                                           const char* name) {
  for (size_t i = 0; i < strata_module_entry_count(module); ++i) {
    const strata_entry_signature_t* entry = strata_module_entry(module, i);
    if (entry && std::strcmp(entry->name, name) == 0) return entry;
  }
  return nullptr;
}

// Input |name| of entry |entry|, or null when either is missing.
const strata_tensor_signature_t* inputOf(const strata_module_t* module,
                                         const char* entry, const char* name) {
  const strata_entry_signature_t* found = entryNamed(module, entry);
  return found ? findTensor(found->inputs, found->input_count, name) : nullptr;
}

// Checks entry |name|: its kind, exactly |inputs|, and its logits output;
// stores the logits' static vocab in |*vocab|.
strata_status_t checkEntry(const strata_module_t* module, const char* name,
                           strata_entry_kind_t kind, const char* kindName,
                           const TensorSpec (&inputs)[3],
                           const TensorSpec& logits, int64_t* vocab) {
  const strata_entry_signature_t* entry = entryNamed(module, name);
  if (!entry) return contractError("no entry '%s'", name);
  if (entry->kind != kind) {
    return contractError("entry '%s' is not of kind %s", name, kindName);
  }
  if (entry->input_count != 3) {
    return contractError("entry '%s' has %zu inputs, expected 3 (%s, %s, %s)",
                         name, entry->input_count, inputs[0].name,
                         inputs[1].name, inputs[2].name);
  }
  for (const TensorSpec& input : inputs) {
    STRATA_RETURN_IF_ERROR(
        checkTensor(name, "input", entry->inputs, entry->input_count, input));
  }
  STRATA_RETURN_IF_ERROR(
      checkTensor(name, "output", entry->outputs, entry->output_count, logits));
  *vocab = findTensor(entry->outputs, entry->output_count, "logits")
               ->dims[logits.rank - 1]
               .extent;
  return nullptr;
}

// A paged module's block geometry: N from prefill's block_table, the pool
// and block size from the shared states with the dim 'kv_blocks' first
// (every one alike).
strata_status_t pagedGeometry(const strata_module_t* module,
                              GenerationContract* contract) {
  contract->blocksPerSequence =
      inputOf(module, "prefill", "block_table")->dims[1].extent;
  for (size_t i = 0; i < strata_module_state_count(module); ++i) {
    const strata_state_signature_t* state = strata_module_state(module, i);
    if (!state || state->scope != STRATA_STATE_SCOPE_SHARED ||
        state->rank != 4 || !state->dims[0].symbol ||
        std::strcmp(state->dims[0].symbol, "kv_blocks") != 0) {
      continue;
    }
    const int64_t blocks = state->dims[0].max;
    const int64_t size = state->dims[2].extent;
    if (contract->blockSize != 0 &&
        (blocks != contract->blockCount || size != contract->blockSize)) {
      return contractError("paged state '%s' has %" PRId64 " blocks of %" PRId64
                           ", another %" PRId64 " of %" PRId64,
                           state->name, blocks, size, contract->blockCount,
                           contract->blockSize);
    }
    contract->blockCount = blocks;
    contract->blockSize = size;
  }
  if (contract->blockSize < 1 || contract->blockCount < 1) {
    return contractError("entry 'prefill' takes a block table but no state "
                         "is a pool of KV blocks (dim 'kv_blocks' first)");
  }
  if (contract->blocksPerSequence < 1 ||
      contract->blocksPerSequence * contract->blockSize < contract->context ||
      contract->blockCount < contract->blocksPerSequence) {
    return contractError("a block table of %" PRId64 " blocks of %" PRId64
                         " and a pool of %" PRId64
                         " cannot hold one sequence of the context (%" PRId64
                         ")",
                         contract->blocksPerSequence, contract->blockSize,
                         contract->blockCount, contract->context);
  }
  return nullptr;
}

strata_status_t dimMax(const strata_module_t* module, const char* name,
                       int64_t* out) {
  for (size_t i = 0; i < strata_module_symbolic_dim_count(module); ++i) {
    const strata_symbolic_dim_t* dim = strata_module_symbolic_dim(module, i);
    if (dim && std::strcmp(dim->name, name) == 0 && dim->max >= 1) {
      *out = dim->max;
      return nullptr;
    }
  }
  return contractError("no symbolic dim '%s' with a maximum in the dim table",
                       name);
}

}  // namespace

strata_status_t checkGenerationContract(const strata_module_t* module,
                                        GenerationContract* out) {
  if (!module) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "module must not be NULL");
  }
  GenerationContract contract;
  int64_t batch = 0;
  // A paged cache names each sequence's blocks instead of its slot; the
  // decode batch is then the sequences in flight.
  const bool paged = inputOf(module, "prefill", "block_table") != nullptr;
  STRATA_RETURN_IF_ERROR(dimMax(module, "batch", &batch));
  if (paged) {
    contract.slots = batch;
  } else {
    STRATA_RETURN_IF_ERROR(dimMax(module, "slots", &contract.slots));
  }
  STRATA_RETURN_IF_ERROR(dimMax(module, "context", &contract.context));
  STRATA_RETURN_IF_ERROR(
      dimMax(module, "prefill_length", &contract.prefillLength));
  if (batch != contract.slots) {
    return contractError("dim 'batch' has maximum %" PRId64
                         ", expected that of 'slots' (%" PRId64 ")",
                         batch, contract.slots);
  }

  const TensorSpec prefillInputs[3] = {
      {"input_ids",
       STRATA_DTYPE_I64,
       2,
       {{1, nullptr}, {-1, "prefill_length"}},
       "[1, prefill_length]"},
      paged ? TensorSpec{"block_table",
                         STRATA_DTYPE_I64,
                         2,
                         {{1, nullptr}, {-1, nullptr}},
                         "[1, N]"}
            : TensorSpec{"slot", STRATA_DTYPE_I64, 0, {}, "[]"},
      {"start", STRATA_DTYPE_I64, 0, {}, "[]"}};
  const TensorSpec prefillLogits = {
      "logits", STRATA_DTYPE_F32, 2, {{1, nullptr}, {-1, nullptr}}, "[1, V]"};
  int64_t prefillVocab = 0;
  STRATA_RETURN_IF_ERROR(
      checkEntry(module, "prefill", STRATA_ENTRY_KIND_PREFILL, "PREFILL",
                 prefillInputs, prefillLogits, &prefillVocab));

  const TensorSpec decodeInputs[3] = {
      {"input_ids",
       STRATA_DTYPE_I64,
       2,
       {{-1, "batch"}, {1, nullptr}},
       "[batch, 1]"},
      rowsSpec(paged),
      {"positions", STRATA_DTYPE_I64, 1, {{-1, "batch"}}, "[batch]"}};
  const TensorSpec decodeLogits = {"logits",
                                   STRATA_DTYPE_F32,
                                   2,
                                   {{-1, "batch"}, {-1, nullptr}},
                                   "[batch, V]"};
  STRATA_RETURN_IF_ERROR(checkEntry(module, "decode", STRATA_ENTRY_KIND_DECODE,
                                    "DECODE", decodeInputs, decodeLogits,
                                    &contract.vocab));
  if (prefillVocab != contract.vocab) {
    return contractError("the logits of 'prefill' have %" PRId64
                         " tokens and those of 'decode' %" PRId64,
                         prefillVocab, contract.vocab);
  }

  if (paged) {
    STRATA_RETURN_IF_ERROR(pagedGeometry(module, &contract));
    const strata_tensor_signature_t* tables =
        inputOf(module, "decode", "block_tables");
    if (tables->dims[1].extent != contract.blocksPerSequence) {
      return contractError("the block tables of 'decode' have %" PRId64
                           " blocks per row and that of 'prefill' %" PRId64,
                           tables->dims[1].extent, contract.blocksPerSequence);
    }
  }
  // Slot-level prefix reuse needs a slot's positions in place; a paged
  // cache shares blocks instead.
  contract.positionsInPlace = !paged;
  for (size_t i = 0; i < strata_module_state_count(module); ++i) {
    const strata_state_signature_t* state = strata_module_state(module, i);
    if (!state || state->scope != STRATA_STATE_SCOPE_PER_SEQUENCE) continue;
    if (state->rank < 1 || !state->dims[0].symbol ||
        std::strcmp(state->dims[0].symbol, "slots") != 0) {
      return contractError(
          "per-sequence state '%s' must have the dim 'slots' first",
          state->name);
    }
    bool hasContext = false;
    for (uint32_t d = 1; d < state->rank; ++d) {
      hasContext |= state->dims[d].symbol &&
                    std::strcmp(state->dims[d].symbol, "context") == 0;
    }
    contract.positionsInPlace &= hasContext;
  }
  *out = contract;
  return nullptr;
}

strata_status_t checkVerifyEntry(const strata_module_t* module,
                                 GenerationContract* contract) {
  const TensorSpec inputs[3] = {
      {"input_ids",
       STRATA_DTYPE_I64,
       2,
       {{-1, "batch"}, {-1, "verify_length"}},
       "[batch, verify_length]"},
      rowsSpec(contract->paged()),
      {"positions", STRATA_DTYPE_I64, 1, {{-1, "batch"}}, "[batch]"}};
  const TensorSpec logits = {
      "logits",
      STRATA_DTYPE_F32,
      3,
      {{-1, "batch"}, {-1, "verify_length"}, {-1, nullptr}},
      "[batch, verify_length, V]"};
  int64_t vocab = 0;
  STRATA_RETURN_IF_ERROR(checkEntry(module, "verify", STRATA_ENTRY_KIND_VERIFY,
                                    "VERIFY", inputs, logits, &vocab));
  if (vocab != contract->vocab) {
    return contractError("the logits of 'verify' have %" PRId64
                         " tokens and those of 'decode' %" PRId64,
                         vocab, contract->vocab);
  }
  int64_t length = 0;
  STRATA_RETURN_IF_ERROR(dimMax(module, "verify_length", &length));
  if (length < 2) {
    return contractError("dim 'verify_length' has maximum %" PRId64
                         ": a verify call must take a token and at least "
                         "one draft",
                         length);
  }
  contract->verifyLength = length;
  return nullptr;
}

}  // namespace strata::runtime
