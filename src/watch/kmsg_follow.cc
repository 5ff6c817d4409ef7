// See kmsg_follow.h. The records come from sources/kmsg_reader.h; their usec
// field is CLOCK_MONOTONIC, so wall time = now_real - now_mono + usec.
#include "watch/kmsg_follow.h"

#include <cstring>
#include <fmt/format.h>

#include "core/kmsg_record.h"
#include "core/text.h"
#include "core/time.h"

namespace aimem::watch {
namespace {

std::string field(std::string_view line, std::string_view key) {
  auto v = text::after(line, key);
  if (!v) return {};
  return std::string(text::take_until(*v, ","));
}

}  // namespace

bool parse_oom_summary(std::string_view line, KernelOomReport& r) {
  size_t at = line.find("oom-kill:");
  if (at == std::string_view::npos) return false;
  line = line.substr(at + 9);
  r.constraint = field(line, "constraint=");
  r.oom_memcg = field(line, "oom_memcg=");
  r.task_memcg = field(line, "task_memcg=");
  if (auto t = field(line, "task="); !t.empty()) r.comm = t;
  if (auto p = text::parse_u64(field(line, "pid="))) r.pid = static_cast<int>(*p);
  return true;
}

Result<bool> KmsgFollower::open(const std::string& root, bool from_start) {
  if (!reader_.open(root, from_start))
    return make_error(fmt::format("cannot follow the kernel log {}: {}", reader_.path(), std::strerror(reader_.error_number())));
  boot_us_ = timeutil::monotonic_epoch_us();
  return true;
}

std::optional<KernelOomReport> KmsgFollower::feed(std::string_view text, int64_t wall_us) {
  ++records_;
  if (text::contains(text, "invoked oom-killer")) {
    in_report_ = true;
    current_ = KernelOomReport{};
  }
  if (!in_report_) return std::nullopt;
  // Keep the head of the report and every line that names the kill; a global
  // OOM's task dump can list thousands of processes.
  bool key = text::contains(text, "oom-kill:") || text::contains(text, "Killed process") ||
             text::contains(text, "invoked oom-killer") || text::contains(text, "memory: usage") ||
             text::contains(text, "Memory cgroup");
  if (current_.lines.size() < kMaxReportLines || key) {
    if (current_.lines.size() < kMaxReportLines + 64) current_.lines.emplace_back(text);
  }
  parse_oom_summary(text, current_);
  if (text::contains(text, "Killed process")) {
    in_report_ = false;
    current_.time_us = wall_us;
    if (!current_.pid)
      if (auto p = text::after(text, "Killed process "))
        if (auto v = text::parse_u64(*p)) current_.pid = static_cast<int>(*v);
    return std::move(current_);
  }
  return std::nullopt;
}

std::vector<KernelOomReport> KmsgFollower::poll(int timeout_ms) {
  std::vector<KernelOomReport> out;
  reader_.poll(timeout_ms, [&](std::string_view raw) {
    auto rec = parse_kmsg_record(raw);
    if (!rec) return;
    if (auto r = feed(rec->text, boot_us_ + rec->uptime_us)) out.push_back(std::move(*r));
  }, kMaxRecordsPerPoll);
  return out;
}

}  // namespace aimem::watch
