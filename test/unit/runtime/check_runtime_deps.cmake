#===- check_runtime_deps.cmake - the runtime .so needs no MLIR/LLVM --------===#
# SPDX-License-Identifier: Apache-2.0
# Usage: cmake -DLIB=<path> [-DBUDGET=<bytes>] [-DNO_MPI=ON] [-DNO_CUDA=ON]
#        -P check_runtime_deps.cmake
# Reads the DT_NEEDED entries with objdump and checks the size budget
# (default 5 MB; BUDGET=0 skips it, for sanitizer builds). NO_MPI: the
# library needs no MPI either (the runtime itself; libstrata_mpi does).
# NO_CUDA: nor NCCL or a CUDA library (libstrata_nccl loads them itself).
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
  if(NO_MPI AND entry MATCHES "libmpi|libstrata_mpi|libopen-pal|libpmi")
    message(FATAL_ERROR "runtime depends on '${entry}'")
  endif()
  if(NO_CUDA AND entry MATCHES "libnccl|libcuda|libcublas|libnvrtc")
    message(FATAL_ERROR "${LIB} depends on '${entry}' at link time")
  endif()
endforeach()
if(NOT DEFINED BUDGET)
  set(BUDGET 5242880)
endif()
file(SIZE ${LIB} size)
if(BUDGET GREATER 0 AND size GREATER BUDGET)
  message(FATAL_ERROR "${LIB} is ${size} bytes, over the budget of ${BUDGET}")
endif()
