// apply_watch_config (see watch_config.h). Values are read with yaml-cpp's
// conversions; every exception they throw (a key that is not a word, a value
// of the wrong type) is caught here and becomes an error naming the line.
#include "watch/watch_config.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/doc_reader.h"
#include "core/time.h"
#include "core/units.h"
#include "watch/exporter.h"

namespace aimem::watch {

int64_t duration_of(const std::string& v, const std::string& what) {
  auto d = timeutil::parse_duration_us(v, what);
  if (!d) throw Bad{d.error().message};
  return *d;
}
uint64_t size_of(const std::string& v, const std::string& what) {
  auto s = units::parse_size(v);
  if (!s) throw Bad{fmt::format("{} '{}': {}", what, v, s.error().message)};
  return *s;
}

namespace {

void apply(const YAML::Node& root, const std::string& path, WatchOptions& o) {
  if (!root.IsMap()) throw Bad{fmt::format("{}: the configuration must be a mapping of keys", path)};
  auto str = [&](const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar()) throw Bad{fmt::format("{}: line {}: {} must be a single value", path, n.Mark().line + 1, key)};
    return n.as<std::string>();
  };
  for (const auto& kv : root) {
    if (!kv.first.IsScalar())
      throw Bad{fmt::format("{}: line {}: a key must be a single word", path, kv.first.Mark().line + 1)};
    std::string key = kv.first.as<std::string>();
    const YAML::Node& v = kv.second;
    std::string where = fmt::format("{}: line {}: {}", path, kv.first.Mark().line + 1, key);
    try {
      if (key == "interval") o.interval_us = duration_of(str(v, key), where);
      else if (key == "db") o.db = str(v, key);
      else if (key == "store") o.store = v.as<bool>();
      else if (key == "listen") o.listen = str(v, key);
      else if (key == "serve") o.serve = v.as<bool>();
      else if (key == "cgroup") o.cgroup = str(v, key);
      else if (key == "pid") o.pid = v.as<int>();
      else if (key == "gpus") o.gpus = v.as<bool>();
      else if (key == "processes") o.processes = v.as<bool>();
      else if (key == "task_iterator") o.task_iterator = v.as<bool>();
      else if (key == "kernel_log") o.follow_kernel_log = v.as<bool>();
      else if (key == "oom_window") o.oom_window_us = duration_of(str(v, key), where);
      else if (key == "labels") {
        if (!v.IsMap()) throw Bad{where + " must be a mapping of label names to values (node: gpu-node-7)"};
        for (const auto& l : v) {
          auto label = parse_constant_label(l.first.as<std::string>() + "=" + str(l.second, l.first.as<std::string>()));
          if (!label) throw Bad{fmt::format("{}: line {}: labels: {}", path, l.first.Mark().line + 1, label.error().message)};
          o.labels.push_back(std::move(*label));
        }
      } else if (key == "scrape") {
        if (!v.IsSequence()) throw Bad{where + " must be a list"};
        for (const auto& t : v) o.scrape.push_back(t.as<std::string>());
      } else if (key == "retention") {
        if (!v.IsMap()) throw Bad{where + " must be a mapping (max_age, max_size)"};
        for (const auto& r : v) {
          std::string k = r.first.as<std::string>();
          if (k == "max_age") o.retention.max_age_us = duration_of(str(r.second, k), where + "." + k);
          else if (k == "max_size") o.retention.max_bytes = size_of(str(r.second, k), where + "." + k);
          else throw Bad{fmt::format("{}: line {}: unknown key retention.{}", path, r.first.Mark().line + 1, k)};
        }
      } else if (key == "alerts") {
        if (!v.IsMap()) throw Bad{where + " must be a mapping"};
        for (const auto& a : v) {
          std::string k = a.first.as<std::string>();
          const YAML::Node& x = a.second;
          std::string w = where + "." + k;
          if (k == "warn_used_ratio") o.policy.warn_used_ratio = x.as<double>();
          else if (k == "critical_used_ratio") o.policy.critical_used_ratio = x.as<double>();
          else if (k == "gpu_warn_used_ratio") o.policy.gpu_warn_used_ratio = x.as<double>();
          else if (k == "kv_warn_ratio") o.policy.kv_warn_ratio = x.as<double>();
          else if (k == "reserve_rolling_copy") o.policy.reserve_rolling_copy = x.as<bool>();
          else if (k == "time_to_exhaustion") o.policy.tte_warn_us = duration_of(str(x, k), w);
          else if (k == "trend_window") o.policy.trend_window_us = duration_of(str(x, k), w);
          else if (k == "repeat") o.policy.repeat_us = duration_of(str(x, k), w);
          else if (k == "on_alert") o.delivery.on_alert_cmd = str(x, k);
          else if (k == "webhook") o.delivery.webhook_url = str(x, k);
          else if (k == "log") o.delivery.log_path = str(x, k);
          else if (k == "stderr") o.delivery.to_stderr = x.as<bool>();
          else throw Bad{fmt::format("{}: line {}: unknown key alerts.{}", path, a.first.Mark().line + 1, k)};
        }
      } else if (key == "policy") {
        // The deployment policy of `aimem check` and `aimem rules`
        // (check/policy.h), which check it; nothing in it changes watch.
      } else {
        throw Bad{fmt::format("{}: line {}: unknown key '{}' (see deploy/aimem.yaml)", path, kv.first.Mark().line + 1, key)};
      }
    } catch (const YAML::Exception& e) {
      throw Bad{fmt::format("{}: {}", where, e.msg)};
    }
  }
}

}  // namespace

Result<bool> apply_watch_config(std::string_view text, const std::string& path, WatchOptions& o) {
  doc::Limits limits;
  limits.max_bytes = kMaxConfigBytes;
  auto parsed = doc::parse_yaml(text, path, limits);
  if (!parsed) return parsed.error();
  const YAML::Node& root = *parsed;
  if (!root || root.IsNull()) return true;
  try {
    apply(root, path, o);
  } catch (const Bad& b) {
    return make_error(b.message);
  } catch (const YAML::Exception& e) {
    return make_error(fmt::format("{}: line {}: {}", path, e.mark.line + 1, e.msg));
  }
  return true;
}

}  // namespace aimem::watch
