// nvidia-smi output, in its four forms, as gpu_state context (one fact per
// GPU per snapshot: index, name in `process`, total / usage / free, and the
// number of processes in `count` when the snapshot lists them). A GPU that is
// nearly full is context, never a failure: serving engines fill it on purpose.
//
// Default table (driver < 530 and >= 530 differ only in spacing):
//   | NVIDIA-SMI 535.54.03    Driver Version: 535.54.03    CUDA Version: 12.2     |
//   |   0  NVIDIA GeForce RTX 3090  Off  | 00000000:01:00.0  On |                  N/A |
//   | 30%   45C    P2    70W / 350W |  22000MiB / 24576MiB |     95%      Default |
//   | Processes: ...
//   |    0   N/A  N/A      1234      C   python                          20000MiB |     (older: no GI/CI columns)
//   |  No running processes found                                                 |
// nvidia-smi -q:
//   Attached GPUs : 1 / GPU 00000000:01:00.0 / Product Name : NVIDIA GeForce RTX 3090
//   FB Memory Usage / Total : 24576 MiB / Reserved : 310 MiB / Used : 22000 MiB / Free : 2265 MiB
//   BAR1 Memory Usage / ... (other "... Memory Usage" blocks are not the frame buffer)
//   Process ID : 1234 ... Used GPU Memory : 20000 MiB
// nvidia-smi -q -x:
//   <gpu id="00000000:01:00.0"> <product_name>...</product_name> <fb_memory_usage> <total>24576 MiB</total>
//   <used>22000 MiB</used> <free>2265 MiB</free> </fb_memory_usage> ... <process_info> <used_memory>20000 MiB
// --query-gpu=index,name,memory.used,memory.total --format=csv[,noheader][,nounits]:
//   index, name, memory.used [MiB], memory.total [MiB]
//   0, NVIDIA A100-SXM4-80GB, 75000 MiB, 81920 MiB
//   (columns come from the header, or from the command line when the output has none; nounits values are MiB;
//   a shell loop's own clock before a row, "07:13:00 13118 MiB, 15360 MiB" from
//   `echo "$(date +%T) $(nvidia-smi --query-gpu=memory.used,memory.total ...)"`, is not a cell)
// --query-compute-apps=pid,process_name,used_memory --format=csv: a process list (count and total use).
//
// GPUs of -q / XML output are numbered in the order printed (nvidia-smi lists
// them by index).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/text.h"
#include "core/units.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"NVIDIA-SMI ", kContext},
    {"\\|\\s+[0-9]+\\s+\\S.*\\|\\s+[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\\.[0-9]", kRegex | kContext},  // table: GPU name row
    {"[0-9]+MiB\\s*/\\s*[0-9]+MiB", kRegex | kContext},                                                         // table: memory row
    {"^\\|\\s+[0-9]+\\s.*\\s[0-9]+MiB\\s*\\|\\s*$", kRegex | kContext},                                         // table: process row
    {"No running processes found", kContext},
    {"Attached GPUs", kContext},
    {"^GPU [0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:", kRegex | kContext},
    {"Product Name", kContext},
    {"Memory Usage", kContext},
    {"^[ \t]+(Total|Used|Free|Reserved)\\s+: [0-9]+ MiB", kRegex | kContext},
    {"Used GPU Memory", kContext},
    {"<gpu id=", kContext},
    {"<product_name>", kContext},
    {"fb_memory_usage>", kContext},
    {"<total>", kContext},
    {"<used>", kContext},
    {"<free>", kContext},
    {"<used_memory>", kContext},
    {"</nvidia_smi_log>", kContext},
    {"memory.used [MiB]", kContext},
    {"memory.total [MiB]", kContext},
    {"used_memory [MiB]", kContext},
    {"used_gpu_memory [MiB]", kContext},
    {"--query-gpu=", kContext},
    {"--query-compute-apps=", kContext},
    // The CSV header without units (the fields as the --query list named them), after the command.
    {"^[ \t]*(pid|index|name|timestamp|uuid|gpu_name|process_name)\\s*,", kRegex | kContext},
    // CSV rows (parsed only right after a header), with units ("9712 MiB, 24564 MiB") or nounits.
    {"^[ \t]*[0-9]+(\\.[0-9]+)?( ?(MiB|%))?\\s*,", kRegex | kContext},
    // Rows that open with a name, a timestamp or a bus id ("NVIDIA L40S, 36843 MiB, 49140 MiB",
    // "00000000:41:00.0, 1284471, python3, 23840 MiB").
    {",.*[0-9] MiB", kRegex | kContext},
};

constexpr size_t kMaxGpus = 64;
constexpr uint64_t kSnapshotGap = 80;  // lines without nvidia-smi output end a snapshot
constexpr uint64_t kCsvGap = 3;
constexpr size_t kMaxRow = 1024;  // longer lines are not nvidia-smi rows (and are never split)

// The processes a listing names on one GPU, by program and memory: rows of
// one program holding about the same each (within a third of one another),
// four or more of them, or three holding three quarters of what the listing
// names, are copies of one workload (a server's workers, a job's ranks), not
// strangers, as a process table's copies are (docs/diagnose.md); the fact
// carries their count in `sequences` and says so. Rows of the CSV listing
// carry their GPU (gpu_bus_id, gpu_uuid) where asked: copies count per GPU.
struct Holders {
  static constexpr size_t kMaxRows = 64;
  struct Row {
    std::string gpu;  // the CSV's gpu_bus_id or gpu_uuid; empty in a table already per GPU
    std::string name;
    uint64_t bytes = 0;
  };
  std::vector<Row> rows;
  void add(std::string_view gpu, std::string_view name, uint64_t bytes) {
    if (rows.size() < kMaxRows && !name.empty() && bytes > 0)
      rows.push_back({std::string(gpu.substr(0, 64)), std::string(name.substr(0, 64)), bytes});
  }
  // The copies of the most listed program on one GPU, when they are alike:
  // count and the smallest and largest of them.
  struct Copies {
    size_t count = 0;
    const Row* row = nullptr;
    uint64_t low = 0, high = 0;
  };
  std::optional<Copies> copies() const {
    Copies best;
    for (const Row& r : rows) {
      Copies c{0, &r, UINT64_MAX, 0};
      for (const Row& o : rows)
        if (o.gpu == r.gpu && o.name == r.name) ++c.count, c.low = std::min(c.low, o.bytes), c.high = std::max(c.high, o.bytes);
      if (c.count > best.count) best = c;
    }
    if (best.count < 3 || best.high * 3 > best.low * 4) return std::nullopt;
    uint64_t all = 0, theirs = 0;
    for (const Row& o : rows)
      if (o.gpu == best.row->gpu) all += o.bytes, theirs += o.name == best.row->name ? o.bytes : 0;
    if (best.count == 3 && theirs * 4 < all * 3) return std::nullopt;
    return best;
  }
  void describe(Fact& f) const {
    auto c = copies();
    if (!c) return;
    f.sequences = c->count;
    std::string_view base = c->row->name;
    if (size_t slash = base.rfind('/'); slash != std::string_view::npos) base = base.substr(slash + 1);
    f.detail += fmt::format(" ({} copies of {}, {} to {} each)", c->count, base, units::format_bytes(c->low), units::format_bytes(c->high));
  }
};

struct Gpu {
  std::optional<int> index;
  std::string name;
  std::optional<uint64_t> total, used, free;
  std::optional<uint64_t> procs;
  uint64_t proc_bytes = 0;
  Holders holders;
  bool have_base = false;
  Fact base;
};

std::optional<uint64_t> mib(std::string_view s) {
  // "22000MiB", "24576 MiB", "75000" (nounits CSV: MiB)
  s = text::trim(s);
  std::string_view rest;
  auto n = text::parse_u64(s, &rest);
  if (!n) return std::nullopt;
  rest = text::trim(rest);
  if (rest.empty() || rest == "MiB") return *n * units::MiB;
  return units::parse_log_size(s);
}

std::string_view xml_value(std::string_view s, std::string_view tag) {
  auto v = text::after(s, tag);
  if (!v) return {};
  return text::take_until(*v, "<");
}

class NvidiaSmi final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (!gpus_.empty() && line.number > last_line_ + kSnapshotGap) flush(out);
    if (s.size() > kMaxRow) return;
    if (text::contains(s, "NVIDIA-SMI ") || text::contains(s, "Attached GPUs")) {
      flush(out);
      touch(line);
      return;
    }
    if (text::contains(s, "--query-gpu=") || text::contains(s, "--query-compute-apps=")) return command_line(line, s, out);
    if (csv_header(line, s, out)) return;
    if (csv_row(line, s, out)) return;
    if (xml(line, s, out)) return;
    if (query(line, s, out)) return;
    table(line, s, out);
  }

  void finish(FactSink& out) override { flush(out); }

 private:
  std::vector<Gpu> gpus_;
  uint64_t last_line_ = 0;
  enum class Block { none, fb, other } block_ = Block::none;
  uint64_t table_name_line_ = 0;
  bool in_processes_ = false;
  // CSV state
  std::vector<std::string> columns_;
  bool csv_apps_ = false, csv_nounits_ = false;
  uint64_t csv_line_ = 0;
  std::string row_clock_;  // the clock a loop printed before the last CSV row
  int csv_rows_ = 0;
  // compute-apps list
  uint64_t apps_ = 0, apps_bytes_ = 0;
  Holders apps_holders_;
  Fact apps_base_;
  // A pid listed again in one compute-apps list: a loop over the query
  // ("for i in ...; do nvidia-smi --query-compute-apps=...; sleep 900; done")
  // sampling the same process, not another process. Its first and last
  // figures, its samples, and whether each rose.
  struct AppPid {
    std::string pid;
    uint64_t first = 0, last = 0;
    int samples = 0;
    bool rising = true;
  };
  std::vector<AppPid> app_pids_;
  Fact app_last_row_;
  bool have_apps_ = false;

  void touch(const Line& line) { last_line_ = line.number; }

  Gpu* current() { return gpus_.empty() ? nullptr : &gpus_.back(); }

  // A GPU of the current snapshot, numbered in printing order until its own
  // index is read.
  Gpu* new_gpu() {
    if (gpus_.size() >= kMaxGpus) return nullptr;
    gpus_.emplace_back();
    gpus_.back().index = static_cast<int>(gpus_.size() - 1);
    return &gpus_.back();
  }

  void set_base(Gpu& g, const Line& line) {
    if (g.have_base) return;
    g.base = make_fact(line, FactKind::gpu_state, Family::nvidia);
    g.have_base = true;
  }

  void flush(FactSink& out) {
    for (Gpu& g : gpus_) {
      if (!g.have_base || (!g.total && !g.used)) continue;
      Fact f = std::move(g.base);
      f.gpu = g.index;
      f.process = g.name.substr(0, 64);
      f.total = g.total;
      f.usage = g.used;
      f.free = g.free;
      if (!f.free && g.total && g.used && *g.total >= *g.used) f.free = *g.total - *g.used;
      f.count = g.procs;
      f.detail = "nvidia-smi";
      if (g.procs && *g.procs > 0) f.detail += ": " + std::to_string(*g.procs) + " processes using " + units::format_bytes(g.proc_bytes);
      g.holders.describe(f);
      // The processes a snapshot lists: others, once the failing process has died.
      if (g.procs && *g.procs > 0 && g.proc_bytes > 0) f.other_processes = g.proc_bytes;
      out.add(std::move(f));
    }
    gpus_.clear();
    if (have_apps_) {
      Fact f = std::move(apps_base_);
      f.count = apps_;
      f.detail = "nvidia-smi compute apps: " + std::to_string(apps_) + " processes using " + units::format_bytes(apps_bytes_);
      apps_holders_.describe(f);
      // One process sampled again and again, its figure rising at every
      // sample to half again its first: its growth, not other processes.
      const AppPid* grew = nullptr;
      for (const AppPid& a : app_pids_)
        if (a.samples >= 3 && a.rising && a.last * 2 >= a.first * 3) grew = &a;
      if (apps_bytes_ > 0 && !grew) f.other_processes = apps_bytes_;
      out.add(std::move(f));
      if (grew) {
        Fact g = std::move(app_last_row_);
        g.strength = 0.7f;
        g.usage = grew->last;
        g.count = static_cast<uint64_t>(grew->samples);
        g.detail = "growing used_memory of pid " + grew->pid + " from " + units::format_bytes(grew->first) + " to " +
                   units::format_bytes(grew->last) + " over " + std::to_string(grew->samples) + " samples";
        out.add(std::move(g));
      }
    }
    have_apps_ = false;
    apps_ = apps_bytes_ = 0;
    apps_holders_ = {};
    app_pids_.clear();
    block_ = Block::none;
    in_processes_ = false;
  }

  // ---- --query-gpu / --query-compute-apps ----
  void command_line(const Line& line, std::string_view s, FactSink& out) {
    flush(out);
    bool apps = text::contains(s, "--query-compute-apps=");
    std::string_view list = *text::after(s, apps ? "--query-compute-apps=" : "--query-gpu=");
    list = text::take_until(list, " \t'\"");
    columns_.clear();
    for (std::string_view c : text::split(list, ',')) columns_.emplace_back(text::trim(c));
    csv_apps_ = apps;
    csv_nounits_ = text::contains(s, "nounits");
    csv_rows_ = 0;
    csv_line_ = text::contains(s, "noheader") ? line.number : 0;  // rows follow at once only without a header
    touch(line);
  }

  bool csv_header(const Line& line, std::string_view s, FactSink& out) {
    bool gpu = text::contains(s, "memory.used [MiB]") || text::contains(s, "memory.total [MiB]");
    bool apps = text::contains(s, "used_memory [MiB]") || text::contains(s, "used_gpu_memory [MiB]");
    if (!gpu && !apps && !columns_.empty() && csv_line_ == 0 && last_line_ && line.number <= last_line_ + kCsvGap) {
      // The header as the command's field list named it ("pid, process_name, used_memory"): the rows follow it.
      auto cells = text::split(s, ',');
      if (cells.size() != columns_.size()) return false;
      for (size_t i = 0; i < cells.size(); ++i) {
        std::string_view c = text::trim(cells[i]);
        if (auto b = c.find(" ["); b != std::string_view::npos) c = c.substr(0, b);
        if (c != columns_[i]) return false;
      }
      csv_line_ = line.number;
      touch(line);
      return true;
    }
    if (!gpu && !apps) return false;
    flush(out);
    columns_.clear();
    for (std::string_view c : text::split(s, ',')) {
      c = text::trim(c);
      if (auto b = c.find(" ["); b != std::string_view::npos) c = c.substr(0, b);
      columns_.emplace_back(c);
    }
    csv_apps_ = apps && !gpu;
    csv_nounits_ = false;
    csv_rows_ = 0;
    csv_line_ = line.number;
    touch(line);
    return true;
  }

  // The cell without the times a loop printed before it ("07:13:00 13118
  // MiB", "2024-03-10 07:13:00 13118 MiB"): leading words of digits with ':'
  // or '-' in them, when a word follows.
  static std::string_view without_clock(std::string_view c) {
    for (int k = 0; k < 2; ++k) {
      size_t sp = c.find(' ');
      if (sp == std::string_view::npos) break;
      std::string_view w = c.substr(0, sp);
      if (w.find_first_not_of("0123456789:-/.T") != std::string_view::npos || w.find_first_of(":-") == std::string_view::npos) break;
      c = text::trim_left(c.substr(sp + 1));
    }
    return c;
  }

  bool csv_row(const Line& line, std::string_view s, FactSink& out) {
    if (columns_.empty() || csv_line_ == 0 || line.number > csv_line_ + kCsvGap) return false;
    auto cells = text::split(s, ',');
    if (cells.size() != columns_.size() || csv_rows_ >= static_cast<int>(kMaxGpus)) return false;
    csv_line_ = line.number;
    ++csv_rows_;
    touch(line);
    if (csv_apps_) {
      if (!have_apps_) {
        apps_base_ = make_fact(line, FactKind::gpu_state, Family::nvidia);
        have_apps_ = true;
      }
      std::string_view name, gpu, pid;
      uint64_t bytes = 0;
      for (size_t i = 0; i < cells.size(); ++i) {
        if (columns_[i] == "used_memory" || columns_[i] == "used_gpu_memory")
          if (auto v = mib(cells[i])) bytes = *v;
        if (columns_[i] == "process_name" || columns_[i] == "name") name = text::trim(cells[i]);
        if (columns_[i] == "gpu_bus_id" || columns_[i] == "gpu_uuid") gpu = text::trim(cells[i]);
        if (columns_[i] == "pid") pid = text::trim(cells[i]).substr(0, 16);
      }
      auto seen = std::find_if(app_pids_.begin(), app_pids_.end(), [&](const AppPid& a) { return !pid.empty() && a.pid == pid; });
      if (seen != app_pids_.end()) {
        // The same process again: its figure now replaces the last one.
        apps_bytes_ = apps_bytes_ - std::min(apps_bytes_, seen->last) + bytes;
        seen->rising = seen->rising && bytes > seen->last;
        seen->last = bytes;
        ++seen->samples;
        app_last_row_ = make_fact(line, FactKind::memory_usage, Family::nvidia);
        return true;
      }
      if (!pid.empty() && app_pids_.size() < kMaxGpus) app_pids_.push_back({std::string(pid), bytes, bytes, 1, true});
      ++apps_;
      apps_bytes_ += bytes;
      apps_holders_.add(gpu, name, bytes);
      return true;
    }
    // A row with a clock of its own, another than the last row's, is the
    // loop's next snapshot: the GPUs are numbered from 0 again.
    const std::string_view first = text::trim(cells[0]);
    const std::string_view first_cell = columns_[0] == "timestamp" ? first : without_clock(first);
    // A timestamp column is that clock too (--query-gpu=timestamp,... -l N):
    // each new time is the next sample of the same GPUs.
    const std::string_view clock = columns_[0] == "timestamp" ? first.substr(0, 32)
                                                             : text::trim(first.substr(0, first.size() - first_cell.size())).substr(0, 32);
    if (!clock.empty()) {
      if (clock != row_clock_ && !gpus_.empty()) {
        flush(out);
        csv_line_ = line.number;
        csv_rows_ = 1;
      }
      row_clock_ = std::string(clock);
    }
    Gpu* g = new_gpu();
    if (!g) return true;
    set_base(*g, line);
    for (size_t i = 0; i < cells.size(); ++i) {
      std::string_view c = i == 0 ? first_cell : text::trim(cells[i]);
      const std::string& col = columns_[i];
      if (col == "index") {
        if (auto n = text::parse_u64(c); n && *n < 1024) g->index = static_cast<int>(*n);
      } else if (col == "name" || col == "gpu_name") {
        g->name = std::string(c.substr(0, 64));
      } else if (col == "memory.used") {
        g->used = mib(c);
      } else if (col == "memory.total") {
        g->total = mib(c);
      } else if (col == "memory.free") {
        g->free = mib(c);
      }
    }
    return true;
  }

  // ---- nvidia-smi -q -x ----
  bool xml(const Line& line, std::string_view s, FactSink& out) {
    if (text::contains(s, "</nvidia_smi_log>")) {
      flush(out);
      return true;
    }
    bool any = false;
    if (text::contains(s, "<gpu id=")) {
      new_gpu();
      block_ = Block::none;
      any = true;
    }
    if (text::contains(s, "<product_name>")) {
      if (Gpu* g = current()) g->name = std::string(xml_value(s, "<product_name>").substr(0, 64));
      any = true;
    }
    // Only the frame buffer block counts (bar1 / cc_protected blocks follow it).
    if (text::contains(s, "<fb_memory_usage>")) block_ = Block::fb, any = true;
    if (Gpu* g = current(); g && block_ == Block::fb) {
      if (text::contains(s, "<total>")) g->total = mib(xml_value(s, "<total>")), set_base(*g, line), any = true;
      if (text::contains(s, "<used>")) g->used = mib(xml_value(s, "<used>")), set_base(*g, line), any = true;
      if (text::contains(s, "<free>")) g->free = mib(xml_value(s, "<free>")), any = true;
    }
    if (text::contains(s, "</fb_memory_usage>")) block_ = Block::other, any = true;
    if (text::contains(s, "<used_memory>")) {
      if (Gpu* g = current()) {
        g->procs = g->procs.value_or(0) + 1;
        g->proc_bytes += mib(xml_value(s, "<used_memory>")).value_or(0);
      }
      any = true;
    }
    if (any) touch(line);
    return any;
  }

  // ---- nvidia-smi -q ----
  bool query(const Line& line, std::string_view s, FactSink& out) {
    std::string_view t = text::trim(s);
    if (text::starts_with(t, "GPU ") && t.size() >= 16 && t[12] == ':' && text::starts_with(s, "GPU ")) {
      new_gpu();
      block_ = Block::none;
      touch(line);
      return true;
    }
    if (auto v = text::after(t, "Product Name")) {
      std::string_view value = text::trim_left(*v);
      if (!value.empty() && value[0] == ':') value.remove_prefix(1);
      if (Gpu* g = current()) g->name = std::string(text::trim(value).substr(0, 64));
      touch(line);
      return true;
    }
    if (text::ends_with(t, "Memory Usage") && t.size() < 48) {
      block_ = text::starts_with(t, "FB ") ? Block::fb : Block::other;
      touch(line);
      return true;
    }
    if (text::starts_with(t, "Used GPU Memory")) {
      if (Gpu* g = current()) {
        g->procs = g->procs.value_or(0) + 1;
        if (auto colon = t.find(':'); colon != std::string_view::npos) g->proc_bytes += mib(t.substr(colon + 1)).value_or(0);
      }
      touch(line);
      return true;
    }
    for (std::string_view key : {"Total", "Used", "Free", "Reserved"}) {
      if (!text::starts_with(t, key)) continue;
      size_t colon = t.find(':');
      if (colon == std::string_view::npos) return false;
      Gpu* g = current();
      if (block_ != Block::fb || !g) return true;
      auto v = mib(t.substr(colon + 1));
      if (key == "Total") g->total = v, set_base(*g, line);
      else if (key == "Used") g->used = v, set_base(*g, line);
      else if (key == "Free") g->free = v;
      touch(line);
      return true;
    }
    return false;
  }

  // ---- default table ----
  void table(const Line& line, std::string_view s, FactSink& out) {
    std::string_view t = text::trim(s);
    if (text::contains(s, "No running processes found")) {
      for (Gpu& g : gpus_) g.procs = 0;
      touch(line);
      return;
    }
    if (t.empty() || t[0] != '|') return;
    std::string_view inner = t.substr(1);
    // Memory row: "| 30%   45C  P2   70W / 350W |  22000MiB / 24576MiB |  95%  Default |"
    if (auto slash = inner.find("MiB /"); slash != std::string_view::npos) {
      size_t cell_start = inner.rfind('|', slash);
      std::string_view used_cell = inner.substr(cell_start == std::string_view::npos ? 0 : cell_start + 1, slash - (cell_start == std::string_view::npos ? 0 : cell_start + 1) + 3);
      std::string_view total_cell = inner.substr(slash + 5);
      total_cell = text::take_until(total_cell, "|");
      Gpu* g = (current() && table_name_line_ && line.number <= table_name_line_ + 3 && !current()->total) ? current() : nullptr;
      if (!g) {
        g = new_gpu();
        if (!g) return;
      }
      set_base(*g, line);
      g->used = mib(used_cell);
      g->total = mib(total_cell);
      touch(line);
      return;
    }
    std::vector<std::string_view> tok;
    for (std::string_view part : text::split(inner, ' ')) {
      if (!part.empty() && part != "|") tok.push_back(part);
      if (tok.size() > 40) break;
    }
    if (tok.size() < 3) return;
    // Name row: "|   0  NVIDIA GeForce RTX 3090  Off  | 00000000:01:00.0  On |   N/A |"
    size_t bar = inner.find('|');
    if (bar != std::string_view::npos && inner.substr(bar + 1).find(':') != std::string_view::npos &&
        text::contains(text::first_word(inner.substr(bar + 1)), ":") && !text::contains(inner.substr(0, bar), "MiB")) {
      auto idx = text::parse_u64(tok[0]);
      if (!idx) return;
      Gpu* g = new_gpu();
      if (!g) return;
      g->index = static_cast<int>(*idx);
      std::string_view name_part = text::trim(inner.substr(0, bar));
      name_part = text::trim_left(name_part.substr(tok[0].size()));
      // drop the trailing persistence-mode word (On/Off)
      if (text::ends_with(name_part, " On") || text::ends_with(name_part, " Off"))
        name_part = text::trim(name_part.substr(0, name_part.rfind(' ')));
      g->name = std::string(name_part.substr(0, 64));
      table_name_line_ = line.number;
      touch(line);
      return;
    }
    // Process row: "|    0   N/A  N/A      1234      C   python     20000MiB |"
    if (!text::ends_with(tok.back(), "MiB")) return;
    auto gi = text::parse_u64(tok[0]);
    if (!gi) return;
    size_t type_at = 0;
    for (size_t i = 2; i + 1 < tok.size(); ++i) {
      std::string_view x = tok[i];
      if (x == "C" || x == "G" || x == "C+G" || x == "M" || x == "M+C") {
        type_at = i;
        break;
      }
    }
    if (!type_at || !text::parse_u64(tok[type_at - 1])) return;
    for (Gpu& g : gpus_) {
      if (g.index && *g.index == static_cast<int>(*gi)) {
        g.procs = g.procs.value_or(0) + 1;
        g.proc_bytes += mib(tok.back()).value_or(0);
        if (type_at + 2 < tok.size()) g.holders.add({}, tok[type_at + 1], mib(tok.back()).value_or(0));
        break;
      }
    }
    touch(line);
  }
};

}  // namespace

const RecognizerEntry kNvidiaSmiEntry{
    "nvidia_smi", Family::nvidia, kPatterns, [] { return std::unique_ptr<Recognizer>(new NvidiaSmi); }};

}  // namespace aimem
