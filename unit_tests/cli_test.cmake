# ctest script for the kspmv tool: help and success paths exit 0, bad input exits 2 with exactly
# one line "kspmv: error: ..." on stderr. Variables: KSPMV (the executable), WORK_DIR.
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(failures 0)

# run_kspmv(RC STDOUT_REGEX STDERR_REGEX INPUT ARGS...): runs kspmv ARGS with standard input
# from INPUT and checks the exit status, stdout and (unless "") stderr.
function(run_kspmv rc out_regex err_regex input)
  execute_process(COMMAND "${KSPMV}" ${ARGN} RESULT_VARIABLE got OUTPUT_VARIABLE out
                  ERROR_VARIABLE err INPUT_FILE "${input}")
  set(bad "")
  if(NOT got STREQUAL "${rc}")
    set(bad "exit status ${got}, expected ${rc}")
  elseif(NOT out MATCHES "${out_regex}")
    set(bad "stdout does not match '${out_regex}'")
  elseif(rc EQUAL 2 AND NOT err MATCHES "^kspmv: error: [^\n]+\n$")
    set(bad "stderr is not one 'kspmv: error:' line")
  elseif(NOT err_regex STREQUAL "" AND NOT err MATCHES "${err_regex}")
    set(bad "stderr does not match '${err_regex}'")
  endif()
  if(bad)
    message(SEND_ERROR "kspmv ${ARGN}: ${bad}\n--- stdout:\n${out}\n--- stderr:\n${err}")
  else()
    message(STATUS "ok: kspmv ${ARGN} -> ${got}")
  endif()
endfunction()

# expect(RC STDOUT_REGEX ARGS...): run_kspmv with no input and any stderr.
function(expect rc out_regex)
  run_kspmv(${rc} "${out_regex}" "" /dev/null ${ARGN})
endfunction()

# check(CONDITION... MESSAGE TEXT): a failure saying TEXT unless the if() CONDITION holds.
function(check)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "MESSAGE" "")
  if(NOT (${arg_UNPARSED_ARGUMENTS}))
    message(SEND_ERROR "${arg_MESSAGE}")
  endif()
endfunction()

set(small "gen:laplace2d:n=16")
file(WRITE "${WORK_DIR}/truncated.mtx"
     "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 1.0\n2 2 2.0\n")
file(WRITE "${WORK_DIR}/bad_index.mtx"
     "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1.0\n")

# Every --json output starts with the kspmv that wrote it.
set(json_start "^{\"kspmv_version\":\"${VERSION}\",\"kspmv_commit\":\"${COMMIT}\",")

# help, usage and versions
expect(0 "commands:" --help)
expect(0 "--version" --help)
# The Kokkos release numbers have two digits ("4.6.01"), its version macro not ("4.6.1").
string(REGEX REPLACE "\\.0([0-9])" ".\\1" kokkos "${KOKKOS_VERSION}")
string(REPLACE "." "\\." kokkos "${kokkos}")
if(HAVE_CUDA)  # the driver and cuSPARSE from the machine: a version, or none for the driver
  set(cuda "CUDA runtime [0-9]+\\.[0-9]+, driver ([0-9]+\\.[0-9]+|none)\ncuSPARSE [0-9]+\\.[0-9]+\\.[0-9]+")
else()
  set(cuda "CUDA runtime none, driver none\ncuSPARSE none")
endif()
expect(0 "^kspmv ${VERSION} \\(commit ${COMMIT}\\)\nKokkos ${kokkos}\n${cuda}\n$" --version)
expect(2 "" --version extra)
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
expect(2 "" cg)
expect(2 "" cg ${small} --tol 0)
expect(2 "" cg ${small} --max-iters x)
expect(2 "" cg ${small} --devices 0,x)
expect(2 "" cg ${small} --devices 0,0 --partition nosuch)
expect(2 "" cg ${small} --devices 0,0 --exchange nosuch)
expect(2 "" cg gen:uniform:rows=20,cols=30,k=3)
expect(2 "" cg ${small} --split nz)  # --tpetra only
expect(2 "" spmv ${small} --devices -1)
expect(2 "" spmv ${small} --devices 4294967296)
# every option is checked whatever the others are
expect(2 "" spmv ${small} --partition bogus)
expect(2 "" spmv ${small} --exchange bogus)
expect(2 "" spmv ${small} --residency streamed)
expect(2 "" spmv ${small} --residency nosuch)
expect(2 "" spmv ${small} --device-memory-cap 0)
expect(2 "" spmv ${small} --device-memory-cap -1)
expect(2 "" spmv ${small} --devices 0,1 --kernel seg)
expect(2 "" spmv ${small} --devices 0,1 --kernel hbp)
# options that would do nothing are refused, not taken silently
run_kspmv(2 "" "autotune" /dev/null spmv ${small} --autotune)
run_kspmv(2 "" "chunks 2 .*1 device" /dev/null spmv ${small} --chunks 2)
run_kspmv(2 "" "chunks 4 .*partition pcsc" /dev/null
          spmv ${small} --devices 0,0,0,0 --partition pcsc --chunks 4)
run_kspmv(2 "" "chunks 2 .*1 device" /dev/null cg ${small} --chunks 2)

# runs
expect(0 "check .*: ok" spmv ${small})
expect(0 "check .*: ok" spmv ${small} --kernel coo --precision float --alpha 2 --beta 0.5 --iters 3)
expect(0 "${json_start}\"matrix\":.*\"ok\":true}\n$" spmv ${small} --kernel csc --json)
expect(0 "\"devices\":\\[0\\],\"choose_devices\":false,\"partition\":null,\"exchange\":null" spmv ${small} --json)
# reorder: rcm kept and reported with its set-up; auto on a numbered grid keeps none
expect(0 "\"reorder_requested\":\"rcm\",\"reorder\":\"rcm\",\"reorder_ms\":.*\"ok\":true" spmv ${small} --reorder rcm --json)
expect(0 "\"reorder\":\"none\"" spmv ${small} --reorder auto --json)
expect(2 "" spmv ${small} --reorder nosuch)
# residency: auto by default, resident on the host (no device); the JSON says both
expect(0 "residency resident \\(asked: auto\\).*check .*: ok" spmv ${small})
expect(0 "\"residency_requested\":\"auto\",\"residency\":\"resident\",\"device_memory_cap_gb\":null" spmv ${small} --json)
expect(0 "\"residency\":\"resident\",\"device_memory_cap_gb\":0.5," spmv ${small} --residency resident --device-memory-cap 0.5 --json)
expect(0 "devices +0,0, partition lra, exchange halo.*check .*: ok" spmv ${small} --devices 0,0 --partition lra --exchange halo)
expect(0 "${json_start}\"matrix\":.*\"nnz\":1216,.*}\n$" info ${small} --json)
expect(0 "--max-iters" help cg)
expect(0 "check .*: ok" cg ${small})
expect(0 "4 device.*check .*: ok" cg ${small} --devices 0,0,0,0 --partition lra-rc)
expect(0 "${json_start}\"matrix\":.*\"devices\":2,.*\"converged\":true.*\"ok\":true}\n$" cg ${small} --devices 0,0 --exchange halo --precision float --json)
expect(1 "NOT converged.*stopped +the iteration limit ran out" cg ${small} --max-iters 2)
file(WRITE "${WORK_DIR}/indefinite.mtx"
     "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n1 1 -1.0\n2 2 -2.0\n")
file(WRITE "${WORK_DIR}/general.mtx"
     "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 -1.0\n1 2 1.0\n2 2 -1.0\n")
expect(1 "stopped +non-positive curvature .* symmetric but not positive definite" cg "${WORK_DIR}/indefinite.mtx")
expect(1 "stopped +non-positive curvature .* not symmetric" cg "${WORK_DIR}/general.mtx")
expect(0 "check .*: ok" spmv ${small} --devices 0,0,0 --partition pcsc --exchange merge)
# nz in chunks: the JSON says how many; out of range, or for another scheme, refused
expect(0 "\"partition\":\"nz\",\"exchange\":\"halo\",\"chunks\":3,.*\"ok\":true" spmv ${small} --devices 0,0 --exchange halo --chunks 3 --json)
expect(0 "check .*: ok" cg ${small} --devices 0,0 --exchange halo --chunks 4)
expect(2 "" spmv ${small} --devices 0,0 --chunks 0)
run_kspmv(2 "" "chunks apply to nz" /dev/null spmv ${small} --devices 0,0 --partition lra --chunks 2)
# what the tuner tried and kept: the Auto exchange's three candidates, one kept
expect(0 "\"tuning\":\\[{\"choice\":\"exchange\",\"candidate\":\"allgather\".*\"kept\":true" spmv ${small} --devices 0,0 --json)
expect(0 "check .*: ok" spmv ${small} --devices 0,0 --partition lra --exchange allgather-x)
expect(0 "2 device.*check .*: ok" cg ${small} --devices 0,0 --partition 2nz --exchange allgather-x)
expect(0 "nnz 1216" info ${small} --kokkos-disable-warnings)
# Kokkos' options checked before Kokkos sees them (it reads "abc" as 0, ignores unknown names)
run_kspmv(2 "" "--kokkos-num-threads: 'abc' is not an integer" /dev/null
          info ${small} --kokkos-num-threads=abc)
expect(2 "" info ${small} --kokkos-threads=0)
expect(2 "" info ${small} --kokkos-num-threads)
expect(2 "" info ${small} --kokkos-num-devices=2,)
run_kspmv(2 "" "unknown Kokkos option '--kokkos-bogus'" /dev/null info ${small} --kokkos-bogus=1)
expect(0 "nnz 1216" info ${small} --kokkos-num-threads=1)
# Kokkos' own warnings (an OpenMP Kokkos warns on OMP_PROC_BIND) stay off stderr unless the user
# asks; KOKKOS_DISABLE_WARNINGS=0 is the user's choice (Kokkos 3 aborts on an option against it).
execute_process(COMMAND "${KSPMV}" info ${small} RESULT_VARIABLE got OUTPUT_QUIET
                ERROR_VARIABLE err INPUT_FILE /dev/null)
if(NOT got EQUAL 0 OR NOT err STREQUAL "")
  message(SEND_ERROR "kspmv info ${small}: exit status ${got}, stderr not empty:\n${err}")
endif()
set(ENV{KOKKOS_DISABLE_WARNINGS} 0)
expect(0 "nnz 1216" info ${small})
unset(ENV{KOKKOS_DISABLE_WARNINGS})
run_kspmv(0 "^$" "^wrote .*a.mtx.gz: 256 x 256, 1216 non-zeros\n$" /dev/null
          gen laplace2d:n=16 "${WORK_DIR}/a.mtx.gz")
run_kspmv(0 "^$" "^wrote " /dev/null convert "${WORK_DIR}/a.mtx.gz" "${WORK_DIR}/b.mtx")
expect(0 "file +real general, 1216 entries.*nnz 1216" info "${WORK_DIR}/b.mtx")

# Standard input and output: "-", gzip recognized on a pipe; status lines on stderr only.
run_kspmv(0 "^%%MatrixMarket matrix coordinate real general\n256 256 1216\n1 1 4\n"
          "^wrote standard output: " /dev/null convert ${small} -)
execute_process(COMMAND "${KSPMV}" convert ${small} /dev/stdout
                OUTPUT_FILE "${WORK_DIR}/from_stdout.mtx" ERROR_QUIET)
file(READ "${WORK_DIR}/from_stdout.mtx" text)
string(FIND "${text}" "wrote" at)
check(at EQUAL -1 MESSAGE "'kspmv convert ... /dev/stdout' wrote its status into the file")
expect(0 "file +real general, 1216 entries.*nnz 1216" info "${WORK_DIR}/from_stdout.mtx")
run_kspmv(0 "^$" "" /dev/null gen laplace2d:nx=3,ny=7 "${WORK_DIR}/c.mtx.gz")
run_kspmv(0 "file +real general, 85 entries.*21 x 21, nnz 85" "" "${WORK_DIR}/c.mtx.gz" info -)
execute_process(COMMAND cat "${WORK_DIR}/c.mtx.gz" COMMAND "${KSPMV}" spmv - --iters 2
                RESULT_VARIABLE got OUTPUT_VARIABLE out ERROR_VARIABLE err)
check(out MATCHES "matrix +-: 21 x 21, 85 non-zeros.*check .*: ok"
      MESSAGE "cat c.mtx.gz | kspmv spmv -: ${got}\n${out}\n${err}")

# Writes: a failure leaves an existing file as it was and removes nothing kspmv did not create.
file(WRITE "${WORK_DIR}/keep/out.mtx" "old content\n")
execute_process(COMMAND sh -c "ulimit -f 16; trap '' XFSZ; exec \"$0\" convert gen:laplace2d:n=300 \"$1\""
                        "${KSPMV}" "${WORK_DIR}/keep/out.mtx"
                RESULT_VARIABLE got ERROR_VARIABLE err)
set(text "(removed)")
if(EXISTS "${WORK_DIR}/keep/out.mtx")
  file(READ "${WORK_DIR}/keep/out.mtx" text)
endif()
file(GLOB left RELATIVE "${WORK_DIR}/keep" "${WORK_DIR}/keep/*" "${WORK_DIR}/keep/.*")
check(got EQUAL 2 MESSAGE "a write past the file size limit: exit ${got}, expected 2\n${err}")
check(text STREQUAL "old content\n" MESSAGE "a failed write changed the file it was to replace")
check(left STREQUAL "out.mtx" MESSAGE "a failed write left: ${left}")
if(EXISTS /dev/full)
  file(CREATE_LINK /dev/full "${WORK_DIR}/full.mtx" SYMBOLIC)
  expect(2 "" convert ${small} "${WORK_DIR}/full.mtx")
  check(IS_SYMLINK "${WORK_DIR}/full.mtx" MESSAGE "a failed write removed the link OUT -> /dev/full")
endif()
file(CREATE_LINK /dev/stdout "${WORK_DIR}/stdout.mtx" SYMBOLIC)
execute_process(COMMAND sh -c "trap '' PIPE; { \"$0\" convert gen:laplace2d:n=1000 \"$1\"; echo $? > \"$1.rc\"; } | head -c 100 > /dev/null"
                        "${KSPMV}" "${WORK_DIR}/stdout.mtx"
                ERROR_VARIABLE err)
file(READ "${WORK_DIR}/stdout.mtx.rc" got)  # written by the shell in any case
check(got STREQUAL "2\n" MESSAGE "a write into a closed pipe: exit ${got}, expected 2\n${err}")
check(err MATCHES "write error: Broken pipe" MESSAGE "a write into a closed pipe: ${err}")
check(IS_SYMLINK "${WORK_DIR}/stdout.mtx" MESSAGE "a failed write removed the link OUT -> /dev/stdout")

# Hostile sizes: memory by the entries read, a MemoryError with the sizes, a cap on a line.
file(WRITE "${WORK_DIR}/huge.mtx"
     "%%MatrixMarket matrix coordinate real general\n2000000000 2000000000 1\n1 1 1\n")
set(ENV{KSPMV_MEMORY_LIMIT} 1000000000)
expect(0 "2000000000 x 2000000000, nnz 1,.* 1999999999 empty rows" info "${WORK_DIR}/huge.mtx")
run_kspmv(2 "" "huge.mtx: a 2000000000 x 2000000000 matrix, its row pointers: needs" /dev/null
          spmv "${WORK_DIR}/huge.mtx")
unset(ENV{KSPMV_MEMORY_LIMIT})
# ulimit -v: the memory kspmv counts on is what the limit leaves (it said MemAvailable before).
# AddressSanitizer reserves terabytes of shadow address space at start: no build with it can
# run under a 3 GB limit, so that build says so and leaves this case out. OpenBLAS (linked through
# Trilinos) starts a thread per core when it loads: on a many-core machine their stacks alone pass
# the limit, so it gets one thread here.
# A Kokkos built with CUDA starts the CUDA driver in Kokkos::initialize, which reserves more
# address space than the limit leaves: there every command stops at once, and must say so in one
# line (exit 2), as any error.
if(SANITIZE MATCHES "address")
  message(STATUS "spmv under ulimit -v: not run (AddressSanitizer cannot start under the limit)")
else()
  execute_process(COMMAND sh -c "ulimit -v 3000000 && OPENBLAS_NUM_THREADS=1 exec \"$0\" spmv \"$1\""
                          "${KSPMV}" "${WORK_DIR}/huge.mtx"
                  RESULT_VARIABLE got ERROR_VARIABLE err)
  if(KOKKOS_CUDA)
    set(says_cuda FALSE)
    if(err MATCHES "^kspmv: error: [^\n]*[Cc][Uu][Dd][Aa][^\n]*\n$")
      set(says_cuda TRUE)
    endif()
    check(got EQUAL 2 AND says_cuda
          MESSAGE "spmv under ulimit -v 3000000, Kokkos with CUDA: exit ${got}\n${err}")
  else()
    string(REGEX MATCH "row pointers: needs 16000000008 bytes [^,]*, ([0-9]+) MiB available" said
           "${err}")
    check(got EQUAL 2 AND said AND CMAKE_MATCH_1 LESS 2930
          MESSAGE "spmv under ulimit -v 3000000 (2929 MiB): exit ${got}\n${err}")
  endif()
endif()
run_kspmv(2 "" "/dev/zero:1: line longer than" /dev/null info /dev/zero)

# Values: NaN, infinity, overflow and underflow counted; spmv and cg refuse the first two.
file(WRITE "${WORK_DIR}/nonfinite.mtx" "%%MatrixMarket matrix coordinate real general\n3 3 4\n"
                                       "1 1 1\n2 2 nan\n3 3 1e400\n1 2 1e-400\n")
expect(0 "values +1 NaN or infinite, 1 overflow, 1 underflow to 0" info
       "${WORK_DIR}/nonfinite.mtx")
expect(0 "\"nonfinite_values\":1,\"overflow_values\":1,\"underflow_values\":1" info
       "${WORK_DIR}/nonfinite.mtx" --json)
run_kspmv(2 "" "nonfinite.mtx:4: .*NaN or infinite \\(1\\) or overflow double \\(1\\).*--allow-nonfinite"
          /dev/null spmv "${WORK_DIR}/nonfinite.mtx")
run_kspmv(2 "" "nonfinite.mtx:4: " /dev/null cg "${WORK_DIR}/nonfinite.mtx")
# Allowed, it runs: the check compares the NaN and infinite entries of y position by position.
run_kspmv(0 "check .*: ok" "warning: .*nonfinite.mtx: values that are NaN" /dev/null
          spmv "${WORK_DIR}/nonfinite.mtx" --allow-nonfinite --iters 1)
run_kspmv(0 "check .*: ok" "" /dev/null
          spmv "${WORK_DIR}/nonfinite.mtx" --allow-nonfinite --iters 1 --kernel coo --beta 2)
# CG on a symmetric matrix with a NaN: the matrix named as not finite, not as not symmetric.
file(WRITE "${WORK_DIR}/nan_spd.mtx" "%%MatrixMarket matrix coordinate real symmetric\n2 2 3\n"
                                     "1 1 4\n2 1 nan\n2 2 4\n")
run_kspmv(1 "stopped .*the matrix is not finite \\(a NaN or infinite value at row 1, column 2\\)"
          "" /dev/null cg "${WORK_DIR}/nan_spd.mtx" --allow-nonfinite)
# alpha and beta that overflow the precision: bad input naming the value, not a wrong result.
run_kspmv(2 "" "--alpha 1e300 overflows float" /dev/null
          spmv ${small} --alpha 1e300 --precision float)
run_kspmv(2 "" "--beta -1e39 overflows float" /dev/null
          spmv ${small} --beta -1e39 --precision float)
expect(0 "check .*: ok" spmv ${small} --alpha 1e300 --iters 1)
file(WRITE "${WORK_DIR}/float.mtx" "%%MatrixMarket matrix coordinate real general\n2 2 2\n"
                                   "1 1 1e300\n2 2 1e-50\n")
run_kspmv(2 "" "float.mtx:3: .*overflow float" /dev/null spmv "${WORK_DIR}/float.mtx"
          --precision float)
run_kspmv(0 "check .*: ok" "" /dev/null spmv "${WORK_DIR}/float.mtx" --iters 1)
file(WRITE "${WORK_DIR}/tiny.mtx" "%%MatrixMarket matrix coordinate real general\n2 2 2\n"
                                  "1 1 1\n2 2 1e-50\n")
run_kspmv(0 "check .*: ok" "^kspmv: warning: .*tiny.mtx: non-zero values that underflow float to 0: 1 \\(the first at line 4\\)\n$"
          /dev/null spmv "${WORK_DIR}/tiny.mtx" --precision float --iters 1)

# Symmetric storage with both triangles: a warning naming the first line on the other side.
file(WRITE "${WORK_DIR}/both.mtx" "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n"
                                  "1 1 4\n2 1 1\n3 3 4\n1 2 1\n")
run_kspmv(0 "check .*: ok" "^kspmv: warning: .*both.mtx: symmetric storage with entries on both sides of the diagonal \\(line 6\\)"
          /dev/null spmv "${WORK_DIR}/both.mtx" --iters 1)
