// See process.h.
#include "sources/process.h"

#include <fmt/format.h>

#include "sources/live.h"
#include "sources/readfile.h"

namespace aimem {
namespace {

std::string proc_file(const std::string& root, int pid, const char* name) {
  return fmt::format("{}/proc/{}/{}", root == "/" ? "" : root, pid, name);
}

}  // namespace

std::optional<char> process_state(const std::string& root, int pid) {
  auto stat = read_small_file(proc_file(root, pid, "stat"), 4096);
  if (!stat) return std::nullopt;
  size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return ' ';
  return (*stat)[close + 2];
}

std::optional<std::string> process_memory_cgroup(const std::string& root, int pid) {
  auto text = read_small_file(proc_file(root, pid, "cgroup"), 64 << 10);
  if (!text) return std::nullopt;
  return memory_cgroup_of(*text);
}

}  // namespace aimem
