#===- check_runtime_deps.cmake - the runtime .so needs no MLIR/LLVM --------===#
# SPDX-License-Identifier: Apache-2.0
# Usage: cmake -DLIB=<path to libstrata_runtime.so> -P check_runtime_deps.cmake
# Reads the DT_NEEDED entries with objdump and checks the 5 MB size budget.
find_program(OBJDUMP objdump REQUIRED)
execute_process(COMMAND ${OBJDUMP} -p ${LIB} OUTPUT_VARIABLE dump RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump failed on ${LIB}")
endif()
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${dump}")
message(STATUS "${LIB}: ${needed}")
foreach(entry IN LISTS needed)
  if(entry MATCHES "MLIR|LLVM|clang")
    message(FATAL_ERROR "runtime depends on '${entry}'")
  endif()
endforeach()
file(SIZE ${LIB} size)
if(size GREATER 5242880)
  message(FATAL_ERROR "runtime library is ${size} bytes, over the 5 MB budget")
endif()
