# SPDX-License-Identifier: Apache-2.0
# The layering rule of the source tree, checked over every #include of qprof's own headers.
#   cmake -DQPROF_ROOT=<tree with src/ and include/qprof/> -P cmake/check_layers.cmake
# Fails (FATAL_ERROR, non-zero exit) naming each file:line that includes a stage it may not use.
# Run at configure time and as the test unit.layers, which also runs it on a tree that breaks the
# rule (tests/data/layers/) to prove that it fails.

cmake_minimum_required(VERSION 3.25)

set(allowed_common   common)
set(allowed_trace    common trace)
set(allowed_analysis common trace analysis)
set(allowed_report   common trace analysis report)
set(allowed_plot     common trace analysis plot)
set(allowed_exports  common trace analysis exports)
set(allowed_gpu      common trace gpu)
set(allowed_record   common trace gpu record)
set(allowed_fit      common trace gpu record fit)
set(allowed_runs     common trace analysis gpu record fit runs)
set(allowed_cli      common trace analysis report plot exports gpu record fit runs cli)
set(stages common trace analysis report plot exports gpu record fit runs cli)

if(NOT QPROF_ROOT)
  message(FATAL_ERROR "check_layers: set QPROF_ROOT")
endif()

set(violations "")
set(checked 0)
foreach(stage IN LISTS stages)
  file(GLOB_RECURSE files LIST_DIRECTORIES false
       "${QPROF_ROOT}/src/${stage}/*.cpp" "${QPROF_ROOT}/src/${stage}/*.hpp"
       "${QPROF_ROOT}/include/qprof/${stage}/*.hpp")
  foreach(f IN LISTS files)
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]qprof/")
    foreach(line IN LISTS lines)
      if(line MATCHES "qprof/([a-z_]+)/")
        set(used "${CMAKE_MATCH_1}")
        if(NOT used IN_LIST allowed_${stage})
          file(RELATIVE_PATH rel "${QPROF_ROOT}" "${f}")
          string(STRIP "${line}" line)
          string(APPEND violations "\n  ${rel}: ${stage}/ may not include ${used}/ (${line})")
        endif()
      else()
        file(RELATIVE_PATH rel "${QPROF_ROOT}" "${f}")
        string(APPEND violations "\n  ${rel}: a qprof header outside the stage folders (${line})")
      endif()
    endforeach()
  endforeach()
endforeach()

# Every source lives in a stage folder: a file dropped at the top would escape the rule.
file(GLOB loose "${QPROF_ROOT}/src/*.cpp" "${QPROF_ROOT}/src/*.hpp" "${QPROF_ROOT}/include/qprof/*.hpp")
foreach(f IN LISTS loose)
  file(RELATIVE_PATH rel "${QPROF_ROOT}" "${f}")
  string(APPEND violations "\n  ${rel}: outside the stage folders (${stages})")
endforeach()

if(checked EQUAL 0)
  message(FATAL_ERROR "check_layers: no source files under ${QPROF_ROOT}")
endif()
if(violations)
  message(FATAL_ERROR "qprof's layering rule is broken (README, \"Architecture\"):${violations}")
endif()
message(STATUS "check_layers: ${checked} files follow the layering rule")
