// A Kafka client's heap error on a receive buffer sized from bytes off the
// wire (src/recognize/families/kafka_wire.cc). Written here in the JVM's
// trace format with our own frames' line numbers, modelled on the plaintext
// client against an SSL listener of KAFKA-4493 and on a SASL handshake that
// failed the same way (apache/kafka issue threads of 2017-2023).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

std::string trace(const char* error, const char* receive_frame) {
  return std::string("[2023-04-11 09:12:43,902] INFO ConsumerConfig values: \n\tsecurity.protocol = PLAINTEXT\n") +
         "[2023-04-11 09:12:44,018] INFO [Consumer clientId=enrich-1, groupId=enrich] Subscribed to topic(s): events\n" +
         "[2023-04-11 09:12:44,391] ERROR Uncaught exception in thread 'kafka-coordinator-heartbeat-thread | enrich':\n" + error +
         "\n"
         "\tat java.nio.HeapByteBuffer.<init>(HeapByteBuffer.java:57)\n"
         "\tat java.nio.ByteBuffer.allocate(ByteBuffer.java:335)\n"
         "\tat org.apache.kafka.common.memory.MemoryPool$1.tryAllocate(MemoryPool.java:30)\n" +
         receive_frame +
         "\n"
         "\tat org.apache.kafka.common.network.Selector.attemptRead(Selector.java:640)\n"
         "\tat org.apache.kafka.common.network.Selector.poll(Selector.java:474)\n";
}

TEST(KafkaWire, AHeapErrorOnTheReceiveBufferIsAProtocolMismatch) {
  const char* receive = "\tat org.apache.kafka.common.network.NetworkReceive.readFrom(NetworkReceive.java:112)";
  Diagnosis d = test::diagnose_text(trace("java.lang.OutOfMemoryError: Java heap space", receive));
  EXPECT_EQ(d.layer, Layer::not_memory) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::not_memory);
  // Under a SASL handshake's frames it reads the same.
  Diagnosis sasl = test::diagnose_text(
      trace("java.lang.OutOfMemoryError: Java heap space",
            "\tat org.apache.kafka.common.network.NetworkReceive.readFrom(NetworkReceive.java:112)\n"
            "\tat org.apache.kafka.common.security.authenticator.SaslClientAuthenticator.receiveResponseOrToken("
            "SaslClientAuthenticator.java:412)"));
  EXPECT_EQ(sasl.layer, Layer::not_memory);
  // The same heap error allocating anywhere else is the heap's.
  Diagnosis elsewhere = test::diagnose_text(
      trace("java.lang.OutOfMemoryError: Java heap space", "\tat com.example.enrich.Buffer.grow(Buffer.java:88)"));
  EXPECT_EQ(elsewhere.layer, Layer::jvm_heap);
  // Without the protocols shown, a consumer whose heap filled with queued
  // records fails under the same frames: the heap's.
  std::string queued = trace("java.lang.OutOfMemoryError: Java heap space", receive);
  queued.erase(0, queued.find("[2023-04-11 09:12:44,018]"));
  EXPECT_EQ(test::diagnose_text(queued).layer, Layer::jvm_heap);
  // A direct buffer's refusal is its pool's limit, not this look-alike.
  Diagnosis direct = test::diagnose_text(
      trace("java.lang.OutOfMemoryError: Direct buffer memory", receive));
  EXPECT_EQ(direct.layer, Layer::jvm_heap);
}

}  // namespace
}  // namespace aimem
