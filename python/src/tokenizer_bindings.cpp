//===- tokenizer_bindings.cpp - Text <-> token ids ------------------------===//
// SPDX-License-Identifier: Apache-2.0

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <vector>

#include "runtime_bindings.h"
#include "status.h"
#include "strata/tokenizers/tokenizer.h"

namespace nb = nanobind;

namespace strata::python {
namespace {

class Tokenizer {
 public:
  explicit Tokenizer(strata_tokenizer_t* tokenizer) : tokenizer_(tokenizer) {}
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;
  ~Tokenizer() { strata_tokenizer_release(tokenizer_); }

  std::vector<int32_t> encode(const std::string& text) const {
    size_t count = 0;
    throwIfFailed(strata_tokenizer_encode(tokenizer_, text.data(), text.size(),
                                          nullptr, 0, &count));
    std::vector<int32_t> ids(count);
    throwIfFailed(strata_tokenizer_encode(tokenizer_, text.data(), text.size(),
                                          ids.data(), ids.size(), &count));
    return ids;
  }

  // The bytes of |ids| (a prefix may end inside a UTF-8 character).
  nb::bytes decode(const std::vector<int32_t>& ids) const {
    size_t length = 0;
    throwIfFailed(strata_tokenizer_decode(tokenizer_, ids.data(), ids.size(),
                                          nullptr, 0, &length));
    std::string text(length, '\0');
    throwIfFailed(strata_tokenizer_decode(tokenizer_, ids.data(), ids.size(),
                                          text.data(), text.size(), &length));
    return nb::bytes(text.data(), length);
  }

  int32_t vocabSize() const { return strata_tokenizer_vocab_size(tokenizer_); }

 private:
  strata_tokenizer_t* tokenizer_;
};

// |create| fills its argument; checked before the tokenizer is read.
template <typename Create>
Tokenizer* created(Create create) {
  strata_tokenizer_t* tokenizer = nullptr;
  throwIfFailed(create(&tokenizer));
  return new Tokenizer(tokenizer);
}

}  // namespace

void bindTokenizer(nb::module_& m) {
  nb::class_<Tokenizer>(m, "Tokenizer")
      .def_static("byte", [] { return created(strata_tokenizer_create_byte); })
      .def_static(
          "gpt2",
          [](const std::string& vocab, const std::string& merges) {
            return created([&](strata_tokenizer_t** t) {
              return strata_tokenizer_create_gpt2(vocab.c_str(),
                                                  merges.c_str(), t);
            });
          },
          nb::arg("vocab_json"), nb::arg("merges"))
      .def_static(
          "sentencepiece",
          [](const std::string& path) {
            return created([&](strata_tokenizer_t** t) {
              return strata_tokenizer_create_sentencepiece(path.c_str(), t);
            });
          },
          nb::arg("model_path"))
      .def("encode", &Tokenizer::encode, nb::arg("text"))
      .def("decode", &Tokenizer::decode, nb::arg("ids"))
      .def("vocab_size", &Tokenizer::vocabSize);
}

}  // namespace strata::python
