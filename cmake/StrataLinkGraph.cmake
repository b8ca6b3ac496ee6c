#===- cmake/StrataLinkGraph.cmake - write the targets' direct links --------===#
# SPDX-License-Identifier: Apache-2.0
# Writes one line per target defined in the project, so that
# test/arch/check_layering.py can check the link graph against the same
# layering table as the #include graph, with CMake's own view of the links.

# Every build-system target of |dir| and its subdirectories, appended to |out|.
function(_strata_collect_targets dir out)
  set(found ${${out}})
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  list(APPEND found ${targets})
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    _strata_collect_targets(${subdir} found)
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# strata_write_link_graph(FILE): lines of
#   <target> TAB <source dir relative to the project> TAB <link;link;...>
# with the direct links of LINK_LIBRARIES and INTERFACE_LINK_LIBRARIES.
# Generator expressions are kept verbatim; the checker unwraps them.
function(strata_write_link_graph file)
  set(targets "")
  _strata_collect_targets(${PROJECT_SOURCE_DIR} targets)
  set(lines "")
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    # Custom targets (TableGen, docs, check-*) link nothing.
    if(type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(dir ${target} SOURCE_DIR)
    file(RELATIVE_PATH dir ${PROJECT_SOURCE_DIR} ${dir})
    set(links "")
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES)
      get_target_property(libs ${target} ${property})
      if(libs)
        list(APPEND links ${libs})
      endif()
    endforeach()
    list(REMOVE_DUPLICATES links)
    string(APPEND lines "${target}\t${dir}\t${links}\n")
  endforeach()
  file(WRITE ${file} "${lines}")
endfunction()
