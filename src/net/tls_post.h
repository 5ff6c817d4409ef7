// An HTTPS POST for `aimem watch`'s webhook, on CivetWeb's client API, which
// loads OpenSSL (libssl.so, from libssl-dev) only on first use, so that
// processes that never post over TLS do not pay OpenSSL's start-up.
// The server's certificate chain is checked against Debian's CA bundle
// (/etc/ssl/certs/ca-certificates.crt); CivetWeb 1.15 checks no host name.
// The connect has CivetWeb's own timeout (not settable through its API);
// timeout_ms bounds waiting for the response head.
#pragma once

#include <string>

#include "core/result.h"

namespace aimem::net {

inline constexpr const char* kSystemCaBundle = "/etc/ssl/certs/ca-certificates.crt";

// The HTTP status of the response, or an error in words. ca_file: the CAs the
// server's chain must lead to (tests pass their own).
Result<int> post_tls(const std::string& host, int port, const std::string& path, const std::string& content_type,
                     const std::string& body, int timeout_ms, const char* ca_file = kSystemCaBundle);

}  // namespace aimem::net
