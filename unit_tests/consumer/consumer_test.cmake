# ctest script: install the build tree into a scratch prefix, then configure, build and run the
# consumer project against it. Variables: BUILD_DIR, SRC (this directory), WORK_DIR, and what the
# main build used, each possibly empty: GENERATOR, CXX_COMPILER, CXX_FLAGS, LINKER_FLAGS (of
# executables), BUILD_TYPE, KOKKOS_DIR, CUDA_ROOT, MPI_CXX_COMPILER and PREFIX_PATH (':'-separated,
# as in the environment variable).
foreach(var BUILD_DIR SRC WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "consumer_test.cmake needs -D${var}=...")
  endif()
endforeach()

function(run_step what)
  message(STATUS "consumer test: ${what}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ${what} failed (${rc})")
  endif()
endfunction()

set(prefix "${WORK_DIR}/prefix")
set(build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")

run_step("install into ${prefix}" "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")
# The KokkosSparse adapter is a header of the library: installed with or without the Tpetra one.
if(NOT EXISTS "${prefix}/include/kspmv/interop/kokkos_sparse.hpp")
  message(FATAL_ERROR "consumer test: <kspmv/interop/kokkos_sparse.hpp> was not installed")
endif()

set(ENV{CMAKE_PREFIX_PATH} "${prefix}:${PREFIX_PATH}")
set(args -S "${SRC}" -B "${build}")
if(GENERATOR)
  list(APPEND args -G "${GENERATOR}")
endif()
foreach(pair "CMAKE_CXX_COMPILER=${CXX_COMPILER}" "CMAKE_CXX_FLAGS=${CXX_FLAGS}"
             "CMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}" "CMAKE_BUILD_TYPE=${BUILD_TYPE}"
             "Kokkos_DIR=${KOKKOS_DIR}" "CUDAToolkit_ROOT=${CUDA_ROOT}"
             "MPI_CXX_COMPILER=${MPI_CXX_COMPILER}")
  if(NOT pair MATCHES "=$")
    list(APPEND args "-D${pair}")
  endif()
endforeach()
run_step("configure" "${CMAKE_COMMAND}" ${args})
run_step("build" "${CMAKE_COMMAND}" --build "${build}")
run_step("run" "${build}/consumer")
run_step("run the GPU example" "${build}/gpu_example")
if(EXISTS "${build}/tpetra_example")  # kspmv built with its Tpetra adapter: one MPI rank
  run_step("run the Tpetra example" "${build}/tpetra_example")
endif()
