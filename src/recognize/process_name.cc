#include "recognize/process_name.h"

#include <algorithm>
#include <array>

namespace aimem::process_name {
namespace {

constexpr size_t kMaxName = 64;

std::string_view first_word(std::string_view s, std::string_view* rest) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) {
    *rest = {};
    return {};
  }
  size_t e = s.find_first_of(" \t", b);
  *rest = e == std::string_view::npos ? std::string_view{} : s.substr(e);
  return s.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
}

std::string_view base(std::string_view w) {
  size_t slash = w.rfind('/');
  return slash == std::string_view::npos ? w : w.substr(slash + 1);
}

// Interpreters whose processes are told apart by the script they run.
bool interpreter(std::string_view w) {
  constexpr std::array<std::string_view, 9> kNames = {"python", "node", "ruby", "perl", "bash", "sh", "php", "Rscript", "julia"};
  for (std::string_view n : kNames)
    if (w == n || (w.size() > n.size() && w.substr(0, n.size()) == n && (w[n.size()] == '.' || (w[n.size()] >= '0' && w[n.size()] <= '9'))))
      return true;
  return false;
}

}  // namespace

std::string program(std::string_view command) {
  std::string_view rest;
  std::string_view w = first_word(command, &rest);
  if (w.empty() || w.front() == '[') return {};
  if (w.substr(0, 5) == "ray::" || w.substr(0, 4) == "ray_") {
    // "ray::Actor.method", "ray::dask:('sort_index-..', 982)" (a task and
    // its arguments), Ray before 1.0's "ray_Accumulator:alloc()".
    w = w.substr(w[3] == ':' ? 5 : 4);
    w = w.substr(0, w.find_first_of(".:("));
    return std::string(w.substr(0, kMaxName));
  }
  w = base(w);
  if (!w.empty() && w.back() == ':') w.remove_suffix(1);
  std::string name(w.substr(0, kMaxName));
  if (w == "java") {
    // A JVM runs one program per main class or jar: Cassandra's, Kafka's and
    // Spark's JVMs on one host are three programs, not three copies of java.
    for (int k = 0; k < 24; ++k) {
      std::string_view a = first_word(rest, &rest);
      if (a.empty()) break;
      if (a == "-cp" || a == "-classpath" || a == "--class-path" || a == "-p" || a == "--module-path") {
        first_word(rest, &rest);
        continue;
      }
      if (a == "-jar" || a == "-m" || a == "--module") a = first_word(rest, &rest);
      else if (a.front() == '-') continue;
      if (!a.empty()) name += " " + std::string(base(a).substr(0, kMaxName));
      break;
    }
  } else if (interpreter(w)) {
    // The first argument that is not an option: the script (or "-m module").
    for (int k = 0; k < 8; ++k) {
      std::string_view a = first_word(rest, &rest);
      if (a.empty()) break;
      if (a == "-m") {
        a = first_word(rest, &rest);
        if (!a.empty()) name += " -m " + std::string(a.substr(0, kMaxName));
        break;
      }
      // Code given inline ("julia -e 'using Ray; ...'", "python -c ..."):
      // no script names the program; the interpreter does.
      if (a == "-e" || a == "-c" || a == "--eval" || a == "-E") break;
      if (a.front() == '-') continue;
      name += " " + std::string(base(a).substr(0, kMaxName));
      break;
    }
  }
  return name.substr(0, 2 * kMaxName);
}

void TableBuilder::start(const Line& line, Family family) {
  groups_.clear();
  pids_.clear();
  broken_ = false;
  at_ = make_fact(line, FactKind::memory_usage, family);
}

void TableBuilder::add(std::string_view command, uint64_t bytes, std::optional<int64_t> pid) {
  if (!at_) return;
  if (pid) {
    if (std::find(pids_.begin(), pids_.end(), *pid) != pids_.end()) broken_ = true;
    if (pids_.size() < kMaxPids) pids_.push_back(*pid);
  }
  std::string key = program(command);
  if (key.empty() || bytes == 0) return;
  auto it = std::find_if(groups_.begin(), groups_.end(), [&](const Group& g) { return g.name == key; });
  if (it == groups_.end()) {
    if (groups_.size() >= kMaxPrograms) return;
    it = groups_.insert(groups_.end(), Group{key, 0, 0});
  }
  it->bytes += bytes;
  it->rows += 1;
}

void TableBuilder::flush(FactSink& out) {
  if (at_ && !broken_ && !groups_.empty()) {
    uint64_t total = 0;
    for (const Group& g : groups_) total += g.bytes;
    std::stable_sort(groups_.begin(), groups_.end(), [](const Group& a, const Group& b) { return a.bytes > b.bytes; });
    for (size_t k = 0; k < groups_.size() && k < kGroups; ++k) {
      Fact f = *at_;
      f.detail = std::string(kTableDetail);
      f.process = groups_[k].name;
      f.usage = groups_[k].bytes;
      f.sequences = groups_[k].rows;
      f.total = total;
      f.strength = 0.5f;
      out.add(std::move(f));
    }
  }
  at_.reset();
  groups_.clear();
  pids_.clear();
  broken_ = false;
}

}  // namespace aimem::process_name
