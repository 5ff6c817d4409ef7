// The systemd journal through sd-journal. Without --unit every entry since
// --since is handed to the reader (the line scanner keeps only candidates); kernel entries
// newer than the oldest /dev/kmsg record are skipped because the ring buffer
// already gave them. With --unit: that unit's own lines (_SYSTEMD_UNIT) and
// what systemd says about it (UNIT=, e.g. "Failed with result 'oom-kill'").
#include <systemd/sd-journal.h>

#include <cstring>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "sources/live.h"

namespace aimem {
namespace {

std::string_view field(sd_journal* j, const char* name) {
  const void* data = nullptr;
  size_t len = 0;
  if (sd_journal_get_data(j, name, &data, &len) < 0 || !data) return {};
  std::string_view v(static_cast<const char*>(data), len);
  size_t eq = v.find('=');
  return eq == std::string_view::npos ? std::string_view{} : v.substr(eq + 1);
}

constexpr uint64_t kMaxEntries = 5'000'000;

}  // namespace

JournalResult read_journal(const std::string& root, int64_t since_us, const std::string& unit,
                           std::optional<int64_t> skip_kernel_after_us, FactSink& sink,
                           const TextReaders& readers) {
  JournalResult result;
  sd_journal* j = nullptr;
  int r;
  if (root == "/" || root.empty()) {
    r = sd_journal_open(&j, SD_JOURNAL_LOCAL_ONLY);
  } else {
    std::string dir = root + "/var/log/journal";
    r = sd_journal_open_directory(&j, dir.c_str(), 0);
  }
  if (r < 0) {
    result.problem = fmt::format("systemd journal not readable: {}", std::strerror(-r));
    return result;
  }
  if (!unit.empty()) {
    std::string name = unit;
    if (name.find('.') == std::string::npos) name += ".service";
    std::string m1 = "_SYSTEMD_UNIT=" + name, m2 = "UNIT=" + name;
    sd_journal_add_match(j, m1.c_str(), 0);
    sd_journal_add_disjunction(j);
    sd_journal_add_match(j, m2.c_str(), 0);
  }
  sd_journal_seek_realtime_usec(j, static_cast<uint64_t>(std::max<int64_t>(since_us, 0)));
  SourceContext ctx;
  ctx.name = unit.empty() ? "journal" : "journal (" + unit + ")";
  ctx.reference_us = timeutil::now_us();
  std::unique_ptr<TextReader> reader = readers(ctx, sink);
  TextReader& scanner = *reader;
  std::string line;
  while (sd_journal_next(j) > 0 && result.entries < kMaxEntries) {
    uint64_t usec = 0;
    sd_journal_get_realtime_usec(j, &usec);
    if (skip_kernel_after_us && static_cast<int64_t>(usec) >= *skip_kernel_after_us && field(j, "_TRANSPORT") == "kernel") continue;
    std::string_view msg = field(j, "MESSAGE");
    if (msg.empty()) continue;
    line.clear();
    std::string_view ident = field(j, "SYSLOG_IDENTIFIER");
    if (!ident.empty()) {
      line.append(ident);
      std::string_view pid = field(j, "_PID");
      if (!pid.empty()) line += fmt::format("[{}]", pid);
      line += ": ";
    }
    line.append(msg);
    timeutil::LineTime t;
    t.unix_us = static_cast<int64_t>(usec);
    scanner.feed_record(line, t);
    ++result.entries;
  }
  scanner.finish();
  sd_journal_close(j);
  result.read = true;
  return result;
}

}  // namespace aimem
