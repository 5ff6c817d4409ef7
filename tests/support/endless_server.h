// Loopback servers that never finish, for the tests that bound aimem's time
// and memory against them (probe's --timeout, its memory with huge prompts).
//
//   silent:   listens and never accepts; the kernel still completes every
//             connect, so a client sees a server that accepts and never answers.
//   endless:  an OpenAI-compatible stand-in: GET /v1/models names one model,
//             POST /tokenize is 404, POST /v1/completions reads the whole body
//             (discarding it, counting its words) and then answers a request
//             without "stream":true with a body and usage (prompt_tokens =
//             the words it read), and a streamed one with token events every
//             20 ms until the client goes away. A connection per thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace aimem::test {

class EndlessServer {
 public:
  enum class Mode { silent, endless };
  explicit EndlessServer(Mode mode);
  ~EndlessServer();
  EndlessServer(const EndlessServer&) = delete;
  EndlessServer& operator=(const EndlessServer&) = delete;

  bool ok() const { return fd_ >= 0; }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  uint64_t body_bytes() const { return body_bytes_; }     // request body bytes read so far
  int completions() const { return completions_; }        // completion requests whose body was read

 private:
  void accept_loop();
  void serve(int fd);

  Mode mode_;
  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> body_bytes_{0};
  std::atomic<int> completions_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> workers_;
  std::vector<int> conns_;
};

}  // namespace aimem::test
