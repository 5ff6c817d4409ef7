// One example of every kind of sample watch takes (host, cgroups with odd
// names, 60 processes, GPUs, inference servers up and down) and the extras
// /metrics renders beside it: shared by the exporter's tests and the golden
// /metrics output (tests/golden/golden_test.cc).
#pragma once

#include "watch/exporter.h"
#include "sources/sample.h"

namespace aimem::watch {

Sample example_sample();
ExportExtras example_extras();

}  // namespace aimem::watch
