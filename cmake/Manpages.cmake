# SPDX-License-Identifier: Apache-2.0
# The manual pages, written at build time by the qprof just built (`qprof --help-man SUB DIR`)
# from its own option lists plus the hand-written sections in man/*.man: a page and --help
# cannot disagree. A page for each of QPROF_SUBCOMMANDS (cmake/Subcommands.cmake). Sets QPROF_MAN_PAGES.
set(QPROF_MAN_PAGES "")
set(man_dir ${PROJECT_BINARY_DIR}/man)
foreach(page qprof ${QPROF_SUBCOMMANDS})
  if(page STREQUAL "qprof")
    set(name qprof)
    set(arg qprof)
  else()
    set(name qprof-${page})
    set(arg ${page})
  endif()
  set(extra ${PROJECT_SOURCE_DIR}/man/${name}.man)
  set(deps qprof)
  if(EXISTS ${extra})
    list(APPEND deps ${extra})
  endif()
  add_custom_command(OUTPUT ${man_dir}/${name}.1
    COMMAND ${CMAKE_COMMAND} -E make_directory ${man_dir}
    COMMAND sh -c "\"$0\" --help-man \"$1\" \"$2\" > \"$3\"" $<TARGET_FILE:qprof> ${arg}
            ${PROJECT_SOURCE_DIR}/man ${man_dir}/${name}.1
    DEPENDS ${deps}
    COMMENT "Writing ${name}(1)"
    VERBATIM)
  list(APPEND QPROF_MAN_PAGES ${man_dir}/${name}.1)
endforeach()
add_custom_target(man_pages ALL DEPENDS ${QPROF_MAN_PAGES})

# The bash completion script, from the same option lists (`qprof --help-completion`).
set(QPROF_BASH_COMPLETION ${PROJECT_BINARY_DIR}/completion/qprof.bash)
add_custom_command(OUTPUT ${QPROF_BASH_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/completion
  COMMAND sh -c "\"$0\" --help-completion > \"$1\"" $<TARGET_FILE:qprof> ${QPROF_BASH_COMPLETION}
  DEPENDS qprof
  COMMENT "Writing the bash completion"
  VERBATIM)
add_custom_target(bash_completion ALL DEPENDS ${QPROF_BASH_COMPLETION})

# The zsh completion function (`qprof --help-completion zsh`), named as zsh's fpath wants it.
set(QPROF_ZSH_COMPLETION ${PROJECT_BINARY_DIR}/completion/zsh/_qprof)
add_custom_command(OUTPUT ${QPROF_ZSH_COMPLETION}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${PROJECT_BINARY_DIR}/completion/zsh
  COMMAND sh -c "\"$0\" --help-completion zsh > \"$1\"" $<TARGET_FILE:qprof> ${QPROF_ZSH_COMPLETION}
  DEPENDS qprof
  COMMENT "Writing the zsh completion"
  VERBATIM)
add_custom_target(zsh_completion ALL DEPENDS ${QPROF_ZSH_COMPLETION})
