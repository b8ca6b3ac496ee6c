#===- cmake/StrataToolchain.cmake - compiler launcher, linker, flags -------===#
# SPDX-License-Identifier: Apache-2.0
# Build speed (ccache, lld-22), warnings and sanitizers for every target.

find_program(STRATA_CCACHE ccache)
if(STRATA_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # Paths under the source tree hash relative to it, so build folders beside
  # each other (build, build-asan, a clean clone's) share cache entries.
  set(_strata_ccache ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}
      ${STRATA_CCACHE})
  set(CMAKE_C_COMPILER_LAUNCHER ${_strata_ccache})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_strata_ccache})
  message(STATUS "Using ccache: ${STRATA_CCACHE}")
endif()

# /usr/bin/ld.lld is lld-14 on Debian 12; point the driver at lld-22's folder.
find_program(STRATA_LLD22 ld.lld HINTS /usr/lib/llvm-22/bin NO_DEFAULT_PATH)
if(STRATA_LLD22)
  get_filename_component(_strata_lld_dir "${STRATA_LLD22}" DIRECTORY)
  add_link_options("-B${_strata_lld_dir}" "-fuse-ld=lld")
  message(STATUS "Linking with ${STRATA_LLD22}")
endif()

add_compile_options(-Wall -Wextra)
# GCC 12 reports false positives inside LLVM's unique_function (llvm-project #58524-style).
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-maybe-uninitialized)
endif()

if(STRATA_SANITIZE)
  string(REPLACE "," ";" _strata_sanitizers "${STRATA_SANITIZE}")
  foreach(_s IN LISTS _strata_sanitizers)
    if(NOT _s MATCHES "^(address|undefined|leak|thread|fuzzer-no-link)$")
      message(FATAL_ERROR "STRATA_SANITIZE: unsupported sanitizer '${_s}'")
    endif()
  endforeach()
  if("thread" IN_LIST _strata_sanitizers AND "address" IN_LIST _strata_sanitizers)
    message(FATAL_ERROR "STRATA_SANITIZE: thread and address exclude each other")
  endif()
  add_compile_options(-fsanitize=${STRATA_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${STRATA_SANITIZE})
  message(STATUS "Sanitizers: ${STRATA_SANITIZE}")
endif()
