# SPDX-License-Identifier: Apache-2.0
# RAILSCOPE_FUZZ: libFuzzer harnesses (tests/fuzz/) with AddressSanitizer and UndefinedBehaviorSanitizer.
# Needs clang with its runtime libraries (Debian: clang, libclang-rt-14-dev). The internal static
# libraries the harnesses link get the sanitizers and libFuzzer's coverage instrumentation
# (-fsanitize=fuzzer-no-link); each harness links libFuzzer's main (-fsanitize=fuzzer). Use a build
# folder of its own and build only the harnesses (target railscope_fuzzers): the plugins' shared
# libraries link with -z defs, which the sanitizer runtimes of an instrumented static library break.
# See https://llvm.org/docs/LibFuzzer.html ("Fuzzer usage", "-fsanitize=fuzzer-no-link").
if(NOT RAILSCOPE_FUZZ)
  return()
endif()

if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "RAILSCOPE_FUZZ needs clang (libFuzzer): configure a separate build folder with "
                      "CC=clang CXX=clang++ (found ${CMAKE_CXX_COMPILER_ID})")
endif()
if(RAILSCOPE_SANITIZE)
  message(FATAL_ERROR "RAILSCOPE_FUZZ already builds with ASan + UBSan: leave RAILSCOPE_SANITIZE off")
endif()

set(RAILSCOPE_FUZZ_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=undefined
                              -fno-omit-frame-pointer)

include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_FLAGS "-fsanitize=fuzzer,address,undefined")
set(CMAKE_REQUIRED_LINK_OPTIONS -fsanitize=fuzzer,address,undefined)
check_cxx_source_compiles([=[
#include <cstddef>
#include <cstdint>
extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t) { return 0; }
]=] RAILSCOPE_HAVE_LIBFUZZER)
unset(CMAKE_REQUIRED_FLAGS)
unset(CMAKE_REQUIRED_LINK_OPTIONS)
if(NOT RAILSCOPE_HAVE_LIBFUZZER)
  message(FATAL_ERROR "RAILSCOPE_FUZZ: ${CMAKE_CXX_COMPILER} cannot link -fsanitize=fuzzer,address,undefined "
                      "(Debian: apt-get install clang libclang-rt-14-dev)")
endif()

# Called by railscope_target_defaults() for every railscope target: instruments the static libraries.
function(railscope_fuzz_instrument target)
  get_target_property(_type ${target} TYPE)
  if(_type STREQUAL "STATIC_LIBRARY" OR _type STREQUAL "OBJECT_LIBRARY")
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link ${RAILSCOPE_FUZZ_SANITIZERS})
  endif()
endfunction()

# railscope_add_fuzzer(<name> LIBS <internal libraries>): tests/fuzz/<name>.cpp becomes the executable
# fuzz_<name>, part of the target railscope_fuzzers. Its seed corpus is tests/fuzz/corpus/<name>/.
if(NOT TARGET railscope_fuzzers)
  add_custom_target(railscope_fuzzers)
endif()
function(railscope_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  set(target fuzz_${name})
  add_executable(${target} ${PROJECT_SOURCE_DIR}/tests/fuzz/${name}.cpp)
  target_link_libraries(${target} PRIVATE ${ARG_LIBS})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/include)
  railscope_target_defaults(${target})
  target_compile_options(${target} PRIVATE -fsanitize=fuzzer ${RAILSCOPE_FUZZ_SANITIZERS})
  target_link_options(${target} PRIVATE -fsanitize=fuzzer,address,undefined)
  add_dependencies(railscope_fuzzers ${target})
endfunction()
