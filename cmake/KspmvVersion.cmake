# <kspmv/version.hpp>, generated from src/kspmv/version.hpp.in into KSPMV_GENERATED_INCLUDE_DIR:
# the project version and KSPMV_GIT_COMMIT, the commit of the source tree found at configure time
# ("unknown" outside a git checkout of kspmv, e.g. an unpacked release).
include_guard(GLOBAL)

set(KSPMV_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --show-toplevel HEAD
                  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}" RESULT_VARIABLE _kspmv_git_rc
                  OUTPUT_VARIABLE _kspmv_git_out ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(_kspmv_git_rc EQUAL 0)
    string(REPLACE "\n" ";" _kspmv_git_out "${_kspmv_git_out}")
    list(GET _kspmv_git_out 0 _kspmv_git_top)
    list(GET _kspmv_git_out 1 _kspmv_git_head)
    # The checkout must be kspmv's own, not a repository the sources were unpacked into.
    file(REAL_PATH "${_kspmv_git_top}" _kspmv_git_top)
    file(REAL_PATH "${PROJECT_SOURCE_DIR}" _kspmv_source_dir)
    if(_kspmv_git_top STREQUAL _kspmv_source_dir)
      set(KSPMV_GIT_COMMIT "${_kspmv_git_head}")
    endif()
  endif()
endif()

set(KSPMV_GENERATED_INCLUDE_DIR "${PROJECT_BINARY_DIR}/include")
configure_file("${PROJECT_SOURCE_DIR}/src/kspmv/version.hpp.in"
               "${KSPMV_GENERATED_INCLUDE_DIR}/kspmv/version.hpp" @ONLY)
message(STATUS "kspmv ${PROJECT_VERSION}, commit ${KSPMV_GIT_COMMIT}")
