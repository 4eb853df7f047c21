# SPDX-License-Identifier: Apache-2.0
# cpack -G DEB (run in the build folder): the stripped binary, man pages, bash completion and the
# plot styles under /usr, with the shared-library dependencies dpkg-shlibdeps finds.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME qprof)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "memory over time of a whole process tree, mprof-compatible")
set(CPACK_PACKAGE_DESCRIPTION "qprof runs a command, follows its whole process tree and records its memory over\ntime (RSS, PSS, GPU, CPU, I/O, stages from marker lines) into a trace that mprof can read;\nit reports, compares, plots and exports traces.")
set(CPACK_PACKAGE_CONTACT "qprof developers <qprof@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# qprof plot runs gnuplot (not linked: found on PATH); everything else works without it.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gnuplot-nox")
# Every install rule but the split of debug information (cmake/SplitDebug.cmake): CPack strips.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};qprof;Unspecified;/")
include(CPack)
