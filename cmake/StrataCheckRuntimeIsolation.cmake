#===- cmake/StrataCheckRuntimeIsolation.cmake - runtime links no MLIR/LLVM -===#
# SPDX-License-Identifier: Apache-2.0
# Fails the configure step if a runtime-side target (the runtime library,
# the artifact writer, strata-run, strata-bench) transitively links an MLIR
# or LLVM target. A ctest check of the built binaries' dependencies backs it;
# test/arch/check_layering.py checks the whole layering.

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

# strata_check_runtime_isolation(target...): each target that exists.
function(strata_check_runtime_isolation)
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    set(all "")
    _strata_collect_links(${target} all)
    foreach(lib IN LISTS all)
      if(lib MATCHES "^(MLIR|LLVM)" OR lib MATCHES "lib(MLIR|LLVM)")
        message(FATAL_ERROR "${target} links '${lib}': the runtime side must "
                            "not link MLIR or LLVM")
      endif()
    endforeach()
  endforeach()
endfunction()

# strata_check_runtime_links_no_transport(target...): the runtime library
# and the writer link no MPI; a transport is the embedder's choice
# (runtime/comm/).
function(strata_check_runtime_links_no_transport)
  foreach(target IN LISTS ARGN)
    if(NOT TARGET ${target})
      continue()
    endif()
    set(all "")
    _strata_collect_links(${target} all)
    foreach(lib IN LISTS all)
      if(lib MATCHES "^MPI::" OR lib MATCHES "libmpi" OR lib STREQUAL "strata_mpi")
        message(FATAL_ERROR "${target} links '${lib}': the runtime library "
                            "must not link a transport")
      endif()
    endforeach()
  endforeach()
endfunction()
