// Matrix Market (.mtx and .mtx.gz) reader and writer: coordinate format, real/integer/pattern
// fields, general/symmetric/skew-symmetric storage; dense vectors in array format.
#pragma once

#include <string>
#include <vector>

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
  // A progress line on stderr, only when the file is > 50 MB AND stderr is a terminal. Off by
  // default: the library prints nothing unless asked (the kspmv tool asks).
  bool progress = false;
};

// How many values of a file are of one kind, and the first line holding one (0: none, or only
// sums of duplicate entries).
struct ValueCount {
  Offset count = 0;
  long first_line = 0;
};

// What a read found besides the matrix. The reader accepts all of it; the caller decides.
struct ReadReport {
  MatrixMarketInfo info;
  ValueCount nonfinite;  // NaN or infinite in the file
  ValueCount overflow;   // finite in the file, infinite in the precision read (sums included)
  ValueCount underflow;  // non-zero in the file, zero in the precision read
  // Symmetric or skew-symmetric storage with entries on both sides of the diagonal: the first
  // line on the other side from the first off-diagonal entry (0: one side only). Such entries
  // are added to their mirror images (an entry stored in both triangles is doubled).
  long both_triangles_line = 0;
  // One line for each of the above that occurred.
  std::vector<std::string> warnings;
};

// Reads the banner and the size line only. Throws ParseError like read_matrix_market.
MatrixMarketInfo read_matrix_market_info(const std::string& path);

// Reads a coordinate Matrix Market file ("-": standard input), plain or gzip-compressed
// (recognized by its magic bytes). Symmetric storage is mirrored (negated for skew-symmetric),
// pattern entries are 1. Returns a CSR with sorted columns and duplicate entries summed, and
// fills `report` when given. Throws ParseError naming the file and line (0 when the file cannot
// be opened) for anything malformed or unsupported, and MemoryError, before allocating, when
// the matrix does not fit in the memory available (available_memory()). Entries take memory as
// they are read, never by the count the size line claims.
template <class Scalar>
CsrMatrix<Scalar> read_matrix_market(const std::string& path, const ReadOptions& options = {},
                                     ReadReport* report = nullptr);

// The non-zero counts of a file's rows and columns, for statistics without the matrix: values
// are read (into `report`) as double but not kept, duplicates count once, symmetric storage is
// mirrored. row_ptr and col_ptr are prefix sums (count k is ptr(k + 1) - ptr(k)) over some rows
// and columns, every non-empty one among them in order: rows and columns the arrays leave out
// are empty. Memory in proportion to the entries, whatever the declared sizes.
struct PatternCounts {
  HostView<Offset> row_ptr, col_ptr;
};
PatternCounts read_matrix_market_counts(const std::string& path, const ReadOptions& options,
                                        ReadReport& report);

// Writes `a` as "coordinate real general" ("-": standard output), gzip-compressed when `path`
// ends in ".gz". Values are written in the shortest form that reads back to the same bits (at
// most max_digits10 digits). Throws InvalidArgument for an invalid matrix and kspmv::Error when
// the file cannot be written; an existing file is replaced only once the new one is complete.
template <class Scalar>
void write_matrix_market(const std::string& path, const CsrMatrix<Scalar>& a);

// A dense vector: an 'array real general' (or integer) Matrix Market file of rows x 1, one value
// a line ("-": standard input; gzip recognized as by read_matrix_market). Throws ParseError
// naming the file and line for anything malformed: another format, more than one column, too
// few or too many values. Non-finite, overflowing and underflowing values are counted in
// `report` (the caller decides), as read_matrix_market does.
template <class Scalar>
std::vector<Scalar> read_matrix_market_vector(const std::string& path,
                                              ReadReport* report = nullptr);

// Writes v[0..n) as 'array real general' n x 1, each value in the shortest form that reads back
// to the same bits; replaced safely and gzip-compressed by the name, as write_matrix_market.
template <class Scalar>
void write_matrix_market_vector(const std::string& path, const Scalar* v, std::size_t n);

extern template CsrMatrix<float> read_matrix_market<float>(const std::string&, const ReadOptions&,
                                                           ReadReport*);
extern template CsrMatrix<double> read_matrix_market<double>(const std::string&, const ReadOptions&,
                                                             ReadReport*);
extern template void write_matrix_market<float>(const std::string&, const CsrMatrix<float>&);
extern template void write_matrix_market<double>(const std::string&, const CsrMatrix<double>&);
extern template std::vector<float> read_matrix_market_vector<float>(const std::string&,
                                                                    ReadReport*);
extern template std::vector<double> read_matrix_market_vector<double>(const std::string&,
                                                                      ReadReport*);
extern template void write_matrix_market_vector<float>(const std::string&, const float*,
                                                       std::size_t);
extern template void write_matrix_market_vector<double>(const std::string&, const double*,
                                                        std::size_t);

}  // namespace kspmv::io
