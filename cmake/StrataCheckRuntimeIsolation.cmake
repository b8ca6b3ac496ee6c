#===- cmake/StrataCheckRuntimeIsolation.cmake - runtime links no MLIR/LLVM -===#
# SPDX-License-Identifier: Apache-2.0
# Fails the configure step if the runtime library (transitively) links an
# MLIR or LLVM target. A ctest check of the built .so's dependencies backs it.

function(_strata_collect_links target out)
  set(seen ${${out}})
  get_target_property(libs ${target} LINK_LIBRARIES)
  get_target_property(ilibs ${target} INTERFACE_LINK_LIBRARIES)
  foreach(lib IN LISTS libs ilibs)
    if(NOT lib OR lib MATCHES "NOTFOUND$" OR lib IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${lib})
    if(TARGET ${lib})
      _strata_collect_links(${lib} seen)
    endif()
  endforeach()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(strata_check_runtime_isolation target)
  set(all "")
  _strata_collect_links(${target} all)
  foreach(lib IN LISTS all)
    if(lib MATCHES "^(MLIR|LLVM)" OR lib MATCHES "lib(MLIR|LLVM)")
      message(FATAL_ERROR "${target} links '${lib}': the runtime must not link MLIR or LLVM")
    endif()
  endforeach()
endfunction()
