// Docker Compose files (the Compose Specification): each service under
// `services:` is one workload with one container. Memory comes from
// mem_limit / mem_reservation (the short form) or deploy.resources (the
// swarm form Compose v2 also honours); GPUs from `gpus:` or
// deploy.resources.reservations.devices; `command:` and `entrypoint:` may be
// a list or a string that Compose splits as a shell would.
#include <cctype>
#include <fmt/format.h>

#include "check/readers.h"
#include "check/server.h"
#include "check/yaml_doc.h"
#include "core/text.h"

namespace aimem::check {

std::optional<uint64_t> parse_docker_size(std::string_view s) {
  // docker/go-units RAMInBytes: b, k, m, g, t, p with an optional trailing b, all binary.
  std::string t = text::lower(text::trim(s));
  if (t.empty()) return std::nullopt;
  if (t.size() > 1 && t.back() == 'b' && !std::isdigit(static_cast<unsigned char>(t[t.size() - 2]))) t.pop_back();
  uint64_t mult = 1;
  switch (t.back()) {
    case 'b': mult = 1; t.pop_back(); break;
    case 'k': mult = 1ULL << 10; t.pop_back(); break;
    case 'm': mult = 1ULL << 20; t.pop_back(); break;
    case 'g': mult = 1ULL << 30; t.pop_back(); break;
    case 't': mult = 1ULL << 40; t.pop_back(); break;
    default: break;
  }
  std::string_view rest;
  auto d = text::parse_double(t, &rest);
  if (!d || !rest.empty() || *d < 0 || *d * double(mult) > 1.8e19) return std::nullopt;
  return uint64_t(*d * double(mult));
}

bool looks_like_compose(const YAML::Node& root) {
  return is_map(root) && is_map(child(root, "services")) && !child(root, "kind").IsDefined();
}

namespace {

void words_of(const YAML::Node& n, const std::string& file, std::vector<Arg>& out) {
  if (is_scalar(n)) {
    // Compose splits a string command shell-like; the words point at the string.
    for (const std::string& w : shell_words(n.Scalar())) out.push_back({w, loc_of(n, file)});
  } else if (is_seq(n)) {
    for (const auto& a : n)
      if (is_scalar(a)) out.push_back({a.Scalar(), loc_of(a, file)});
  }
}

std::optional<At<uint64_t>> size_at(const YAML::Node& n, const std::string& file, const std::string& field,
                                    ReadResult& out) {
  if (!is_scalar(n)) return std::nullopt;
  auto v = parse_docker_size(n.Scalar());
  if (!v) {
    out.notes.push_back({loc_of(n, file), fmt::format("{}: '{}' is not a size; ignored", field, n.Scalar())});
    return std::nullopt;
  }
  return At<uint64_t>{*v, loc_of(n, file)};
}

void read_gpus(const YAML::Node& svc, const std::string& file, Container& c) {
  const YAML::Node gpus = child(svc, "gpus");
  if (is_scalar(gpus)) {
    if (gpus.Scalar() == "all") c.gpus = At<int64_t>{-1, loc_of(gpus, file)};
    else if (auto n = text::parse_i64(gpus.Scalar())) c.gpus = At<int64_t>{*n, loc_of(gpus, file)};
  }
  const YAML::Node devices = child_path(svc, {"deploy", "resources", "reservations", "devices"});
  if (!is_seq(devices)) return;
  for (const auto& d : devices) {
    bool gpu = scalar(d, "driver") == "nvidia";
    if (const YAML::Node caps = child(d, "capabilities"); is_seq(caps))
      for (const auto& x : caps)
        if (is_scalar(x) && x.Scalar() == "gpu") gpu = true;
    if (!gpu) continue;
    const YAML::Node count = child(d, "count");
    const YAML::Node ids = child(d, "device_ids");
    if (is_seq(ids)) {
      std::vector<std::string> v;
      for (const auto& i : ids)
        if (is_scalar(i)) v.push_back(i.Scalar());
      c.gpus = At<int64_t>{int64_t(v.size()), loc_of(ids, file)};
      c.gpu_devices = fmt::format("{}", fmt::join(v, ","));
    } else if (is_scalar(count)) {
      if (count.Scalar() == "all") c.gpus = At<int64_t>{-1, loc_of(count, file)};
      else if (auto n = text::parse_i64(count.Scalar())) c.gpus = At<int64_t>{*n, loc_of(count, file)};
    } else {
      c.gpus = At<int64_t>{-1, loc_of(d, file)};  // neither count nor ids: all GPUs
    }
  }
}

}  // namespace

void read_compose(const YAML::Node& root, const std::string& file, ReadResult& out) {
  const YAML::Node services = child(root, "services");
  for (const auto& kv : services) {
    if (!is_scalar(kv.first) || !is_map(kv.second)) continue;
    const YAML::Node& svc = kv.second;
    Workload w;
    w.platform = Platform::kCompose;
    w.kind = "service";
    w.name = kv.first.Scalar();
    w.at = loc_of(kv.first, file);
    Container c;
    c.name = w.name;
    c.at = w.at;
    c.image = scalar(svc, "image");
    words_of(child(svc, "entrypoint"), file, c.argv);
    words_of(child(svc, "command"), file, c.argv);
    if (const YAML::Node env = child(svc, "environment"); is_map(env)) {
      for (const auto& e : env)
        if (is_scalar(e.first))
          c.env.push_back({e.first.Scalar(), Arg{is_scalar(e.second) ? e.second.Scalar() : "", loc_of(e.second, file)}});
    } else if (is_seq(env)) {
      for (const auto& e : env) {
        if (!is_scalar(e)) continue;
        std::string s = e.Scalar();
        auto eq = s.find('=');
        c.env.push_back({s.substr(0, eq), Arg{eq == std::string::npos ? "" : s.substr(eq + 1), loc_of(e, file)}});
      }
    }
    c.mem_limit = size_at(child(svc, "mem_limit"), file, "mem_limit", out);
    if (!c.mem_limit)
      c.mem_limit = size_at(child_path(svc, {"deploy", "resources", "limits", "memory"}), file,
                            "deploy.resources.limits.memory", out);
    c.mem_request = size_at(child(svc, "mem_reservation"), file, "mem_reservation", out);
    if (!c.mem_request)
      c.mem_request = size_at(child_path(svc, {"deploy", "resources", "reservations", "memory"}), file,
                              "deploy.resources.reservations.memory", out);
    if (const YAML::Node swap = child(svc, "memswap_limit"); is_scalar(swap)) {
      if (swap.Scalar() == "-1") c.swap_limit = At<int64_t>{-1, loc_of(swap, file)};
      else if (auto v = parse_docker_size(swap.Scalar())) c.swap_limit = At<int64_t>{int64_t(*v), loc_of(swap, file)};
    }
    read_gpus(svc, file, c);
    for (const char* var : {"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"})
      if (const Arg* v = c.env_var(var); v && c.gpu_devices.empty()) c.gpu_devices = v->text;
    if (const YAML::Node hc = child(svc, "healthcheck"); is_map(hc)) {
      const YAML::Node disable = child(hc, "disable");
      if (!(is_scalar(disable) && disable.Scalar() == "true")) c.readiness = Probe{"healthcheck", "", loc_of(hc, file)};
    }
    if (const YAML::Node g = child(svc, "stop_grace_period"); is_scalar(g)) {
      if (auto s = parse_duration_s(g.Scalar())) w.grace_s = At<double>{*s, loc_of(g, file)};
      else out.notes.push_back({loc_of(g, file), fmt::format("stop_grace_period: '{}' is not a duration; ignored", g.Scalar())});
    }
    w.containers.push_back(std::move(c));
    out.workloads.push_back(std::move(w));
  }
}

}  // namespace aimem::check
