# SPDX-License-Identifier: Apache-2.0
# The code's style (.clang-format): `format` applies it to every C and C++ source of the tree,
# `format-check` fails on a file it would change (scripts/test runs it). Without clang-format the
# targets say which Debian package to install.
file(GLOB_RECURSE QPROF_FORMATTED_SOURCES CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/src/*.cpp ${PROJECT_SOURCE_DIR}/src/*.hpp ${PROJECT_SOURCE_DIR}/include/*.hpp ${PROJECT_SOURCE_DIR}/include/*.h
  ${PROJECT_SOURCE_DIR}/tests/*.cpp ${PROJECT_SOURCE_DIR}/tests/*.hpp ${PROJECT_SOURCE_DIR}/tests/*.c
  ${PROJECT_SOURCE_DIR}/tests/*.h ${PROJECT_SOURCE_DIR}/bench/*.cpp ${PROJECT_SOURCE_DIR}/bench/*.c
  ${PROJECT_SOURCE_DIR}/bench/*.cu ${PROJECT_SOURCE_DIR}/examples/*.c ${PROJECT_SOURCE_DIR}/python/*.h)
find_program(QPROF_CLANG_FORMAT NAMES clang-format clang-format-14)
if(QPROF_CLANG_FORMAT)
  add_custom_target(format
    COMMAND ${QPROF_CLANG_FORMAT} -i --style=file ${QPROF_FORMATTED_SOURCES}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "clang-format: the style of .clang-format, in place")
  add_custom_target(format-check
    COMMAND ${QPROF_CLANG_FORMAT} --dry-run --Werror --style=file ${QPROF_FORMATTED_SOURCES}
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "clang-format: every source in the style of .clang-format (cmake --build build --target format fixes it)")
else()
  foreach(target format format-check)
    add_custom_target(${target}
      COMMAND ${CMAKE_COMMAND} -E echo "clang-format is missing: apt-get install clang-format"
      COMMAND ${CMAKE_COMMAND} -E false)
  endforeach()
endif()
