# SPDX-License-Identifier: Apache-2.0
# `cmake --install` installs qprof stripped, its debug information split into
# <bindir>/.debug/qprof.debug (where gdb looks for the binary's .gnu_debuglink, whatever the
# prefix): the installed
# binary maps about 3 MB instead of ~70 MB, which is most of a running qprof's resident memory.
# The step is its own install component, left out of the .deb (CPack strips the package itself).
find_program(QPROF_OBJCOPY NAMES objcopy)
if(QPROF_OBJCOPY)
  install(CODE "
    set(bin \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/qprof\")
    set(dbg_dir \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/.debug\")
    execute_process(COMMAND readelf -S \"\${bin}\" OUTPUT_VARIABLE sections)
    if(sections MATCHES \"debug_info\")
      file(MAKE_DIRECTORY \"\${dbg_dir}\")
      message(STATUS \"Splitting debug information: \${dbg_dir}/qprof.debug\")
      execute_process(COMMAND \"${QPROF_OBJCOPY}\" --only-keep-debug \"\${bin}\" \"\${dbg_dir}/qprof.debug\" COMMAND_ERROR_IS_FATAL ANY)
      execute_process(COMMAND \"${QPROF_OBJCOPY}\" --strip-all \"--add-gnu-debuglink=\${dbg_dir}/qprof.debug\" \"\${bin}\" COMMAND_ERROR_IS_FATAL ANY)
    else()
      # No debug information (a Release build): its symbol table goes all the same.
      execute_process(COMMAND \"${QPROF_OBJCOPY}\" --strip-all \"\${bin}\" COMMAND_ERROR_IS_FATAL ANY)
    endif()
  " COMPONENT split_debug)
endif()
