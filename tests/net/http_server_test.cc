// net::HttpServer checked from cpp-httplib's client and from raw
// sockets: routes, methods, sizes, port conflicts.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "net/http_client.h"
#include "net/http_server.h"
#include "support/test_support.h"

namespace aimem::net {
namespace {

TEST(NetServer, ServesRoutesOnlyWithGetAndHead) {
  std::atomic<int> calls{0};
  HttpServer srv;
  srv.route("/a", [&] {
    ++calls;
    return Reply{200, "text/plain; charset=utf-8", "alpha\n"};
  });
  srv.route("/teapot", [] { return Reply{418, "text/plain", "short and stout\n"}; });
  ASSERT_EQ(test::error_of(srv.start("127.0.0.1", 0)), "");
  ASSERT_GT(srv.port(), 0);
  httplib::Client cli("127.0.0.1", srv.port());
  cli.set_read_timeout(std::chrono::seconds(2));
  auto a = cli.Get("/a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->status, 200);
  EXPECT_EQ(a->body, "alpha\n");
  EXPECT_EQ(a->get_header_value("Content-Type"), "text/plain; charset=utf-8");
  auto h = cli.Head("/a");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->status, 200);
  EXPECT_TRUE(h->body.empty());
  auto t = cli.Get("/teapot");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->status, 418);
  EXPECT_EQ(t->body, "short and stout\n");
  auto post = cli.Post("/a", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_EQ(cli.Get("/a/b")->status, 404);  // exact paths only
  EXPECT_EQ(cli.Get("/")->status, 404);
  EXPECT_EQ(cli.Get("/../../etc/passwd")->status, 404);
  EXPECT_EQ(calls.load(), 2);  // GET and HEAD; never for POST or other paths
}

TEST(NetServer, OversizedRequestHeadIsRefused) {
  HttpServer srv;
  srv.route("/a", [] { return Reply{200, "text/plain", "a"}; });
  ASSERT_EQ(test::error_of(srv.start("127.0.0.1", 0)), "");
  Options o;
  o.read_timeout_s = 5;
  Connection c("127.0.0.1", srv.port(), o);
  Request r{"GET", "/a", {{"X-Big", std::string(8000, 'b')}}, ""};
  Outcome out = c.exchange(r, {});
  // Either an error status (431) or a close: never a 200.
  if (out.got_head) EXPECT_GE(out.head.status, 400);
  else EXPECT_EQ(out.failure, Failure::reset) << out.detail;
  // And it still serves afterwards.
  auto ok = fetch("127.0.0.1", srv.port(), {"GET", "/a", {}, ""}, o, 100);
  ASSERT_TRUE(ok.outcome.ok()) << ok.outcome.detail;
  EXPECT_EQ(ok.body, "a");
}

TEST(NetServer, PortInUseAndStop) {
  struct sigaction pipe_before {}, pipe_after {};
  sigaction(SIGPIPE, nullptr, &pipe_before);
  HttpServer srv;
  srv.route("/a", [] { return Reply{}; });
  std::string err;
  ASSERT_EQ(test::error_of(srv.start("127.0.0.1", 0)), "");
  // The server leaves the process's SIGPIPE disposition alone (CivetWeb, which
  // it replaced, set SIG_IGN process-wide).
  sigaction(SIGPIPE, nullptr, &pipe_after);
  EXPECT_EQ(pipe_after.sa_handler, pipe_before.sa_handler);
  HttpServer again;
  err = test::error_of(again.start("127.0.0.1", srv.port()));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find(std::to_string(srv.port())), std::string::npos) << err;
  err = test::error_of(again.start("127.0.0.1", 70000));
  EXPECT_NE(err, "");
  EXPECT_NE(err.find("bad port"), std::string::npos) << err;
  int port = srv.port();
  srv.stop();
  auto after = fetch("127.0.0.1", port, {"GET", "/a", {}, ""}, Options{}, 100);
  EXPECT_EQ(after.outcome.failure, Failure::connect);
  HttpServer v6;
  v6.route("/a", [] { return Reply{200, "text/plain", "six"}; });
  if (v6.start("::1", 0)) {  // a host without IPv6 loopback skips this part
    auto six = fetch("::1", v6.port(), {"GET", "/a", {}, ""}, Options{}, 100);
    ASSERT_TRUE(six.outcome.ok()) << six.outcome.detail;
    EXPECT_EQ(six.body, "six");
  }
}

}  // namespace
}  // namespace aimem::net
