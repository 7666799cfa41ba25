// Host plan for rows too long for one thread group: which rows, and how their non-zeros are cut
// into fixed-size chunks that one warp each reduces (the CUDA long-row path, cf. paper 4 Alg. 9,
// spread over several warps per row). Kokkos-free: shared by the CUDA backend and host tests.
#pragma once

#include <vector>

#include "kspmv/core/types.hpp"

namespace kspmv {

// The chunk a kernel that finishes each row in its own launch (the CUDA long-row path's) cuts its
// long rows into, the longest being `longest` entries: the power of two at least sqrt(longest),
// within [128, 1024]. A chunk's warp takes chunk / 32 steps and the warp that adds the row's
// chunk sums longest / chunk / 32: about as many, where a launch-bound matrix waits on the
// longer of them (brainpc2's 13,799 entries: 128, 4 steps and 4; one chunk of 1,024 took 32).
Offset long_row_chunk_nnz(Offset longest);

// Rows with more than `threshold` non-zeros, ascending.
std::vector<Ordinal> find_long_rows(const Offset* row_ptr, Ordinal m, Offset threshold);

struct LongRowPlan {
  std::vector<Ordinal> rows;         // the long rows, ascending
  std::vector<Ordinal> first_chunk;  // rows.size() + 1: chunks of rows[i] are
                                     // [first_chunk[i], first_chunk[i+1])
  std::vector<Offset> chunk_begin;   // per chunk: non-zero range [chunk_begin, chunk_end)
  std::vector<Offset> chunk_end;
};

// Cuts each row in `rows` into consecutive chunks of at most `chunk_nnz` non-zeros (an empty row
// gets no chunk). Every non-zero of every listed row lies in exactly one chunk.
// Throws InvalidArgument when chunk_nnz < 1 or a row is out of range.
LongRowPlan plan_long_rows(const Offset* row_ptr, Ordinal m, std::vector<Ordinal> rows,
                           Offset chunk_nnz);

// The same from the rows' extents: row rows[i] holds the non-zeros [begin[i], end[i]) (a plan
// made without the whole row pointer, e.g. from rows found on a device). Throws InvalidArgument
// when chunk_nnz < 1, the three lists differ in length or an extent is reversed.
LongRowPlan plan_long_row_extents(std::vector<Ordinal> rows, const std::vector<Offset>& begin,
                                  const std::vector<Offset>& end, Offset chunk_nnz);

}  // namespace kspmv
