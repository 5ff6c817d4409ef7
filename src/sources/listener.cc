#include "sources/listener.h"

#include <algorithm>
#include <cstdlib>
#include <dirent.h>
#include <unistd.h>

#include <fmt/format.h>

#include "sources/readfile.h"

namespace aimem::probe {

namespace {

bool all_digits(const char* s) {
  if (!*s) return false;
  for (; *s; ++s)
    if (*s < '0' || *s > '9') return false;
  return true;
}

}  // namespace

// A line: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode"
//          "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 123456 ..."
// local_address is hex IP:hex port; st 0A is LISTEN.
std::vector<uint64_t> listening_inodes(std::string_view table, int port) {
  std::vector<uint64_t> out;
  size_t pos = 0;
  bool header = true;
  while (pos < table.size()) {
    size_t end = table.find('\n', pos);
    if (end == std::string_view::npos) end = table.size();
    std::string line(table.substr(pos, end - pos));
    pos = end + 1;
    if (header) {
      header = false;
      continue;
    }
    std::vector<std::string> f;
    size_t i = 0;
    while (i < line.size() && f.size() < 10) {
      while (i < line.size() && line[i] == ' ') ++i;
      size_t j = i;
      while (j < line.size() && line[j] != ' ') ++j;
      if (j > i) f.emplace_back(line.substr(i, j - i));
      i = j;
    }
    if (f.size() < 10 || f[3] != "0A") continue;
    size_t colon = f[1].rfind(':');
    if (colon == std::string::npos) continue;
    char* endp = nullptr;
    long p = std::strtol(f[1].c_str() + colon + 1, &endp, 16);
    if (*endp != '\0' || p != port) continue;
    uint64_t inode = std::strtoull(f[9].c_str(), &endp, 10);
    if (*endp == '\0' && inode != 0) out.push_back(inode);
  }
  return out;
}

std::optional<int> find_listener_pid(const std::string& root, int port) {
  std::vector<uint64_t> inodes;
  for (const char* t : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    auto text = read_small_file(root + t, 16 << 20);
    if (!text) continue;
    auto got = listening_inodes(*text, port);
    inodes.insert(inodes.end(), got.begin(), got.end());
  }
  if (inodes.empty()) return std::nullopt;
  std::vector<std::string> targets;
  for (uint64_t ino : inodes) targets.push_back(fmt::format("socket:[{}]", ino));

  std::string proc = root + "/proc";
  DIR* d = opendir(proc.c_str());
  if (!d) return std::nullopt;
  std::optional<int> best;
  size_t seen = 0;
  while (dirent* e = readdir(d)) {
    if (!all_digits(e->d_name)) continue;
    if (++seen > 20000) break;
    int pid = std::atoi(e->d_name);
    if (best && pid >= *best) continue;
    std::string fd_dir = fmt::format("{}/{}/fd", proc, e->d_name);
    DIR* fd = opendir(fd_dir.c_str());
    if (!fd) continue;
    size_t n = 0;
    char buf[128];
    while (dirent* f = readdir(fd)) {
      if (f->d_name[0] == '.') continue;
      if (++n > 4096) break;
      std::string link = fd_dir + "/" + f->d_name;
      ssize_t len = readlink(link.c_str(), buf, sizeof buf - 1);
      if (len <= 0) continue;
      buf[len] = '\0';
      if (std::find(targets.begin(), targets.end(), buf) != targets.end()) {
        best = pid;
        break;
      }
    }
    closedir(fd);
  }
  closedir(d);
  return best;
}

}  // namespace aimem::probe
