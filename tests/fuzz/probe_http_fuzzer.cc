// libFuzzer target for what `aimem probe` reads from a server: an HTTP/1.x
// response (net::ResponseReader, fed in pieces whose size the first byte
// picks), its body as server-sent events (SseParser) whose events are read as
// completion chunks (parse_chunk), and a /tokenize answer counted as it
// arrives (TokenCountReader). A hostile server must give a result or an
// error, never a crash, a hang or memory past the bounds.
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./probe_http_fuzzer probe_http_corpus/
//   every build:  the `probe_http_corpus_replay` test runs the seeds through it.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "net/http_response.h"
#include "probe/sse.h"
#include "probe/tokenize_count.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const size_t piece = 1 + data[0] % 64;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  aimem::probe::SseParser sse(1 << 16);
  aimem::probe::TokenCountReader tokens;
  bool sse_ok = true;
  aimem::net::Receiver receiver{
      [](const aimem::net::Head& h) { return h.status != 599; },
      [&](std::string_view body) {
        tokens.feed(body);
        if (sse_ok)
          sse_ok = sse.feed(body, [](std::string_view event) {
            auto c = aimem::probe::parse_chunk(event, aimem::probe::ChunkApi::chat);
            auto d = aimem::probe::parse_chunk(event, aimem::probe::ChunkApi::completions);
            return !(c && c->done) && !(d && d->error);
          });
        return true;
      }};
  aimem::net::ResponseReader reader(data[0] & 0x80);
  auto step = aimem::net::ResponseReader::Step::more;
  for (size_t at = 0; at < bytes.size() && step == aimem::net::ResponseReader::Step::more; at += piece)
    step = reader.feed(bytes.substr(at, piece), receiver);
  if (step == aimem::net::ResponseReader::Step::more) step = reader.closed();
  (void)reader.keep_alive();
  (void)tokens.result();
  // The whole input as one body and one event, as a non-streamed answer is read.
  auto whole = aimem::probe::parse_chunk(bytes, aimem::probe::ChunkApi::completions);
  (void)whole;
  return 0;
}
