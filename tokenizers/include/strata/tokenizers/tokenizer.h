//===- tokenizer.h - Strata tokenizers: text <-> token ids ----------------===//
// SPDX-License-Identifier: Apache-2.0
// The C API of the tokenizers (docs/tokenizers.md): byte-level, GPT-2
// byte-level BPE and SentencePiece behind one opaque handle.

#ifndef STRATA_TOKENIZERS_TOKENIZER_H_
#define STRATA_TOKENIZERS_TOKENIZER_H_

#include <stddef.h>
#include <stdint.h>

// Failures are the runtime's status objects, so a generation loop handles
// one kind of error; the tokenizers link the runtime for them.
#include "strata/runtime/status.h"

#if defined(STRATA_TOKENIZERS_BUILDING)
#define STRATA_TOKENIZERS_EXPORT __attribute__((visibility("default")))
#else
#define STRATA_TOKENIZERS_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// A tokenizer. Immutable after creation: encode and decode may run on one
/// tokenizer from several threads at once.
typedef struct strata_tokenizer_t strata_tokenizer_t;

/// The algorithm behind a tokenizer.
typedef enum strata_tokenizer_kind_e {
  STRATA_TOKENIZER_KIND_BYTE = 0,
  STRATA_TOKENIZER_KIND_GPT2 = 1,
  STRATA_TOKENIZER_KIND_SENTENCEPIECE = 2,
} strata_tokenizer_kind_t;

/// Creates the byte-level tokenizer: token id = byte value (vocabulary 256,
/// no special tokens). Any byte sequence encodes; decoding an id outside
/// 0..255 fails with INVALID_ARGUMENT.
STRATA_TOKENIZERS_EXPORT strata_status_t
strata_tokenizer_create_byte(strata_tokenizer_t** out_tokenizer);

/// Creates a GPT-2 byte-level BPE tokenizer from |vocab_json_path| (the
/// encoder.json token -> id map) and |merges_path| (vocab.bpe, one merge per
/// line by rank). NOT_FOUND if a file cannot be read, DATA_LOSS if one is
/// malformed.
STRATA_TOKENIZERS_EXPORT strata_status_t strata_tokenizer_create_gpt2(
    const char* vocab_json_path, const char* merges_path,
    strata_tokenizer_t** out_tokenizer);

/// Creates a tokenizer from a SentencePiece model file (.model). UNAVAILABLE
/// if the library was built without SentencePiece; NOT_FOUND or DATA_LOSS if
/// the model cannot be loaded.
STRATA_TOKENIZERS_EXPORT strata_status_t strata_tokenizer_create_sentencepiece(
    const char* model_path, strata_tokenizer_t** out_tokenizer);

/// Returns the algorithm of |tokenizer|, which must not be NULL.
STRATA_TOKENIZERS_EXPORT strata_tokenizer_kind_t
strata_tokenizer_kind(const strata_tokenizer_t* tokenizer);

/// Returns the number of token ids |tokenizer| knows (ids are 0..size-1,
/// though a vocabulary file may leave holes); 0 for NULL.
STRATA_TOKENIZERS_EXPORT int32_t
strata_tokenizer_vocab_size(const strata_tokenizer_t* tokenizer);

/// Encodes |length| bytes of |text| into at most |capacity| ids at |ids_out|.
/// |out_count| always receives the number of ids the text needs. If they do
/// not fit, nothing is written to |ids_out| and the call fails with
/// OUT_OF_RANGE, unless |ids_out| is NULL and |capacity| is 0: that is a size
/// query and returns OK. Text for GPT-2 and SentencePiece must be UTF-8
/// (INVALID_ARGUMENT names the offset of the first bad byte); the byte
/// tokenizer takes any bytes.
STRATA_TOKENIZERS_EXPORT strata_status_t strata_tokenizer_encode(
    const strata_tokenizer_t* tokenizer, const char* text, size_t length,
    int32_t* ids_out, size_t capacity, size_t* out_count);

/// Decodes |count| ids into at most |capacity| bytes at |text_out| (no
/// terminating NUL is written). |out_length| and the size query work as in
/// strata_tokenizer_encode. An id the vocabulary lacks fails with
/// INVALID_ARGUMENT naming its position. Byte-level tokenizers return the
/// bytes as they are, so a prefix of a longer sequence may end inside a
/// UTF-8 character.
STRATA_TOKENIZERS_EXPORT strata_status_t strata_tokenizer_decode(
    const strata_tokenizer_t* tokenizer, const int32_t* ids, size_t count,
    char* text_out, size_t capacity, size_t* out_length);

/// Frees |tokenizer|; NULL is allowed.
STRATA_TOKENIZERS_EXPORT void strata_tokenizer_release(
    strata_tokenizer_t* tokenizer);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // STRATA_TOKENIZERS_TOKENIZER_H_
