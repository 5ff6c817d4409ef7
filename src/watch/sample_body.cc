// sample_body (sample_json.h): the store's row body written straight into one
// string, byte for byte what dump_compact(to_json(s)) gives. Building the
// JSON tree first (a std::map node per key, a string per key and value, all
// freed again) was half of what a stored sample cost the watch.
//
// The tree's dump orders each object's keys bytewise (nlohmann's object is a
// std::map), so the writers below put the keys in that order; the test
// compares the two on samples with every field, and none. Strings that are
// plain printable ASCII are copied as they are; any other (quotes,
// backslashes, control bytes, UTF-8, invalid UTF-8) and every double go
// through nlohmann's own dump, so escaping, U+FFFD replacement and number
// formatting stay its own. The rare parts (GPUs, their processes, servers)
// are dumped from their trees as before.
#include <fmt/format.h>

#include <cmath>

#include "watch/sample_json.h"

namespace aimem::watch {
namespace {

class Body {
 public:
  explicit Body(std::string& out) : out_(out) {}
  void open() { out_ += '{', first_ = true; }
  void close() { out_ += '}', first_ = false; }
  void key(const char* k) {
    if (!first_) out_ += ',';
    first_ = false;
    out_ += '"';
    out_ += k;
    out_ += "\":";
  }
  template <typename I>
  void integer(const char* k, I v) {
    key(k);
    fmt::format_to(std::back_inserter(out_), "{}", v);
  }
  void put(const char* k, const std::optional<uint64_t>& v) {
    if (v) integer(k, *v);
  }
  void put(const char* k, const std::optional<double>& v) {
    if (!v || !std::isfinite(*v)) return;
    key(k);
    out_ += nlohmann::json(*v).dump();
  }
  void put(const char* k, const std::string& v) {
    if (v.empty()) return;
    key(k);
    string(v);
  }
  void put(const char* k, bool v) {
    if (!v) return;
    key(k);
    out_ += "true";
  }
  void string(const std::string& v) {
    for (char c : v)
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') {
        out_ += dump_compact(nlohmann::json(v));
        return;
      }
    out_ += '"';
    out_ += v;
    out_ += '"';
  }
  std::string& out() { return out_; }
  void raw(const char* k, const std::string& dumped) {
    key(k);
    out_ += dumped;
  }

 private:
  std::string& out_;
  bool first_ = true;
};

// What host_json (sample_json.cc) leaves out: every field absent (or not finite).
bool host_empty(const HostSample& h) {
  auto finite = [](const std::optional<double>& v) { return v && std::isfinite(*v); };
  return !h.mem_total && !h.mem_available && !h.swap_total && !h.swap_free && !finite(h.psi_some_avg10) &&
         !finite(h.psi_full_avg10) && !h.psi_some_total_us && !h.psi_full_total_us && !h.oom_kills;
}

void host(Body& b, const HostSample& h) {
  b.put("f10", h.psi_full_avg10);
  b.put("ft_us", h.psi_full_total_us);
  b.put("ma", h.mem_available);
  b.put("mt", h.mem_total);
  b.put("ok", h.oom_kills);
  b.put("s10", h.psi_some_avg10);
  b.put("sf", h.swap_free);
  b.put("st", h.swap_total);
  b.put("st_us", h.psi_some_total_us);
}

void cgroup(Body& b, const CgroupSample& c) {
  b.open();
  b.put("an", c.anon);
  b.put("ctr", c.container_id);
  b.put("fc", c.failcnt);
  b.put("fi", c.file);
  b.put("ft_us", c.psi_full_total_us);
  b.put("hi", c.high_events);
  b.put("ke", c.kernel);
  b.put("l", c.limit);
  b.put("mx", c.max_events);
  b.put("ok", c.oom_kill);
  b.put("oom", c.oom);
  b.key("path");
  b.string(c.path);
  b.put("pk", c.peak);
  b.put("pod", c.pod_uid);
  b.put("sh", c.shmem);
  b.put("st_us", c.psi_some_total_us);
  b.put("sw", c.swap_usage);
  b.put("u", c.usage);
  b.put("uo", c.under_oom);
  if (c.version) b.integer("v", c.version);
  b.close();
}

void process(Body& b, const ProcessSample& p) {
  b.open();
  b.put("cg", p.cgroup);
  b.put("comm", p.comm);
  b.put("gpu", p.gpu_bytes);
  b.put("hwm", p.hwm);
  b.integer("pid", p.pid);
  if (p.ppid) b.integer("pp", p.ppid);
  b.put("role", p.role);
  b.integer("rss", p.rss);
  b.put("sw", p.swap);
  b.close();
}

template <typename T, typename F>
void array(Body& b, const char* k, const std::vector<T>& v, F each) {
  if (v.empty()) return;
  b.key(k);
  b.out() += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) b.out() += ',';
    each(b, v[i]);
  }
  b.out() += ']';
}

}  // namespace

std::string sample_body(const Sample& s) {
  std::string out;
  out.reserve(256 + 160 * s.cgroups.size() + 96 * s.processes.size());
  Body b(out);
  b.open();
  array(b, "c", s.cgroups, cgroup);
  nlohmann::json tree;  // the rare parts, dumped from the tree as before
  if (!s.gpus.empty() || !s.gpu_processes.empty() || !s.servers.empty()) tree = to_json(s);
  auto from_tree = [&](const char* k) {
    if (auto it = tree.find(k); it != tree.end()) b.raw(k, dump_compact(*it));
  };
  from_tree("g");
  from_tree("gp");
  if (!host_empty(s.host)) {
    b.key("h");
    b.open();
    host(b, s.host);
    b.close();
  }
  array(b, "p", s.processes, process);
  from_tree("s");
  b.integer("t", s.time_us);
  b.close();
  return out;
}

}  // namespace aimem::watch
