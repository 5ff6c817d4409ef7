#include "support/endless_server.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "support/test_support.h"

namespace aimem::test {

EndlessServer::EndlessServer(Mode mode) : mode_(mode) {
  fd_ = bound_loopback_socket(&port_);
  if (fd_ < 0) return;
  if (::listen(fd_, 1024) != 0) {
    ::close(fd_);
    fd_ = -1;
    return;
  }
  if (mode_ == Mode::endless) acceptor_ = std::thread([this] { accept_loop(); });
}

EndlessServer::~EndlessServer() {
  stop_ = true;
  if (fd_ >= 0) ::shutdown(fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int c : conns_) ::shutdown(c, SHUT_RDWR);
  }
  for (auto& t : workers_) t.join();
  for (int c : conns_) ::close(c);
  if (fd_ >= 0) ::close(fd_);
}

void EndlessServer::accept_loop() {
  while (!stop_) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    std::lock_guard<std::mutex> lock(mu_);
    conns_.push_back(c);
    workers_.emplace_back([this, c] { serve(c); });
  }
}

namespace {

bool send_all(int fd, const std::string& s) {
  size_t at = 0;
  while (at < s.size()) {
    ssize_t n = ::send(fd, s.data() + at, s.size() - at, MSG_NOSIGNAL);
    if (n <= 0) return false;
    at += static_cast<size_t>(n);
  }
  return true;
}

std::string reply(int status, const std::string& type, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + (status == 200 ? " OK" : " Not Found") + "\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

void EndlessServer::serve(int fd) {
  std::string buf;
  char tmp[65536];
  auto more = [&]() {
    ssize_t n = ::recv(fd, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<size_t>(n));
    return true;
  };
  while (!stop_) {
    size_t end;
    while ((end = buf.find("\r\n\r\n")) == std::string::npos)
      if (buf.size() > 65536 || !more()) return;
    std::string head = buf.substr(0, end);
    buf.erase(0, end + 4);
    uint64_t length = 0;
    for (const char* key : {"Content-Length:", "content-length:"})
      if (size_t at = head.find(key); at != std::string::npos) length = std::strtoull(head.c_str() + at + 15, nullptr, 10);
    // The body, read and dropped: its words counted, its last bytes kept for "stream".
    uint64_t words = 0;
    std::string tail;
    while (length > 0) {
      if (buf.empty() && !more()) return;
      size_t take = static_cast<size_t>(std::min<uint64_t>(length, buf.size()));
      for (size_t i = 0; i < take; ++i) words += buf[i] == ' ';
      tail.append(buf, 0, take);
      if (tail.size() > 512) tail.erase(0, tail.size() - 512);
      buf.erase(0, take);
      length -= take;
      body_bytes_ += take;
    }
    if (head.rfind("GET /v1/models", 0) == 0) {
      if (!send_all(fd, reply(200, "application/json", R"({"object":"list","data":[{"id":"endless","object":"model"}]})"))) return;
      continue;
    }
    if (head.rfind("POST /v1/completions", 0) != 0 && head.rfind("POST /v1/chat/completions", 0) != 0) {
      if (!send_all(fd, reply(404, "application/json", R"({"error":{"message":"not found"}})"))) return;
      continue;
    }
    ++completions_;
    if (tail.find("\"stream\":true") == std::string::npos) {
      std::string body = R"({"choices":[{"index":0,"text":" x","finish_reason":"length"}],"usage":{"prompt_tokens":)" +
                         std::to_string(words + 1) + R"(,"completion_tokens":1}})";
      if (!send_all(fd, reply(200, "application/json", body))) return;
      continue;
    }
    if (!send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")) return;
    const std::string ev = "data: {\"choices\":[{\"index\":0,\"text\":\" x\",\"finish_reason\":null}]}\n\n";
    while (!stop_ && send_all(fd, ev)) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return;
  }
}

}  // namespace aimem::test
