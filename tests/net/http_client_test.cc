// net::Connection against two peers over loopback: cpp-httplib's server (an
// independent HTTP implementation) for well-formed exchanges, and a scripted
// raw socket for what a broken server does (silence, early close, garbage).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "net/http_client.h"
#include "support/test_support.h"

namespace aimem::net {
namespace {

// Accepts one connection, reads the request head, writes `reply`, then holds
// the connection open for hold_ms (a silent server) before closing it.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::string reply, int hold_ms = 0) {
    fd_ = test::bound_loopback_socket(&port_);
    ::listen(fd_, 1);
    thread_ = std::thread([this, reply = std::move(reply), hold_ms] {
      int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string got;
      char buf[4096];
      while (got.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        got.append(buf, size_t(n));
      }
      request_ = got;
      ::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
      if (hold_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(hold_ms));
      ::close(c);
    });
  }
  ~ScriptedServer() {
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }
  std::string request_;

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

Options quick() {
  Options o;
  o.connect_timeout_s = 2;
  o.read_timeout_s = 2;
  o.write_timeout_s = 2;
  return o;
}

struct Collected {
  Outcome outcome;
  std::string body;
};

Collected run(Connection& c, Request r) {
  Collected out;
  out.outcome = c.exchange(r, {nullptr, [&](std::string_view p) {
                                 out.body.append(p);
                                 return true;
                               }});
  return out;
}

class PeerServer {
 public:
  PeerServer() {
    srv.Get("/len", [](const httplib::Request&, httplib::Response& res) { res.set_content("hello", "text/plain"); });
    srv.Get("/chunked", [](const httplib::Request&, httplib::Response& res) {
      res.set_chunked_content_provider("text/event-stream", [](size_t offset, httplib::DataSink& sink) {
        if (offset < 30) {
          std::string piece = "data: " + std::to_string(offset) + "\n\n";
          sink.write(piece.data(), piece.size());
        } else {
          sink.done();
        }
        return true;
      });
    });
    srv.Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.get_header_value("Content-Type") + "|" + req.body, "text/plain");
    });
    srv.Get("/port", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(std::to_string(req.remote_port), "text/plain");
    });
    port = srv.bind_to_any_port("127.0.0.1");
    thread = std::thread([this] { srv.listen_after_bind(); });
    for (int i = 0; i < 2000 && !srv.is_running(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~PeerServer() {
    srv.stop();
    thread.join();
  }
  httplib::Server srv;
  int port = 0;
  std::thread thread;
};

TEST(NetClient, ContentLengthChunkedPostAndStatus) {
  PeerServer peer;
  Connection c("127.0.0.1", peer.port, quick());
  auto a = run(c, {"GET", "/len", {}, ""});
  ASSERT_TRUE(a.outcome.ok()) << a.outcome.detail;
  EXPECT_EQ(a.outcome.head.status, 200);
  EXPECT_EQ(a.body, "hello");
  EXPECT_EQ(a.outcome.head.field("content-type"), "text/plain");

  auto b = run(c, {"GET", "/chunked", {}, ""});
  ASSERT_TRUE(b.outcome.ok()) << b.outcome.detail;
  EXPECT_EQ(b.outcome.head.field("Transfer-Encoding"), "chunked");
  std::string want;
  for (size_t off = 0; off < 30; off += want.size() - off) want += "data: " + std::to_string(off) + "\n\n";
  EXPECT_EQ(b.body, want);

  auto p = run(c, {"POST", "/echo", {{"Content-Type", "application/json"}}, "{\"x\":1}"});
  ASSERT_TRUE(p.outcome.ok()) << p.outcome.detail;
  EXPECT_EQ(p.body, "application/json|{\"x\":1}");

  auto n = run(c, {"GET", "/nothing", {}, ""});
  ASSERT_TRUE(n.outcome.ok()) << n.outcome.detail;
  EXPECT_EQ(n.outcome.head.status, 404);
}

TEST(NetClient, KeepsTheConnectionUnlessAskedToClose) {
  PeerServer peer;
  Connection c("127.0.0.1", peer.port, quick());
  auto first = run(c, {"GET", "/port", {}, ""});
  auto second = run(c, {"GET", "/port", {}, ""});
  ASSERT_TRUE(first.outcome.ok() && second.outcome.ok());
  EXPECT_EQ(first.body, second.body);  // same client port: the same connection
  EXPECT_TRUE(c.is_open());
  auto closing = run(c, {"GET", "/port", {{"Connection", "close"}}, ""});
  ASSERT_TRUE(closing.outcome.ok());
  EXPECT_FALSE(c.is_open());
  auto fresh = run(c, {"GET", "/port", {}, ""});
  ASSERT_TRUE(fresh.outcome.ok()) << fresh.outcome.detail;
  EXPECT_NE(fresh.body, first.body);
}

TEST(NetClient, RefusedConnectIsConnect) {
  int port = 0;
  int fd = test::bound_loopback_socket(&port);
  ASSERT_GE(fd, 0);
  ::close(fd);  // bound once, nobody listens now
  Connection c("127.0.0.1", port, quick());
  auto r = run(c, {"GET", "/", {}, ""});
  EXPECT_EQ(r.outcome.failure, Failure::connect);
  EXPECT_FALSE(r.outcome.got_head);
  EXPECT_NE(r.outcome.detail.find("refused"), std::string::npos) << r.outcome.detail;
}

TEST(NetClient, SilenceIsTimeout) {
  ScriptedServer s("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", 1500);
  Options o = quick();
  o.read_timeout_s = 0.2;
  Connection c("127.0.0.1", s.port(), o);
  auto r = run(c, {"GET", "/x", {}, ""});
  EXPECT_EQ(r.outcome.failure, Failure::timeout) << r.outcome.detail;
  EXPECT_TRUE(r.outcome.got_head);
  EXPECT_EQ(r.body, "abc");
  EXPECT_FALSE(c.is_open());
  EXPECT_NE(s.request_.find("GET /x HTTP/1.1\r\nHost: 127.0.0.1:"), std::string::npos) << s.request_;
}

TEST(NetClient, EarlyCloseIsReset) {
  {
    ScriptedServer s("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::reset);
    EXPECT_NE(r.outcome.detail.find("7 bytes"), std::string::npos) << r.outcome.detail;
  }
  {
    ScriptedServer s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::reset);
    EXPECT_EQ(r.body, "ab");
  }
  {
    ScriptedServer s("");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::reset);
    EXPECT_FALSE(r.outcome.got_head);
  }
}

TEST(NetClient, BodyUntilCloseAndReceiverStop) {
  {
    ScriptedServer s("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nall of it");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    ASSERT_TRUE(r.outcome.ok()) << r.outcome.detail;
    EXPECT_EQ(r.body, "all of it");
    EXPECT_FALSE(c.is_open());
  }
  {
    ScriptedServer s("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = c.exchange({"GET", "/", {}, ""}, {[](const Head& h) { return h.status != 200; }, nullptr});
    EXPECT_EQ(r.failure, Failure::stopped);
    EXPECT_TRUE(r.got_head);
    EXPECT_FALSE(c.is_open());
  }
}

TEST(NetClient, MalformedResponsesAreBadResponse) {
  {
    ScriptedServer s("SSH-2.0-OpenSSH\r\n\r\n");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::bad_response);
    EXPECT_NE(r.outcome.detail.find("SSH-2.0"), std::string::npos) << r.outcome.detail;
  }
  {
    // A head that never ends stops at the bound instead of growing.
    ScriptedServer s("HTTP/1.1 200 OK\r\nX: " + std::string(70 * 1024, 'a'), 500);
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::bad_response);
    EXPECT_NE(r.outcome.detail.find("longer than"), std::string::npos) << r.outcome.detail;
  }
  {
    ScriptedServer s("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::bad_response);
  }
  {
    ScriptedServer s("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n");
    Connection c("127.0.0.1", s.port(), quick());
    auto r = run(c, {"GET", "/", {}, ""});
    EXPECT_EQ(r.outcome.failure, Failure::bad_response);
  }
}

TEST(NetClient, FetchBoundsTheBody) {
  PeerServer peer;
  auto ok = fetch("127.0.0.1", peer.port, {"GET", "/len", {}, ""}, quick(), 5);
  EXPECT_TRUE(ok.outcome.ok());
  EXPECT_EQ(ok.body, "hello");
  auto big = fetch("127.0.0.1", peer.port, {"GET", "/len", {}, ""}, quick(), 4);
  EXPECT_EQ(big.outcome.failure, Failure::stopped);
  EXPECT_NE(big.outcome.detail.find("larger than 4 bytes"), std::string::npos) << big.outcome.detail;
}

}  // namespace
}  // namespace aimem::net
