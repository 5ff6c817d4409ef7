// Sizes. Three dialects are read, each where it occurs:
//  - user input (command line, config): "24GiB", "24G" (= GiB), "80GB" (decimal),
//    as DESIGN.md §2 fixes;
//  - Kubernetes quantities: "1Gi" binary, "1G" decimal, "128974848", "129e6";
//  - sizes printed by programs in logs: the kernel's "kB", PyTorch's "GiB",
//    vLLM's and V8's "GB"/"MB", which those programs compute with powers of two,
//    so every log unit is read as binary.
// Output is always printed in binary units.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace aimem::units {

inline constexpr uint64_t KiB = 1024ULL;
inline constexpr uint64_t MiB = 1024ULL * KiB;
inline constexpr uint64_t GiB = 1024ULL * MiB;
inline constexpr uint64_t TiB = 1024ULL * GiB;

Result<uint64_t> parse_size(std::string_view text);
std::optional<uint64_t> parse_k8s_quantity(std::string_view text);

// The multiplier of a log's size unit at the start of `s` (one blank before
// it allowed: " GiB", "G,"; the unit must end there, "12 Gigs" is none), read
// as parse_log_size reads units. `rest` gets what follows the unit.
std::optional<double> log_unit(std::string_view s, std::string_view* rest = nullptr);

// Reads "<number>[ ]<unit>" at the start of `s` (leading spaces skipped); the
// unit is required unless `allow_bare` (then bytes). `rest` gets the remainder.
std::optional<uint64_t> parse_log_size(std::string_view s, std::string_view* rest = nullptr,
                                       bool allow_bare = false);
// The same, but a size past what 64 bits hold with its unit ("1048575.999023PB",
// a size computed wrong) is the largest there is instead of none.
std::optional<uint64_t> parse_log_size_saturating(std::string_view s);

// A count as the command line writes it: "8192", "8k" or "8K" (x 1024, as
// context lengths are given), from 1 to `max`. The error names `what`
// ("--ctx") and the text.
Result<uint64_t> parse_count(std::string_view text, std::string_view what, uint64_t max);

// "64.0 MiB", "1.50 GiB", "512 B".
std::string format_bytes(uint64_t bytes);
std::string format_bytes_signed(int64_t bytes);

}  // namespace aimem::units
