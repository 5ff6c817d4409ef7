// The `policy:` and `alerts:` sections of aimem.yaml (layout in policy.h and
// deploy/aimem.yaml). yaml-cpp does the YAML; this file checks each value
// and turns it into base units. Every error names the file, the 1-based line
// of the offending key or value, and the key, as "FILE:LINE: policy.KEY: ...".
//
// Keys aimem watch owns (interval, scrape, alerts.repeat, ...) are not read
// here: watch checks those. Under `alerts:` only the thresholds rules turn
// into alerting rules are read, with watch's meaning and defaults.
#include "check/policy.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

#include "core/doc_reader.h"
#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "sources/readfile.h"

namespace aimem::check {
namespace {

// A configuration file is small; anything this large is not one (and is not
// read into memory whole).
constexpr uintmax_t kMaxPolicyFileBytes = 4u << 20;

struct Bad {
  Error error;
};

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& what) const {
    fail(at.Mark(), key, what);
  }
  [[noreturn]] void fail(const YAML::Mark& at, const std::string& key, const std::string& what) const {
    throw Bad{make_error(fmt::format("{}:{}: {}: {}", shown(), at.line + 1, key, what))};
  }
  std::string shown() const { return file_.empty() ? "<policy>" : file_; }

  std::string scalar(const YAML::Node& v, const std::string& key) const {
    if (!v.IsScalar()) fail(v, key, "must be a single value");
    return v.Scalar();
  }
  std::string nonempty(const YAML::Node& v, const std::string& key) const {
    std::string s{text::trim(scalar(v, key))};
    if (s.empty()) fail(v, key, "is empty");
    return s;
  }
  uint64_t size(const YAML::Node& v, const std::string& key) const {
    std::string s = scalar(v, key);
    auto r = units::parse_size(s);
    if (!r) fail(v, key, fmt::format("'{}': {}", s, r.error().message));
    if (*r == 0) fail(v, key, fmt::format("'{}' is zero", s));
    return *r;
  }
  double seconds(const YAML::Node& v, const std::string& key) const {
    std::string s = scalar(v, key);
    auto r = timeutil::parse_duration_us(s, "the value");
    if (!r) fail(v, key, r.error().message);
    return static_cast<double>(*r) / 1e6;
  }
  int64_t integer(const YAML::Node& v, const std::string& key, int64_t lo, int64_t hi) const {
    std::string s{text::trim(scalar(v, key))};
    int64_t n = 0;
    const char* end = s.data() + s.size();
    auto [p, ec] = std::from_chars(s.data(), end, n);
    if (ec != std::errc{} || p != end || s.empty()) fail(v, key, fmt::format("'{}' is not a whole number", s));
    if (n < lo || n > hi) fail(v, key, fmt::format("{} is out of range ({} to {})", n, lo, hi));
    return n;
  }
  double number(const YAML::Node& v, const std::string& key) const {
    std::string s{text::trim(scalar(v, key))};
    std::string_view rest;
    auto d = text::parse_double(s, &rest);
    if (!d || !text::trim(rest).empty() || !std::isfinite(*d)) fail(v, key, fmt::format("'{}' is not a number", s));
    return *d;
  }
  // A share of a pool, 0 < r <= 1, as watch's alerts: thresholds are written.
  double ratio(const YAML::Node& v, const std::string& key) const {
    double d = number(v, key);
    if (!(d > 0 && d <= 1)) fail(v, key, fmt::format("{} is not a ratio between 0 and 1 (0.8 = 80% used)", scalar(v, key)));
    return d;
  }
  // "15%" or 15 (percent). A bare number below 1 is refused rather than
  // guessed: 0.15 could mean 15% (a ratio, as under alerts:) or 0.15%.
  double percent(const YAML::Node& v, const std::string& key) const {
    std::string s{text::trim(scalar(v, key))};
    bool pct = !s.empty() && s.back() == '%';
    if (pct) s = std::string{text::trim(std::string_view(s).substr(0, s.size() - 1))};
    std::string_view rest;
    auto d = text::parse_double(s, &rest);
    if (!d || !text::trim(rest).empty() || !std::isfinite(*d))
      fail(v, key, fmt::format("'{}' is not a percentage; write 15% or 15", scalar(v, key)));
    if (*d < 0 || *d >= 100) fail(v, key, fmt::format("{} is out of range: a percentage from 0 up to (not including) 100", scalar(v, key)));
    if (!pct && *d > 0 && *d < 1)
      fail(v, key, fmt::format("{} is ambiguous: write {}% for a ratio of {}, or {}% if you mean that", scalar(v, key),
                               *d * 100, *d, *d));
    return *d;
  }

  // Iterates a mapping, refusing a key given twice (yaml-cpp keeps both).
  template <typename F>
  void each(const YAML::Node& map, const std::string& prefix, F&& f) const {
    if (!map.IsMap()) fail(map, prefix, "must be a mapping of keys");
    std::map<std::string, int> seen;
    for (const auto& kv : map) {
      if (!kv.first.IsScalar()) fail(kv.first, prefix, "has a key that is not a name");
      std::string k = kv.first.Scalar();
      int line = kv.first.Mark().line + 1;
      if (auto [it, fresh] = seen.emplace(k, line); !fresh)
        fail(kv.first, prefix + "." + k, fmt::format("given twice (first on line {})", it->second));
      // A null value's mark is the next token's; the key's line is the one to name.
      if (kv.second.IsNull()) fail(kv.first, prefix + "." + k, "has no value");
      try {
        f(k, kv.first, kv.second, prefix + "." + k);
      } catch (const YAML::Exception& e) {
        fail(kv.second, prefix + "." + k, e.msg);
      }
    }
  }

 private:
  std::string file_;
};

// The runtimes `aimem check` knows flags for, each with the spellings users
// write (fit's list plus SGLang, which fit does not plan for).
struct RuntimeName {
  const char* name;
  std::initializer_list<const char*> aliases;
};
const RuntimeName kRuntimes[] = {
    {"vllm", {"vllm"}},
    {"llamacpp", {"llamacpp", "llama.cpp", "llama-cpp", "llama-server"}},
    {"ollama", {"ollama"}},
    {"tgi", {"tgi", "text-generation-inference"}},
    {"sglang", {"sglang"}},
    {"transformers", {"transformers", "hf", "huggingface"}},
};

std::optional<std::string> runtime_of(const std::string& s) {
  std::string l = text::lower(s);
  for (const auto& r : kRuntimes)
    for (const char* a : r.aliases)
      if (l == a) return std::string(r.name);
  return std::nullopt;
}

void read_policy(const Reader& rd, const YAML::Node& node, Policy& p) {
  rd.each(node, "policy", [&](const std::string& k, const YAML::Node& key, const YAML::Node& v, const std::string& w) {
    if (k == "model") p.model = rd.nonempty(v, w);
    else if (k == "runtime") {
      std::string s = rd.nonempty(v, w);
      p.runtime = runtime_of(s);
      if (!p.runtime) rd.fail(v, w, fmt::format("unknown runtime '{}' (vllm, llamacpp, ollama, tgi, sglang, transformers)", s));
    } else if (k == "gpu") p.gpu = rd.nonempty(v, w);
    else if (k == "gpu_memory") p.gpu_memory_bytes = rd.size(v, w);
    else if (k == "gpus") p.gpus = static_cast<int>(rd.integer(v, w, 0, 1024));
    else if (k == "node_memory") p.node_memory_bytes = rd.size(v, w);
    else if (k == "headroom") p.headroom_pct = rd.percent(v, w);
    else if (k == "max_context") p.max_context = rd.integer(v, w, 1, int64_t(1) << 40);
    else if (k == "max_concurrency") p.max_concurrency = rd.integer(v, w, 1, int64_t(1) << 30);
    else if (k == "envelope") {
      std::filesystem::path e = rd.nonempty(v, w);
      if (e.is_relative() && !p.file.empty()) e = std::filesystem::path(p.file).parent_path() / e;
      p.envelope_path = e.lexically_normal().string();
    } else if (k == "min_grace_period") p.min_grace_period_s = rd.seconds(v, w);
    else
      rd.fail(key, w,
              "unknown key (policy keys: model, runtime, gpu, gpu_memory, gpus, node_memory, headroom, max_context, "
              "max_concurrency, envelope, min_grace_period; see deploy/aimem.yaml)");
  });
}

void read_alerts(const Reader& rd, const YAML::Node& node, Policy& p) {
  // A Mark, not a Node: assigning to a yaml-cpp Node rewrites the node it
  // refers to, in the tree being walked.
  YAML::Mark warn_at = node.Mark();
  rd.each(node, "alerts", [&](const std::string& k, const YAML::Node& key, const YAML::Node& v, const std::string& w) {
    if (k == "warn_used_ratio") {
      p.warn_used_ratio = rd.ratio(v, w);
      warn_at = key.Mark();
    } else if (k == "critical_used_ratio") p.critical_used_ratio = rd.ratio(v, w);
    else if (k == "gpu_warn_used_ratio") p.gpu_warn_used_ratio = rd.ratio(v, w);
    else if (k == "kv_warn_ratio") p.kv_warn_ratio = rd.ratio(v, w);
    else if (k == "time_to_exhaustion") {
      p.time_to_exhaustion_s = rd.seconds(v, w);
      if (p.time_to_exhaustion_s < 1) rd.fail(v, w, "must be at least 1s");
    }
    // Other keys (repeat, webhook, ...) are watch's: it checks them.
  });
  if (p.warn_used_ratio > p.critical_used_ratio)
    rd.fail(warn_at, "alerts.warn_used_ratio",
            fmt::format("{} is above critical_used_ratio {}: a warning must come before the critical alert", p.warn_used_ratio,
                        p.critical_used_ratio));
}

}  // namespace

Result<Policy> parse_policy(const std::string& text, const std::string& file_name) {
  Policy p;
  p.file = file_name;
  Reader rd(file_name);
  try {
    doc::Limits limits;
    limits.max_bytes = kMaxPolicyFileBytes;
    auto parsed = doc::parse_yaml(text, rd.shown(), limits);
    if (!parsed) {
      std::string m = parsed.error().message;
      if (size_t at = m.find(": malformed YAML: "); at != std::string::npos) m.replace(at, 18, ": not valid YAML: ");
      return make_error(std::move(m));
    }
    YAML::Node root = *parsed;
    if (!root || root.IsNull()) return p;
    if (!root.IsMap())
      return make_error(fmt::format("{}:{}: the file must be a mapping of keys (policy:, alerts:, ...)", rd.shown(),
                                    root.Mark().line + 1));
    std::map<std::string, int> seen;
    for (const auto& kv : root) {
      if (!kv.first.IsScalar()) continue;
      const std::string& k = kv.first.Scalar();
      if (k != "policy" && k != "alerts") continue;
      if (auto [it, fresh] = seen.emplace(k, kv.first.Mark().line + 1); !fresh)
        rd.fail(kv.first, k, fmt::format("given twice (first on line {})", it->second));
      if (k == "policy") {
        if (!kv.second.IsNull()) read_policy(rd, kv.second, p);
      } else {
        if (!kv.second.IsNull()) read_alerts(rd, kv.second, p);
      }
    }
  } catch (const Bad& b) {
    return b.error;
  } catch (const YAML::Exception& e) {
    return make_error(fmt::format("{}:{}: {}", rd.shown(), e.mark.line + 1, e.msg));
  }
  return p;
}

Result<Policy> read_policy_file(const std::string& path) {
  auto text = read_user_file(path, kMaxPolicyFileBytes, "policy file");
  if (!text) return text.error();
  return parse_policy(*text, path);
}

}  // namespace aimem::check
