// Internal to the rules: the functions the table in rules.cc names, and the
// helpers they share.
#pragma once

#include <string>

#include "check/rules.h"

namespace aimem::check {

using RuleFn = void(const Rule&, const std::vector<Subject>&, const Context&, Sink&);
RuleFn rule_no_memory_limit, rule_request_below_limit, rule_limit_below_load_peak, rule_limit_above_node,
    rule_gpu_without_host_memory, rule_readiness_not_gated, rule_no_graceful_drain, rule_rolling_overlap,
    rule_gpu_util_oversubscribed, rule_kv_over_budget, rule_over_envelope, rule_heap_above_limit,
    rule_swap_for_weights, rule_none;

Finding finding(const Rule& r, const Loc& at, std::string message, std::string fix);
// "container 'vllm' of Deployment 'llm'", "service 'ollama'", "unit 'llm.service'", "the command line".
std::string subject_name(const Subject& s);
// The field that sets a memory limit / request on this platform.
std::string limit_field(Platform p);
std::string request_field(Platform p);
double headroom(const Context& ctx);  // fraction, e.g. 0.10
std::string bytes(uint64_t b);        // "12.0 GiB"

}  // namespace aimem::check
