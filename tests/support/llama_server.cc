#include "support/llama_server.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/test_support.h"

extern char** environ;

namespace aimem::test {
namespace {

using Clock = std::chrono::steady_clock;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tail(const std::string& text, size_t n = 2000) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

bool executable(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// node's path from PATH ("" when none): the server is a node script.
std::string find_node() {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && executable(dir + "/node")) return dir + "/node";
  return "";
}

// Reaps pid if it ended within timeout_ms; its status as the shell shows it.
bool reap(pid_t pid, int timeout_ms, int& status_out) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    int st = 0;
    const pid_t r = ::waitpid(pid, &st, WNOHANG);
    if (r == pid) {
      status_out = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      return true;
    }
    if (r < 0) {  // not our child any more (reaped elsewhere)
      status_out = -1;
      return true;
    }
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

bool alive(pid_t pid) { return pid > 0 && ::kill(pid, 0) == 0; }

uint64_t status_kib(pid_t pid, const char* key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const size_t n = std::strlen(key);
  while (std::getline(in, line))
    if (line.compare(0, n, key) == 0 && line.size() > n && line[n] == ':') return std::strtoull(line.c_str() + n + 1, nullptr, 10);
  return 0;
}

}  // namespace

TinyModelOptions llama_server_model() {
  TinyModelOptions o;
  o.n_layer = 2;
  o.n_embd = 128;
  o.n_head = 8;
  o.n_head_kv = 8;
  o.n_ff = 256;
  o.n_vocab = 300;
  o.n_ctx_train = 16384;  // above every context the tests ask for (no warning)
  o.type = "f32";
  return o;
}

std::string llama_server_unavailable() {
  if (find_node().empty()) return "no node on PATH (the test server is tests/probe/llama_server.mjs)";
  const std::string pkg = std::string(AIMEM_NODE_MODULES) + "/node-llama-cpp/package.json";
  if (::access(pkg.c_str(), R_OK) != 0)
    return "node-llama-cpp is not installed under " + std::string(AIMEM_NODE_MODULES) +
           " (npm ci --prefix build-node node-llama-cpp@3.22.1)";
  return "";
}

Result<LlamaServer> start_llama_server(const LlamaServerOptions& options) {
  if (auto why = llama_server_unavailable(); !why.empty()) return make_error(why);
  LlamaServer s;
  s.dir = temp_dir("llama-server");
  // a failed start leaves nothing behind: its stderr is in the message
  auto fail = [&s](const std::string& message) {
    std::error_code ec;
    std::filesystem::remove_all(s.dir, ec);
    return make_error(message);
  };
  s.model_path = options.model_path;
  if (s.model_path.empty()) {
    s.model_path = s.dir + "/model.gguf";
    if (auto w = write_tiny_model(options.model, s.model_path); !w) return fail("writing the model: " + w.error().message);
  }
  const std::string out_path = s.dir + "/stdout.txt", err_path = s.dir + "/stderr.txt", pid_path = s.dir + "/server.pid";

  std::vector<std::string> argv = options.prefix;
  argv.insert(argv.end(), {find_node(), source_dir() + "/tests/probe/llama_server.mjs", "--model", s.model_path,
                           "--host", "127.0.0.1", "--port", "0", "--threads", std::to_string(options.threads),
                           "--batch", std::to_string(options.batch), "--max-context", std::to_string(options.max_context),
                           "--parallel", std::to_string(options.parallel), "--modules", AIMEM_NODE_MODULES,
                           "--pid-file", pid_path});
  // glibc raises its mmap threshold to the size of each freed block (up to
  // 32 MiB), after which a disposed context's buffers stay in the heap; a
  // fixed threshold returns them to the kernel, so RSS follows the load.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "GLIBC_TUNABLES=", 15) != 0) env.emplace_back(*e);
  env.emplace_back("GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072");
  std::vector<char*> cargv, cenv;
  for (auto& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  for (auto& e : env) cenv.push_back(e.data());
  cenv.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);  // its own group: a last-resort kill reaches all
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t top = -1;
  const int rc = ::posix_spawnp(&top, cargv[0], &fa, &attr, cargv.data(), cenv.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) return fail("cannot start " + argv[0] + ": " + std::strerror(rc));
  if (options.prefix.empty()) s.pid = top;
  else s.prefix_pid = top;

  const auto deadline = Clock::now() + std::chrono::seconds(options.start_timeout_s);
  const std::string marker = "listening on http://127.0.0.1:";
  for (;;) {
    const std::string out = slurp(out_path);
    if (const size_t at = out.find(marker); at != std::string::npos && out.find('\n', at) != std::string::npos) {
      s.port = std::atoi(out.c_str() + at + marker.size());
      s.url = "http://127.0.0.1:" + std::to_string(s.port);
      break;
    }
    int status = -1;
    if (reap(top, 0, status)) {
      s.exit_status = status;
      return fail("the server exited with status " + std::to_string(status) + " before listening: " + tail(slurp(err_path)));
    }
    if (Clock::now() >= deadline) {
      if (const int node = std::atoi(slurp(pid_path).c_str()); node > 0) ::kill(node, SIGKILL);
      ::kill(-top, SIGKILL);
      reap(top, 5000, status);
      return fail("the server did not listen within " + std::to_string(options.start_timeout_s) + " s: " + tail(slurp(err_path)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // the pid file is written before the listening line
  const int node_pid = std::atoi(slurp(pid_path).c_str());
  if (node_pid <= 0) {
    stop_llama_server(s);
    return fail("the server listened but wrote no pid to " + pid_path);
  }
  s.pid = node_pid;
  return s;
}

bool llama_server_exited(LlamaServer& server, int timeout_ms) {
  const pid_t top = server.prefix_pid > 0 ? server.prefix_pid : server.pid;
  if (top <= 0) return true;
  int status = -1;
  if (!reap(top, timeout_ms, status)) return false;
  server.exit_status = status;
  // the prefix ended before its child: do not leave the server orphaned
  if (server.prefix_pid > 0 && alive(server.pid)) ::kill(server.pid, SIGKILL);
  server.prefix_pid = -1;
  server.pid = -1;
  return true;
}

int stop_llama_server(LlamaServer& server, int timeout_s) {
  const pid_t top = server.prefix_pid > 0 ? server.prefix_pid : server.pid;
  if (top <= 0) return server.exit_status;
  if (llama_server_exited(server, 0)) return server.exit_status;
  ::kill(top, SIGTERM);  // aimem run forwards it to the server
  if (!llama_server_exited(server, timeout_s * 1000)) {
    ::kill(-top, SIGKILL);
    if (server.pid > 0) ::kill(server.pid, SIGKILL);
    llama_server_exited(server, 5000);
  }
  return server.exit_status;
}

LlamaServerGuard::~LlamaServerGuard() {
  stop_llama_server(server);
  std::error_code ec;
  if (!server.dir.empty()) std::filesystem::remove_all(server.dir, ec);
}

uint64_t peak_rss_bytes(pid_t pid) { return status_kib(pid, "VmHWM") * 1024; }
uint64_t rss_bytes(pid_t pid) { return status_kib(pid, "VmRSS") * 1024; }

bool reset_peak_rss(pid_t pid) {
  std::ofstream out("/proc/" + std::to_string(pid) + "/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace aimem::test
