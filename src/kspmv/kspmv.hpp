// The one header a kspmv user includes.
#pragma once

#include "kspmv/analysis/analyze.hpp"
#include "kspmv/core/error.hpp"
#include "kspmv/core/options.hpp"
#include "kspmv/core/types.hpp"
#include "kspmv/formats/convert.hpp"
#include "kspmv/formats/coo.hpp"
#include "kspmv/formats/csc.hpp"
#include "kspmv/formats/csr.hpp"
#include "kspmv/gen/generators.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/mixed_operator.hpp"
#include "kspmv/operator.hpp"
