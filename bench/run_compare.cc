// Times commands against each other in one run: each is run N times,
// alternating, with its output sent to /dev/null; prints the median wall time
// and the peak RSS of each (from wait4), and the ratio of the first to the
// second.   run_compare N -- CMD1 ARGS -- CMD2 ARGS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "run_util.h"

namespace {

using bench::Sample;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: run_compare N -- CMD1... -- CMD2...\n");
    return 2;
  }
  int n = std::atoi(argv[1]);
  std::vector<std::vector<char*>> cmds;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--") == 0) {
      cmds.emplace_back();
      continue;
    }
    if (cmds.empty()) return 2;
    cmds.back().push_back(argv[i]);
  }
  if (cmds.size() != 2) return 2;
  for (auto& c : cmds) c.push_back(nullptr);
  std::vector<double> wall[2];
  long rss[2] = {0, 0};
  for (int k = 0; k < n; ++k) {
    for (int c = 0; c < 2; ++c) {
      Sample s = bench::run_once(cmds[c].data());
      wall[c].push_back(s.wall_s);
      rss[c] = std::max(rss[c], s.maxrss_kib);
      if (s.status != 0 && !(c == 1 && s.status == 1)) std::fprintf(stderr, "warning: %s exited %d\n", cmds[c][0], s.status);
    }
  }
  double m0 = median(wall[0]), m1 = median(wall[1]);
  std::printf("%-8s median wall %.3f s  peak RSS %.1f MiB\n", "aimem", m0, rss[0] / 1024.0);
  std::printf("%-8s median wall %.3f s  peak RSS %.1f MiB\n", "grep", m1, rss[1] / 1024.0);
  std::printf("ratio aimem/grep: %.2fx (target <= 1.00x); aimem peak RSS %.1f MiB (target < 64 MiB)\n", m0 / m1, rss[0] / 1024.0);
  return 0;
}
