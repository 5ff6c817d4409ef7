// libFuzzer target for the request heads `aimem watch`'s /metrics server
// reads (net::parse_request_head): anyone on the host can send them. Any
// bytes must give ok, incomplete, too large or bad, never a crash; an ok head
// must fit in what was given, and what follows it parse again (pipelining).
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./http_request_fuzzer http_request_corpus/
//   every build:  the `http_request_corpus_replay` test runs the seeds through it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "net/http_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < 16 && !bytes.empty(); ++i) {
    auto p = aimem::net::parse_request_head(bytes);
    if (p.status != aimem::net::RequestParse::Status::ok) break;
    if (p.head.length == 0 || p.head.length > bytes.size() || p.head.length > aimem::net::kMaxRequestHead) std::abort();
    if (p.head.path.empty() || p.head.path[0] != '/') std::abort();
    bytes.remove_prefix(p.head.length);
  }
  return 0;
}
