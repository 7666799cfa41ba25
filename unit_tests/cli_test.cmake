# ctest script for the kspmv tool: help and success paths exit 0, bad input exits 2 with exactly
# one line "kspmv: error: ..." on stderr. Variables: KSPMV (the executable), WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(failures 0)

# expect(RC STDOUT_REGEX ARGS...): runs kspmv ARGS and checks the exit status and stdout.
function(expect rc out_regex)
  execute_process(COMMAND "${KSPMV}" ${ARGN} RESULT_VARIABLE got OUTPUT_VARIABLE out
                  ERROR_VARIABLE err INPUT_FILE /dev/null)
  set(bad "")
  if(NOT got STREQUAL "${rc}")
    set(bad "exit status ${got}, expected ${rc}")
  elseif(NOT out MATCHES "${out_regex}")
    set(bad "stdout does not match '${out_regex}'")
  elseif(rc EQUAL 2 AND NOT err MATCHES "^kspmv: error: [^\n]+\n$")
    set(bad "stderr is not one 'kspmv: error:' line")
  endif()
  if(bad)
    message(SEND_ERROR "kspmv ${ARGN}: ${bad}\n--- stdout:\n${out}\n--- stderr:\n${err}")
  else()
    message(STATUS "ok: kspmv ${ARGN} -> ${got}")
  endif()
endfunction()

set(small "gen:laplace2d:n=16")
file(WRITE "${WORK_DIR}/truncated.mtx"
     "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.0\n2 2 2.0\n")
file(WRITE "${WORK_DIR}/bad_index.mtx"
     "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")

# help and usage
expect(0 "commands:" --help)
expect(0 "commands:")
expect(0 "--iters" help spmv)
expect(0 "--json" info -h)
expect(0 "usage: kspmv gen" gen --help)
expect(2 "" nosuch)
expect(2 "" help nosuch)
expect(2 "" spmv)
expect(2 "" spmv ${small} extra)
expect(2 "" spmv ${small} --bogus)
expect(2 "" spmv ${small} --iters)
expect(2 "" spmv ${small} --iters abc)
expect(2 "" spmv ${small} --iters 0)
expect(2 "" spmv ${small} --alpha 1x)
expect(2 "" spmv ${small} --precision half)
expect(2 "" spmv ${small} --kernel nosuch)
expect(2 "" spmv ${small} --backend nosuch)
expect(2 "" spmv gen:nosuch:n=3)
expect(2 "" info "${WORK_DIR}/missing.mtx")
expect(2 "" info "${WORK_DIR}/truncated.mtx")
expect(2 "" spmv "${WORK_DIR}/bad_index.mtx")
expect(2 "" convert "${WORK_DIR}/truncated.mtx" "${WORK_DIR}/out.mtx")

# runs
expect(0 "check .*: ok" spmv ${small})
expect(0 "check .*: ok" spmv ${small} --kernel coo --precision float --alpha 2 --beta 0.5 --iters 3)
expect(0 "^{\"matrix\":.*\"ok\":true}\n$" spmv ${small} --kernel csc --json)
expect(0 "^{\"matrix\":.*\"nnz\":1216,.*}\n$" info ${small} --json)
expect(0 "nnz 1216" info ${small} --kokkos-disable-warnings)
expect(0 "wrote" gen laplace2d:n=16 "${WORK_DIR}/a.mtx.gz")
expect(0 "wrote" convert "${WORK_DIR}/a.mtx.gz" "${WORK_DIR}/b.mtx")
expect(0 "file +real general, 1216 entries.*nnz 1216" info "${WORK_DIR}/b.mtx")
