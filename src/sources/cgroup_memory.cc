// See cgroup_memory.h.
#include "sources/cgroup_memory.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/text.h"
#include "sources/live.h"
#include "sources/proc_text.h"
#include "sources/readfile.h"

namespace aimem {
namespace {

std::string under(const std::string& root, std::string_view path) {
  std::string r = root;
  while (!r.empty() && r.back() == '/') r.pop_back();
  return r + std::string(path);
}

bool exists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

using proc_text::for_each_kv;
using proc_text::u64;

std::optional<uint64_t> num(const std::optional<std::string>& s) { return s ? u64(*s) : std::nullopt; }

void read_v2(const std::string& dir, const CgroupFileReader& read, bool all, watch::CgroupSample& c) {
  c.usage = num(read(dir + "/memory.current"));
  if (auto m = read(dir + "/memory.max"); m && text::trim(*m) != "max") c.limit = u64(*m);
  c.peak = num(read(dir + "/memory.peak"));
  if (auto e = read(dir + "/memory.events")) {
    for_each_kv(*e, [&](std::string_view k, std::string_view v) {
      if (k == "oom") c.oom = u64(v);
      else if (k == "oom_kill") c.oom_kill = u64(v);
      else if (k == "max") c.max_events = u64(v);
      else if (k == "high") c.high_events = u64(v);
    });
  }
  if (!all) return;
  c.swap_usage = num(read(dir + "/memory.swap.current"));
  if (auto p = read(dir + "/memory.pressure")) {
    const proc_text::Psi psi = proc_text::parse_psi(*p);
    c.psi_some_total_us = psi.some_total_us;
    c.psi_full_total_us = psi.full_total_us;
  }
}

void read_v1(const std::string& dir, const CgroupFileReader& read, bool all, watch::CgroupSample& c) {
  c.usage = num(read(dir + "/memory.usage_in_bytes"));
  if (auto l = num(read(dir + "/memory.limit_in_bytes")); l && *l < kCgroupNoLimit) c.limit = l;
  c.peak = num(read(dir + "/memory.max_usage_in_bytes"));
  c.failcnt = num(read(dir + "/memory.failcnt"));
  if (auto o = read(dir + "/memory.oom_control")) {
    for_each_kv(*o, [&](std::string_view k, std::string_view v) {
      if (k == "oom_kill") c.oom_kill = u64(v);
      else if (k == "under_oom") c.under_oom = u64(v).value_or(0) > 0;
    });
  }
  if (!all) return;
  auto memsw = num(read(dir + "/memory.memsw.usage_in_bytes"));
  if (memsw && c.usage) c.swap_usage = *memsw > *c.usage ? *memsw - *c.usage : 0;
  c.kernel = num(read(dir + "/memory.kmem.usage_in_bytes"));
}

void read_stat_v2(std::string_view stat, watch::CgroupSample& c) {
  uint64_t kparts = 0;
  bool any_kpart = false;
  for_each_kv(stat, [&](std::string_view k, std::string_view v) {
    if (k == "anon") c.anon = u64(v);
    else if (k == "file") c.file = u64(v);
    else if (k == "kernel") c.kernel = u64(v);
    else if (k == "shmem") c.shmem = u64(v);
    else if (k == "kernel_stack" || k == "pagetables" || k == "percpu" || k == "sock" || k == "vmalloc" || k == "slab")
      kparts += u64(v).value_or(0), any_kpart = true;
  });
  if (!c.kernel && any_kpart) c.kernel = kparts;  // before 5.18 there is no "kernel" line
}

void read_stat_v1(std::string_view stat, watch::CgroupSample& c) {
  std::optional<uint64_t> rss, cache, shmem;  // this cgroup only; total_* include children like usage does
  for_each_kv(stat, [&](std::string_view k, std::string_view v) {
    if (k == "total_rss") c.anon = u64(v);
    else if (k == "total_cache") c.file = u64(v);
    else if (k == "total_shmem") c.shmem = u64(v);
    else if (k == "rss") rss = u64(v);
    else if (k == "cache") cache = u64(v);
    else if (k == "shmem") shmem = u64(v);
  });
  if (!c.anon) c.anon = rss;
  if (!c.file) c.file = cache;
  if (!c.shmem) c.shmem = shmem;
}

}  // namespace

bool lists_memory_controller(std::string_view controllers) {
  for (auto w : text::split(text::trim(controllers), ' '))
    if (w == "memory") return true;
  return false;
}

MemoryHierarchy find_memory_hierarchy(const std::string& root) {
  auto has_memory = [](const std::string& controllers_file) {
    auto c = read_small_file(controllers_file);
    return c && lists_memory_controller(*c);
  };
  MemoryHierarchy v2;
  if (auto mounts = read_small_file(under(root, "/proc/self/mounts"), 4 << 20)) {
    for (auto line : text::split(*mounts, '\n')) {
      auto f = text::split(line, ' ');
      if (f.size() < 4) continue;
      if (f[2] == "cgroup") {
        for (auto o : text::split(f[3], ','))
          if (o == "memory") return {1, under(root, f[1])};
      } else if (f[2] == "cgroup2" && v2.version == 0 && has_memory(under(root, f[1]) + "/cgroup.controllers")) {
        v2 = {2, under(root, f[1])};  // keep looking: a v1 memory mount wins on hybrid hosts
      }
    }
    if (v2.version) return v2;
  }
  const std::string base = under(root, "/sys/fs/cgroup");
  if (exists(base + "/memory/memory.usage_in_bytes") || exists(base + "/memory/memory.limit_in_bytes"))
    return {1, base + "/memory"};
  if (has_memory(base + "/cgroup.controllers")) return {2, base};
  if (has_memory(base + "/unified/cgroup.controllers")) return {2, base + "/unified"};
  return {};
}

std::string own_memory_cgroup(const std::string& root) {
  std::string path = memory_cgroup_of(read_small_file(under(root, "/proc/self/cgroup")).value_or(""));
  return path.empty() ? "/" : path;
}

std::optional<std::string> read_cgroup_file(const std::string& path) { return read_small_file(path); }

bool read_cgroup_memory(int version, const std::string& dir, const CgroupFileReader& read, CgroupFields fields,
                        watch::CgroupSample& c) {
  const bool all = fields == CgroupFields::all;
  std::optional<std::string> stat;
  if (all) stat = read(dir + "/memory.stat");
  if (version == 2) {
    read_v2(dir, read, all, c);
    if (stat) read_stat_v2(*stat, c);
  } else {
    read_v1(dir, read, all, c);
    if (stat) read_stat_v1(*stat, c);
  }
  return stat || c.usage;
}

std::vector<std::string> child_cgroups(const std::string& dir, size_t cap) {
  std::vector<std::string> children;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return children;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) continue;
    if (e->d_type == DT_UNKNOWN) {  // a file system that does not fill d_type
      struct stat st{};
      if (::lstat((dir + "/" + e->d_name).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    }
    if (children.size() >= cap) break;
    children.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(children.begin(), children.end());
  return children;
}

}  // namespace aimem
