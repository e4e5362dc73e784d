# What each CUDA major the bundled runtime loads needs of a node: the oldest Linux driver branch that runs
# it and the oldest GPU compute capability it supports. The one table for CUDA 11, 12 and 13: the build
# writes it into dist/cuda.json (`majors`, newest first; the runtime role picks one per node from it) and
# into the spec check's table (ddl validate, src/spec/GpuCompat.cpp); docs/gpus.md cites NVIDIA's sources
# for each row.
#   MAJOR  MIN_DRIVER  MIN_COMPUTE_CAPABILITY
set(DDL_CUDA_COMPAT_TABLE
    "13 580 7.5"  # CUDA 13 removed Maxwell, Pascal and Volta (sm_50-sm_72)
    "12 525 5.0"
    "11 450 3.5")

# ddl_cuda_row(ROW OUT_MAJOR OUT_MIN_DRIVER OUT_MIN_CC): the three fields of one row.
function(ddl_cuda_row row out_major out_driver out_cc)
  string(REPLACE " " ";" fields "${row}")
  list(GET fields 0 m)
  list(GET fields 1 driver)
  list(GET fields 2 cc)
  set(${out_major} ${m} PARENT_SCOPE)
  set(${out_driver} ${driver} PARENT_SCOPE)
  set(${out_cc} ${cc} PARENT_SCOPE)
endfunction()

# ddl_cuda_requirements(MAJOR OUT_MIN_DRIVER OUT_MIN_CC): one row of the table.
function(ddl_cuda_requirements major out_driver out_cc)
  foreach(row IN LISTS DDL_CUDA_COMPAT_TABLE)
    ddl_cuda_row("${row}" m driver cc)
    if(m EQUAL major)
      set(${out_driver} ${driver} PARENT_SCOPE)
      set(${out_cc} ${cc} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "CUDA ${major} is not in cmake/cuda_compat.cmake (the runtime loads CUDA 11, 12 and 13)")
endfunction()

# ddl_cuda_majors_json(OUT): the table as dist/cuda.json's `majors` array, newest first.
function(ddl_cuda_majors_json out)
  set(items "")
  foreach(row IN LISTS DDL_CUDA_COMPAT_TABLE)
    ddl_cuda_row("${row}" m driver cc)
    list(APPEND items "{\"major\": ${m}, \"min_driver\": ${driver}, \"min_compute_capability\": \"${cc}\"}")
  endforeach()
  list(JOIN items ",\n            " joined)
  set(${out} "[${joined}]" PARENT_SCOPE)
endfunction()

# ddl_cuda_table_cpp(OUT): the table as C++ initialisers `{major, min_driver, "cc"},` for the spec check.
function(ddl_cuda_table_cpp out)
  set(items "")
  foreach(row IN LISTS DDL_CUDA_COMPAT_TABLE)
    ddl_cuda_row("${row}" m driver cc)
    string(APPEND items "{${m}, ${driver}, \"${cc}\"}, ")
  endforeach()
  set(${out} "${items}" PARENT_SCOPE)
endfunction()
