# SPDX-License-Identifier: Apache-2.0
# railscope_add_plugin(<target> OUTPUT_NAME <name> VERSION_SCRIPT <file> SOURCES ... LIBS ...)
# Builds one NCCL plugin shared library that exports only what its version script names, and that
# needs (DT_NEEDED) only the libraries it calls into: --as-needed keeps libibverbs out of the tuner
# and the profiler, which read the NICs from sysfs and must load on hosts without rdma-core.
# RAILSCOPE_STATIC_RUNTIME (top-level option) links the C++ runtime into each plugin.
function(railscope_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;VERSION_SCRIPT" "SOURCES;LIBS" ${ARGN})
  add_library(${target} SHARED ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME} PREFIX "lib"
                        LINK_DEPENDS ${ARG_VERSION_SCRIPT})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${ARG_VERSION_SCRIPT} -Wl,--no-undefined -Wl,--exclude-libs,ALL
    -Wl,-z,defs -Wl,-z,now -Wl,--as-needed)
  if(RAILSCOPE_STATIC_RUNTIME AND NOT RAILSCOPE_SANITIZE)
    # libstdc++ linked in, its symbols local (--exclude-libs,ALL and the version script): the
    # plugin then loads in a training image whose libstdc++ is older than the build host's, and never
    # binds to (or interposes on) the process's own copy. docs/compatibility.md has the cost in size.
    # The sanitizer build keeps them shared: the ASan runtime must see every operator new/delete.
    # libgcc stays shared (libgcc_s.so.1, GCC_4.2 symbols at most): its static unwinder would need
    # _dl_find_object (GLIBC_2.35). arc4random_compat.cpp keeps libstdc++.a's arc4random (GLIBC_2.36) inside.
    target_link_options(${target} PRIVATE -static-libstdc++)
    target_sources(${target} PRIVATE ${PROJECT_SOURCE_DIR}/plugin/static_runtime/arc4random_compat.cpp)
  endif()
  railscope_target_defaults(${target})
endfunction()
