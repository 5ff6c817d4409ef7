// How a diagnosis is written into the body of a stored event (its
// "diagnosis" field: `aimem run`'s exit, `aimem watch`'s and `aimem probe`'s
// OOM kills). Writing JSON is output, and output lives in render/
// (render/diagnosis_json.h), above watch and probe: the command that starts
// the loop hands the writer down (docs/ARCHITECTURE.md).
#pragma once

#include <functional>

#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"

namespace aimem::watch {

using DiagnosisJson = std::function<nlohmann::json(const Diagnosis&)>;

// The body's "diagnosis": null when no writer was handed down.
inline nlohmann::json diagnosis_body(const DiagnosisJson& to_json, const Diagnosis& d) {
  return to_json ? to_json(d) : nlohmann::json(nullptr);
}

}  // namespace aimem::watch
