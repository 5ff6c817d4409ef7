// post_tls (see tls_post.h).
#include "net/tls_post.h"

#include <civetweb.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>

#include "net/civetweb_init.h"

namespace aimem::net {

Result<int> post_tls(const std::string& host, int port, const std::string& path, const std::string& content_type,
                     const std::string& body, int timeout_ms, const char* ca_file) {
  // mg_init_library answers 0 here even when OpenSSL loaded (CivetWeb 1.15):
  // whether TLS works shows at the connect; this only catches a build without it.
  civetweb_init(true);
  if (!mg_check_feature(MG_FEATURES_TLS))
    return make_error("TLS is not available (this CivetWeb was built without it)");
  mg_client_options o{};
  o.host = host.c_str();
  o.port = port;
  o.server_cert = ca_file;  // CivetWeb verifies the peer's chain against these CAs
  o.host_name = host.c_str(); // SNI
  // OpenSSL writes with write(): a peer that closes early would raise SIGPIPE
  // and end aimem. It is blocked in this thread for the exchange, and one
  // raised meanwhile is taken off the pending set before unblocking.
  sigset_t pipe_only, old_mask;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &old_mask);
  struct Restore {
    sigset_t* set;
    sigset_t* old;
    ~Restore() {
      timespec zero{};
      while (sigtimedwait(set, nullptr, &zero) == SIGPIPE) {
      }
      pthread_sigmask(SIG_SETMASK, old, nullptr);
    }
  } restore{&pipe_only, &old_mask};
  char ebuf[256] = "";
  mg_connection* conn = mg_connect_client_secure(&o, ebuf, sizeof ebuf);
  // CivetWeb says "SSL connection error" for a refused connect, a failed
  // handshake and an untrusted certificate alike.
  if (!conn)
    return make_error(fmt::format("cannot connect over TLS: {} (refused, no TLS there, or a certificate not signed by a CA in {}; "
                                  "OpenSSL's libssl.so must be installed)",
                                  ebuf[0] ? ebuf : "unknown error", ca_file));
  mg_printf(conn, "POST %s HTTP/1.1\r\nHost: %s:%d\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
            path.c_str(), host.c_str(), port, content_type.c_str(), body.size());
  int wrote = body.empty() ? 0 : mg_write(conn, body.data(), body.size());
  if (wrote < 0 || static_cast<size_t>(wrote) != body.size()) {
    mg_close_connection(conn);
    return make_error("connection lost while sending");
  }
  ebuf[0] = '\0';
  if (mg_get_response(conn, ebuf, sizeof ebuf, timeout_ms) < 0) {
    mg_close_connection(conn);
    return make_error(fmt::format("no response within {} ms{}", timeout_ms, ebuf[0] ? fmt::format(" ({})", ebuf) : ""));
  }
  int status = mg_get_response_info(conn)->status_code;
  mg_close_connection(conn);
  return status;
}

}  // namespace aimem::net
