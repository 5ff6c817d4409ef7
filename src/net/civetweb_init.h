// CivetWeb's global set-up, once per feature set and under one lock (its
// mg_init_library is not thread-safe). tls: also load OpenSSL (dlopen).
#pragma once

namespace aimem::net {

// The features CivetWeb reports as initialised (its MG_FEATURES_* bits).
unsigned civetweb_init(bool tls);

}  // namespace aimem::net
