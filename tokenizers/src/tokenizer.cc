//===- tokenizer.cc - The C API of the tokenizers -------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Argument checks, buffer sizing and the exception barrier: no C++ exception
// (std::bad_alloc above all) ever leaves these functions.

#include "strata/tokenizers/tokenizer.h"

#include <algorithm>
#include <new>

#include "tokenizer_impl.h"

struct strata_tokenizer_t {
  std::unique_ptr<strata::tokenizers::Tokenizer> impl;
};

namespace {

using strata::tokenizers::Tokenizer;

/// Runs |body|, turning an escaping exception into a status.
template <typename Body>
strata_status_t guarded(const char* what, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "%s: out of memory", what);
  } catch (...) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INTERNAL,
                              "%s: unexpected exception", what);
  }
}

strata_status_t wrap(std::unique_ptr<Tokenizer> impl,
                     strata_tokenizer_t** out_tokenizer) {
  *out_tokenizer = new strata_tokenizer_t{std::move(impl)};
  return strata_ok_status();
}

/// Copies |items| to |out| if they fit, per the size rules of tokenizer.h.
template <typename T>
strata_status_t copyOut(const char* what, const T* items, size_t count, T* out,
                        size_t capacity, size_t* out_count) {
  *out_count = count;
  if (count <= capacity) {
    if (count) std::copy(items, items + count, out);
    return strata_ok_status();
  }
  if (!out && capacity == 0) return strata_ok_status();
  return STRATA_MAKE_STATUS(STRATA_STATUS_OUT_OF_RANGE,
                            "%s: %zu are needed, the buffer holds %zu", what,
                            count, capacity);
}

}  // namespace

strata_status_t strata_tokenizer_create_byte(
    strata_tokenizer_t** out_tokenizer) {
  if (!out_tokenizer)
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "out_tokenizer is NULL");
  return guarded("creating the byte tokenizer", [&] {
    return wrap(strata::tokenizers::createByteTokenizer(), out_tokenizer);
  });
}

strata_status_t strata_tokenizer_create_gpt2(
    const char* vocab_json_path, const char* merges_path,
    strata_tokenizer_t** out_tokenizer) {
  if (!vocab_json_path || !merges_path || !out_tokenizer)
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "a path or out_tokenizer is NULL");
  return guarded("creating the GPT-2 tokenizer", [&] {
    std::unique_ptr<Tokenizer> impl;
    STRATA_RETURN_IF_ERROR(strata::tokenizers::createGpt2Tokenizer(
        vocab_json_path, merges_path, &impl));
    return wrap(std::move(impl), out_tokenizer);
  });
}

strata_status_t strata_tokenizer_create_sentencepiece(
    const char* model_path, strata_tokenizer_t** out_tokenizer) {
  if (!model_path || !out_tokenizer)
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "model_path or out_tokenizer is NULL");
  return guarded("creating the SentencePiece tokenizer", [&] {
    std::unique_ptr<Tokenizer> impl;
    STRATA_RETURN_IF_ERROR(
        strata::tokenizers::createSentencePieceTokenizer(model_path, &impl));
    return wrap(std::move(impl), out_tokenizer);
  });
}

strata_tokenizer_kind_t strata_tokenizer_kind(
    const strata_tokenizer_t* tokenizer) {
  return tokenizer->impl->kind();
}

int32_t strata_tokenizer_vocab_size(const strata_tokenizer_t* tokenizer) {
  return tokenizer ? tokenizer->impl->vocabSize() : 0;
}

strata_status_t strata_tokenizer_encode(const strata_tokenizer_t* tokenizer,
                                        const char* text, size_t length,
                                        int32_t* ids_out, size_t capacity,
                                        size_t* out_count) {
  if (!tokenizer || (!text && length) || (!ids_out && capacity) || !out_count)
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "encode: NULL tokenizer, text, ids_out or "
                              "out_count");
  return guarded("encode", [&] {
    std::vector<int32_t> ids;
    STRATA_RETURN_IF_ERROR(tokenizer->impl->encode(
        std::string_view(text ? text : "", length), &ids));
    return copyOut("encode: ids", ids.data(), ids.size(), ids_out, capacity,
                   out_count);
  });
}

strata_status_t strata_tokenizer_decode(const strata_tokenizer_t* tokenizer,
                                        const int32_t* ids, size_t count,
                                        char* text_out, size_t capacity,
                                        size_t* out_length) {
  if (!tokenizer || (!ids && count) || (!text_out && capacity) || !out_length)
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "decode: NULL tokenizer, ids, text_out or "
                              "out_length");
  return guarded("decode", [&] {
    std::string text;
    STRATA_RETURN_IF_ERROR(tokenizer->impl->decode(ids, count, &text));
    return copyOut("decode: bytes", text.data(), text.size(), text_out,
                   capacity, out_length);
  });
}

void strata_tokenizer_release(strata_tokenizer_t* tokenizer) {
  delete tokenizer;
}
