// Sample and Event <-> compact JSON: the body the store keeps per row (store.cc)
// and what other parts may ship over the wire. Keys are short because a body is
// written up to ten times a second; optionals are omitted when absent, so
// "missing" stays distinct from 0. Reading tolerates unknown keys, missing keys
// and values of the wrong type (skipped), so an older aimem reads a newer
// store. Non-finite doubles are omitted (JSON has no NaN). Strings must be
// UTF-8 to round-trip; dump with error_handler_t::replace (see dump_compact).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "sources/sample.h"

namespace aimem::watch {

nlohmann::json to_json(const Sample& s);
Sample sample_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Event& e);
Event event_from_json(const nlohmann::json& j);

// One line, invalid UTF-8 replaced by U+FFFD instead of throwing.
std::string dump_compact(const nlohmann::json& j);

// dump_compact(to_json(s)), byte for byte, written without building the tree
// (sample_body.cc): the store's row body, once a sample.
std::string sample_body(const Sample& s);

}  // namespace aimem::watch
