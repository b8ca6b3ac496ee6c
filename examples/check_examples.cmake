#===- examples/check_examples.cmake - the examples on an installed runtime -===#
# SPDX-License-Identifier: Apache-2.0
# Usage: cmake -DSOURCE_DIR=<repo> -DBUILD_DIR=<runtime build> -DWORK_DIR=<scratch>
#              -DWRITE_ARTIFACTS=<strata_write_test_artifacts>
#              [-DSTRATA_COMPILE=<strata-compile>] [-DC_COMPILER=..]
#              [-DCXX_COMPILER=..] -P check_examples.cmake
# 1. installs BUILD_DIR's `runtime` component into WORK_DIR/prefix (nothing
#    else may land there);
# 2. configures examples/ as a separate Ninja project against that prefix
#    (find_package(StrataRuntime)) and builds both programs, and builds the
#    C one again from pkg-config's flags alone;
# 3. runs them on the runtime tests' standard artifact and, with
#    STRATA_COMPILE, on examples/model/linear.onnxtext compiled by it: the
#    exact output lines, and the same error line from every program for a
#    missing entry and a corrupt file;
# 4. checks that the snippets of docs/runtime-api.md are the programs' code.

cmake_minimum_required(VERSION 3.20)

foreach(var SOURCE_DIR BUILD_DIR WORK_DIR WRITE_ARTIFACTS)
  if(NOT ${var})
    message(FATAL_ERROR "${var} is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}")
  endif()
endfunction()

#===------------------------------------------------------------------------===#
# 1. Install the runtime component alone.
#===------------------------------------------------------------------------===#
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --component runtime
    --prefix ${prefix})
file(GLOB_RECURSE installed RELATIVE ${prefix} LIST_DIRECTORIES false
     ${prefix}/*)
list(SORT installed)
foreach(file IN LISTS installed)
  if(NOT file MATCHES "^include/strata/runtime/[a-z_]+\\.(h|hpp)$" AND
     NOT file MATCHES "^lib[^/]*/(x86_64-linux-gnu/)?libstrata_runtime\\.so(\\.[0-9]+)*$" AND
     NOT file MATCHES "^lib[^/]*/(x86_64-linux-gnu/)?cmake/StrataRuntime/StrataRuntime[A-Za-z-]*\\.cmake$" AND
     NOT file MATCHES "^lib[^/]*/(x86_64-linux-gnu/)?pkgconfig/strata-runtime\\.pc$")
    message(FATAL_ERROR "the runtime component installed '${file}'")
  endif()
endforeach()
foreach(needed include/strata/runtime/api.h include/strata/runtime/runtime.hpp
        include/strata/runtime/strata_kernel_abi.h)
  if(NOT needed IN_LIST installed)
    message(FATAL_ERROR "the runtime component did not install '${needed}'")
  endif()
endforeach()
list(FILTER installed INCLUDE REGEX "libstrata_runtime\\.so")
list(LENGTH installed libraries)
if(NOT libraries EQUAL 3)
  message(FATAL_ERROR "expected libstrata_runtime.so, .so.MAJOR and "
                      ".so.MAJOR.MINOR.PATCH, got: ${installed}")
endif()
message(STATUS "installed: ${prefix}")

#===------------------------------------------------------------------------===#
# 2. Build the examples against the prefix only.
#===------------------------------------------------------------------------===#
set(compilers "")
if(C_COMPILER)
  list(APPEND compilers -DCMAKE_C_COMPILER=${C_COMPILER})
endif()
if(CXX_COMPILER)
  list(APPEND compilers -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
endif()
run(${CMAKE_COMMAND} -G Ninja -S ${SOURCE_DIR}/examples -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    -DCMAKE_BUILD_TYPE=Release ${compilers})
file(STRINGS ${WORK_DIR}/build/CMakeCache.txt found
     REGEX "^StrataRuntime_DIR:PATH=")
string(REPLACE "StrataRuntime_DIR:PATH=" "" found "${found}")
string(FIND "${found}" "${prefix}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "find_package(StrataRuntime) found '${found}', "
                      "not the package in ${prefix}")
endif()
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
set(programs ${WORK_DIR}/build/c/run_model ${WORK_DIR}/build/cpp/run_model_cpp)

# pkg-config's flags are all a build needs; the library's directory goes
# into the program's run path.
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(PKG_CONFIG)
  file(GLOB pc_dirs ${prefix}/lib*/pkgconfig ${prefix}/lib*/*/pkgconfig)
  set(ENV{PKG_CONFIG_PATH} "${pc_dirs}")
  set(ENV{PKG_CONFIG_LIBDIR} "${pc_dirs}")
  execute_process(COMMAND ${PKG_CONFIG} --cflags --libs strata-runtime
    RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE error
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  execute_process(COMMAND ${PKG_CONFIG} --variable=libdir strata-runtime
    OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0 OR NOT flags MATCHES "-I${prefix}/")
    message(FATAL_ERROR "pkg-config strata-runtime: '${flags}' ${error}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  if(NOT C_COMPILER)
    set(C_COMPILER cc)
  endif()
  run(${C_COMPILER} -std=c11 -Wall -Wextra -Werror
      ${SOURCE_DIR}/examples/c/run_model.c ${flags} -Wl,-rpath,${libdir}
      -o ${WORK_DIR}/run_model_pkgconfig)
  list(APPEND programs ${WORK_DIR}/run_model_pkgconfig)
else()
  message(STATUS "pkg-config not found: the .pc file is not exercised")
endif()

#===------------------------------------------------------------------------===#
# 3. Run them.
#===------------------------------------------------------------------------===#
file(MAKE_DIRECTORY ${WORK_DIR}/artifacts)
run(${WRITE_ARTIFACTS} ${WORK_DIR}/artifacts)

# expect(OUTPUT ARGS...): every program prints exactly OUTPUT for ARGS.
function(expect output)
  foreach(program IN LISTS programs)
    execute_process(COMMAND ${program} ${ARGN} RESULT_VARIABLE rc
                    OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT out STREQUAL output)
      message(FATAL_ERROR "${program} ${ARGN}: exit ${rc}\n"
                          "expected:\n${output}got:\n${out}${err}")
    endif()
  endforeach()
  message(STATUS "ok: ${ARGN}")
endfunction()

# expect_error(REGEX ARGS...): every program exits 1 with the same single
# error line, which matches REGEX.
function(expect_error regex)
  set(first "")
  foreach(program IN LISTS programs)
    execute_process(COMMAND ${program} ${ARGN} RESULT_VARIABLE rc
                    OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 1 OR NOT err MATCHES "^run_model: ${regex}[^\n]*\n$")
      message(FATAL_ERROR "${program} ${ARGN}: exit ${rc}, expected one "
                          "'run_model: ${regex}' line, got:\n${err}")
    endif()
    if(NOT first STREQUAL "" AND NOT err STREQUAL first)
      message(FATAL_ERROR "the programs disagree:\n${first}${err}")
    endif()
    set(first "${err}")
  endforeach()
  message(STATUS "ok: ${err}")
endfunction()

set(standard ${WORK_DIR}/artifacts/standard.strata)
# x = 0..7 at batch 2, plus the bias {1, 2, 3, 4}.
expect("entry add_bias\ny f32 [2, 4]: 1 3 5 7 5 7 9 11\n" ${standard})
# Row sums of a = 0..5 plus b = 1, and 2 * b.
expect("entry two_outputs\nrow_sum f32 [2]: 4 13\npresent.0/doubled i64 [2]: 2 2\n"
       ${standard} two_outputs)
# Debug builds prefix messages with file:line.
expect_error("NOT_FOUND: (.*: )?no entry 'missing'" ${standard} missing)
# Cut inside the manifest.
expect_error("DATA_LOSS: .*truncated" ${WORK_DIR}/artifacts/truncated.strata)
expect_error("NOT_FOUND: (.*: )?cannot open" ${WORK_DIR}/artifacts/absent.strata)

if(STRATA_COMPILE)
  set(linear ${WORK_DIR}/artifacts/linear.strata)
  run(${STRATA_COMPILE} ${SOURCE_DIR}/examples/model/linear.onnxtext
      -o ${linear} --dim batch=8 --quiet)
  expect("entry main\ny f32 [2, 3]: 0 2 7 3.5 10 15\ns f32 [2]: 9 28.5\n"
         ${linear})
endif()

#===------------------------------------------------------------------------===#
# 4. The documentation shows the programs' own code.
#===------------------------------------------------------------------------===#
file(READ ${SOURCE_DIR}/docs/runtime-api.md docs)
foreach(example c/run_model.c cpp/run_model.cpp)
  file(READ ${SOURCE_DIR}/examples/${example} source)
  string(REGEX MATCH "--8<-- \\[start:run_model\\][^\n]*\n(.*)\n[^\n]*--8<-- \\[end:run_model\\]"
         region "${source}")
  set(region "${CMAKE_MATCH_1}")
  if(NOT region)
    message(FATAL_ERROR "examples/${example} has no run_model snippet")
  endif()
  string(FIND "${docs}" "<!-- snippet: examples/${example} run_model -->" at)
  string(FIND "${docs}" "${region}" found)
  if(at LESS 0 OR found LESS 0)
    message(FATAL_ERROR "docs/runtime-api.md does not show the run_model "
                        "snippet of examples/${example} as it is; copy it "
                        "under '<!-- snippet: examples/${example} run_model -->'")
  endif()
endforeach()
message(STATUS "docs/runtime-api.md shows the examples' code")
