// net::post_tls against a real TLS peer on loopback (Python's http.server
// wrapped in its ssl module, certificates made by the openssl tool): a server
// whose certificate our test CA signed gets the POST; one with a self-signed
// certificate is refused. Skipped where openssl or python3 is missing.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "net/tls_post.h"
#include "support/prometheus_harness.h"
#include "support/test_support.h"

extern char** environ;

namespace aimem::net {
namespace {

bool sh(const std::string& cmd) { return std::system(cmd.c_str()) == 0; }

// Answers a POST of {"a":1} with 201 (anything else 400), until destroyed.
const char kPeer[] = R"(import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        self.send_response(201 if body == b'{"a":1}' else 400)
        self.send_header('Content-Length', '0')
        self.end_headers()
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(('127.0.0.1', int(sys.argv[1])), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(sys.argv[2], sys.argv[3])
s.socket = c.wrap_socket(s.socket, server_side=True)
s.serve_forever()
)";

// The peer on 127.0.0.1:port until destroyed.
class TlsPeer {
 public:
  TlsPeer(const std::string& cert, const std::string& key, int port) {
    std::vector<std::string> args = {"python3", "-c", kPeer, std::to_string(port), cert, key};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawnp(&pid_, "python3", nullptr, nullptr, argv.data(), environ) != 0) pid_ = -1;
    // Ready once it accepts a TCP connection (bounded: 5 s).
    for (int i = 0; i < 500 && pid_ > 0; ++i) {
      int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      a.sin_port = htons(static_cast<uint16_t>(port));
      bool up = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
      ::close(fd);
      if (up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~TlsPeer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool ok() const { return pid_ > 0; }

 private:
  pid_t pid_ = -1;
};

TEST(NetTls, PostsToATrustedServerAndRefusesAnUntrustedOne) {
  if (!sh("command -v openssl >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1"))
    GTEST_SKIP() << "openssl or python3 not installed";
  std::string d = test::temp_dir("tls");
  const std::string q = " >/dev/null 2>&1";
  ASSERT_TRUE(sh("cd " + d + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=aimem-test-ca" + q));
  ASSERT_TRUE(sh("cd " + d + " && openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1" + q));
  ASSERT_TRUE(sh("cd " + d + " && openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 1" + q));
  ASSERT_TRUE(sh("cd " + d + " && openssl req -x509 -newkey rsa:2048 -nodes -keyout self.key -out self.pem -days 1 -subj /CN=127.0.0.1" + q));
  const std::string ca = d + "/ca.pem";
  {
    int port = test::free_loopback_port();
    TlsPeer peer(d + "/srv.pem", d + "/srv.key", port);
    ASSERT_TRUE(peer.ok());
    auto r = post_tls("127.0.0.1", port, "/hook", "application/json", "{\"a\":1}", 3000, ca.c_str());
    ASSERT_TRUE(r) << r.error().message;
    EXPECT_EQ(*r, 201);  // the body arrived whole
  }
  {
    int port = test::free_loopback_port();
    TlsPeer peer(d + "/self.pem", d + "/self.key", port);
    ASSERT_TRUE(peer.ok());
    auto r = post_tls("127.0.0.1", port, "/hook", "application/json", "{}", 3000, ca.c_str());
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("cannot connect over TLS"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace aimem::net
