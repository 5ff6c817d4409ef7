// The probe's target URL (see client.h). A probe loads a server until it
// breaks, so the target must be on this host unless the user says otherwise:
// the loopback check looks at the address as written and resolves nothing
// (a name that resolves to 127.0.0.1 through DNS is not trusted to keep doing so).
// https is refused: the probes are for local servers, and a local server's
// certificate is usually self-signed, which would need its own options.
#include <arpa/inet.h>
#include <fmt/format.h>

#include "core/text.h"
#include "probe/client.h"

namespace aimem::probe {

std::string Endpoint::url() const { return fmt::format("{}://{}:{}{}", scheme, host, port, base_path); }

namespace {

bool is_loopback(const std::string& host) {
  if (text::iequals(host, "localhost")) return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  std::string bare = host.size() >= 2 && host.front() == '[' ? host.substr(1, host.size() - 2) : host;
  in6_addr v6{};
  if (inet_pton(AF_INET6, bare.c_str(), &v6) == 1) {
    if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) return v6.s6_addr[12] == 127;  // ::ffff:127.x.y.z
  }
  return false;
}

}  // namespace

Result<Endpoint> parse_endpoint(const std::string& url, bool allow_remote) {
  auto bad = [&](const std::string& what) {
    return make_error(fmt::format("probe URL '{}': {}", url, what));
  };
  std::string_view rest = text::trim(url);
  Endpoint e;
  if (size_t sep = rest.find("://"); sep != std::string_view::npos) {
    std::string scheme = text::lower(rest.substr(0, sep));
    if (scheme == "https")
      return bad("https is not supported: probes are meant for a server on this host; use its plain http port "
                 "(e.g. http://127.0.0.1:8000)");
    if (scheme != "http") return bad(fmt::format("unknown scheme '{}' (expected http://HOST:PORT)", scheme));
    rest.remove_prefix(sep + 3);
  }
  if (rest.find_first_of("?#") != std::string_view::npos) return bad("a query or fragment has no place in a server URL");
  size_t slash = rest.find('/');
  std::string_view hostport = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  // A URL copied from a client's settings often ends in /v1: requests add it.
  if (text::ends_with(path, "/v1")) path.remove_suffix(3);
  e.base_path = std::string(path);

  std::string_view port_text;
  if (!hostport.empty() && hostport.front() == '[') {
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad("unterminated [IPv6] address");
    e.host = std::string(hostport.substr(0, close + 1));
    std::string_view after = hostport.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("expected ':PORT' after the [IPv6] address");
      port_text = after.substr(1);
      if (port_text.empty()) return bad("empty port");
    }
  } else {
    size_t colon = hostport.find(':');
    if (colon != std::string_view::npos && hostport.find(':', colon + 1) != std::string_view::npos)
      return bad("an IPv6 address needs brackets: http://[::1]:PORT");
    e.host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) {
      port_text = hostport.substr(colon + 1);
      if (port_text.empty()) return bad("empty port");
    }
  }
  if (e.host.empty() || e.host == "[]") return bad("no host (expected http://HOST:PORT)");
  if (!port_text.empty()) {
    std::string_view tail;
    auto p = text::parse_u64(port_text, &tail);
    if (!p || !tail.empty() || *p == 0 || *p > 65535)
      return bad(fmt::format("port '{}' is not a number from 1 to 65535", port_text));
    e.port = static_cast<int>(*p);
  }
  if (!allow_remote && !is_loopback(e.host))
    return bad(fmt::format("'{}' is not a loopback address (127.0.0.0/8, ::1, localhost); a probe loads a "
                           "server until it fails, so it targets this host only unless --allow-remote is given",
                           e.host));
  return e;
}

}  // namespace aimem::probe
