# SPDX-License-Identifier: Apache-2.0
# Warnings on railscope's own targets (errors with RAILSCOPE_WERROR, which CI and scripts/test.sh set:
# warnings as errors are for railscope's developers; a user's compiler may warn where ours does not),
# and the optional ASan/UBSan build.
function(railscope_target_defaults target)
  target_compile_options(${target} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
    -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
    -Wimplicit-fallthrough)
  if(RAILSCOPE_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    # GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++'s std::string operator+ / insert
    # (`"," + std::string(...)`): a false positive, GCC bug 105329
    # (https://gcc.gnu.org/bugzilla/show_bug.cgi?id=105329), fixed in GCC 13. Seen in 9 of our files.
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    # libibverbs' verbs_get_ctx_op() macro (infiniband/verbs.h) is a GNU statement expression; GCC
    # exempts macros from system headers from -Wpedantic, clang flags them where they are expanded
    # (lib/ibv/ibv.cpp, built for the fuzz harnesses through lib/node).
    target_compile_options(${target} PRIVATE -Wno-gnu-statement-expression)
    # NCCL's profiler ABI (src/include/plugin/profiler/profiler_v*.h) puts anonymous structs inside the
    # anonymous union of its event descriptors; include/railscope/nccl/profiler.h mirrors that layout
    # member for member. C11 has them; in C++ GCC and clang accept them as an extension, and only
    # clang's -Wpedantic names it (-Wnested-anon-types). Found by CI's clang build of the plugins.
    target_compile_options(${target} PRIVATE -Wno-nested-anon-types)
  endif()
  if(RAILSCOPE_UNITY_BUILD AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    # A batch #includes its .cpp files, and GCC's -Wsubobject-linkage takes a class from an included
    # file's anonymous namespace (a test fixture, a deleter) used in a class outside it as coming from a
    # header. Compiled file by file, as every other build does, the same code draws no warning.
    target_compile_options(${target} PRIVATE -Wno-subobject-linkage)
  endif()
  if(RAILSCOPE_SANITIZE)
    # GCC 12 reports false maybe-uninitialized warnings inside libstdc++ when sanitizers are on.
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer -Wno-maybe-uninitialized
                                              -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(RAILSCOPE_FUZZ)
    railscope_fuzz_instrument(${target})  # cmake/RailscopeFuzz.cmake
  endif()
endfunction()

# A static library of railscope's internal code, linkable into the plugins (PIC, hidden).
function(railscope_add_internal_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;PUBLIC_LIBS;PRIVATE_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_PUBLIC_LIBS} PRIVATE ${ARG_PRIVATE_LIBS})
  railscope_target_defaults(${name})
endfunction()
