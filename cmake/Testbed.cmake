# SPDX-License-Identifier: Apache-2.0
# railscope soft-RoCE test bed (tests/testbed/): CTest helpers.
#
#   include(cmake/Testbed.cmake)
#   railscope_add_testbed_test(NAME <name>
#       [MTU_A n] [MTU_B n] [USER u] [MEMLOCK kib] [TIMEOUT s] [RAILS n] [SINGLE] [SWITCH]
#       [SUITE <suite>] [ENV K=V ...] COMMAND <cmd> [args...])
#   railscope_add_testbed_selftests()
#   railscope_add_testbed_suites()      (once, after every test is added)
#
# Every test boots its own QEMU/TCG guest (~8 s of overhead). They carry the
# label "testbed" and share RESOURCE_LOCK railscope_testbed, so that only one VM
# runs at a time on a 2-core machine (`ctest -L '^testbed$'`, `ctest -LE testbed`).
#
# SUITE: a short case of the default guest that changes nothing in it (no link,
# MTU or qdisc touched) also runs, one after the other with the rest of its
# suite, in one guest: the ctest `testbed.suite.<suite>` (label "testbed"),
# which the test command runs. The case keeps its own ctest, with its own boot,
# under the label "testbed_solo" (`ctest -R <name>`; not in `-L '^testbed$'`).
# The kernel is downloaded into ${RAILSCOPE_TESTBED_CACHE:-~/.cache/railscope-testbed}
# on first use. Status 124 = timeout / hung VM, 125 = test-bed failure.

set(RAILSCOPE_TESTBED_DIR "${CMAKE_CURRENT_LIST_DIR}/../tests/testbed"
    CACHE INTERNAL "railscope test bed folder")
get_filename_component(RAILSCOPE_TESTBED_DIR "${RAILSCOPE_TESTBED_DIR}" ABSOLUTE)
set(RAILSCOPE_TESTBED "${RAILSCOPE_TESTBED_DIR}/testbed" CACHE INTERNAL "railscope test bed entry point")
# Extra wall time allowed over the guest-side timeout: boot, rxe setup, shutdown.
set(RAILSCOPE_TESTBED_MARGIN 120 CACHE STRING "Seconds added to TIMEOUT for the CTest timeout of testbed tests")

function(_railscope_testbed_props name timeout)
  math(EXPR _ctest_timeout "${timeout} + ${RAILSCOPE_TESTBED_MARGIN}")
  set_tests_properties(${name} PROPERTIES
    LABELS testbed
    RESOURCE_LOCK railscope_testbed
    TIMEOUT ${_ctest_timeout})
endfunction()

function(railscope_add_testbed_test)
  cmake_parse_arguments(PARSE_ARGV 0 TB "SINGLE;SWITCH" "NAME;MTU_A;MTU_B;USER;MEMLOCK;TIMEOUT;RAILS;SUITE"
                        "ENV;COMMAND")
  if(NOT TB_NAME)
    message(FATAL_ERROR "railscope_add_testbed_test: NAME is required")
  endif()
  if(NOT TB_COMMAND)
    message(FATAL_ERROR "railscope_add_testbed_test(${TB_NAME}): COMMAND is required")
  endif()
  if(TB_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "railscope_add_testbed_test(${TB_NAME}): unknown arguments ${TB_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TB_TIMEOUT)
    set(TB_TIMEOUT 300)
  endif()
  set(_args --timeout ${TB_TIMEOUT})
  foreach(_opt MTU_A MTU_B USER MEMLOCK RAILS)
    if(DEFINED TB_${_opt} AND NOT "${TB_${_opt}}" STREQUAL "")
      string(TOLOWER "${_opt}" _flag)
      string(REPLACE "_" "-" _flag "${_flag}")
      list(APPEND _args --${_flag} ${TB_${_opt}})
    endif()
  endforeach()
  if(TB_SINGLE)
    list(APPEND _args --single)
  endif()
  if(TB_SWITCH)
    list(APPEND _args --switch)
  endif()
  foreach(_kv IN LISTS TB_ENV)
    list(APPEND _args --env "${_kv}")
  endforeach()
  add_test(NAME ${TB_NAME}
    COMMAND "${RAILSCOPE_TESTBED}" run ${_args} -- ${TB_COMMAND}
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  _railscope_testbed_props(${TB_NAME} ${TB_TIMEOUT})
  if(TB_SUITE)
    if(TB_MTU_A OR TB_MTU_B OR TB_USER OR TB_MEMLOCK OR TB_RAILS OR TB_SINGLE OR TB_SWITCH)
      message(FATAL_ERROR "railscope_add_testbed_test(${TB_NAME}): a SUITE case runs in the default guest")
    endif()
    set_tests_properties(${TB_NAME} PROPERTIES LABELS testbed_solo)
    # One line of the suite's script: the case in its own scratch folder, from its own build folder.
    set(_line "run_case '${TB_NAME}' ${TB_TIMEOUT} '${CMAKE_CURRENT_BINARY_DIR}' env")
    foreach(_word IN LISTS TB_ENV TB_COMMAND)
      string(REPLACE "'" "'\\''" _word "${_word}")
      string(APPEND _line " '${_word}'")
    endforeach()
    set_property(GLOBAL APPEND PROPERTY RAILSCOPE_TESTBED_SUITES ${TB_SUITE})
    set_property(GLOBAL APPEND_STRING PROPERTY RAILSCOPE_TESTBED_SUITE_${TB_SUITE} "${_line}\n")
    set_property(GLOBAL APPEND PROPERTY RAILSCOPE_TESTBED_SUITE_TIMEOUT_${TB_SUITE} ${TB_TIMEOUT})
  endif()
endfunction()

# One test-bed ctest per suite (SUITE above): its cases in order in one guest; each one's output
# between "== <name>" and "== <name>: passed|FAILED", and the suite fails when one of them does.
function(railscope_add_testbed_suites)
  get_property(_suites GLOBAL PROPERTY RAILSCOPE_TESTBED_SUITES)
  if(NOT _suites)
    return()
  endif()
  list(REMOVE_DUPLICATES _suites)
  foreach(_suite IN LISTS _suites)
    get_property(_cases GLOBAL PROPERTY RAILSCOPE_TESTBED_SUITE_${_suite})
    get_property(_timeouts GLOBAL PROPERTY RAILSCOPE_TESTBED_SUITE_TIMEOUT_${_suite})
    set(_total 0)
    foreach(_t IN LISTS _timeouts)
      math(EXPR _total "${_total} + ${_t}")
    endforeach()
    set(_script "${CMAKE_BINARY_DIR}/testbed-suite-${_suite}.sh")
    file(GENERATE OUTPUT "${_script}" CONTENT "#!/usr/bin/env bash
# Generated by cmake/Testbed.cmake: the test-bed suite ${_suite}, one case after another in this guest.
set -u
scratch=$TESTBED_SCRATCH
failed=()
run_case() {
    local name=$1 limit=$2 dir=$3 rc start=$SECONDS
    shift 3
    echo \"== $name\"
    mkdir -p \"$scratch/$name\"
    (cd \"$dir\" && TESTBED_SCRATCH=$scratch/$name timeout --kill-after=10 \"$limit\" \"$@\")
    rc=$?
    if [[ $rc == 0 ]]; then
        echo \"== $name: passed in $((SECONDS - start)) s\"
    else
        echo \"== $name: FAILED (status $rc) in $((SECONDS - start)) s\"
        failed+=(\"$name\")
    fi
}
${_cases}
if [[ \${#failed[@]} -gt 0 ]]; then
    echo \"suite ${_suite}: failed: \${failed[*]}\"
    exit 1
fi
echo \"suite ${_suite}: every case passed\"
")
    add_test(NAME testbed.suite.${_suite}
      COMMAND "${RAILSCOPE_TESTBED}" run --timeout ${_total} -- bash "${_script}"
      WORKING_DIRECTORY "${CMAKE_BINARY_DIR}")
    _railscope_testbed_props(testbed.suite.${_suite} ${_total})
  endforeach()
endfunction()

# Selftests of the test bed (tests/testbed/selftest/).
function(railscope_add_testbed_selftests)
  set(_st "${RAILSCOPE_TESTBED_DIR}/selftest")
  railscope_add_testbed_test(NAME testbed.topology TIMEOUT 180
    COMMAND "${_st}/topology.sh")
  railscope_add_testbed_test(NAME testbed.mtu MTU_A 9000 MTU_B 1500 TIMEOUT 120
    COMMAND "${_st}/mtu.sh" 4096 1024)
  railscope_add_testbed_test(NAME testbed.user USER nobody MEMLOCK 64 TIMEOUT 120
    COMMAND "${_st}/user.sh")
  railscope_add_testbed_test(NAME testbed.guest_lib TIMEOUT 180
    COMMAND "${_st}/lib.sh")
  railscope_add_testbed_test(NAME testbed.single SINGLE TIMEOUT 120
    COMMAND "${_st}/single.sh")
  railscope_add_testbed_test(NAME testbed.switch SWITCH TIMEOUT 180
    COMMAND "${_st}/switch.sh")
  # Host-side: boots three VMs itself.
  add_test(NAME testbed.exit_codes COMMAND "${_st}/exit-codes.sh"
    WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  _railscope_testbed_props(testbed.exit_codes 300)
endfunction()
