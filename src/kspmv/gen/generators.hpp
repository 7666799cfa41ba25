// Matrix generators: stencils, random, power-law graphs (R-MAT), random geometric graphs,
// k-mer-like graphs, banded matrices and planted long rows, plus a one-string spec for the CLI.
//
// Every generator returns a CSR with sorted columns and no duplicates, is deterministic per
// seed and independent of the number of threads (each row, edge or point draws from its own
// counter-based random stream), and builds the CSR directly: row lengths first, then the rows,
// on every core (host_threads(): std::threads, whatever Kokkos' host backend). Float and
// double are instantiated. Invalid sizes throw InvalidArgument.
//
// The generators built row by row also build a block of consecutive rows alone (a RowRange):
// the same rows as the whole matrix, with global column indices, in time and memory of the
// block (each rank of a distributed run generates its own rows).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "kspmv/formats/csr.hpp"

namespace kspmv::gen {

// Rows [begin, end) of a generated matrix; end < 0 stands for its row count (the whole matrix by
// default). A range outside the matrix throws InvalidArgument.
struct RowRange {
  Ordinal begin = 0;
  Ordinal end = -1;
};

// 2D Laplacian, 5-point stencil on an nx x ny grid (Dirichlet): 4 on the diagonal, -1 off it.
template <class S>
CsrMatrix<S> laplace2d(Ordinal nx, Ordinal ny, RowRange rows = {});
// 3D Laplacians on an n^3 grid: 7-point (6 / -1) and 27-point (26 / -1).
template <class S>
CsrMatrix<S> stencil3d_7(Ordinal n, RowRange rows = {});
template <class S>
CsrMatrix<S> stencil3d_27(Ordinal n, RowRange rows = {});

// Exactly k distinct uniformly random columns per row, values in [-1, 1).
template <class S>
CsrMatrix<S> uniform_random(Ordinal rows, Ordinal cols, int k, std::uint64_t seed,
                            RowRange range = {});

// Graph500 R-MAT (a=.57, b=.19, c=.19, d=.05) with 2^scale vertices and edge_factor * 2^scale
// edges, vertex labels scrambled, self-loops dropped, symmetrized and deduplicated, like the
// kron_g500-lognN matrices. Values symmetric in [-1, 1).
template <class S>
CsrMatrix<S> kronecker(int scale, int edge_factor, std::uint64_t seed);

// Random geometric graph like rgg_n_2_N_s0: 2^scale uniform points in the unit square, an edge
// between points closer than 0.55 * sqrt(ln n / n), no diagonal. Vertices are numbered by grid
// cell (row-major), so the matrix has the spatial locality of the original. Values symmetric.
template <class S>
CsrMatrix<S> random_geometric(int scale, std::uint64_t seed);

// A k-mer-like graph (rows >= 2): vertices lie on long chains broken now and then, some carry
// one or two extra branch edges; 1 to 4 non-zeros per row (mean ~2.1), no diagonal. Vertex ids
// are scrambled as hashed k-mers are, so neighbours are far apart. Values symmetric.
template <class S>
CsrMatrix<S> kmer(Ordinal rows, std::uint64_t seed, RowRange range = {});

// Band matrix: row i holds columns max(0, i-hbw) .. min(n-1, i+hbw); symmetric values in
// [-1, 1) off the diagonal, 2*hbw+1 on it (strictly diagonally dominant, so SPD).
template <class S>
CsrMatrix<S> banded(Ordinal n, Ordinal half_bandwidth, RowRange rows = {});

// A copy of a (sorted, no duplicates) where `count` distinct random rows become long: the j-th
// gets max(1, max_length / 2^j) columns (at most ncols), its own entries kept and random new
// columns added; the lengths are assigned to the chosen rows in random order.
template <class S>
CsrMatrix<S> with_long_rows(const CsrMatrix<S>& a, int count, Ordinal max_length,
                            std::uint64_t seed);

// Complex test matrices: a's pattern (shared) and values as the real parts, each imaginary part
// random in [-1, 1); C is Kokkos::complex<float> or Kokkos::complex<double> of a's scalar.
template <class C>
CsrMatrix<C> with_imaginary_parts(const CsrMatrix<typename C::value_type>& a, std::uint64_t seed);

// Like the circuit matrix FullChip (3M rows, mean 8.9 nnz/row, one row of 2.3M): a square base
// with the diagonal plus 2..11 other columns per row (half within +-32 of the diagonal, half
// anywhere), then with_long_rows with min(8, rows) rows up to rows / 1.3 (lengths halving).
// Mean ~9 non-zeros per row.
template <class S>
CsrMatrix<S> fullchip_like(Ordinal rows, std::uint64_t seed, RowRange range = {});

// Builds the matrix a spec names (grammar in spec_help()), or its rows `rows`; InvalidArgument
// says what is wrong. kron and rgg draw their edges and points for the whole matrix (each row
// depends on all of them): a row range of those is cut from the whole matrix. `progress`, when
// given, is called on the calling thread with the fraction done (in [0, 1], non-decreasing) as
// the generator goes; the library prints nothing itself.
template <class S>
CsrMatrix<S> from_spec(const std::string& spec, RowRange rows = {},
                       const std::function<void(double)>& progress = {});

// The number of rows of the matrix a spec names, without building it (InvalidArgument as
// from_spec): what splits it into blocks of rows before any is built.
Ordinal spec_rows(const std::string& spec);

// The spec grammar and the families, for --help.
std::string spec_help();

}  // namespace kspmv::gen
