// Kept-alive connections of the probe client (probe::Connection) against real
// loopback servers: a cpp-httplib server that notes each request's client
// port (one port = one TCP connection), and a raw socket server that counts
// the connections it accepts and can close one at any point of an exchange.
// What is pinned: requests share a connection; keep-alive off opens one per
// request; a server's close (announced or not) is followed by a new
// connection; a failed request is reported and never sent twice.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "probe/client.h"
#include "support/test_support.h"

namespace aimem::probe {
namespace {

using namespace std::chrono_literals;

const std::string kStream =
    "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"text\":\"b\",\"finish_reason\":\"length\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}}\n\n"
    "data: [DONE]\n\n";

ClientOptions quick(bool keep_alive = true) {
  ClientOptions o;
  o.connect_timeout_s = 2;
  o.request_timeout_s = 10;
  o.idle_timeout_s = 5;
  o.keep_alive = keep_alive;
  return o;
}

RequestSpec spec() {
  RequestSpec s;
  s.model = "m";
  s.prompt = "hello";
  s.max_tokens = 2;
  return s;
}

Endpoint loopback(int port) { return *parse_endpoint("http://127.0.0.1:" + std::to_string(port), false); }

// --- a cpp-httplib server ------------------------------------------------------

// What each request gets, by its number (0-based) across all connections.
enum class Answer { stream, status500, cut };

struct HttplibServer {
  std::mutex mu;
  std::vector<int> ports;            // each request's client port, in order
  std::vector<std::string> connection_headers;
  std::function<Answer(int)> script = [](int) { return Answer::stream; };
  bool close_each = false;           // "Connection: close" on every response
  httplib::Server server;
  std::thread thread;
  int port = 0;

  explicit HttplibServer(size_t keep_alive_max = 1000) {
    server.set_keep_alive_max_count(keep_alive_max);
    server.Post("/v1/completions", [this](const httplib::Request& q, httplib::Response& r) {
      int n;
      {
        std::lock_guard<std::mutex> lock(mu);
        n = static_cast<int>(ports.size());
        ports.push_back(q.remote_port);
        connection_headers.push_back(q.get_header_value("Connection"));
      }
      if (close_each) r.set_header("Connection", "close");
      switch (script(n)) {
        case Answer::status500:
          r.status = 500;
          r.set_content(R"({"error":{"message":"out of memory"}})", "application/json");
          return;
        case Answer::cut:
          r.set_chunked_content_provider("text/event-stream", [](size_t off, httplib::DataSink& sink) {
            if (off > 0) return false;  // half an event, then the connection drops
            return sink.write(kStream.data(), 20);
          });
          return;
        case Answer::stream:
          r.set_content(kStream, "text/event-stream");
          return;
      }
    });
    port = server.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { server.listen_after_bind(); });
    for (int i = 0; i < 2000 && !server.is_running(); ++i) std::this_thread::sleep_for(1ms);
  }
  ~HttplibServer() {
    server.stop();
    thread.join();
  }
  size_t distinct_ports() {
    std::lock_guard<std::mutex> lock(mu);
    return std::set<int>(ports.begin(), ports.end()).size();
  }
  size_t requests() {
    std::lock_guard<std::mutex> lock(mu);
    return ports.size();
  }
};

TEST(ProbeConnection, KeptAliveRequestsShareOneConnection) {
  HttplibServer srv;
  Client client(loopback(srv.port), quick());
  Connection conn(client);
  PreparedRequest p = client.prepare(spec());
  for (int i = 0; i < 20; ++i) {
    auto r = conn.send(p);
    ASSERT_TRUE(r.ok) << i << ": " << r.error_kind << ": " << r.error;
    EXPECT_EQ(r.completion_tokens, 2);
    EXPECT_EQ(r.itl_s.size(), 1u);
  }
  EXPECT_EQ(srv.requests(), 20u);
  EXPECT_EQ(srv.distinct_ports(), 1u);
  EXPECT_EQ(conn.connects(), 1);
  for (const auto& h : srv.connection_headers) EXPECT_NE(h, "close");
}

TEST(ProbeConnection, WithoutKeepAliveEachRequestConnectsAndAsksForClose) {
  HttplibServer srv;
  Client client(loopback(srv.port), quick(/*keep_alive=*/false));
  Connection conn(client);
  for (int i = 0; i < 10; ++i) {
    auto r = conn.send(spec());
    ASSERT_TRUE(r.ok) << i << ": " << r.error;
  }
  EXPECT_EQ(srv.distinct_ports(), 10u);
  EXPECT_EQ(conn.connects(), 10);
  for (const auto& h : srv.connection_headers) EXPECT_EQ(h, "close");
  // Client::send is a one-off whatever the option says.
  HttplibServer other;
  Client kept(loopback(other.port), quick());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(kept.send(spec()).ok);
  EXPECT_EQ(other.distinct_ports(), 3u);
}

TEST(ProbeConnection, AServerThatClosesAfterEachResponseOrAfterFiveIsFollowed) {
  HttplibServer closing;
  closing.close_each = true;
  Client a(loopback(closing.port), quick());
  Connection ca(a);
  for (int i = 0; i < 8; ++i) {
    auto r = ca.send(spec());
    ASSERT_TRUE(r.ok) << i << ": " << r.error_kind << ": " << r.error;
  }
  EXPECT_EQ(closing.distinct_ports(), 8u);
  EXPECT_EQ(ca.connects(), 8);

  HttplibServer five(/*keep_alive_max=*/5);  // cpp-httplib's default, llama-server's too
  Client b(loopback(five.port), quick());
  Connection cb(b);
  for (int i = 0; i < 12; ++i) {
    auto r = cb.send(spec());
    ASSERT_TRUE(r.ok) << i << ": " << r.error_kind << ": " << r.error;
  }
  EXPECT_EQ(five.requests(), 12u);
  EXPECT_EQ(five.distinct_ports(), 3u);
  EXPECT_EQ(cb.connects(), 3);
}

TEST(ProbeConnection, FailuresOnAKeptConnectionAreReportedOnceAndTheNextRequestConnectsAfresh) {
  HttplibServer srv;
  srv.script = [](int n) { return n == 2 ? Answer::status500 : n == 4 ? Answer::cut : Answer::stream; };
  Client client(loopback(srv.port), quick());
  Connection conn(client);
  std::vector<RequestResult> r;
  for (int i = 0; i < 6; ++i) r.push_back(conn.send(spec()));
  EXPECT_TRUE(r[0].ok && r[1].ok) << r[0].error << r[1].error;
  EXPECT_EQ(r[2].error_kind, "http") << r[2].error;
  EXPECT_EQ(r[2].http_status, 500);
  EXPECT_TRUE(r[3].ok) << r[3].error;
  EXPECT_EQ(r[4].error_kind, "cut_stream") << r[4].error;
  EXPECT_TRUE(r[5].ok) << r[5].error;
  // Six requests sent, six received: neither failure was sent again.
  EXPECT_EQ(srv.requests(), 6u);
  // Requests 0-2 on the first connection, 3-4 on a second, 5 on a third.
  EXPECT_EQ(conn.connects(), 3);
  ASSERT_EQ(srv.ports.size(), 6u);
  EXPECT_EQ(srv.ports[0], srv.ports[2]);
  EXPECT_NE(srv.ports[2], srv.ports[3]);
  EXPECT_EQ(srv.ports[3], srv.ports[4]);
  EXPECT_NE(srv.ports[4], srv.ports[5]);
}

// --- a raw socket server ----------------------------------------------------------

// Per request it reads, what the server does: answer and keep the
// connection, answer and close it (no "Connection: close" said), or close
// without answering. Every wait is bounded (poll with a timeout).
enum class Raw { answer, answer_then_close, close_unanswered };

class RawServer {
 public:
  explicit RawServer(std::vector<Raw> script) : script_(std::move(script)) {
    fd_ = test::bound_loopback_socket(&port);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~RawServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  int port = 0;

  int accepted() {
    std::lock_guard<std::mutex> lock(mu_);
    return accepted_;
  }
  int requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }
  // Waits (at most 5 s) until the server has closed `n` connections.
  bool wait_closed(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, 5s, [&] { return closed_ >= n; });
  }

 private:
  bool readable(int fd, int ms) {
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
  }

  // One request (headers, then Content-Length bytes of body); false when the
  // peer closed or went silent.
  bool read_request(int fd, std::string& buf) {
    auto need = [&]() -> size_t {
      size_t end = buf.find("\r\n\r\n");
      if (end == std::string::npos) return std::string::npos;
      size_t cl = buf.find("Content-Length: ");
      size_t body = cl == std::string::npos || cl > end ? 0 : std::stoul(buf.substr(cl + 16));
      return end + 4 + body;
    };
    for (int i = 0; i < 1000; ++i) {
      if (size_t n = need(); n != std::string::npos && buf.size() >= n) {
        buf.erase(0, n);
        return true;
      }
      if (!readable(fd, 2000)) return false;
      char tmp[4096];
      ssize_t got = ::recv(fd, tmp, sizeof tmp, 0);
      if (got <= 0) return false;
      buf.append(tmp, static_cast<size_t>(got));
    }
    return false;
  }

  void serve() {
    size_t step = 0;
    while (!stop_ && step < script_.size()) {
      if (!readable(fd_, 50)) continue;
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) continue;
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++accepted_;
      }
      std::string buf;
      while (!stop_ && step < script_.size() && read_request(c, buf)) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          ++requests_;
        }
        Raw what = script_[step++];
        if (what == Raw::close_unanswered) break;
        std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
                            std::to_string(kStream.size()) + "\r\n\r\n" + kStream;
        ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
        if (what == Raw::answer_then_close) break;
      }
      ::close(c);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ++closed_;
      }
      cv_.notify_all();
    }
  }

  std::vector<Raw> script_;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int accepted_ = 0, requests_ = 0, closed_ = 0;
};

TEST(ProbeConnection, AConnectionTheServerDroppedUnannouncedIsReplacedBeforeTheNextRequest) {
  RawServer srv({Raw::answer_then_close, Raw::answer, Raw::answer});
  Client client(loopback(srv.port), quick());
  Connection conn(client);
  auto first = conn.send(spec());
  ASSERT_TRUE(first.ok) << first.error_kind << ": " << first.error;
  ASSERT_TRUE(srv.wait_closed(1));
  // The kept socket has been closed by the server (as an idle timeout does):
  // the next request goes on a new connection and succeeds.
  for (int i = 0; i < 2; ++i) {
    auto r = conn.send(spec());
    ASSERT_TRUE(r.ok) << i << ": " << r.error_kind << ": " << r.error;
  }
  EXPECT_EQ(srv.accepted(), 2);
  EXPECT_EQ(srv.requests(), 3);
  EXPECT_EQ(conn.connects(), 2);
}

TEST(ProbeConnection, ARequestTheServerClosedOnIsAResetAndIsNotSentAgain) {
  RawServer srv({Raw::answer, Raw::close_unanswered, Raw::answer});
  Client client(loopback(srv.port), quick());
  Connection conn(client);
  auto first = conn.send(spec());
  ASSERT_TRUE(first.ok) << first.error_kind << ": " << first.error;
  auto lost = conn.send(spec());
  EXPECT_FALSE(lost.ok);
  EXPECT_EQ(lost.error_kind, "reset") << lost.error;
  EXPECT_EQ(lost.http_status, 0);
  // Read once by the server on the one connection: no second connection
  // carried it again.
  EXPECT_EQ(srv.requests(), 2);
  EXPECT_EQ(srv.accepted(), 1);
  auto after = conn.send(spec());
  EXPECT_TRUE(after.ok) << after.error_kind << ": " << after.error;
  EXPECT_EQ(srv.accepted(), 2);
  EXPECT_EQ(srv.requests(), 3);
}

TEST(ProbeConnection, AModelLookupThatCannotConnectFailsEverySendOfThePreparedRequest) {
  int port;
  {
    RawServer gone({});  // bound, then closed: nothing listens there afterwards
    port = gone.port;
  }
  Client client(loopback(port), quick());
  RequestSpec s = spec();
  s.model = "";
  PreparedRequest p = client.prepare(s);
  EXPECT_EQ(p.error_kind, "connect");
  Connection conn(client);
  for (int i = 0; i < 2; ++i) {
    auto r = conn.send(p);
    EXPECT_EQ(r.error_kind, "connect") << r.error;
    EXPECT_NE(r.error.find("/v1/models"), std::string::npos) << r.error;
  }
  EXPECT_EQ(conn.connects(), 0);
}

}  // namespace
}  // namespace aimem::probe
