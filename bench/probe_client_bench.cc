// The probe client's own cost (issue #5): short streamed requests through
// aimem::probe::Client::send against bench/probe_trivial_server (started here
// as a child process, so its CPU is not counted), over T threads.
//   probe_client_bench [--server PATH] [--requests N] [--threads 1,4]
//                      [--max-tokens N] [--api completions|chat] [--no-keep-alive]
// Each thread sends through its own Connection, as a sweep's workers do.
// Prints per thread count: client CPU per request (getrusage(RUSAGE_SELF)
// user+system over the run / requests), wall time, and at the end the peak
// RSS (VmHWM) of this process, each against its target: under 100 us of CPU
// per request, under 32 MiB RSS.
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "probe/client.h"

namespace {

constexpr double kCpuTargetUs = 100;
constexpr double kRssTargetMiB = 32;

double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double vm_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(std::strlen(field)));
  return -1;
}

// Starts the server; returns its pid and port (0 on failure).
std::pair<pid_t, int> start_server(const std::string& path, int tokens) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, 0};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    close(fds[0]);
    close(fds[1]);
    std::string t = std::to_string(tokens);
    execl(path.c_str(), path.c_str(), "--port", "0", "--tokens", t.c_str(), static_cast<char*>(nullptr));
    std::perror(path.c_str());
    _exit(127);
  }
  close(fds[1]);
  std::string line;
  char c;
  while (line.size() < 200 && read(fds[0], &c, 1) == 1 && c != '\n') line += c;
  close(fds[0]);
  int port = 0;
  if (std::sscanf(line.c_str(), "listening on 127.0.0.1:%d", &port) != 1) port = 0;
  return {pid, port};
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find(',', i);
    out.push_back(std::stoi(s.substr(i, j - i)));
    if (j == std::string::npos) break;
    i = j + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string self = argv[0];
  std::string server = self.substr(0, self.rfind('/') + 1) + "probe_trivial_server";
  int requests = 10000, max_tokens = 4;
  std::vector<int> threads = {1, 4};
  aimem::probe::Api api = aimem::probe::Api::completions;
  bool keep_alive = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--no-keep-alive") {
      keep_alive = false;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "probe_client_bench: %s needs a value\n", a.c_str());
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--server") server = v;
    else if (a == "--requests") requests = std::max(1, std::stoi(v));
    else if (a == "--threads") threads = parse_list(v);
    else if (a == "--max-tokens") max_tokens = std::max(1, std::stoi(v));
    else if (a == "--api") api = v == "chat" ? aimem::probe::Api::chat : aimem::probe::Api::completions;
    else {
      std::fprintf(stderr, "usage: probe_client_bench [--server PATH] [--requests N] [--threads 1,4] [--max-tokens N] "
                           "[--api completions|chat] [--no-keep-alive]\n");
      return 2;
    }
  }

  auto [pid, port] = start_server(server, max_tokens);
  if (port == 0) {
    std::fprintf(stderr, "probe_client_bench: %s did not start (expected 'listening on 127.0.0.1:PORT')\n", server.c_str());
    if (pid > 0) kill(pid, SIGTERM), waitpid(pid, nullptr, 0);
    return 1;
  }
  auto endpoint = aimem::probe::parse_endpoint(fmt::format("http://127.0.0.1:{}", port), false);
  aimem::probe::ClientOptions options;
  options.keep_alive = keep_alive;
  aimem::probe::Client client(*endpoint, options);
  // Prompts as a probe makes them (16 tokens through /tokenize), made before
  // the timed part: the figure is the cost of a request, not of sizing it.
  aimem::probe::PromptMaker maker(client, "");
  std::vector<aimem::probe::PreparedRequest> prompts;
  for (int i = 0; i < 64; ++i) {
    aimem::probe::RequestSpec spec;
    spec.api = api;
    spec.max_tokens = max_tokens;
    spec.prompt = *maker.make(16, i);
    prompts.push_back(client.prepare(spec));
  }
  if (!client.first_model()) {
    std::fprintf(stderr, "probe_client_bench: no model from the server\n");
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
    return 1;
  }

  int status = 0;
  for (int t : threads) {
    std::atomic<int> next{0}, ok{0}, tokens{0};
    std::atomic<bool> reported{false};
    double c0 = cpu_s();
    auto w0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int k = 0; k < t; ++k)
      pool.emplace_back([&] {
        aimem::probe::Connection connection(client);
        for (int i; (i = next++) < requests;) {
          auto r = connection.send(prompts[i % prompts.size()]);
          if (r.ok) {
            ++ok;
            tokens += r.completion_tokens;
          } else if (!reported.exchange(true)) {
            std::fprintf(stderr, "first failure: %s: %s\n", r.error_kind.c_str(), r.error.c_str());
          }
        }
      });
    for (auto& th : pool) th.join();
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
    double us = (cpu_s() - c0) * 1e6 / requests;
    std::printf("%s, threads %d: %d requests (%d ok, %d tokens) in %.2f s (%.0f req/s); client CPU %.1f us/request "
                "(target < %.0f: %.2fx of it)\n",
                keep_alive ? "kept-alive connections" : "a connection per request", t, requests, ok.load(), tokens.load(), wall, requests / wall, us, kCpuTargetUs, us / kCpuTargetUs);
    if (ok != requests) status = 1;
  }
  double hwm = vm_kib("VmHWM:") / 1024;
  std::printf("peak RSS (VmHWM) %.1f MiB (target < %.0f MiB: %.2fx of it); prompts sized by %s with %d calls for 64\n", hwm,
              kRssTargetMiB, hwm / kRssTargetMiB, maker.how().c_str(), maker.calls());
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
  return status;
}
