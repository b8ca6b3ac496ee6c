/*===- run_model.c - Load an artifact and run one entry (C API) -----------===//
 * SPDX-License-Identifier: Apache-2.0
 * run_model ARTIFACT [ENTRY]
 * Loads a compiled .strata artifact, creates a session, fills every input
 * of ENTRY (default: the first entry) with a fixed pattern, runs it and
 * prints each output's name, dtype, shape and first values. Every failure
 * is a status, printed as "run_model: CODE: message" with exit status 1.
 * Loading an artifact runs its native code: load only trusted artifacts.
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strata/runtime/api.h>

/* Symbolic dims take this value, or their compiled maximum if smaller. */
#define EXAMPLE_DIM 2
/* Values printed per output. */
#define EXAMPLE_PRINT 16

/* The pattern: f32/f64 elements count 0, 1, ..., 9, 0, ...; integers and
 * bool are 1 (a valid token id, position and mask value); other dtypes
 * stay 0. */
static void fill_input(strata_tensor_t* tensor) {
  size_t count = strata_tensor_element_count(tensor);
  void* data = strata_tensor_data(tensor);
  size_t i;
  switch (strata_tensor_dtype(tensor)) {
    case STRATA_DTYPE_F32:
      for (i = 0; i < count; ++i) ((float*)data)[i] = (float)(i % 10);
      break;
    case STRATA_DTYPE_F64:
      for (i = 0; i < count; ++i) ((double*)data)[i] = (double)(i % 10);
      break;
    case STRATA_DTYPE_I64:
      for (i = 0; i < count; ++i) ((int64_t*)data)[i] = 1;
      break;
    case STRATA_DTYPE_I32:
      for (i = 0; i < count; ++i) ((int32_t*)data)[i] = 1;
      break;
    case STRATA_DTYPE_I8:
    case STRATA_DTYPE_U8:
    case STRATA_DTYPE_BOOL:
    case STRATA_DTYPE_I4:
    case STRATA_DTYPE_U4:
      memset(data, 1, count);
      break;
    default:
      break;
  }
}

/* Creates input |index| of |entry|: static dims as compiled, symbolic ones
 * EXAMPLE_DIM (so every use of one name gets the same value). */
static strata_status_t create_input(const strata_entry_signature_t* entry,
                                    size_t index, strata_tensor_t** out) {
  const strata_tensor_signature_t* signature = &entry->inputs[index];
  int64_t dims[STRATA_MAX_RANK];
  uint32_t d;
  for (d = 0; d < signature->rank; ++d) {
    const strata_dim_t* dim = &signature->dims[d];
    dims[d] = !dim->symbol ? dim->extent
              : dim->max < EXAMPLE_DIM ? dim->max
                                       : EXAMPLE_DIM;
  }
  STRATA_RETURN_IF_ERROR(strata_tensor_create(signature->dtype,
                                              signature->rank, dims,
                                              strata_allocator_system(), out));
  fill_input(*out);
  return strata_ok_status();
}

/* One line per output: "name dtype [dims]: values". */
static void print_output(const char* name, const strata_tensor_t* tensor) {
  const int64_t* dims = strata_tensor_dims(tensor);
  const void* data = strata_tensor_const_data(tensor);
  strata_dtype_t dtype = strata_tensor_dtype(tensor);
  size_t count = strata_tensor_element_count(tensor);
  size_t shown = count < EXAMPLE_PRINT ? count : EXAMPLE_PRINT;
  uint32_t d;
  size_t i;
  printf("%s %s [", name, strata_dtype_name(dtype));
  for (d = 0; d < strata_tensor_rank(tensor); ++d)
    printf("%s%lld", d ? ", " : "", (long long)dims[d]);
  printf("]:");
  for (i = 0; i < shown; ++i) {
    if (dtype == STRATA_DTYPE_F32)
      printf(" %g", ((const float*)data)[i]);
    else if (dtype == STRATA_DTYPE_F64)
      printf(" %g", ((const double*)data)[i]);
    else if (dtype == STRATA_DTYPE_I64)
      printf(" %lld", (long long)((const int64_t*)data)[i]);
    else if (dtype == STRATA_DTYPE_I32)
      printf(" %d", ((const int32_t*)data)[i]);
    else
      printf(" 0x%02x", ((const uint8_t*)data)[i]);
  }
  printf("%s\n", shown < count ? " ..." : "");
}

/* --8<-- [start:run_model] */
/* Loads |path|, runs |entry_name| (NULL: the first entry) once and prints
 * its outputs. Every object is released on every path. */
static strata_status_t run_model(const char* path, const char* entry_name) {
  strata_allocator_t allocator = strata_allocator_system();
  strata_module_t* module = NULL;
  STRATA_RETURN_IF_ERROR(strata_module_load_file(path, allocator, &module));

  /* Signatures are borrowed from the module. */
  const strata_entry_signature_t* entry = strata_module_entry(module, 0);
  strata_status_t status = strata_ok_status();
  if (entry_name) status = strata_module_find_entry(module, entry_name, &entry);

  strata_session_t* session = NULL;
  if (!status)
    status = strata_session_create(module, /*options=*/NULL, allocator,
                                   &session);

  strata_tensor_t* inputs[STRATA_MAX_ENTRY_INPUTS] = {NULL};
  for (size_t i = 0; !status && i < entry->input_count; ++i)
    status = create_input(entry, i, &inputs[i]);

  /* One slot per output; filled with new tensors only on success. */
  strata_tensor_t** outputs = NULL;
  if (!status) {
    outputs = calloc(entry->output_count + 1, sizeof(*outputs));
    if (!outputs)
      status = STRATA_MAKE_STATUS(STRATA_STATUS_RESOURCE_EXHAUSTED,
                                  "out of memory");
  }
  if (!status)
    status = strata_session_run(session, entry->name,
                                (const strata_tensor_t* const*)inputs,
                                entry->input_count, outputs,
                                entry->output_count);
  if (!status) {
    printf("entry %s\n", entry->name);
    for (size_t i = 0; i < entry->output_count; ++i)
      print_output(entry->outputs[i].name, outputs[i]);
  }

  for (size_t i = 0; outputs && i < entry->output_count; ++i)
    strata_tensor_release(outputs[i]);
  free(outputs);
  for (size_t i = 0; i < entry->input_count; ++i)
    strata_tensor_release(inputs[i]);
  strata_session_release(session);
  strata_module_release(module);  /* the session held its own reference */
  return status;
}
/* --8<-- [end:run_model] */

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: run_model ARTIFACT [ENTRY]\n");
    return 2;
  }
  /* A library older or newer in its major version breaks the ABI. */
  if (strata_runtime_api_version() >> 16 != STRATA_RUNTIME_API_VERSION >> 16) {
    fprintf(stderr, "run_model: runtime library API %#x, headers %#x\n",
            (unsigned)strata_runtime_api_version(),
            (unsigned)STRATA_RUNTIME_API_VERSION);
    return 1;
  }
  strata_status_t status = run_model(argv[1], argc == 3 ? argv[2] : NULL);
  if (status) {
    fprintf(stderr, "run_model: %s: %s\n",
            strata_status_code_string(strata_status_code(status)),
            strata_status_message(status));
    strata_status_free(status);
    return 1;
  }
  return 0;
}
