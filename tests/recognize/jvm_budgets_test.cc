// Budgets a JVM service keeps inside its heap (src/recognize/families/
// jvm_budgets.cc). Inputs written here in each program's format with our own
// values, modelled on: Elasticsearch's parent breaker as Kibana and the REST
// client print it (elastic/kibana issues of 2020; icij/datashare batch search
// failures), Trino's EXCEEDED_LOCAL_MEMORY_LIMIT through the Python client
// (trinodb/trino-python-client issues).
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

std::string breaker(const std::string& would, const std::string& limit, const std::string& reserved) {
  return "{\"type\":\"log\",\"@timestamp\":\"2020-09-09T09:02:44Z\",\"tags\":[\"fatal\",\"root\"],\"pid\":7,\"message\":"
         "\"[circuit_breaking_exception] [parent] Data too large, data for [<http_request>] would be [" + would +
         "], which is larger than the limit of [" + limit + "], real usage: [" + would + "], new bytes reserved: [" +
         reserved + "], usages [request=0/0b, fielddata=0/0b, in_flight_requests=0/0b, accounting=0/0b], with { "
         "bytes_wanted=" + would + " & bytes_limit=" + limit + " & durability=\\\"PERMANENT\\\" }\"}\n";
}

TEST(JvmBudgets, ABreakerTrippedByTheHeapsOwnUseIsTheHeapsSize) {
  std::string head = "{\"type\": \"server\", \"level\": \"INFO\", \"message\": \"heap size [1gb], compressed ordinary object "
                     "pointers [true]\" }\n";
  Diagnosis d = diagnose_text(head + breaker("1031203624/983.4mb", "1020054732/972.7mb", "0/0b"));
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // One request that is most of the breaker's limit is that request's size.
  Diagnosis big = diagnose_text(head + breaker("1031203624/983.4mb", "1020054732/972.7mb", "734003200/700mb"));
  EXPECT_EQ(big.layer, Layer::jvm_heap);
  EXPECT_EQ(big.cause, Cause::concurrency_batch);
}

TEST(JvmBudgets, AQueryOverItsPerNodeBudgetIsThatBudget) {
  std::string text =
      "TrinoQueryError: TrinoQueryError(type=INSUFFICIENT_RESOURCES, name=EXCEEDED_LOCAL_MEMORY_LIMIT, message=\"Query "
      "exceeded per-node user memory limit of 2.40GB [Allocated: 2.40GB, Delta: 8.00MB, Top Consumers: "
      "{HashBuilderOperator=2.31GB, ScanFilterAndProjectOperator=41.20MB}]\", query_id=20240311_101112_00042_abcde)\n";
  Diagnosis d = diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_FALSE(d.incidents.empty());
  bool named = false;
  for (const std::string& r : d.incidents[0].reasons) named |= r.find("2.40 GiB") != std::string::npos;
  EXPECT_TRUE(named);
}

TEST(JvmBudgets, TheBreakersSettingsAndDocsAreNotFailures) {
  Diagnosis d = diagnose_text(
      "indices.breaker.total.limit: 95%\n"
      "# The parent breaker rejects requests with \"Data too large\" when real memory usage passes the limit.\n");
  EXPECT_EQ(d.layer, Layer::none);
}


// Spark's driver refusing task results past spark.driver.maxResultSize
// (modelled on a GraphML export's collect(); figures ours): the Java heap's
// budget, the budget itself when the results are just over it, the collect
// when they are several times it.
TEST(JvmBudgets, SparksResultBudgetIsTheDriversHeap) {
  Diagnosis d = test::diagnose_text(
      "2018-08-03 00:52:01,208 [task-result-getter-0] ERROR TaskSetManager - Total size of serialized results of 1811 tasks "
      "(1025.7 MB) is bigger than spark.driver.maxResultSize (1024.0 MB)\n"
      "org.apache.spark.SparkException: Job aborted due to stage failure: Total size of serialized results of 1811 tasks "
      "(1025.7 MB) is bigger than spark.driver.maxResultSize (1024.0 MB)\n");
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  Diagnosis big = test::diagnose_text(
      "ERROR TaskSetManager - Total size of serialized results of 9000 tasks (8.3 GB) is bigger than spark.driver.maxResultSize (2.0 GB)\n");
  EXPECT_EQ(big.layer, Layer::jvm_heap);
  EXPECT_EQ(big.cause, Cause::concurrency_batch);
}

// Elasticsearch 1.x to 6.x word the breaker "would be larger than limit of
// [N/size]" (no "which is", no "the"), as a search's failure relays it
// (modelled on the fielddata breaker of elastic/elasticsearch 1.x threads and
// the parent breaker of 6.x; own index, field and figures).
TEST(JvmBudgets, TheOlderBreakerWordingIsTheHeapToo) {
  Diagnosis fielddata = diagnose_text(
      "{\n  \"error\" : \"SearchPhaseExecutionException[Failed to execute phase [query], all shards failed; shardFailures "
      "{[Xk2][offers][0]: ElasticsearchException[org.elasticsearch.common.breaker.CircuitBreakingException: [FIELDDATA] Data too "
      "large, data for [region] would be larger than limit of [412316860/393.2mb]]; }]\",\n  \"status\" : 500\n}\n");
  EXPECT_EQ(fielddata.layer, Layer::jvm_heap);
  Diagnosis parent = diagnose_text(
      "Caused by: org.elasticsearch.common.breaker.CircuitBreakingException: [parent] Data too large, data for "
      "[<transport_request>] would be larger than limit of [3113851289/2.8gb]\n");
  EXPECT_EQ(parent.layer, Layer::jvm_heap);
  // The same words with no limit to read are no breaker.
  EXPECT_EQ(diagnose_text("Data too large, data for [x] would be larger than the page\n").layer, Layer::none);
}

}  // namespace
}  // namespace aimem
