// Matrix Market (.mtx and .mtx.gz) reader and writer: coordinate format, real/integer/pattern
// fields, general/symmetric/skew-symmetric storage.
#pragma once

#include <string>

#include "kspmv/core/types.hpp"
#include "kspmv/formats/csr.hpp"

namespace kspmv::io {

// What the banner and the size line of a Matrix Market file say.
struct MatrixMarketInfo {
  std::string field;     // real | integer | pattern
  std::string symmetry;  // general | symmetric | skew-symmetric
  Ordinal nrows = 0, ncols = 0;
  Offset entries = 0;  // as stored in the file (one triangle for symmetric storage)
};

struct ReadOptions {
  // A progress line on stderr, only when the file is > 50 MB AND stderr is a terminal.
  bool progress = true;
};

// Reads the banner and the size line only. Throws ParseError like read_matrix_market.
MatrixMarketInfo read_matrix_market_info(const std::string& path);

// Reads a coordinate Matrix Market file, plain or gzip-compressed (recognized by its magic
// bytes). Symmetric storage is mirrored (negated for skew-symmetric), pattern entries are 1.
// Returns a CSR with sorted columns and duplicate entries summed. Throws ParseError naming the
// file and line (0 when the file cannot be opened) for anything malformed or unsupported.
template <class Scalar>
CsrMatrix<Scalar> read_matrix_market(const std::string& path, const ReadOptions& options = {});

// Writes `a` as "coordinate real general" ("-": standard output), gzip-compressed when `path`
// ends in ".gz". Values are written in the shortest form that reads back to the same bits (at
// most max_digits10 digits). Throws InvalidArgument for an invalid matrix and kspmv::Error when
// the file cannot be written; an existing file is replaced only once the new one is complete.
template <class Scalar>
void write_matrix_market(const std::string& path, const CsrMatrix<Scalar>& a);

extern template CsrMatrix<float> read_matrix_market<float>(const std::string&, const ReadOptions&);
extern template CsrMatrix<double> read_matrix_market<double>(const std::string&,
                                                             const ReadOptions&);
extern template void write_matrix_market<float>(const std::string&, const CsrMatrix<float>&);
extern template void write_matrix_market<double>(const std::string&, const CsrMatrix<double>&);

}  // namespace kspmv::io
