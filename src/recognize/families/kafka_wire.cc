// A Kafka client's heap OutOfMemoryError that is a protocol mismatch, not
// memory. The client reads a response's size from the first four bytes off
// the wire and allocates a buffer of that size. A TLS listener's handshake
// reply (or an HTTP or SASL reply) read by a plaintext client turns into a
// size of hundreds of MiB to GiB, and the heap refuses it at once, whatever
// the heap holds (KAFKA-4493; the Kafka documentation's security
// troubleshooting). The trace is the heap error with the buffer's allocation
// under NetworkReceive's read:
//
//   java.lang.OutOfMemoryError: Java heap space
//       at java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:57)
//       at java.nio.ByteBuffer.allocate(ByteBuffer.java:335)
//       at org.apache.kafka.common.memory.MemoryPool$1.tryAllocate(MemoryPool.java:30)
//       at org.apache.kafka.common.network.NetworkReceive.readFrom(NetworkReceive.java:112)
//       at org.apache.kafka.common.security.authenticator.SaslClientAuthenticator.receiveResponseOrToken(...)
//       at org.apache.kafka.common.network.Selector.poll(Selector.java:474)
//
// A consumer whose heap really filled fails under the same frames (records
// queued faster than they are processed), so the mismatch must show: a
// handshake's frame in the trace (SaslClientAuthenticator, SslTransportLayer)
// or the protocols in the paste ("security.protocol = PLAINTEXT", a listener
// "SSL://0.0.0.0:9093", SASL_SSL). One not_memory_failure fact (family jvm),
// at the receive frame. A direct buffer's refusal ("Direct buffer memory") is
// the pool's own limit and is not this.
#include <array>
#include <iterator>
#include <optional>
#include <string_view>

#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

// The protocols shown in the paste (see above): one list for the patterns and the check.
constexpr std::string_view kProtocolWords[] = {"security.protocol", "SSL://", "SASL_SSL", "SASL_PLAINTEXT", "SaslClientAuthenticator",
                                               "SslTransportLayer"};

constexpr auto kPatterns = [] {
  std::array<Pattern, 3 + std::size(kProtocolWords)> p{};
  p[0] = {"OutOfMemoryError: Java heap space", kCompanion};
  p[1] = {"ByteBuffer.allocate(", kCompanion};
  p[2] = {"NetworkReceive.read", kCompanion};
  for (size_t i = 0; i < std::size(kProtocolWords); ++i) p[3 + i] = {kProtocolWords[i].data(), kContext};
  return p;
}();

bool protocol_shown(std::string_view s) {
  for (std::string_view w : kProtocolWords)
    if (text::contains(s, w)) return true;
  return false;
}

constexpr uint64_t kFrameGap = 4;  // frames between the error, the allocation and the receive

class KafkaWire final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink&) override {
    std::string_view s = line.text;
    if (protocol_shown(s)) protocol_ = true;
    if (pending_) return;
    if (text::contains(s, "OutOfMemoryError: Java heap space")) {
      heap_ = line.number;
      return;
    }
    if (text::contains(s, "ByteBuffer.allocate(")) {
      if (heap_ && line.number <= heap_ + kFrameGap) alloc_ = line.number;
      return;
    }
    if (!alloc_ || line.number > alloc_ + kFrameGap || !text::contains(s, "org.apache.kafka.common.network.NetworkReceive.read"))
      return;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::jvm);
    f.layer = Layer::not_memory;
    f.strength = 0.8f;
    f.detail = std::string(kKafkaWireSize);
    pending_ = std::move(f);
  }

  void finish(FactSink& out) override {
    if (pending_ && protocol_) out.add(std::move(*pending_));
    pending_.reset();
  }

 private:
  uint64_t heap_ = 0, alloc_ = 0;
  bool protocol_ = false;
  std::optional<Fact> pending_;
};

}  // namespace

const RecognizerEntry kKafkaWireEntry{"kafka_wire", Family::jvm, kPatterns, [] { return std::unique_ptr<Recognizer>(new KafkaWire); }};

}  // namespace aimem
