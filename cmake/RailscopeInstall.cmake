# SPDX-License-Identifier: Apache-2.0
# Install rules (GNUInstallDirs), the CMake package config and the CPack .deb.
#
#   cmake --install build --prefix /opt/railscope      # lib/libnccl-{net,tuner,profiler}-railscope.so,
#                                                      # bin/railscope, share/doc/railscope/
#   cpack --config build/CPackConfig.cmake -G DEB      # railscope_<version>_<arch>.deb, under /usr
#
# Included by the top-level CMakeLists.txt after every target is defined. The plugins go under
# ${CMAKE_INSTALL_LIBDIR} with the file names NCCL looks for (libnccl-<kind>-<NCCL_<KIND>_PLUGIN>.so:
# lib/pluginload), so `NCCL_NET_PLUGIN=railscope` finds them through LD_LIBRARY_PATH or, for the .deb,
# the loader's default path. They are loaded with dlopen, never linked: the package config hands a
# consumer their paths (and IMPORTED targets for $<TARGET_FILE:...>), no headers, no link interface.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(RAILSCOPE_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/railscope)
# The shipped targets (also what CI's Release and clang builds compile: tests/install checks the list).
set(RAILSCOPE_SHIPPED_PLUGINS railscope_net_plugin railscope_tuner_plugin railscope_profiler_plugin)

foreach(_plugin IN LISTS RAILSCOPE_SHIPPED_PLUGINS)
  if(NOT TARGET ${_plugin})
    message(FATAL_ERROR "RailscopeInstall: the plugin target ${_plugin} is not defined")
  endif()
  install(TARGETS ${_plugin} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
endforeach()
install(TARGETS railscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)

file(GLOB _railscope_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${_railscope_docs} DESTINATION ${CMAKE_INSTALL_DOCDIR}
        COMPONENT runtime)
install(FILES ${PROJECT_SOURCE_DIR}/examples/allreduce_sweep.py
        DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT runtime)

# Debian's copyright (DEP-5) and changelog (gzip -9n: the same bytes on every build), in the docs of every
# install: share/doc/railscope is /usr/share/doc/railscope in the .deb.
set(_railscope_changelog_gz ${CMAKE_CURRENT_BINARY_DIR}/deb/changelog.gz)
add_custom_command(OUTPUT ${_railscope_changelog_gz}
  COMMAND sh -c "gzip -9n -c \"$1\" >\"$2\"" gzip ${CMAKE_CURRENT_LIST_DIR}/deb/changelog ${_railscope_changelog_gz}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/deb/changelog VERBATIM)
add_custom_target(railscope_changelog ALL DEPENDS ${_railscope_changelog_gz})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/deb/copyright ${_railscope_changelog_gz}
        DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)

# Manual pages of the CLI, from its --help (cmake/man-pages.sh: railscope.1, railscope-<command>.1, ...).
option(RAILSCOPE_MAN_PAGES "Generate the CLI's manual pages with help2man (installed, and in the .deb)" ON)
if(RAILSCOPE_MAN_PAGES)
  find_program(RAILSCOPE_HELP2MAN help2man)
  if(NOT RAILSCOPE_HELP2MAN)
    message(FATAL_ERROR "help2man not found: apt-get install help2man, or configure with -DRAILSCOPE_MAN_PAGES=OFF")
  endif()
  set(_railscope_man ${CMAKE_CURRENT_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${_railscope_man}/railscope.1.gz
    COMMAND ${CMAKE_CURRENT_LIST_DIR}/man-pages.sh $<TARGET_FILE:railscope> ${_railscope_man} ${PROJECT_VERSION}
    DEPENDS railscope ${CMAKE_CURRENT_LIST_DIR}/man-pages.sh VERBATIM)
  add_custom_target(railscope_man_pages ALL DEPENDS ${_railscope_man}/railscope.1.gz)
  install(DIRECTORY ${_railscope_man}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime
          FILES_MATCHING PATTERN "*.1.gz")
endif()

# railscopeConfig.cmake: paths relative to the installed config file, so the tree can be moved.
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/railscopeConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/railscopeConfig.cmake
  INSTALL_DESTINATION ${RAILSCOPE_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DOCDIR)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/railscopeConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/railscopeConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/railscopeConfigVersion.cmake
        DESTINATION ${RAILSCOPE_INSTALL_CMAKEDIR} COMPONENT runtime)

# ---- CPack: one .deb -----------------------------------------------------------------------------
set(CPACK_PACKAGE_NAME railscope)
set(CPACK_PACKAGE_VENDOR railscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# Debian's limits (lintian): a synopsis under 80 characters, description lines of at most 80.
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "NCCL net (InfiniBand/RoCE), tuner and profiler plugins, and the railscope CLI")
string(JOIN "\n" CPACK_PACKAGE_DESCRIPTION
  "Three NCCL plugins, loaded by NCCL_NET_PLUGIN / NCCL_TUNER_PLUGIN /"
  "NCCL_PROFILER_PLUGIN=railscope: an InfiniBand / RoCE v2 transport that names"
  "misconfigurations (GID, MTU, memlock, PCIe distance), a topology-aware tuner"
  "and a per-collective profiler (busbw, hang and slow diagnoses); and the"
  "railscope CLI: doctor, preflight, netbench, report, tuner explain, ab.")
set(CPACK_PACKAGE_CONTACT "railscope maintainers <railscope@example.invalid>")
set(CPACK_PACKAGE_INSTALL_DIRECTORY railscope)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # railscope_<version>_<arch>.deb
# Depends: computed by dpkg-shlibdeps from what the binaries link (libc6, libstdc++6, hwloc, ...).
# libibverbs and libcuda are opened with dlopen, so no scan finds them: rdma-core's runtime is a
# Recommends (the net plugin runs its TCP engine without it; `railscope doctor` says why).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libibverbs1, ibverbs-providers")
# libmunge is opened with dlopen too, by `railscope preflight` under Slurm only.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libmunge2")
# dpkg's ldconfig trigger instead of CPack's ldconfig calls, and lintian's overrides for NCCL's plugin
# names (cmake/deb/: each file says why).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/deb/triggers ${CMAKE_CURRENT_LIST_DIR}/deb/postinst
    ${CMAKE_CURRENT_LIST_DIR}/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/deb/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME railscope COMPONENT runtime)
set(CPACK_SOURCE_IGNORE_FILES "/build[^/]*/;/\\\\.git/")
include(CPack)
