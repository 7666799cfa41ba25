# The Tpetra adapter's dependencies: KSPMV_ENABLE_TPETRA = AUTO (on when Tpetra, Belos and MPI are
# found with the Kokkos in use), ON (required), OFF. Sets KSPMV_HAVE_TPETRA and, when on, the
# interface target kspmv_trilinos (Tpetra, Belos and MPI, with their include directories).
#
# Trilinos' own package configuration comes first: find_package(Trilinos COMPONENTS Tpetra Belos)
# with the libraries and include directories it names, as any distribution or a Trilinos built
# from source installs it. Debian 12's does not load (its package files name targets of packages
# Debian does not ship, an error that even QUIET cannot keep out of the configure), so a probe
# configures it apart first, and where it fails the Debian path below follows.
#
# Debian 12's Trilinos 13.2 needs three repairs, made here and nowhere else:
# - its targets carry no include directories (Tpetra_INCLUDE_DIRS names them) and no MPI (Trilinos
#   was compiled with mpicxx), so both are added;
# - BelosConfig.cmake requires packages that Belos' Tpetra solvers do not use (AztecOO, Xpetra,
#   Thyra), so Belos' headers and its two libraries are located directly;
# - some targets link absolute paths (/usr/lib/.../liblapack.so) that do not exist when the
#   packages are unpacked into a prefix; those are dropped from the interface (the Trilinos
#   libraries name them as dependencies of their own, found by the loader).
include_guard(GLOBAL)

# kspmv_find_tpetra(): sets KSPMV_HAVE_TPETRA in the caller's scope; with KSPMV_ENABLE_TPETRA=ON a
# missing piece is an error naming it.
macro(kspmv_find_tpetra)
  set(KSPMV_HAVE_TPETRA FALSE)
  string(TOUPPER "${KSPMV_ENABLE_TPETRA}" _kspmv_tpetra_mode)
  if(NOT _kspmv_tpetra_mode MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "KSPMV_ENABLE_TPETRA must be AUTO, ON or OFF (got '${KSPMV_ENABLE_TPETRA}')")
  endif()
  if(NOT _kspmv_tpetra_mode STREQUAL "OFF")
    _kspmv_locate_tpetra(_kspmv_tpetra_missing)
    if(_kspmv_tpetra_missing STREQUAL "")
      set(KSPMV_HAVE_TPETRA TRUE)
    elseif(_kspmv_tpetra_mode STREQUAL "ON")
      message(FATAL_ERROR "KSPMV_ENABLE_TPETRA=ON but ${_kspmv_tpetra_missing}")
    else()
      message(STATUS "kspmv: no Tpetra adapter: ${_kspmv_tpetra_missing}")
    endif()
  endif()
endmacro()

# Finds the pieces and defines kspmv_trilinos; `out_missing` is "" on success, else what is missing.
function(_kspmv_locate_tpetra out_missing)
  set(${out_missing} "" PARENT_SCOPE)
  if(TARGET kspmv_trilinos)  # found already (a second find_package(kspmv))
    return()
  endif()
  find_package(MPI QUIET COMPONENTS CXX)
  if(NOT MPI_CXX_FOUND)
    set(${out_missing} "MPI was not found (Debian: libopenmpi-dev openmpi-bin)" PARENT_SCOPE)
    return()
  endif()
  set(KSPMV_MPIEXEC "${MPIEXEC_EXECUTABLE}" PARENT_SCOPE)
  _kspmv_trilinos_config_loads(_loads)
  if(_loads)
    find_package(Trilinos CONFIG REQUIRED COMPONENTS Tpetra Belos)
    _kspmv_same_kokkos("${Trilinos_INCLUDE_DIRS}" "${Trilinos_DIR}" _why)
    if(NOT _why STREQUAL "")
      set(${out_missing} "${_why}" PARENT_SCOPE)
      return()
    endif()
    add_library(kspmv_trilinos INTERFACE IMPORTED GLOBAL)
    target_include_directories(kspmv_trilinos SYSTEM INTERFACE ${Trilinos_INCLUDE_DIRS}
                                                               ${Trilinos_TPL_INCLUDE_DIRS})
    target_link_libraries(kspmv_trilinos INTERFACE ${Trilinos_LIBRARIES} ${Trilinos_TPL_LIBRARIES}
                                                   MPI::MPI_CXX Kokkos::kokkos)
    message(STATUS "kspmv: Tpetra and Belos from Trilinos ${Trilinos_VERSION} in ${Trilinos_DIR}")
    return()
  endif()
  find_package(Tpetra CONFIG QUIET)
  if(NOT Tpetra_FOUND)
    string(CONCAT _why "Tpetra was not found (Debian: libtrilinos-tpetra-dev, "
                  "libtrilinos-teuchos-dev, libtrilinos-epetra-dev)")
    set(${out_missing} "${_why}" PARENT_SCOPE)
    return()
  endif()
  _kspmv_same_kokkos("${Tpetra_INCLUDE_DIRS}" "${Tpetra_DIR}" _why)
  if(NOT _why STREQUAL "")
    set(${out_missing} "${_why}" PARENT_SCOPE)
    return()
  endif()
  find_path(KSPMV_BELOS_INCLUDE_DIR BelosTpetraAdapter.hpp HINTS ${Tpetra_INCLUDE_DIRS})
  find_library(KSPMV_BELOS_LIBRARY trilinos_belos HINTS ${Tpetra_LIBRARY_DIRS})
  find_library(KSPMV_BELOS_TPETRA_LIBRARY trilinos_belostpetra HINTS ${Tpetra_LIBRARY_DIRS})
  if(NOT KSPMV_BELOS_INCLUDE_DIR OR NOT KSPMV_BELOS_LIBRARY OR NOT KSPMV_BELOS_TPETRA_LIBRARY)
    set(${out_missing} "Belos was not found beside Tpetra (Debian: libtrilinos-belos-dev)"
        PARENT_SCOPE)
    return()
  endif()
  set(_targets "")
  foreach(_lib IN LISTS Tpetra_LIBRARIES)
    if(TARGET ${_lib})
      list(APPEND _targets ${_lib})
    endif()
  endforeach()
  kspmv_drop_missing_link_paths("${_targets}")
  add_library(kspmv_trilinos INTERFACE IMPORTED GLOBAL)
  target_include_directories(kspmv_trilinos SYSTEM INTERFACE ${Tpetra_INCLUDE_DIRS}
                                                             ${KSPMV_BELOS_INCLUDE_DIR})
  target_link_libraries(kspmv_trilinos INTERFACE ${KSPMV_BELOS_TPETRA_LIBRARY} ${KSPMV_BELOS_LIBRARY}
                                                 ${_targets} MPI::MPI_CXX Kokkos::kokkos)
endfunction()

# Tpetra must have been built with the Kokkos in use (Debian's beside a Kokkos 4 does not
# compile): the version of the KokkosCore_config.h beside its headers. `out_why` is "" when it
# was, else why not.
function(_kspmv_same_kokkos include_dirs config_dir out_why)
  set(${out_why} "" PARENT_SCOPE)
  kspmv_kokkos_version_in("${include_dirs}" _trilinos_kokkos)
  kspmv_major_minor("${_trilinos_kokkos}" _trilinos_mm)
  kspmv_major_minor("${Kokkos_VERSION}" _kokkos_mm)
  if(NOT _trilinos_mm STREQUAL _kokkos_mm)
    string(CONCAT _why "the Tpetra in ${config_dir} was built with Kokkos '${_trilinos_kokkos}', "
                  "not the Kokkos ${Kokkos_VERSION} in use")
    set(${out_why} "${_why}" PARENT_SCOPE)
  endif()
endfunction()

# Whether find_package(Trilinos COMPONENTS Tpetra Belos) loads without error, tried once in a
# configure of its own (with this one's prefix path and compiler); cached as
# KSPMV_TRILINOS_CONFIG_LOADS.
function(_kspmv_trilinos_config_loads out)
  if(NOT DEFINED KSPMV_TRILINOS_CONFIG_LOADS)
    set(_dir "${CMAKE_BINARY_DIR}/CMakeFiles/kspmv_trilinos_probe")
    file(MAKE_DIRECTORY "${_dir}")
    file(WRITE "${_dir}/CMakeLists.txt"
         "cmake_minimum_required(VERSION 3.22)\nproject(probe CXX)\n"
         "find_package(Trilinos CONFIG REQUIRED COMPONENTS Tpetra Belos)\n")
    set(_args "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}")
    foreach(_var CMAKE_PREFIX_PATH Trilinos_DIR MPI_CXX_COMPILER)
      if(DEFINED ${_var})
        string(REPLACE ";" "\\;" _value "${${_var}}")
        list(APPEND _args "-D${_var}=${_value}")
      endif()
    endforeach()
    execute_process(COMMAND "${CMAKE_COMMAND}" -S "${_dir}" -B "${_dir}/build" ${_args}
                    RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    set(_loads OFF)
    if(_rc EQUAL 0)
      set(_loads ON)
    endif()
    set(KSPMV_TRILINOS_CONFIG_LOADS ${_loads} CACHE BOOL
        "find_package(Trilinos COMPONENTS Tpetra Belos) loads (else: the Debian 12 path)")
  endif()
  set(${out} ${KSPMV_TRILINOS_CONFIG_LOADS} PARENT_SCOPE)
endfunction()

# Removes, from the interface of each imported target and of the targets it links, every library
# given as an absolute path that does not exist.
function(kspmv_drop_missing_link_paths targets)
  set(_seen "")
  set(_todo ${targets})
  while(_todo)
    list(POP_FRONT _todo _t)
    if(NOT TARGET ${_t} OR _t IN_LIST _seen)
      continue()
    endif()
    list(APPEND _seen ${_t})
    get_target_property(_libs ${_t} INTERFACE_LINK_LIBRARIES)
    if(NOT _libs)
      continue()
    endif()
    set(_kept "")
    foreach(_l IN LISTS _libs)
      if(IS_ABSOLUTE "${_l}" AND NOT EXISTS "${_l}")
        message(STATUS "kspmv: ${_t} links ${_l}, which does not exist: left to the loader")
        continue()
      endif()
      list(APPEND _kept "${_l}")
      if(TARGET ${_l})
        list(APPEND _todo ${_l})
      endif()
    endforeach()
    set_target_properties(${_t} PROPERTIES INTERFACE_LINK_LIBRARIES "${_kept}")
  endwhile()
endfunction()
