// Takes N samples of everything (host, all cgroups, all processes, GPUs) with
// the watch sampler and prints the CPU time (user+sys, all threads, from
// CLOCK_PROCESS_CPUTIME_ID) of each: the aimem side of
// sampler_vs_node_exporter.sh. The first sample fills the per-process cache
// and is reported apart; the median is of the steady state that aimem watch
// runs in. As aimem watch, it tells runs from the BPF task iterator when it
// loads (root); AIMEM_TASK_ITERATOR=0 reads proc/PID/schedstat instead. The
// source used goes to stderr.
//   sample_once [N] [ROOT]        N samples back to back, then the summary
//   sample_once --serve [ROOT]    "ready FIRST_US PROCESSES", then one sample per line
//                                 read from stdin, answered with its CPU us:
//                                 the bench interleaves samples with
//                                 node_exporter scrapes, so both see the same
//                                 load on a shared machine
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sources/sampler.h"

namespace {
double cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}
}  // namespace

int main(int argc, char** argv) {
  bool serve = argc > 1 && std::strcmp(argv[1], "--serve") == 0;
  int n = !serve && argc > 1 ? std::atoi(argv[1]) : 100;
  if (n < 1 || n > 100000) {
    std::fprintf(stderr, "usage: sample_once [N (1..100000)] [ROOT] | sample_once --serve [ROOT]\n");
    return 2;
  }
  aimem::watch::SamplerOptions o;
  if (argc > 2) o.root = argv[2];
  const char* ti = std::getenv("AIMEM_TASK_ITERATOR");
  o.task_iterator = !(ti && std::strcmp(ti, "0") == 0);
  double t0 = cpu_us();
  aimem::watch::Sampler s(o);
  aimem::watch::Sample first = s.sample();
  double first_us = cpu_us() - t0;
  std::fprintf(stderr, "runs told by: %s%s%s\n", s.run_source(), s.task_iterator_problem().empty() ? "" : " (",
               s.task_iterator_problem().empty() ? "" : (s.task_iterator_problem() + ")").c_str());
  if (serve) {
    std::printf("ready %.0f %zu\n", first_us, first.processes.size());
    std::fflush(stdout);
    char line[64];
    while (std::fgets(line, sizeof line, stdin)) {
      double a = cpu_us();
      aimem::watch::Sample x = s.sample();
      double us = cpu_us() - a;
      std::printf("%.1f %zu\n", us, x.processes.size());
      std::fflush(stdout);
    }
    return 0;
  }
  std::vector<double> us;
  size_t procs = 0, cgroups = 0, gpus = 0;
  for (int i = 0; i < n; ++i) {
    double a = cpu_us();
    aimem::watch::Sample x = s.sample();
    us.push_back(cpu_us() - a);
    procs = x.processes.size(), cgroups = x.cgroups.size(), gpus = x.gpus.size();
  }
  std::sort(us.begin(), us.end());
  double sum = 0;
  for (double v : us) sum += v;
  std::printf("aimem_samples %d\naimem_processes %zu\naimem_cgroups %zu\naimem_gpus %zu\n", n, procs, cgroups, gpus);
  std::printf("aimem_first_sample_us %.0f\naimem_median_us %.1f\naimem_mean_us %.1f\naimem_p90_us %.1f\n", first_us,
              us[us.size() / 2], sum / n, us[us.size() * 9 / 10]);
  for (auto& w : s.warnings()) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return 0;
}
