# SPDX-License-Identifier: Apache-2.0
# QPROF_SUBCOMMANDS: qprof's subcommands, read from src/cli/subcommands.def (the one list that the
# CLI, the man pages and the tests share), in its order.
set(QPROF_SUBCOMMANDS_DEF ${PROJECT_SOURCE_DIR}/src/cli/subcommands.def)
file(STRINGS ${QPROF_SUBCOMMANDS_DEF} subcommand_lines)
set(QPROF_SUBCOMMANDS "")
foreach(line IN LISTS subcommand_lines)
  if(line STREQUAL "" OR line MATCHES "^//")
    continue()
  endif()
  # Anything else the preprocessor would read must be a name CMake reads too.
  if(NOT line MATCHES "^QPROF_SUBCOMMAND\\(([a-z_]+)\\)$")
    message(FATAL_ERROR "${QPROF_SUBCOMMANDS_DEF}: not QPROF_SUBCOMMAND(name) alone: ${line}")
  endif()
  list(APPEND QPROF_SUBCOMMANDS ${CMAKE_MATCH_1})
endforeach()
if(NOT QPROF_SUBCOMMANDS)
  message(FATAL_ERROR "${QPROF_SUBCOMMANDS_DEF}: no QPROF_SUBCOMMAND(name) line")
endif()
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${QPROF_SUBCOMMANDS_DEF})
