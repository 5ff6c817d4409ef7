#include "net/civetweb_init.h"

#include <civetweb.h>

#include <mutex>

namespace aimem::net {

unsigned civetweb_init(bool tls) {
  static std::mutex mu;
  static bool plain_done = false, tls_done = false;
  static unsigned features = 0;
  std::lock_guard<std::mutex> lock(mu);
  if (tls && !tls_done) {
    features |= mg_init_library(MG_FEATURES_TLS);
    tls_done = plain_done = true;
  } else if (!plain_done) {
    features |= mg_init_library(0);
    plain_done = true;
  }
  return features;
}

}  // namespace aimem::net
