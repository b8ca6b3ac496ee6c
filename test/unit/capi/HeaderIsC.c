/*===- HeaderIsC.c - strata_compiler.h compiles as C ----------------------===*
 * SPDX-License-Identifier: Apache-2.0
 * The C API header is C: this file is built by the C compiler into the test.
 *===----------------------------------------------------------------------===*/

#include "compiler/capi/strata_compiler.h"

size_t strata_test_options_size_from_c(void) {
  strata_compile_options_t options;
  strata_compile_options_init(&options);
  return options.struct_size;
}
