# ctest script for `kspmv cg --tpetra` under mpiexec on RANKS ranks: a generated matrix (each rank
# its own rows) and a Matrix Market file (read on rank 0, split by rows and by non-zeros) solve
# and check; a missing file is exit status 2 on every rank, a non-SPD matrix 1. Variables: KSPMV,
# MPIEXEC, NUMPROC_FLAG, RANKS, WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(file "${WORK_DIR}/stencil.mtx")
execute_process(COMMAND "${KSPMV}" gen stencil7:n=14 "${file}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kspmv gen failed (${rc})")
endif()

# solve(RC STDOUT_REGEX ARGS...): mpiexec -n RANKS kspmv cg ARGS --tpetra.
function(solve rc regex)
  execute_process(COMMAND "${MPIEXEC}" ${NUMPROC_FLAG} ${RANKS} "${KSPMV}" cg ${ARGN} --tpetra
                  RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT got STREQUAL "${rc}" OR NOT out MATCHES "${regex}")
    message(SEND_ERROR "kspmv cg ${ARGN} --tpetra on ${RANKS} ranks: exit ${got} (expected "
                       "${rc}), stdout does not match '${regex}'?\n--- stdout:\n${out}\n--- stderr:\n${err}")
  else()
    message(STATUS "ok: ${RANKS} ranks: kspmv cg ${ARGN} --tpetra -> ${got}")
  endif()
endfunction()

set(ok "^{\"kspmv_version\":\"${VERSION}\",\"kspmv_commit\":\"${COMMIT}\",\"matrix\":.*\"ranks\":${RANKS},.*\"converged\":true.*\"ok\":true}\n$")
solve(0 "${ok}" gen:stencil7:n=14 --json)
solve(0 "${ok}" "${file}" --json)
solve(0 "${ok}" "${file}" --split nz --json)
solve(0 "Belos CG, [0-9]+ iterations.*check .*: ok" gen:laplace2d:n=40 --tol 1e-10)
solve(1 "NOT converged.*stopped +the iteration limit ran out" "${file}" --max-iters 3)
solve(1 "stopped +non-positive curvature" gen:uniform:rows=200,k=3)
solve(2 "^$" "${WORK_DIR}/missing.mtx")
solve(2 "^$" gen:stencil7:n=14 --precision float)
