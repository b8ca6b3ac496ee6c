#===- check_runtime_only_build.cmake - the runtime builds without MLIR -----===#
# SPDX-License-Identifier: Apache-2.0
# Usage: cmake -DSOURCE_DIR=<repo> -DWORK_DIR=<scratch> [-DC_COMPILER=..]
#              [-DCXX_COMPILER=..] -P check_runtime_only_build.cmake
# Configures SOURCE_DIR with STRATA_RUNTIME_ONLY=ON and find_package(MLIR)
# and find_package(LLVM) disabled (reaching either is a configure error),
# then builds the runtime, strata-run, the tokenizers and, where GoogleTest
# is installed, the runtime's unit tests (strata_runtime_tests).

cmake_minimum_required(VERSION 3.20)

foreach(var SOURCE_DIR WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "${var} is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

set(compilers "")
if(C_COMPILER)
  list(APPEND compilers -DCMAKE_C_COMPILER=${C_COMPILER})
endif()
if(CXX_COMPILER)
  list(APPEND compilers -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()

execute_process(
  COMMAND ${CMAKE_COMMAND} -G Ninja -S ${SOURCE_DIR} -B ${WORK_DIR}
          -DSTRATA_RUNTIME_ONLY=ON
          -DCMAKE_DISABLE_FIND_PACKAGE_MLIR=ON
          -DCMAKE_DISABLE_FIND_PACKAGE_LLVM=ON
          ${compilers}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "runtime-only configure failed:\n${out}")
endif()
if(NOT out MATCHES "STRATA_RUNTIME_ONLY: runtime only")
  message(FATAL_ERROR "the configure did not take the runtime-only path:\n${out}")
endif()

set(targets strata_runtime strata-run strata_tokenizers)
if(NOT out MATCHES "strata-serve is not built")
  list(APPEND targets strata-serve)
endif()
if(out MATCHES "GoogleTest not found")
  message(STATUS "GoogleTest not installed: runtime tests not built")
else()
  list(APPEND targets strata_runtime_tests)
endif()
execute_process(COMMAND ninja -C ${WORK_DIR} ${targets}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "runtime-only build failed:\n${out}")
endif()
message(STATUS "runtime-only build of ${targets}: ok")
