# Find Kokkos (any version >= 3.4) and make its target usable.
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
  find_package(Kokkos 3.4 REQUIRED ${ARGN})
  kspmv_repair_kokkos_target(Kokkos::kokkos "${Kokkos_INCLUDE_DIRS}")
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

# Optional Kokkos Kernels; defines the target kspmv_kokkoskernels when found.
function(kspmv_find_kokkos_kernels out_found)
  find_package(KokkosKernels QUIET)
  set(_tgt "")
  if(TARGET Kokkos::kokkoskernels)
    set(_tgt Kokkos::kokkoskernels)
  elseif(TARGET trilinos_kokkoskernels)
    set(_tgt trilinos_kokkoskernels)
    set_property(TARGET trilinos_kokkoskernels APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES
                                                               "${KokkosKernels_INCLUDE_DIRS}")
  endif()
  if(_tgt)
    add_library(kspmv_kokkoskernels INTERFACE IMPORTED GLOBAL)
    target_link_libraries(kspmv_kokkoskernels INTERFACE ${_tgt} Kokkos::kokkos)
    set(${out_found} TRUE PARENT_SCOPE)
  else()
    set(${out_found} FALSE PARENT_SCOPE)
  endif()
endfunction()
