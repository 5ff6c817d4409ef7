#include "render/diagnosis_json.h"

#include "core/time.h"

namespace aimem {
namespace {

template <typename T>
nlohmann::json opt(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json incident_json(const Incident& inc) {
  nlohmann::json j;
  j["layer"] = std::string(to_string(inc.layer));
  j["cause"] = std::string(to_string(inc.cause));
  j["confidence"] = inc.confidence;
  j["summary"] = inc.summary;
  j["time"] = inc.time_us ? nlohmann::json(timeutil::format_iso(*inc.time_us)) : nlohmann::json(nullptr);
  if (inc.process.empty() && !inc.pid) {
    j["process"] = nullptr;
  } else {
    j["process"] = {{"name", inc.process.empty() ? nlohmann::json(nullptr) : nlohmann::json(inc.process)}, {"pid", opt(inc.pid)}};
  }
  if (inc.pool.name.empty()) {
    j["pool"] = nullptr;
  } else {
    j["pool"] = {{"name", inc.pool.name}, {"limit_bytes", opt(inc.pool.limit_bytes)}, {"used_bytes", opt(inc.pool.used_bytes)}};
  }
  j["evidence"] = nlohmann::json::array();
  for (const auto& e : inc.evidence) j["evidence"].push_back({{"source", e.source}, {"where", e.where}, {"text", e.text}});
  j["fixes"] = nlohmann::json::array();
  for (const auto& f : inc.fixes) j["fixes"].push_back({{"action", f.action}, {"why", f.why}});
  j["causes"] = nlohmann::json::array();
  for (const auto& c : inc.causes)
    j["causes"].push_back({{"cause", std::string(to_string(c.cause))}, {"confidence", c.confidence}, {"evidence", c.evidence},
                           {"decide_with", c.decide_with.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.decide_with)}});
  j["next_checks"] = inc.next_checks;
  j["reasons"] = inc.reasons;
  return j;
}

}  // namespace

nlohmann::json diagnosis_to_json(const Diagnosis& d) {
  nlohmann::json j;
  j["layer"] = std::string(to_string(d.layer));
  j["cause"] = std::string(to_string(d.cause));
  j["confidence"] = d.incidents.empty() ? nlohmann::json("none") : nlohmann::json(*d.confidence);
  j["causes"] = d.incidents.empty() ? nlohmann::json::array() : incident_json(d.incidents.front())["causes"];
  j["incidents"] = nlohmann::json::array();
  for (const auto& inc : d.incidents) j["incidents"].push_back(incident_json(inc));
  j["headroom"] = nlohmann::json::array();
  for (const auto& h : d.headroom)
    j["headroom"].push_back({{"pool", h.pool}, {"capacity_bytes", opt(h.capacity)}, {"used_bytes", opt(h.used)},
                             {"available_bytes", opt(h.available)}, {"note", h.note.empty() ? nlohmann::json(nullptr) : nlohmann::json(h.note)}});
  j["since"] = d.since_us ? nlohmann::json(timeutil::format_iso(*d.since_us)) : nlohmann::json(nullptr);
  j["warnings"] = d.warnings;
  j["notes"] = d.notes;
  return j;
}

std::string render_json(const nlohmann::json& j) {
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace aimem
