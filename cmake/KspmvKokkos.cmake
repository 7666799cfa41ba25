# Find Kokkos (any version >= 3.4) and make its target usable, or build it from a source given in
# KSPMV_KOKKOS_SOURCE.
#
# Debian 12's Trilinos build of Kokkos 3.4 exports Kokkos::kokkos with an include path that does
# not exist (<prefix>/lib/include) while the headers live in Kokkos_INCLUDE_DIRS
# (<prefix>/include/trilinos). We repair the imported target in the caller's scope; the system
# files are left untouched. A standalone Kokkos 4.x/5.x needs no repair.
include_guard(GLOBAL)

macro(kspmv_find_kokkos)
  if(NOT DEFINED CMAKE_CXX_EXTENSIONS)
    # Kokkos refuses GNU extensions; say so up front instead of letting it warn and override.
    set(CMAKE_CXX_EXTENSIONS OFF)
  endif()
  if(KSPMV_KOKKOS_SOURCE)
    kspmv_build_kokkos("${KSPMV_KOKKOS_SOURCE}")
  else()
    find_package(Kokkos 3.4 REQUIRED ${ARGN})
    kspmv_repair_kokkos_target(Kokkos::kokkos "${Kokkos_INCLUDE_DIRS}")
  endif()
endmacro()

# Builds Kokkos from `source` (a source directory, a source tarball, or the URL of one) as part of
# this build, through FetchContent, with the OpenMP and Serial backends unless the cache says
# otherwise (-DKokkos_ENABLE_OPENMP=OFF, -DKokkos_ENABLE_CUDA=ON, ...). KSPMV_KOKKOS_SOURCE_SHA256,
# when set, is the tarball's checksum. Kokkos is installed with kspmv. Sets Kokkos_VERSION and
# Kokkos_ENABLE_<BACKEND> as find_package(Kokkos) does.
macro(kspmv_build_kokkos source)
  include(FetchContent)
  if(IS_DIRECTORY "${source}")
    FetchContent_Declare(kokkos SOURCE_DIR "${source}")
  elseif(KSPMV_KOKKOS_SOURCE_SHA256)
    FetchContent_Declare(kokkos URL "${source}" URL_HASH "SHA256=${KSPMV_KOKKOS_SOURCE_SHA256}")
  else()
    FetchContent_Declare(kokkos URL "${source}")
  endif()
  set(Kokkos_ENABLE_SERIAL ON CACHE BOOL "Kokkos: the Serial backend")
  set(Kokkos_ENABLE_OPENMP ON CACHE BOOL "Kokkos: the OpenMP backend (threads of the host)")
  message(STATUS "kspmv: building Kokkos from ${source}")
  FetchContent_MakeAvailable(kokkos)
  get_directory_property(Kokkos_VERSION DIRECTORY "${kokkos_SOURCE_DIR}" DEFINITION Kokkos_VERSION)
  foreach(_backend SERIAL OPENMP THREADS CUDA HIP SYCL)
    get_directory_property(Kokkos_ENABLE_${_backend} DIRECTORY "${kokkos_SOURCE_DIR}"
                           DEFINITION Kokkos_ENABLE_${_backend})
  endforeach()
endmacro()

# Replace every missing include directory of an imported target by `fallback_dirs`.
function(kspmv_repair_kokkos_target target fallback_dirs)
  if(NOT TARGET ${target})
    return()
  endif()
  get_target_property(_dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _dirs)
    set(_dirs "")
  endif()
  set(_fixed "")
  set(_changed FALSE)
  foreach(_d IN LISTS _dirs)
    if(_d MATCHES "^\\$<" OR EXISTS "${_d}")
      list(APPEND _fixed "${_d}")
    else()
      set(_changed TRUE)
    endif()
  endforeach()
  if(_changed OR NOT _fixed)
    foreach(_d IN LISTS fallback_dirs)
      get_filename_component(_d "${_d}" ABSOLUTE)
      if(EXISTS "${_d}")
        list(APPEND _fixed "${_d}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES _fixed)
    if(NOT _fixed)
      message(FATAL_ERROR "kspmv: ${target} has no existing include directory "
                          "(exported: '${_dirs}', Kokkos_INCLUDE_DIRS: '${fallback_dirs}')")
    endif()
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
    message(STATUS "kspmv: repaired include path of ${target}: ${_fixed}")
  endif()
endfunction()

# Optional Kokkos Kernels; defines the target kspmv_kokkoskernels when found. Kokkos Kernels is
# used only when its major.minor version is the Kokkos one: another installation (Debian's
# Trilinos beside a Kokkos 4 build) includes headers of its own Kokkos version and does not compile.
function(kspmv_find_kokkos_kernels out_found)
  set(${out_found} FALSE PARENT_SCOPE)
  find_package(KokkosKernels QUIET)
  set(_tgt "")
  if(TARGET Kokkos::kokkoskernels)
    set(_tgt Kokkos::kokkoskernels)
  elseif(TARGET trilinos_kokkoskernels)
    set(_tgt trilinos_kokkoskernels)
  endif()
  if(NOT _tgt)
    return()
  endif()
  kspmv_kokkos_kernels_version(_kk_version)
  kspmv_major_minor("${_kk_version}" _kk_mm)
  kspmv_major_minor("${Kokkos_VERSION}" _kokkos_mm)
  if(NOT _kk_mm STREQUAL _kokkos_mm)
    message(STATUS "kspmv: not using the Kokkos Kernels in ${KokkosKernels_DIR}: its version "
                   "'${_kk_version}' does not go with the Kokkos ${Kokkos_VERSION} found")
    return()
  endif()
  if(_tgt STREQUAL "trilinos_kokkoskernels")
    set_property(TARGET trilinos_kokkoskernels APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                                                               "${KokkosKernels_INCLUDE_DIRS}")
  endif()
  add_library(kspmv_kokkoskernels INTERFACE IMPORTED GLOBAL)
  target_link_libraries(kspmv_kokkoskernels INTERFACE ${_tgt} Kokkos::kokkos)
  set(${out_found} TRUE PARENT_SCOPE)
endfunction()

# The version of the Kokkos Kernels just found: its package version, or for Trilinos' build (which
# has no version file) the version of the Kokkos it was built with. Empty when neither is known.
function(kspmv_kokkos_kernels_version out)
  set(_version "${KokkosKernels_VERSION}")
  if(NOT _version)
    kspmv_kokkos_version_in("${KokkosKernels_INCLUDE_DIRS}" _version)
  endif()
  set(${out} "${_version}" PARENT_SCOPE)
endfunction()

# The Kokkos version of the KokkosCore_config.h in one of `include_dirs` (a Trilinos package's
# headers lie beside the Kokkos it was built with), e.g. "3.4.1"; empty when there is none.
function(kspmv_kokkos_version_in include_dirs out)
  set(_version "")
  find_file(_kspmv_core_config KokkosCore_config.h PATHS ${include_dirs} NO_DEFAULT_PATH NO_CACHE)
  if(_kspmv_core_config)
    file(STRINGS "${_kspmv_core_config}" _line REGEX "^#define KOKKOS_VERSION [0-9]+")
    if(_line MATCHES "([0-9]+)$")
      math(EXPR _major "${CMAKE_MATCH_1} / 10000")
      math(EXPR _minor "${CMAKE_MATCH_1} / 100 % 100")
      math(EXPR _patch "${CMAKE_MATCH_1} % 100")
      set(_version "${_major}.${_minor}.${_patch}")
    endif()
  endif()
  set(${out} "${_version}" PARENT_SCOPE)
endfunction()

# "major.minor" of a version string ("4.6.1" -> "4.6"); empty when it has no minor number.
function(kspmv_major_minor version out)
  set(_mm "")
  if(version MATCHES "^([0-9]+)\\.([0-9]+)")
    math(EXPR _major "${CMAKE_MATCH_1}")  # "3.04" and "3.4" are the same version
    math(EXPR _minor "${CMAKE_MATCH_2}")
    set(_mm "${_major}.${_minor}")
  endif()
  set(${out} "${_mm}" PARENT_SCOPE)
endfunction()
