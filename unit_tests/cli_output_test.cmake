# ctest script for what the kspmv tool promises about its output (README "Reliability"):
# - standard output that cannot be written (/dev/full, closed) is exit status 2 and one
#   "kspmv: error:" line on stderr, for every command and --help;
# - an output file of any valid name (up to NAME_MAX bytes) is written, and a process ended by
#   SIGINT, SIGTERM or SIGHUP while writing it (SIGKILL too where the file system has O_TMPFILE)
#   leaves the directory as it was.
# Variables: KSPMV (the executable), WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(small "gen:laplace2d:n=10")

# stdout_fails(REDIRECTION ARGS...): kspmv ARGS with standard output redirected by the shell
# (">/dev/full", ">&-") must exit 2 with one "kspmv: error:" line about the output.
function(stdout_fails redirection)
  execute_process(COMMAND sh -c "exec \"$0\" \"$@\" ${redirection}" "${KSPMV}" ${ARGN}
                  RESULT_VARIABLE got ERROR_VARIABLE err INPUT_FILE /dev/null)
  if(NOT got STREQUAL "2" OR NOT err MATCHES "^kspmv: error: [^\n]*(standard output|<stdout>)[^\n]*\n$")
    message(SEND_ERROR "kspmv ${ARGN} ${redirection}: exit ${got}, expected 2 and one error "
                       "line about standard output; stderr:\n${err}")
  else()
    message(STATUS "ok: kspmv ${ARGN} ${redirection} -> ${got}: ${err}")
  endif()
endfunction()

set(runs
    "--help" "--version" "help\;spmv" "gen\;--help" "info\;${small}" "info\;${small}\;--json"
    "spmv\;${small}\;--iters\;1" "spmv\;${small}\;--iters\;1\;--json" "cg\;${small}"
    "cg\;${small}\;--json" "demo\;--kernel\;csr\;--matrix\;laplace2d:n=8"
    "demo\;--kernel\;csr\;--matrix\;laplace2d:n=8\;--json" "gen\;laplace2d:n=10\;-"
    "convert\;${small}\;-")
foreach(redirection ">/dev/full" ">&-")
  if(redirection STREQUAL ">/dev/full" AND NOT EXISTS /dev/full)
    continue()
  endif()
  foreach(run IN LISTS runs)
    stdout_fails("${redirection}" ${run})
  endforeach()
endforeach()

# Names up to NAME_MAX (255) bytes: the temporary file's name does not grow from OUT's.
string(REPEAT "n" 251 name)
string(REPEAT "z" 248 gz_name)
foreach(out "${name}.mtx" "${gz_name}.mtx.gz")
  file(MAKE_DIRECTORY "${WORK_DIR}/names")
  execute_process(COMMAND "${KSPMV}" gen laplace2d:n=10 "${WORK_DIR}/names/${out}"
                  RESULT_VARIABLE got ERROR_VARIABLE err)
  file(GLOB left RELATIVE "${WORK_DIR}/names" "${WORK_DIR}/names/*" "${WORK_DIR}/names/.*")
  if(NOT got EQUAL 0 OR NOT left STREQUAL "${out}")
    message(SEND_ERROR "kspmv gen laplace2d:n=10 NAME (255 bytes): exit ${got}, left ${left}\n${err}")
  endif()
  file(REMOVE_RECURSE "${WORK_DIR}/names")
endforeach()

# interrupted(SIGNAL TMPFILE): `kspmv gen` into an existing file, ended by SIGNAL once it has its
# output open (KSPMV_TMPFILE=0: the named temporary file); the file and its directory must be as
# they were. `env --default-signal`: a background job of a shell starts with SIGINT ignored.
function(interrupted signal tmpfile)
  set(dir "${WORK_DIR}/signal_${signal}_${tmpfile}")
  file(MAKE_DIRECTORY "${dir}")
  file(WRITE "${dir}/out.mtx" "old content\n")
  execute_process(
    COMMAND sh -c [[
      KSPMV_TMPFILE=$3 env --default-signal=INT,TERM,HUP "$0" gen laplace2d:n=2000 "$1/out.mtx" &
      pid=$!
      i=0
      until open=$(ls -l /proc/$pid/fd 2>/dev/null | grep -F "$1/") || [ $i -ge 1200 ]; do
        sleep 0.05; i=$((i + 1))
      done
      kill -s "$2" $pid
      wait $pid
      echo $?
      echo "$open"]] "${KSPMV}" "${dir}" "${signal}" "${tmpfile}"
    OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(REGEX REPLACE "\n.*" "" got "${out}")
  string(REGEX REPLACE "^[^\n]*\n" "" open "${out}")
  if(signal STREQUAL "KILL" AND open MATCHES "[.]kspmv-")
    message(STATUS "skipped: SIGKILL, the file system of ${dir} has no O_TMPFILE (${open})")
    return()
  endif()
  file(READ "${dir}/out.mtx" text)
  file(GLOB left RELATIVE "${dir}" "${dir}/*" "${dir}/.*")
  if(NOT got MATCHES "^1[0-9][0-9]$" OR NOT text STREQUAL "old content\n" OR
     NOT left STREQUAL "out.mtx")
    message(SEND_ERROR "kspmv gen ended by SIG${signal} (KSPMV_TMPFILE=${tmpfile}): exit ${got}, "
                       "left ${left}, open: ${open}\n${err}")
  else()
    message(STATUS "ok: kspmv gen ended by SIG${signal} (KSPMV_TMPFILE=${tmpfile}): exit ${got}")
  endif()
endfunction()

foreach(signal INT TERM HUP)
  interrupted(${signal} 0)
  interrupted(${signal} 1)
endforeach()
# SIGKILL cannot be handled: only an unnamed temporary file leaves nothing (skipped where the
# process's open output file has a name: no O_TMPFILE on this file system).
interrupted(KILL 1)

# The README's cg example: --solution FILE writes x as a Matrix Market array that --rhs FILE
# reads back; --precond jacobi converges and --json holds the residual history. A wrong length
# or a malformed file is exit 2 with one error line.
set(x_file "${WORK_DIR}/x.mtx")
execute_process(COMMAND "${KSPMV}" cg gen:laplace2d:n=100 --precond jacobi --solution "${x_file}"
                OUTPUT_QUIET RESULT_VARIABLE got ERROR_VARIABLE err)
if(NOT got EQUAL 0)
  message(SEND_ERROR "kspmv cg --precond jacobi --solution: exit ${got}\n${err}")
endif()
execute_process(COMMAND "${KSPMV}" cg gen:laplace2d:n=100 --rhs "${x_file}" --json
                RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT got EQUAL 0 OR NOT out MATCHES "\"relative_residuals\": *\\[1(\\.0)?,")
  message(SEND_ERROR "kspmv cg --rhs --json: exit ${got}\n${out}\n${err}")
endif()
execute_process(COMMAND "${KSPMV}" cg ${small} --precond jacobi --json
                RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT got EQUAL 0 OR NOT out MATCHES "\"precond\": *\"jacobi\"")
  message(SEND_ERROR "kspmv cg --precond jacobi --json: exit ${got}\n${out}\n${err}")
endif()
file(STRINGS "${x_file}" x_lines)
list(LENGTH x_lines x_count)
list(GET x_lines 0 x_banner)
if(NOT x_count EQUAL 10002 OR NOT x_banner STREQUAL "%%MatrixMarket matrix array real general")
  message(SEND_ERROR "cg --solution wrote ${x_count} lines, banner '${x_banner}'")
endif()
file(WRITE "${WORK_DIR}/bad_rhs.mtx" "%%MatrixMarket matrix array real general\n100 1\n1\nx\n")
foreach(case "gen:laplace2d:n=5|--rhs|${x_file}|has 10000 values, the matrix 25 rows"
             "${small}|--rhs|${WORK_DIR}/bad_rhs.mtx|bad_rhs.mtx:4: expected a numeric value"
             "${small}|--rhs|${WORK_DIR}/missing.mtx|missing.mtx")
  string(REPLACE "|" ";" case "${case}")
  list(POP_BACK case expected)
  execute_process(COMMAND "${KSPMV}" cg ${case} RESULT_VARIABLE got ERROR_VARIABLE err)
  if(NOT got EQUAL 2 OR NOT err MATCHES "^kspmv: error: [^\n]*${expected}[^\n]*\n$")
    message(SEND_ERROR "kspmv cg ${case}: exit ${got}, expected 2 and '${expected}':\n${err}")
  endif()
endforeach()

# cg's progress line on a terminal (stderr a TTY; `script` gives the run one): iteration,
# residual and elapsed time, from 0.25 s on.
find_program(SCRIPT script)
if(NOT SCRIPT)
  message(STATUS "skipped: cg's progress line (no 'script' to give it a terminal)")
else()
  execute_process(COMMAND "${SCRIPT}" -qec
                          "'${KSPMV}' cg gen:laplace2d:n=600 --tol 1e-14 --max-iters 500" /dev/null
                  OUTPUT_VARIABLE out ERROR_VARIABLE err INPUT_FILE /dev/null)
  if(NOT out MATCHES "cg: iteration [0-9]+, relative residual [0-9.]+e[-+][0-9]+, [0-9.]+ s")
    message(SEND_ERROR "kspmv cg on a terminal showed no progress line:\n${out}\n${err}")
  endif()
endif()
