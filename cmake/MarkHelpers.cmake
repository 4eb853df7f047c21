# SPDX-License-Identifier: Apache-2.0
# The marker helpers (README, "Marker channel"): the C/C++ header and the Python module.
install(FILES ${PROJECT_SOURCE_DIR}/include/qprof_mark.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Where Debian's /usr/bin/python3 finds a module for the prefix installed to: /usr/lib/python3/
# dist-packages for /usr (the .deb), /<prefix>/lib/python3.X/dist-packages elsewhere (Debian's
# site.py adds /usr/local/lib/python3.X/dist-packages). Decided at install time, when the prefix
# is known (cpack installs to /usr whatever the configured prefix).
set(QPROF_PYTHON_MINOR "")
find_program(QPROF_INSTALL_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(QPROF_INSTALL_PYTHON3)
  execute_process(COMMAND ${QPROF_INSTALL_PYTHON3} -c "import sys; print('%d.%d' % sys.version_info[:2])"
                  OUTPUT_VARIABLE QPROF_PYTHON_MINOR OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()
install(CODE "
  set(qprof_python_minor \"${QPROF_PYTHON_MINOR}\")
  if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\" OR qprof_python_minor STREQUAL \"\")
    set(qprof_python_dir \"\${CMAKE_INSTALL_PREFIX}/lib/python3/dist-packages\")
  else()
    set(qprof_python_dir \"\${CMAKE_INSTALL_PREFIX}/lib/python\${qprof_python_minor}/dist-packages\")
  endif()
  file(INSTALL \"${PROJECT_SOURCE_DIR}/python/qprof_mark.py\" DESTINATION \"\${qprof_python_dir}\")
")
