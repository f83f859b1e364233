# railscope_add_plugin(<target> OUTPUT_NAME <name> VERSION_SCRIPT <file> SOURCES ... LIBS ...)
# Builds one NCCL plugin shared library that exports only what its version script names, and that
# needs (DT_NEEDED) only the libraries it calls into: --as-needed keeps libibverbs out of the tuner
# and the profiler, which read the NICs from sysfs and must load on hosts without rdma-core.
function(railscope_add_plugin target)
  cmake_parse_arguments(ARG "" "OUTPUT_NAME;VERSION_SCRIPT" "SOURCES;LIBS" ${ARGN})
  add_library(${target} SHARED ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${ARG_OUTPUT_NAME} PREFIX "lib"
                        LINK_DEPENDS ${ARG_VERSION_SCRIPT})
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${ARG_VERSION_SCRIPT} -Wl,--no-undefined -Wl,--exclude-libs,ALL
    -Wl,-z,defs -Wl,-z,now -Wl,--as-needed)
  railscope_target_defaults(${target})
endfunction()
