# The layers of docs/DESIGN.md, bottom to top, as source folders and the include prefixes they own.
# kspmv_check_layers(TARGET) makes TARGET depend on a check, run on every build, that fails when
# a file includes a header of a higher layer (or a backend includes another backend).
include_guard(GLOBAL)

set(_kspmv_layers_script "${CMAKE_CURRENT_LIST_FILE}")

function(kspmv_check_layers target)
  add_custom_target(kspmv_layers ALL
    COMMAND "${CMAKE_COMMAND}" "-DROOT=${PROJECT_SOURCE_DIR}" -P "${_kspmv_layers_script}"
    COMMENT "Checking that includes follow the layers" VERBATIM)
  add_dependencies(${target} kspmv_layers)
endfunction()

if(NOT CMAKE_SCRIPT_MODE_FILE)
  return()
endif()
cmake_policy(VERSION 3.22)

# rank|folder prefixes (relative to ROOT)|include prefixes. A file of rank r may include headers of
# rank <= r; the two backends (rank 2) may not include each other.
set(_layers
  "0|src/kspmv/core/,src/kspmv/formats/,src/kspmv/io/,src/kspmv/gen/,src/kspmv/analysis/|kspmv/core/,kspmv/formats/,kspmv/io/,kspmv/gen/,kspmv/analysis/"
  "1|partitioners/|partitioners/"
  "2|backends/kokkos/|backends/kokkos/"
  "2|backends/cuda/|backends/cuda/"
  "3|src/kspmv/|kspmv/"
  "4|src/kspmv/interop/|kspmv/interop/"
  "5|src/testing/|testing/"
  "6|src/tools/|tools/"
  "7|src/cli/,perf_tests/,unit_tests/|")

# The layer (rank and name) of a path by its longest matching prefix.
function(_layer_of path prefix_kind out_rank out_name)
  set(best_len -1)
  set(rank "")
  set(name "")
  foreach(layer IN LISTS _layers)
    string(REPLACE "|" ";" parts "${layer}")
    list(GET parts 0 r)
    list(GET parts ${prefix_kind} prefixes)
    string(REPLACE "," ";" prefixes "${prefixes}")
    foreach(p IN LISTS prefixes)
      string(LENGTH "${p}" len)
      if(len GREATER 0 AND len GREATER best_len)
        string(FIND "${path}" "${p}" at)
        if(at EQUAL 0)
          set(best_len ${len})
          set(rank ${r})
          set(name "${p}")
        endif()
      endif()
    endforeach()
  endforeach()
  set(${out_rank} "${rank}" PARENT_SCOPE)
  set(${out_name} "${name}" PARENT_SCOPE)
endfunction()

file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/src/*" "${ROOT}/backends/*"
     "${ROOT}/partitioners/*")
set(errors "")
foreach(f IN LISTS files)
  if(NOT f MATCHES "\\.(hpp|cpp|cu|cuh)$")
    continue()
  endif()
  _layer_of("${f}" 1 rank folder)
  if(rank STREQUAL "")
    continue()
  endif()
  file(STRINGS "${ROOT}/${f}" includes REGEX "^#include \"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" header "${line}")
    _layer_of("${header}" 2 hrank hprefix)
    if(hrank STREQUAL "")
      continue()  # a header of the same folder, included by its bare name
    endif()
    set(bad FALSE)
    if(hrank GREATER rank)
      set(bad TRUE)
    elseif(rank EQUAL 2 AND hrank EQUAL 2 AND NOT "${folder}" STREQUAL "${hprefix}")
      set(bad TRUE)
    endif()
    if(bad)
      string(APPEND errors "  ${f} (layer ${rank}) includes ${header} (layer ${hrank})\n")
    endif()
  endforeach()
endforeach()
if(errors)
  message(FATAL_ERROR "includes against the layers (docs/DESIGN.md \"Layers\"):\n${errors}")
endif()
