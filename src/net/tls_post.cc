// post_tls (see tls_post.h).
#include "net/tls_post.h"

#include <civetweb.h>
#include <fmt/format.h>

#include "net/civetweb_init.h"

namespace aimem::net {

Result<int> post_tls(const std::string& host, int port, const std::string& path, const std::string& content_type,
                     const std::string& body, int timeout_ms) {
  if (!(civetweb_init(true) & MG_FEATURES_TLS))
    return make_error("TLS is not available (CivetWeb could not load OpenSSL's libssl.so; install libssl-dev)");
  static const char kCaBundle[] = "/etc/ssl/certs/ca-certificates.crt";
  mg_client_options o{};
  o.host = host.c_str();
  o.port = port;
  o.server_cert = kCaBundle;  // CivetWeb verifies the peer against these CAs
  o.host_name = host.c_str(); // SNI
  char ebuf[256] = "";
  mg_connection* conn = mg_connect_client_secure(&o, ebuf, sizeof ebuf);
  if (!conn) return make_error(fmt::format("cannot connect over TLS: {}", ebuf[0] ? ebuf : "unknown error"));
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
