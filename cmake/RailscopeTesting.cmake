# SPDX-License-Identifier: Apache-2.0
include(GoogleTest)

# railscope_add_unit_test(<name> SOURCES ... LIBS ... [LABELS ...])
# One GoogleTest binary; each test case becomes a CTest test (label "unit" plus LABELS).
function(railscope_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests ${PROJECT_SOURCE_DIR})
  railscope_target_defaults(${name})
  # A list-valued property must reach the generated test script with its separators escaped.
  set(_labels unit ${ARG_LABELS})
  string(REPLACE ";" "\\;" _labels "${_labels}")
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
                       PROPERTIES LABELS "${_labels}" TIMEOUT 120)
endfunction()
