# SPDX-License-Identifier: Apache-2.0
# Every dependency comes from a Debian package; a missing one stops configure and names the package.
function(qprof_missing what package)
  message(FATAL_ERROR "qprof needs ${what}: install the Debian package '${package}' "
                      "(apt-get install ${package}, or run scripts/install-deps)")
endfunction()

find_package(Threads REQUIRED)

find_package(CLI11 CONFIG QUIET)
if(NOT CLI11_FOUND)
  qprof_missing("CLI11" libcli11-dev)
endif()

# Boost.Process starts every child of qprof (the command, gnuplot, nvidia-smi/rocm-smi) and finds
# programs in PATH; gnuplot-iostream sends gnuplot its data. Boost's compiled parts, Filesystem
# (Boost.Process's paths and search_path, gnuplot-iostream's temporary files) and Iostreams
# (gnuplot-iostream's stream), are linked from their static archives (the -dev packages ship them
# built as PIC): linked dynamically, they and the four compression libraries libboost_iostreams
# needs cost every start of qprof six more libraries to load (0.8 ms), for a few functions.
set(Boost_USE_STATIC_LIBS ON)
find_package(Boost 1.74 CONFIG QUIET COMPONENTS filesystem iostreams)
if(NOT Boost_FOUND)
  qprof_missing("Boost.Process, Boost.Filesystem and Boost.Iostreams (static archives)"
                "libboost-dev libboost-filesystem-dev libboost-iostreams-dev")
endif()
if(NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/process.hpp")
  qprof_missing("Boost.Process" libboost-dev)
endif()
find_path(GNUPLOT_IOSTREAM_INCLUDE_DIR gnuplot-iostream.h)
if(NOT GNUPLOT_IOSTREAM_INCLUDE_DIR)
  qprof_missing("gnuplot-iostream" libgnuplot-iostream-dev)
endif()

find_package(yaml-cpp CONFIG QUIET)
if(NOT yaml-cpp_FOUND)
  qprof_missing("yaml-cpp" libyaml-cpp-dev)
endif()

# yaml-cpp is linked from its static archive too (Debian's is built as PIC), for qprof's own
# memory: as a shared library it cost every run the 312 kB of its pages that loading touches
# (/proc/PID/smaps), though `qprof run` never uses it; linked from the archive, only the code that
# runs is paged in. Where a distribution ships no archive, the shared library is used. (PCRE2's
# archive gained nothing: its 145 kB of tables widen qprof's read-only data about as much as the
# shared library's 88 kB.)
find_library(QPROF_YAML_CPP_ARCHIVE NAMES libyaml-cpp.a)
if(QPROF_YAML_CPP_ARCHIVE)
  get_target_property(yaml_configs yaml-cpp IMPORTED_CONFIGURATIONS)
  foreach(config IN LISTS yaml_configs)
    set_property(TARGET yaml-cpp PROPERTY IMPORTED_LOCATION_${config} "${QPROF_YAML_CPP_ARCHIVE}")
  endforeach()
  set_property(TARGET yaml-cpp PROPERTY IMPORTED_LOCATION "${QPROF_YAML_CPP_ARCHIVE}")
endif()

# PCRE2 runs --marker-regex with a match limit (std::regex has no bound on its backtracking).
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(PCRE2 QUIET IMPORTED_TARGET libpcre2-8)
endif()
if(NOT PCRE2_FOUND)
  qprof_missing("PCRE2 (--marker-regex)" libpcre2-dev)
endif()

find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  qprof_missing("nlohmann-json" nlohmann-json3-dev)
endif()

if(QPROF_BUILD_TESTS)
  find_package(GTest CONFIG QUIET)
  if(NOT GTest_FOUND)
    qprof_missing("GoogleTest" "libgtest-dev libgmock-dev")
  endif()
  find_program(GNUPLOT_EXECUTABLE gnuplot)
  if(NOT GNUPLOT_EXECUTABLE)
    qprof_missing("gnuplot (the tests render charts)" gnuplot-nox)
  endif()
  find_program(MPROF_EXECUTABLE python3-mprof)
  if(NOT MPROF_EXECUTABLE)
    qprof_missing("the original mprof (the tests check compatibility)" python3-memory-profiler)
  endif()
  find_program(DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT DEBIAN_PYTHON3)
    qprof_missing("Debian's python3 (test workloads)" python3)
  endif()
endif()

if(QPROF_BUILD_BENCH)
  find_package(benchmark CONFIG QUIET)
  if(NOT benchmark_FOUND)
    qprof_missing("Google Benchmark" libbenchmark-dev)
  endif()
endif()
