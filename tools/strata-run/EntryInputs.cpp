//===- EntryInputs.cpp - An entry's inputs from .npy files ----------------===//
// SPDX-License-Identifier: Apache-2.0

#include "EntryInputs.h"

#include <sys/stat.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "Npy.h"
#include "ToolErrors.h"
#include "tools/common/JsonText.h"

namespace strata::tools {

bool loadEntryInputs(
    const strata_entry_signature_t &entry,
    const std::vector<std::pair<std::string, std::string>> &given,
    strata_allocator_t allocator, TensorList *inputs, std::string *error) {
  std::map<std::string, std::string> files;
  for (const auto &[name, file] : given) {
    if (!files.emplace(name, file).second) {
      *error = "input '" + name + "' given twice";
      return false;
    }
  }
  for (size_t i = 0; i < entry.input_count; ++i) {
    const strata_tensor_signature_t &signature = entry.inputs[i];
    auto it = files.find(signature.name);
    if (it == files.end()) {
      *error = "missing --input " + std::string(signature.name) + "=FILE.npy";
      return false;
    }
    NpyArray array;
    std::string problem;
    if (!readNpy(it->second, &array, &problem)) {
      *error = "input '" + std::string(signature.name) + "': " + problem;
      return false;
    }
    // NumPy has no bfloat16, fp8 or 4-bit types: raw codes stand for them.
    if (!adaptToSignature(signature.dtype, &array, &problem)) {
      *error = "input '" + std::string(signature.name) + "' (" +
               strata_dtype_name(static_cast<strata_dtype_t>(signature.dtype)) +
               "): " + problem;
      return false;
    }
    strata_tensor_t *tensor = nullptr;
    strata_status_t status = strata_tensor_create_copy(
        static_cast<strata_dtype_t>(array.dtype),
        static_cast<uint32_t>(array.shape.size()), array.shape.data(),
        array.data.data(), array.data.size(), allocator, &tensor);
    if (status) {
      *error = "input '" + std::string(signature.name) +
               "': " + strata_status_message(status);
      strata_status_free(status);
      return false;
    }
    inputs->tensors.push_back(tensor);
    files.erase(it);
  }
  if (!files.empty()) {
    *error = "entry '" + std::string(entry.name) + "' has no input '" +
             files.begin()->first + "'";
    return false;
  }
  return true;
}

strata_status_t createSession(strata_module_t *module, long threads,
                              strata_allocator_t allocator, SessionHandle *out,
                              const strata_communicator_t *communicator) {
  strata_session_options_t options;
  strata_session_options_init(&options);
  options.thread_count = static_cast<uint32_t>(threads);
  STRATA_RETURN_IF_ERROR(
      strata_session_create(module, &options, allocator, &out->session));
  if (!communicator)
    return nullptr;
  return strata_session_set_communicator(out->session, communicator);
}

strata_status_t runEntry(strata_session_t *session,
                         const strata_entry_signature_t &entry,
                         const TensorList &inputs, TensorList *outputs,
                         double *ms) {
  std::vector<const strata_tensor_t *> pointers(inputs.tensors.begin(),
                                                inputs.tensors.end());
  outputs->clear();
  outputs->tensors.assign(entry.output_count, nullptr);
  auto start = std::chrono::steady_clock::now();
  strata_status_t status = strata_session_run(
      session, entry.name, pointers.data(), pointers.size(),
      outputs->tensors.data(), outputs->tensors.size());
  *ms = std::chrono::duration<double, std::milli>(
            std::chrono::steady_clock::now() - start)
            .count();
  if (status)
    outputs->tensors.clear(); // the run released nothing it did not make
  return status;
}

std::string sanitizeFileName(const std::string &name) {
  std::string out = name;
  for (char &c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-')
      c = '_';
  if (out == "." || out == "..")
    out = "_" + out;
  return out;
}

bool writeEntryOutputs(const strata_entry_signature_t &entry,
                       const TensorList &outputs, const std::string &dir,
                       std::vector<std::string> *written, std::string *error) {
  mkdir(dir.c_str(), 0777); // may exist already
  written->assign(entry.output_count, "");
  for (size_t o = 0; o < entry.output_count; ++o) {
    strata_tensor_t *t = outputs.tensors[o];
    std::string path =
        dir + "/" + sanitizeFileName(entry.outputs[o].name) + ".npy";
    if (!writeNpy(path, strata_tensor_dtype(t), strata_tensor_dims(t),
                  strata_tensor_rank(t), strata_tensor_const_data(t),
                  strata_tensor_byte_size(t), error))
      return false;
    (*written)[o] = path;
  }
  return true;
}

namespace {

std::string jsonMs(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6f", value);
  return buffer;
}

struct Step {
  std::string entry;
  std::vector<std::pair<std::string, std::string>> inputs;
};

bool parseSteps(const std::string &path, std::vector<Step> *steps,
                std::string *error) {
  std::ifstream in(path);
  if (!in) {
    *error = "cannot open steps file '" + path + "'";
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    Step step;
    if (!(words >> step.entry) || step.entry[0] == '#')
      continue;
    std::string spec;
    while (words >> spec) {
      size_t eq = spec.find('=');
      if (eq == 0 || eq == std::string::npos || eq + 1 == spec.size()) {
        *error = path + ":" + std::to_string(number) +
                 ": expected NAME=FILE.npy, got '" + spec + "'";
        return false;
      }
      step.inputs.push_back({spec.substr(0, eq), spec.substr(eq + 1)});
    }
    steps->push_back(std::move(step));
  }
  if (steps->empty()) {
    *error = "steps file '" + path + "' has no step";
    return false;
  }
  return true;
}

} // namespace

int runSteps(strata_module_t *module, const std::string &stepsPath,
             const std::string &outputDir, long threads, bool json,
             const strata_communicator_t *communicator) {
  strata_allocator_t allocator = strata_allocator_system();
  std::vector<Step> steps;
  std::string error;
  if (!parseSteps(stepsPath, &steps, &error))
    return fail(error);
  SessionHandle session;
  strata_status_t status =
      createSession(module, threads, allocator, &session, communicator);
  if (status)
    return failStatus("cannot create a session", status);
  if (!outputDir.empty())
    mkdir(outputDir.c_str(), 0777);
  std::string report = "[";
  for (size_t k = 0; k < steps.size(); ++k) {
    const strata_entry_signature_t *entry = nullptr;
    status = strata_module_find_entry(module, steps[k].entry.c_str(), &entry);
    if (status)
      return failStatus("step " + std::to_string(k), status);
    TensorList inputs;
    if (!loadEntryInputs(*entry, steps[k].inputs, allocator, &inputs, &error))
      return fail("step " + std::to_string(k) + ": " + error);
    TensorList outputs;
    double ms = 0;
    status = runEntry(session.session, *entry, inputs, &outputs, &ms);
    if (status)
      return failStatus("step " + std::to_string(k) + " (" + entry->name +
                            ") failed",
                        status);
    if (!outputDir.empty()) {
      std::vector<std::string> written;
      if (!writeEntryOutputs(*entry, outputs,
                             outputDir + "/" + std::to_string(k), &written,
                             &error))
        return fail(error);
    }
    if (json)
      report += (k ? ", " : "") + std::string("{\"entry\": ") +
                jsonString(entry->name) + ", \"ms\": " + jsonMs(ms) + "}";
    else
      std::printf("step %zu: %s %.3f ms\n", k, entry->name, ms);
  }
  if (json)
    std::printf("{\"steps\": %s]}\n", report.c_str());
  return 0;
}

} // namespace strata::tools
