# ctest script: install the build tree into a scratch prefix, then configure, build and run against
# it the consumer project (this directory) and the README's consumer example, copied out of
# README.md into an empty directory as written. Checks that the host-only consumer
# (kspmv::kspmv_nocuda) loads no CUDA library and, in a shared build, the libraries' SONAME.
# Variables: BUILD_DIR, SRC (this directory), README, WORK_DIR, VERSION (the project's), and what
# the main build used, each possibly empty: GENERATOR, CXX_COMPILER, CXX_FLAGS, LINKER_FLAGS (of
# executables), BUILD_TYPE, KOKKOS_DIR, KOKKOS_CUDA (whether Kokkos has CUDA), CUDA_ROOT,
# MPI_CXX_COMPILER and PREFIX_PATH (':'-separated, as in the environment variable).
foreach(var BUILD_DIR SRC README WORK_DIR VERSION)
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
set(generator "")
if(GENERATOR)
  set(generator -G "${GENERATOR}")
endif()
set(options "")
foreach(pair "CMAKE_CXX_COMPILER=${CXX_COMPILER}" "CMAKE_CXX_FLAGS=${CXX_FLAGS}"
             "CMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}" "CMAKE_BUILD_TYPE=${BUILD_TYPE}"
             "Kokkos_DIR=${KOKKOS_DIR}" "CUDAToolkit_ROOT=${CUDA_ROOT}"
             "MPI_CXX_COMPILER=${MPI_CXX_COMPILER}")
  if(NOT pair MATCHES "=$")
    list(APPEND options "-D${pair}")
  endif()
endforeach()
run_step("configure" "${CMAKE_COMMAND}" -S "${SRC}" -B "${build}" ${generator} ${options})
run_step("build" "${CMAKE_COMMAND}" --build "${build}")
run_step("run" "${build}/consumer")
run_step("run the host-only consumer" "${build}/host_consumer")
run_step("run the GPU example" "${build}/gpu_example")
if(EXISTS "${build}/tpetra_example")  # kspmv built with its Tpetra adapter: one MPI rank
  run_step("run the Tpetra example" "${build}/tpetra_example")
endif()

# needed_libraries(PROGRAM OUT): the shared libraries PROGRAM loads, those of its libraries
# included (ldd).
find_program(LDD ldd REQUIRED)
find_program(READELF readelf REQUIRED)
function(needed_libraries program out)
  execute_process(COMMAND "${LDD}" "${program}" OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "consumer test: ldd ${program} failed (${rc})")
  endif()
  string(REGEX MATCHALL "[^\n]+" lines "${listing}")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "^[ \t]*([^ \t]+).*" "\\1" name "${line}")
    get_filename_component(name "${name}" NAME)
    list(APPEND names "${name}")
  endforeach()
  set(${out} "${names}" PARENT_SCOPE)
endfunction()

# The host-only consumer loads no CUDA library of kspmv's (cuSPARSE, nvJitLink, the runtime), nor
# the runtime or driver unless Kokkos itself was built with CUDA.
set(cuda_pattern "^lib(cusparse|nvJitLink|cublas|cudart|cuda)[.]")
if(KOKKOS_CUDA)
  set(cuda_pattern "^lib(cusparse|nvJitLink|cublas)[.]")
  message(STATUS "consumer test: Kokkos has CUDA, so the host-only consumer may link the CUDA "
                 "runtime and driver through Kokkos: checking for kspmv's CUDA libraries only")
endif()
needed_libraries("${build}/host_consumer" needed)
set(cuda_needed "${needed}")
list(FILTER cuda_needed INCLUDE REGEX "${cuda_pattern}")
if(cuda_needed)
  message(FATAL_ERROR "consumer test: the host-only consumer (kspmv::kspmv_nocuda) loads "
                      "${cuda_needed} (it loads: ${needed})")
endif()
file(SIZE "${build}/host_consumer" size)
message(STATUS "consumer test: the host-only consumer loads no CUDA library (${size} bytes; "
               "loads ${needed})")

# A shared build: each library's SONAME is libNAME.so.MAJOR.MINOR.
string(REGEX MATCH "^[0-9]+[.][0-9]+" soversion "${VERSION}")
file(GLOB shared_libraries "${prefix}/lib*/libkspmv*.so")
foreach(library IN LISTS shared_libraries)
  get_filename_component(name "${library}" NAME)
  execute_process(COMMAND "${READELF}" -d "${library}" OUTPUT_VARIABLE dynamic)
  if(NOT dynamic MATCHES "\\(SONAME\\)[^\n]*\\[${name}[.]${soversion}\\]")
    message(FATAL_ERROR "consumer test: ${name} has no SONAME ${name}.${soversion}:\n${dynamic}")
  endif()
  message(STATUS "consumer test: ${name}: SONAME ${name}.${soversion}")
endforeach()

# The README's consumer example: each block between "<!-- consumer-example FILE -->" and
# "<!-- end consumer-example -->" is FILE, copied as written into an empty directory.
file(READ "${README}" readme)
set(example "${WORK_DIR}/readme_example")
set(rest "${readme}")
set(files "")
while(rest MATCHES "<!-- consumer-example ([^ ]+) -->\n```[a-z]*\n")
  set(name "${CMAKE_MATCH_1}")
  string(FIND "${rest}" "${CMAKE_MATCH_0}" at)
  string(LENGTH "${CMAKE_MATCH_0}" length)
  math(EXPR at "${at} + ${length}")
  string(SUBSTRING "${rest}" ${at} -1 rest)
  string(FIND "${rest}" "```\n<!-- end consumer-example -->" end)
  if(end LESS 0)
    message(FATAL_ERROR "consumer test: README.md: the block of ${name} has no end marker")
  endif()
  string(SUBSTRING "${rest}" 0 ${end} text)
  file(WRITE "${example}/${name}" "${text}")
  list(APPEND files "${name}")
endwhile()
if(NOT files STREQUAL "CMakeLists.txt;main.cpp")
  message(FATAL_ERROR "consumer test: README.md's consumer example has the files '${files}', "
                      "expected CMakeLists.txt and main.cpp")
endif()
run_step("configure the README's example" "${CMAKE_COMMAND}" -S "${example}"
         -B "${example}/build" ${generator} ${options})
run_step("build the README's example" "${CMAKE_COMMAND}" --build "${example}/build")
run_step("run the README's example" "${example}/build/app")

# The same project asking for the policies of CMake 3.0 (IN_LIST unknown: CMP0057 OLD), as a new
# user's first try had them; the package sets its own. CMake 4 refuses policies before 3.5.
if(CMAKE_VERSION VERSION_LESS 4.0)
  set(old "${WORK_DIR}/readme_old_policies")
  file(COPY "${example}/main.cpp" DESTINATION "${old}")
  file(READ "${example}/CMakeLists.txt" text)
  string(REGEX REPLACE "cmake_minimum_required\\([^)]*\\)" "cmake_minimum_required(VERSION 3.0)"
         text "${text}")
  file(WRITE "${old}/CMakeLists.txt" "${text}")
  run_step("configure the README's example with the policies of CMake 3.0" "${CMAKE_COMMAND}"
           -Wno-deprecated -S "${old}" -B "${old}/build" ${generator} ${options})
  run_step("build it" "${CMAKE_COMMAND}" --build "${old}/build")
  run_step("run it" "${old}/build/app")
else()
  message(STATUS "consumer test: CMake ${CMAKE_VERSION} refuses the policies of CMake 3.0: the "
                 "variant of the README's example that asks for them is not run")
endif()
