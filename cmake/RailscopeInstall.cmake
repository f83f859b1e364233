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
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Instrumented NCCL plugins (InfiniBand/RoCE net, tuner, profiler) and the railscope CLI")
set(CPACK_PACKAGE_DESCRIPTION
    "Three NCCL plugins loaded by NCCL_NET_PLUGIN / NCCL_TUNER_PLUGIN / NCCL_PROFILER_PLUGIN=railscope: \
an InfiniBand / RoCE v2 transport that names misconfigurations (GID, MTU, memlock, PCIe distance), a \
topology-aware tuner and a per-collective profiler (busbw, hang and slow diagnoses); and the railscope \
CLI: doctor, netbench, report, tuner explain, ab.")
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
set(CPACK_SOURCE_IGNORE_FILES "/build[^/]*/;/\\\\.git/")
include(CPack)
