//===- runtime.hpp - Header-only C++ RAII wrapper of the runtime C API ----===//
// SPDX-License-Identifier: Apache-2.0
// Owning handles for statuses, modules, sessions, tensors, thread pools,
// io bindings and generators. Nothing here throws; fallible calls return a strata::Status. Thread-safety is that of
// the wrapped C objects (module.h, session.h, tensor.h).

#ifndef STRATA_RUNTIME_RUNTIME_HPP_
#define STRATA_RUNTIME_RUNTIME_HPP_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/runtime/api.h"

namespace strata {

/// An owned strata_status_t; default-constructed is OK.
class Status {
 public:
  Status() = default;
  /// Takes ownership of |status|.
  explicit Status(strata_status_t status) : status_(status) {}
  Status(Status&& other) noexcept : status_(other.release()) {}
  Status& operator=(Status&& other) noexcept {
    if (this != &other) {
      strata_status_free(status_);
      status_ = other.release();
    }
    return *this;
  }
  Status(const Status&) = delete;
  Status& operator=(const Status&) = delete;
  ~Status() { strata_status_free(status_); }

  bool ok() const { return status_ == nullptr; }
  explicit operator bool() const { return ok(); }
  strata_status_code_t code() const { return strata_status_code(status_); }
  /// The message ("" when OK).
  std::string message() const { return strata_status_message(status_); }
  /// "CODE: message", or "OK".
  std::string toString() const {
    if (ok()) return "OK";
    return std::string(strata_status_code_string(code())) + ": " + message();
  }
  /// Gives up ownership of the C status.
  strata_status_t release() { return std::exchange(status_, nullptr); }

 private:
  strata_status_t status_ = nullptr;
};

/// An owned host tensor.
class Tensor {
 public:
  Tensor() = default;
  /// Takes ownership of |tensor|.
  explicit Tensor(strata_tensor_t* tensor) : tensor_(tensor) {}
  Tensor(Tensor&& other) noexcept : tensor_(other.release()) {}
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { reset(); }

  /// Creates a zero-filled tensor (strata_tensor_create).
  static Status create(
      strata_dtype_t dtype, const std::vector<int64_t>& dims, Tensor* out,
      strata_allocator_t allocator = strata_allocator_system()) {
    strata_tensor_t* tensor = nullptr;
    Status status(strata_tensor_create(dtype,
                                       static_cast<uint32_t>(dims.size()),
                                       dims.data(), allocator, &tensor));
    if (status.ok()) *out = Tensor(tensor);
    return status;
  }

  /// Creates a tensor holding a copy of |size| bytes at |data|.
  static Status fromData(
      strata_dtype_t dtype, const std::vector<int64_t>& dims, const void* data,
      size_t size, Tensor* out,
      strata_allocator_t allocator = strata_allocator_system()) {
    strata_tensor_t* tensor = nullptr;
    Status status(
        strata_tensor_create_copy(dtype, static_cast<uint32_t>(dims.size()),
                                  dims.data(), data, size, allocator, &tensor));
    if (status.ok()) *out = Tensor(tensor);
    return status;
  }

  /// A tensor over caller memory |data| of |size| bytes, not copied
  /// (strata_tensor_wrap): |data| must outlive the tensor, whose release
  /// calls |release(user, data)| if given.
  static Status wrap(strata_dtype_t dtype, const std::vector<int64_t>& dims,
                     void* data, size_t size, Tensor* out,
                     strata_tensor_release_fn_t release = nullptr,
                     void* user = nullptr,
                     strata_allocator_t allocator = strata_allocator_system()) {
    strata_tensor_t* tensor = nullptr;
    Status status(strata_tensor_wrap(dtype, static_cast<uint32_t>(dims.size()),
                                     dims.data(), data, size, release, user,
                                     allocator, &tensor));
    if (status.ok()) *out = Tensor(tensor);
    return status;
  }

  strata_tensor_t* get() const { return tensor_; }
  explicit operator bool() const { return tensor_ != nullptr; }
  strata_dtype_t dtype() const { return strata_tensor_dtype(tensor_); }
  std::vector<int64_t> dims() const {
    const int64_t* dims = strata_tensor_dims(tensor_);
    return std::vector<int64_t>(dims, dims + strata_tensor_rank(tensor_));
  }
  size_t byteSize() const { return strata_tensor_byte_size(tensor_); }
  size_t elementCount() const { return strata_tensor_element_count(tensor_); }
  template <typename T>
  T* data() {
    return static_cast<T*>(strata_tensor_data(tensor_));
  }
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(strata_tensor_const_data(tensor_));
  }
  strata_tensor_t* release() { return std::exchange(tensor_, nullptr); }
  void reset(strata_tensor_t* tensor = nullptr) {
    strata_tensor_release(std::exchange(tensor_, tensor));
  }

 private:
  strata_tensor_t* tensor_ = nullptr;
};

/// A reference to a loaded module; copies share it (retain/release).
class Module {
 public:
  Module() = default;
  /// Takes ownership of one reference to |module|.
  explicit Module(strata_module_t* module) : module_(module) {}
  Module(const Module& other) : module_(other.module_) {
    strata_module_retain(module_);
  }
  Module& operator=(const Module& other) {
    if (this != &other) {
      strata_module_retain(other.module_);
      strata_module_release(module_);
      module_ = other.module_;
    }
    return *this;
  }
  Module(Module&& other) noexcept
      : module_(std::exchange(other.module_, nullptr)) {}
  Module& operator=(Module&& other) noexcept {
    if (this != &other) {
      strata_module_release(module_);
      module_ = std::exchange(other.module_, nullptr);
    }
    return *this;
  }
  ~Module() { strata_module_release(module_); }

  /// strata_module_load_file.
  static Status loadFile(
      const std::string& path, Module* out,
      strata_allocator_t allocator = strata_allocator_system()) {
    strata_module_t* module = nullptr;
    Status status(strata_module_load_file(path.c_str(), allocator, &module));
    if (status.ok()) *out = Module(module);
    return status;
  }

  /// strata_module_load; |data| must outlive the module.
  static Status load(strata_const_byte_span_t data, Module* out,
                     strata_allocator_t allocator = strata_allocator_system()) {
    strata_module_t* module = nullptr;
    Status status(strata_module_load(data, allocator, &module));
    if (status.ok()) *out = Module(module);
    return status;
  }

  strata_module_t* get() const { return module_; }
  explicit operator bool() const { return module_ != nullptr; }
  Status verifyWeights() const {
    return Status(strata_module_verify_weights(module_));
  }
  size_t entryCount() const { return strata_module_entry_count(module_); }
  const strata_entry_signature_t* entry(size_t index) const {
    return strata_module_entry(module_, index);
  }
  Status findEntry(const std::string& name,
                   const strata_entry_signature_t** out) const {
    return Status(strata_module_find_entry(module_, name.c_str(), out));
  }
  /// strata_module_input_index: the position of input |name| of |entry|.
  Status inputIndex(const std::string& entry, const std::string& name,
                    size_t* out) const {
    return Status(strata_module_input_index(module_, entry.c_str(),
                                            name.c_str(), out));
  }
  /// strata_module_output_index: the position of output |name| of |entry|.
  Status outputIndex(const std::string& entry, const std::string& name,
                     size_t* out) const {
    return Status(strata_module_output_index(module_, entry.c_str(),
                                             name.c_str(), out));
  }
  /// strata_module_state_count / strata_module_state: the declared state
  /// tensors (read-only).
  size_t stateCount() const { return strata_module_state_count(module_); }
  const strata_state_signature_t* state(size_t index) const {
    return strata_module_state(module_, index);
  }
  /// strata_module_cpu_feature_count / strata_module_cpu_feature.
  size_t cpuFeatureCount() const {
    return strata_module_cpu_feature_count(module_);
  }
  const char* cpuFeature(size_t index) const {
    return strata_module_cpu_feature(module_, index);
  }
  /// strata_module_parallel: this module's world rank among the processes
  /// of its split model and their number (0 and 1 for a whole model).
  uint32_t parallelRank() const {
    uint32_t rank = 0;
    strata_module_parallel(module_, &rank, nullptr);
    return rank;
  }
  uint32_t parallelRanks() const {
    uint32_t ranks = 1;
    strata_module_parallel(module_, nullptr, &ranks);
    return ranks;
  }
  /// strata_module_parallel_layout: the stage and tensor rank behind the
  /// world rank.
  struct ParallelLayout {
    uint32_t tensorRank = 0;
    uint32_t tensorRanks = 1;
    uint32_t pipelineStage = 0;
    uint32_t pipelineStages = 1;
  };
  ParallelLayout parallelLayout() const {
    ParallelLayout l;
    strata_module_parallel_layout(module_, &l.tensorRank, &l.tensorRanks,
                                  &l.pipelineStage, &l.pipelineStages);
    return l;
  }

 private:
  strata_module_t* module_ = nullptr;
};

/// A reference to a thread pool several sessions may share; copies share
/// it (retain/release).
class ThreadPool {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool& other) : pool_(other.pool_) {
    strata_thread_pool_retain(pool_);
  }
  ThreadPool& operator=(const ThreadPool& other) {
    if (this != &other) {
      strata_thread_pool_retain(other.pool_);
      strata_thread_pool_release(pool_);
      pool_ = other.pool_;
    }
    return *this;
  }
  ThreadPool(ThreadPool&& other) noexcept
      : pool_(std::exchange(other.pool_, nullptr)) {}
  ThreadPool& operator=(ThreadPool&& other) noexcept {
    if (this != &other) {
      strata_thread_pool_release(pool_);
      pool_ = std::exchange(other.pool_, nullptr);
    }
    return *this;
  }
  ~ThreadPool() { strata_thread_pool_release(pool_); }

  /// strata_thread_pool_create with |thread_count| (0 = runtime's choice).
  static Status create(
      ThreadPool* out, uint32_t thread_count = 0,
      strata_allocator_t allocator = strata_allocator_system()) {
    strata_thread_pool_options_t options;
    strata_thread_pool_options_init(&options);
    options.thread_count = thread_count;
    strata_thread_pool_t* pool = nullptr;
    Status status(strata_thread_pool_create(&options, allocator, &pool));
    if (status.ok()) {
      ThreadPool result;
      result.pool_ = pool;
      *out = std::move(result);
    }
    return status;
  }

  strata_thread_pool_t* get() const { return pool_; }
  explicit operator bool() const { return pool_ != nullptr; }
  uint32_t threadCount() const { return strata_thread_pool_thread_count(pool_); }

 private:
  strata_thread_pool_t* pool_ = nullptr;
};

/// An owned io binding of one entry (io_binding.h). Bound tensors are
/// borrowed: they must outlive the binding or be unbound first.
class IoBinding {
 public:
  IoBinding() = default;
  IoBinding(IoBinding&& other) noexcept
      : binding_(std::exchange(other.binding_, nullptr)) {}
  IoBinding& operator=(IoBinding&& other) noexcept {
    if (this != &other) {
      strata_io_binding_release(binding_);
      binding_ = std::exchange(other.binding_, nullptr);
    }
    return *this;
  }
  IoBinding(const IoBinding&) = delete;
  IoBinding& operator=(const IoBinding&) = delete;
  ~IoBinding() { strata_io_binding_release(binding_); }

  /// strata_io_binding_create for |entry| of |module|.
  static Status create(
      const Module& module, const std::string& entry, IoBinding* out,
      strata_allocator_t allocator = strata_allocator_system()) {
    strata_io_binding_t* binding = nullptr;
    Status status(strata_io_binding_create(module.get(), entry.c_str(),
                                           allocator, &binding));
    if (status.ok()) {
      IoBinding result;
      result.binding_ = binding;
      *out = std::move(result);
    }
    return status;
  }

  strata_io_binding_t* get() const { return binding_; }
  /// Binds input |name| to |tensor| (null unbinds).
  Status bindInput(const std::string& name, const Tensor* tensor) {
    return Status(strata_io_binding_bind_input(
        binding_, name.c_str(), tensor ? tensor->get() : nullptr));
  }
  /// Binds output |name| to |tensor|, which runs write into (null unbinds).
  Status bindOutput(const std::string& name, Tensor* tensor) {
    return Status(strata_io_binding_bind_output(
        binding_, name.c_str(), tensor ? tensor->get() : nullptr));
  }
  /// Moves the tensor the last run made for unbound output |name| to |out|.
  Status takeOutput(const std::string& name, Tensor* out) {
    strata_tensor_t* tensor = nullptr;
    Status status(
        strata_io_binding_take_output(binding_, name.c_str(), &tensor));
    if (status.ok()) *out = Tensor(tensor);
    return status;
  }

 private:
  strata_io_binding_t* binding_ = nullptr;
};

/// An owned session.
class Session {
 public:
  Session() = default;
  Session(Session&& other) noexcept
      : session_(std::exchange(other.session_, nullptr)) {}
  Session& operator=(Session&& other) noexcept {
    if (this != &other) {
      strata_session_release(session_);
      session_ = std::exchange(other.session_, nullptr);
    }
    return *this;
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { strata_session_release(session_); }

  /// strata_session_create with |thread_count| (0 = runtime's choice).
  static Status create(
      const Module& module, Session* out, uint32_t thread_count = 0,
      strata_allocator_t allocator = strata_allocator_system()) {
    strata_session_options_t options;
    strata_session_options_init(&options);
    options.thread_count = thread_count;
    strata_session_t* session = nullptr;
    Status status(
        strata_session_create(module.get(), &options, allocator, &session));
    if (status.ok()) {
      Session result;
      result.session_ = session;
      *out = std::move(result);
    }
    return status;
  }

  strata_session_t* get() const { return session_; }

  /// Runs |entry| on |inputs|; on success |*outputs| holds one tensor per
  /// output of the entry, in manifest order.
  Status run(const std::string& entry, const std::vector<const Tensor*>& inputs,
             std::vector<Tensor>* outputs) {
    const strata_entry_signature_t* signature = nullptr;
    Status status(strata_module_find_entry(strata_session_module(session_),
                                           entry.c_str(), &signature));
    if (!status.ok()) return status;
    std::vector<const strata_tensor_t*> raw;
    raw.reserve(inputs.size());
    for (const Tensor* input : inputs) {
      raw.push_back(input ? input->get() : nullptr);
    }
    std::vector<strata_tensor_t*> results(signature->output_count, nullptr);
    status =
        Status(strata_session_run(session_, entry.c_str(), raw.data(),
                                  raw.size(), results.data(), results.size()));
    if (!status.ok()) return status;
    outputs->clear();
    for (strata_tensor_t* result : results) outputs->emplace_back(result);
    return status;
  }

  /// strata_session_run_named: |inputs| as (name, tensor) pairs in any
  /// order; on success |*outputs| holds the outputs named in
  /// |output_names|, in that order, or every output in manifest order when
  /// |output_names| is empty.
  Status runNamed(
      const std::string& entry,
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& output_names,
      std::vector<Tensor>* outputs) {
    size_t count = output_names.size();
    if (output_names.empty()) {
      const strata_entry_signature_t* signature = nullptr;
      Status status(strata_module_find_entry(strata_session_module(session_),
                                             entry.c_str(), &signature));
      if (!status.ok()) return status;
      count = signature->output_count;
    }
    std::vector<const char*> names;
    std::vector<const strata_tensor_t*> raw;
    names.reserve(inputs.size());
    raw.reserve(inputs.size());
    for (const auto& input : inputs) {
      names.push_back(input.first.c_str());
      raw.push_back(input.second ? input.second->get() : nullptr);
    }
    std::vector<const char*> wanted;
    wanted.reserve(output_names.size());
    for (const std::string& name : output_names) wanted.push_back(name.c_str());
    std::vector<strata_tensor_t*> results(count, nullptr);
    Status status(strata_session_run_named(
        session_, entry.c_str(), names.data(), raw.data(), raw.size(),
        output_names.empty() ? nullptr : wanted.data(), results.data(),
        results.size()));
    if (!status.ok()) return status;
    outputs->clear();
    for (strata_tensor_t* result : results) outputs->emplace_back(result);
    return status;
  }

  /// strata_session_run_into: output o is written into |*outputs[o]|, one
  /// caller tensor per output of the entry, in manifest order.
  Status runInto(const std::string& entry,
                 const std::vector<const Tensor*>& inputs,
                 const std::vector<Tensor*>& outputs) {
    std::vector<const strata_tensor_t*> in;
    in.reserve(inputs.size());
    for (const Tensor* input : inputs) {
      in.push_back(input ? input->get() : nullptr);
    }
    std::vector<strata_tensor_t*> out;
    out.reserve(outputs.size());
    for (Tensor* output : outputs) {
      out.push_back(output ? output->get() : nullptr);
    }
    return Status(strata_session_run_into(session_, entry.c_str(), in.data(),
                                          in.size(), out.data(), out.size()));
  }

  /// strata_session_run_binding.
  Status run(IoBinding& binding) {
    return Status(strata_session_run_binding(session_, binding.get()));
  }

  /// strata_session_set_thread_pool: runs use |pool| from now on (an empty
  /// handle: workers of the session's own).
  Status setThreadPool(const ThreadPool& pool) {
    return Status(strata_session_set_thread_pool(session_, pool.get()));
  }

  /// strata_session_cancel: stops the run in progress (any thread).
  void cancel() const { strata_session_cancel(session_); }

  /// strata_session_set_communicator: the group a tensor-parallel rank's
  /// collectives run over (null: none). The struct is copied; what its
  /// |self| points to must outlive the session's use of it.
  Status setCommunicator(const strata_communicator_t* communicator) {
    return Status(strata_session_set_communicator(session_, communicator));
  }

 private:
  strata_session_t* session_ = nullptr;
};

/// An owned text generator over a session (generate.h), which must outlive
/// it. The token callback runs on the thread that calls addSequence or
/// step.
class Generator {
 public:
  using TokenCallback =
      std::function<void(uint64_t sequence_id, int64_t token, bool finished)>;

  Generator() = default;
  Generator(Generator&& other) noexcept
      : generator_(std::exchange(other.generator_, nullptr)),
        callback_(std::move(other.callback_)) {}
  Generator& operator=(Generator&& other) noexcept {
    if (this != &other) {
      strata_generator_release(generator_);
      generator_ = std::exchange(other.generator_, nullptr);
      callback_ = std::move(other.callback_);
    }
    return *this;
  }
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  ~Generator() { strata_generator_release(generator_); }

  /// strata_generator_create over |session| with |prefill_chunk| (0: the
  /// compiled prefill_length) and an optional |callback|.
  static Status create(Session& session, Generator* out,
                       int64_t prefill_chunk = 0,
                       TokenCallback callback = nullptr) {
    strata_generator_options_t options;
    strata_generator_options_init(&options);
    options.prefill_chunk = prefill_chunk;
    return create(session, options, out, std::move(callback));
  }

  /// strata_generator_create with every option (speculative decoding's
  /// draft_session, prompt_lookup, ...); |callback| replaces the options'
  /// callback when given.
  static Status create(Session& session, strata_generator_options_t options,
                       Generator* out, TokenCallback callback = nullptr) {
    Generator result;
    if (callback) {
      // Held on the heap so that its address survives moves.
      result.callback_ = std::make_unique<TokenCallback>(std::move(callback));
      options.callback = &Generator::forward;
      options.callback_user = result.callback_.get();
    }
    Status status(
        strata_generator_create(session.get(), &options, &result.generator_));
    if (status.ok()) *out = std::move(result);
    return status;
  }

  strata_generator_t* get() const { return generator_; }

  /// strata_generator_add_sequence (|params| null: greedy defaults).
  Status addSequence(const std::vector<int64_t>& prompt,
                     const strata_generation_params_t* params,
                     uint64_t* sequence_id) {
    return Status(strata_generator_add_sequence(
        generator_, prompt.data(), prompt.size(), params, sequence_id));
  }
  /// strata_generator_begin_sequence: a slot, and the prompt kept for
  /// prefill().
  Status beginSequence(const std::vector<int64_t>& prompt,
                       const strata_generation_params_t* params,
                       uint64_t* sequence_id) {
    return Status(strata_generator_begin_sequence(
        generator_, prompt.data(), prompt.size(), params, sequence_id));
  }
  /// strata_generator_prefill: up to |max_tokens| more prompt tokens.
  Status prefill(uint64_t sequence_id, size_t max_tokens,
                 size_t* remaining = nullptr) {
    return Status(strata_generator_prefill(generator_, sequence_id, max_tokens,
                                           remaining));
  }
  /// strata_generator_step; |active| (may be null) gets the sequences
  /// still in flight.
  Status step(size_t* active = nullptr) {
    return Status(strata_generator_step(generator_, active));
  }
  Status cancel(uint64_t sequence_id) {
    return Status(strata_generator_cancel(generator_, sequence_id));
  }
  Status removeSequence(uint64_t sequence_id) {
    return Status(strata_generator_remove_sequence(generator_, sequence_id));
  }
  /// A copy of the tokens generated so far.
  Status tokens(uint64_t sequence_id, std::vector<int64_t>* out) const {
    const int64_t* tokens = nullptr;
    size_t count = 0;
    Status status(strata_generator_sequence_tokens(generator_, sequence_id,
                                                   &tokens, &count));
    if (status.ok()) out->assign(tokens, tokens + count);
    return status;
  }
  Status metrics(uint64_t sequence_id,
                 strata_generation_metrics_t* out) const {
    strata_generation_metrics_init(out);
    return Status(strata_generator_metrics(generator_, sequence_id, out));
  }

 private:
  static void forward(void* user, uint64_t sequence_id, int64_t token,
                      int finished) {
    (*static_cast<TokenCallback*>(user))(sequence_id, token, finished != 0);
  }

  strata_generator_t* generator_ = nullptr;
  std::unique_ptr<TokenCallback> callback_;
};

}  // namespace strata

#endif  // STRATA_RUNTIME_RUNTIME_HPP_
