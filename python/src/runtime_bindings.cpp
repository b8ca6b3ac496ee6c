//===- runtime_bindings.cpp - Module and Session --------------------------===//
// SPDX-License-Identifier: Apache-2.0
// Loads artifacts, describes their entries as plain Python data and runs
// them on numpy arrays without copying inputs or outputs. The GIL is
// released while the runtime works, so another thread may cancel a run;
// the runtime runs one call of a session at a time, so Python threads
// sharing one take turns on its lock (the generator's calls too).

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <string>
#include <vector>

#include "runtime_bindings.h"
#include "status.h"
#include "strata/runtime/cpu.h"
#include "strata/runtime/module.h"
#include "strata/runtime/session.h"
#include "tensors.h"

namespace nb = nanobind;

namespace strata::python {
namespace {

// A loaded artifact (one reference of the runtime's module).
class Module {
 public:
  explicit Module(strata_module_t* module) : module_(module) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() { strata_module_release(module_); }

  strata_module_t* get() const { return module_; }

  // [{name, kind, inputs: [{name, dtype, dims: [(extent, symbol, max)]}],
  //   outputs: [...]}] in manifest order.
  nb::list entries() const {
    nb::list out;
    for (size_t i = 0; i < strata_module_entry_count(module_); ++i) {
      const strata_entry_signature_t* e = strata_module_entry(module_, i);
      nb::dict entry;
      entry["name"] = e->name;
      entry["kind"] = static_cast<int>(e->kind);
      entry["inputs"] = signatures(e->inputs, e->input_count);
      entry["outputs"] = signatures(e->outputs, e->output_count);
      out.append(entry);
    }
    return out;
  }

  nb::list states() const {
    nb::list out;
    for (size_t i = 0; i < strata_module_state_count(module_); ++i) {
      const strata_state_signature_t* s = strata_module_state(module_, i);
      nb::dict state;
      state["name"] = s->name;
      state["dtype"] = strata_dtype_name(s->dtype);
      state["per_sequence"] = s->scope == STRATA_STATE_SCOPE_PER_SEQUENCE;
      state["dims"] = dims(s->dims, s->rank);
      out.append(state);
    }
    return out;
  }

  nb::list kernels() const {
    nb::list out;
    for (size_t i = 0; i < strata_module_kernel_count(module_); ++i) {
      const char* import = nullptr;
      const char* set = nullptr;
      throwIfFailed(strata_module_kernel(module_, i, &import, &set));
      out.append(nb::make_tuple(import, set));
    }
    return out;
  }

  std::vector<std::string> cpuFeatures() const {
    std::vector<std::string> out;
    for (size_t i = 0; i < strata_module_cpu_feature_count(module_); ++i)
      out.push_back(strata_module_cpu_feature(module_, i));
    return out;
  }

  uint64_t weightsSize() const { return strata_module_weights_size(module_); }

  void verifyWeights() const {
    strata_status_t status;
    {
      nb::gil_scoped_release unlocked;
      status = strata_module_verify_weights(module_);
    }
    throwIfFailed(status);
  }

 private:
  static nb::list dims(const strata_dim_t* d, uint32_t rank) {
    nb::list out;
    for (uint32_t i = 0; i < rank; ++i)
      out.append(nb::make_tuple(d[i].extent,
                                d[i].symbol ? nb::object(nb::str(d[i].symbol))
                                            : nb::none(),
                                d[i].max));
    return out;
  }
  static nb::list signatures(const strata_tensor_signature_t* s, size_t n) {
    nb::list out;
    for (size_t i = 0; i < n; ++i) {
      nb::dict t;
      t["name"] = s[i].name;
      t["dtype"] = strata_dtype_name(s[i].dtype);
      t["dtype_code"] = static_cast<int>(s[i].dtype);
      t["dims"] = dims(s[i].dims, s[i].rank);
      out.append(t);
    }
    return out;
  }

  strata_module_t* module_;
};

// One session over a module: runs, state, threads, cancellation.
class Session {
 public:
  Session(Module& module, uint32_t threads) {
    strata_session_options_t options;
    strata_session_options_init(&options);
    options.thread_count = threads;
    throwIfFailed(strata_session_create(module.get(), &options,
                                        strata_allocator_system(), &session_));
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { strata_session_release(session_); }

  strata_session_t* get() const { return session_; }
  std::mutex& turn() { return mutex_; }

  // Entry |entry| on |arrays| named |names|, read as |dtypes|; every output
  // in manifest order.
  nb::list run(const std::string& entry, const std::vector<std::string>& names,
               nb::list arrays, const std::vector<int>& dtypes,
               size_t outputCount) {
    const size_t n = names.size();
    if (nb::len(arrays) != n || dtypes.size() != n)
      throwStatus(STRATA_STATUS_INVALID_ARGUMENT,
                  "run: names, arrays and dtypes differ in length");
    struct Inputs {
      std::vector<strata_tensor_t*> tensors;
      ~Inputs() {
        for (strata_tensor_t* t : tensors) strata_tensor_release(t);
      }
    } inputs;
    std::vector<const char*> cNames(n);
    for (size_t i = 0; i < n; ++i) {
      inputs.tensors.push_back(wrapArray(
          arrays[i], static_cast<strata_dtype_t>(dtypes[i]), names[i]));
      cNames[i] = names[i].c_str();
    }
    // Outputs not yet handed to numpy are released if anything throws.
    struct Outputs {
      std::vector<strata_tensor_t*> tensors;
      ~Outputs() {
        for (strata_tensor_t* t : tensors) strata_tensor_release(t);
      }
    } outputs{std::vector<strata_tensor_t*>(outputCount, nullptr)};
    throwIfFailed(inTurn(mutex_, [&] {
      const auto start = std::chrono::steady_clock::now();
      strata_status_t status = strata_session_run_named(
          session_, entry.c_str(), cNames.data(), inputs.tensors.data(), n,
          nullptr, outputs.tensors.data(), outputCount);
      lastRunSeconds_ = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      return status;
    }));
    nb::list out;
    for (strata_tensor_t*& t : outputs.tensors) {
      strata_tensor_t* owned = t;
      t = nullptr;  // toNumpy owns it now, even if it throws
      out.append(toNumpy(owned));
    }
    return out;
  }

  void cancel() { strata_session_cancel(session_); }

  void setThreads(uint32_t count) {
    throwIfFailed(inTurn(mutex_, [&] {
      return strata_session_set_thread_count(session_, count);
    }));
  }
  uint32_t threads() const { return strata_session_thread_count(session_); }

  nb::object readState(size_t index) {
    strata_tensor_t* tensor = nullptr;
    throwIfFailed(inTurn(mutex_, [&] {
      return strata_session_read_state(session_, index, &tensor);
    }));
    return toNumpy(tensor);
  }
  void resetState(int64_t slot) {
    throwIfFailed(inTurn(
        mutex_, [&] { return strata_session_reset_state(session_, slot); }));
  }
  size_t trim() {
    return inTurn(mutex_, [&] { return strata_session_trim(session_); });
  }
  double lastRunSeconds() const { return lastRunSeconds_; }

 private:
  strata_session_t* session_ = nullptr;
  std::mutex mutex_;  // one call at a time (session.h)
  // The runtime's own time in the last run (the Python layer's cost is
  // the rest of session.run's).
  double lastRunSeconds_ = 0.0;
};

}  // namespace

// The Session class is also what the generator binding takes: its handle
// and its turn.
strata_session_t* sessionHandle(nb::handle session) {
  return nb::cast<Session&>(session).get();
}
std::mutex& sessionTurn(nb::handle session) {
  return nb::cast<Session&>(session).turn();
}

void bindRuntime(nb::module_& m) {
  nb::class_<Module>(m, "Module")
      .def(
          "__init__",
          [](Module* self, const std::string& path) {
            strata_module_t* module = nullptr;
            strata_status_t status;
            {
              nb::gil_scoped_release unlocked;
              status = strata_module_load_file(
                  path.c_str(), strata_allocator_system(), &module);
            }
            throwIfFailed(status, path);
            new (self) Module(module);
          },
          nb::arg("path"))
      .def("entries", &Module::entries)
      .def("states", &Module::states)
      .def("kernels", &Module::kernels)
      .def("cpu_features", &Module::cpuFeatures)
      .def("weights_size", &Module::weightsSize)
      .def("verify_weights", &Module::verifyWeights);

  nb::class_<Session>(m, "Session")
      .def(nb::init<Module&, uint32_t>(), nb::arg("module"),
           nb::arg("threads") = 0, nb::keep_alive<1, 2>())
      .def("run", &Session::run, nb::arg("entry"), nb::arg("names"),
           nb::arg("arrays"), nb::arg("dtypes"), nb::arg("output_count"))
      .def("cancel", &Session::cancel)
      .def("set_threads", &Session::setThreads)
      .def("threads", &Session::threads)
      .def("read_state", &Session::readState)
      .def("reset_state", &Session::resetState, nb::arg("slot") = -1)
      .def("trim", &Session::trim)
      .def("last_run_seconds", &Session::lastRunSeconds);

  m.def("host_cpu_features", [] {
    std::vector<std::string> out;
    const uint64_t host = strata_cpu_features_host();
    for (int bit = 0; bit < 64; ++bit) {
      const char* name = strata_cpu_feature_name(uint64_t{1} << bit);
      if ((host & (uint64_t{1} << bit)) && name) out.push_back(name);
    }
    return out;
  });
  m.def("kernel_isa", [] { return std::string(strata_cpu_kernel_isa()); });
  m.def("cap_kernel_isa", [](const std::string& isa) {
    throwIfFailed(strata_cpu_cap_kernel_isa(isa.c_str()));
  });
}

}  // namespace strata::python
