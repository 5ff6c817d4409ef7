// Starts and stops tests/probe/llama_server.mjs: an OpenAI-compatible server
// on the real llama.cpp engine (node-llama-cpp, CPU) serving a tiny GGUF that
// is written here (support/tiny_model.h). Optionally behind a command prefix
// such as {AIMEM_BINARY, "run", "--memory-limit", "400M", "--json", "--"}.
// tests/probe/README.md has the measured memory per context x concurrency.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/result.h"
#include "support/tiny_model.h"

namespace aimem::test {

// The model and settings measured in tests/probe/README.md: a request's
// memory is dominated by its attention scores (n_ctx x batch x heads floats
// without flash attention), so memory is steep in context while prompt
// processing stays cheap (2 layers of width 128).
TinyModelOptions llama_server_model();

struct LlamaServerOptions {
  TinyModelOptions model = llama_server_model();  // written to DIR/model.gguf
  std::string model_path;                         // set: serve this file instead
  int threads = 1;        // per request; more only spins on shared cores
  int batch = 2048;       // n_batch = n_ubatch (capped at each request's context)
  int max_context = 8192; // prompt + max_tokens above this: HTTP 400
  int parallel = 16;      // requests in flight; the rest wait (requests_deferred)
  std::vector<std::string> prefix;  // run the server behind this command
  int start_timeout_s = 60;
};

struct LlamaServer {
  pid_t pid = -1;         // the node process serving
  pid_t prefix_pid = -1;  // the prefix's process (e.g. aimem run), -1 without one
  std::string url;        // http://127.0.0.1:PORT
  int port = 0;
  std::string dir;        // model.gguf, stdout.txt (the prefix's output too), stderr.txt
  std::string model_path;
  int exit_status = -1;   // after stop(): the top process's status, 128+signal when killed
};

// Why the server cannot run here (no node on PATH, no node-llama-cpp under
// AIMEM_NODE_MODULES), or "" when it can.
std::string llama_server_unavailable();
inline bool llama_server_available() { return llama_server_unavailable().empty(); }

// Writes the model (unless options.model_path), starts the server on a free
// loopback port and waits (at most start_timeout_s) for its `listening on`
// line. An error carries the tail of its stderr.
Result<LlamaServer> start_llama_server(const LlamaServerOptions& options = {});

// SIGTERM to the top process (a prefix forwards it), a bounded wait, then
// SIGKILL to what is left; reaps it and sets exit_status. Idempotent.
int stop_llama_server(LlamaServer& server, int timeout_s = 10);

// Reaps the top process if it has ended (the server died, e.g. OOM-killed);
// true when it has, with exit_status set. Waits at most timeout_ms.
bool llama_server_exited(LlamaServer& server, int timeout_ms = 0);

// The node process's memory from /proc/PID/status (VmHWM, VmRSS) in bytes,
// 0 when it is gone; reset_peak_rss writes 5 to /proc/PID/clear_refs, which
// sets VmHWM back to the current RSS.
uint64_t peak_rss_bytes(pid_t pid);
uint64_t rss_bytes(pid_t pid);
bool reset_peak_rss(pid_t pid);

// RAII: stops the server when the scope ends and removes its directory
// (the model and the output files; read them before).
struct LlamaServerGuard {
  LlamaServer& server;
  ~LlamaServerGuard();
};

}  // namespace aimem::test
