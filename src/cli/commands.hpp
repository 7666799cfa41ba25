// The tool's commands; each one is declared (options, help) and run from its own file.
#pragma once

#include "args.hpp"

namespace kspmv::cli {

Command demo_command();     // cmd_demo.cpp
Command info_command();     // cmd_info.cpp
Command spmv_command();     // cmd_spmv.cpp
Command convert_command();  // cmd_files.cpp
Command gen_command();      // cmd_files.cpp
Command cg_command();       // cmd_cg.cpp

// The "FILE|gen:SPEC" argument, explained once for every command's help.
inline const char* kMatrixArgumentHelp =
    "FILE is a Matrix Market file (.mtx, or gzip-compressed .mtx.gz; - reads standard input);\n"
    "gen:SPEC generates the matrix instead (e.g. gen:laplace2d:n=1024; 'kspmv help gen' lists\n"
    "the specs).";

}  // namespace kspmv::cli
