//===- io_binding.cc - Inputs and outputs of an entry, bound by name ------===//
// SPDX-License-Identifier: Apache-2.0
// Names resolve through the module's signatures when they are bound, so a
// run only walks the slots; strata_session_run_binding (session.cc) runs it.

#include "io_binding_internal.h"

#include <new>

strata_io_binding_t::~strata_io_binding_t() {
  for (strata_tensor_t* tensor : madeOutputs) strata_tensor_release(tensor);
}

extern "C" {

strata_status_t strata_io_binding_create(strata_module_t* module,
                                         const char* entry_name,
                                         strata_allocator_t allocator,
                                         strata_io_binding_t** out_binding) {
  if (!module || !entry_name || !out_binding) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_INVALID_ARGUMENT,
        "module, entry_name and out_binding must be non-null");
  }
  const strata_entry_signature_t* entry = nullptr;
  STRATA_RETURN_IF_ERROR(strata_module_find_entry(module, entry_name, &entry));
  void* record = nullptr;
  STRATA_RETURN_IF_ERROR(strata_allocator_malloc(
      allocator, sizeof(strata_io_binding_t), alignof(strata_io_binding_t),
      &record));
  auto* binding = new (record) strata_io_binding_t;
  binding->allocator = allocator;
  binding->entry = entry;
  try {
    binding->inputs.assign(entry->input_count, nullptr);
    binding->boundOutputs.assign(entry->output_count, nullptr);
    binding->madeOutputs.assign(entry->output_count, nullptr);
  } catch (const std::bad_alloc&) {
    strata_io_binding_release(binding);
    return STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                              "out of memory creating a binding for '%s'",
                              entry_name);
  }
  strata_module_retain(module);
  binding->module = module;
  *out_binding = binding;
  return nullptr;
}

void strata_io_binding_release(strata_io_binding_t* binding) {
  if (!binding) return;
  strata_module_t* module = binding->module;
  strata_allocator_t allocator = binding->allocator;
  binding->~strata_io_binding_t();
  strata_allocator_free(allocator, binding);
  strata_module_release(module);
}

strata_status_t strata_io_binding_bind_input(strata_io_binding_t* binding,
                                             const char* name,
                                             const strata_tensor_t* tensor) {
  if (!binding || !name) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "binding and name must be non-null");
  }
  size_t index = 0;
  STRATA_RETURN_IF_ERROR(strata_module_input_index(
      binding->module, binding->entry->name, name, &index));
  binding->inputs[index] = tensor;
  return nullptr;
}

strata_status_t strata_io_binding_bind_output(strata_io_binding_t* binding,
                                              const char* name,
                                              strata_tensor_t* tensor) {
  if (!binding || !name) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "binding and name must be non-null");
  }
  size_t index = 0;
  STRATA_RETURN_IF_ERROR(strata_module_output_index(
      binding->module, binding->entry->name, name, &index));
  binding->boundOutputs[index] = tensor;
  return nullptr;
}

strata_status_t strata_io_binding_take_output(strata_io_binding_t* binding,
                                              const char* name,
                                              strata_tensor_t** out_tensor) {
  if (!binding || !name || !out_tensor) {
    return STRATA_MAKE_STATUS(STRATA_STATUS_INVALID_ARGUMENT,
                              "binding, name and out_tensor must be non-null");
  }
  size_t index = 0;
  STRATA_RETURN_IF_ERROR(strata_module_output_index(
      binding->module, binding->entry->name, name, &index));
  strata_tensor_t* made = binding->madeOutputs[index];
  if (!made) {
    return STRATA_MAKE_STATUS(
        STRATA_STATUS_FAILED_PRECONDITION,
        "the binding holds no tensor for output '%s' of '%s': it was bound "
        "to a caller tensor in the last run, no run has succeeded yet, or it "
        "was taken already",
        name, binding->entry->name);
  }
  binding->madeOutputs[index] = nullptr;
  *out_tensor = made;
  return nullptr;
}

}  // extern "C"
