// Sample/Event JSON: every field round-trips exactly, absent optionals stay
// absent (not 0), and reading skips unknown keys and wrong types.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "watch/sample_json.h"

namespace aimem::watch {
namespace {

using nlohmann::json;

Sample full_sample() {
  Sample s;
  s.time_us = 1764428400123456;
  s.host = {uint64_t{64} << 30, uint64_t{12345678901}, uint64_t{8} << 30, 0, 1.25, 0.0, 123456789, 42, 7};
  CgroupSample c;
  c.path = "/kubepods/burstable/pod1234/abcd";
  c.version = 2;
  c.usage = 1000;
  c.limit = std::numeric_limits<uint64_t>::max();  // the largest value stays exact
  c.peak = 2000;
  c.swap_usage = 0;
  c.anon = 1;
  c.file = 2;
  c.kernel = 3;
  c.shmem = 4;
  c.oom = 5;
  c.oom_kill = 6;
  c.max_events = 7;
  c.high_events = 8;
  c.failcnt = 9;
  c.under_oom = true;
  c.psi_some_total_us = 10;
  c.psi_full_total_us = 11;
  c.pod_uid = "1234";
  c.container_id = "abcd";
  CgroupSample root;
  root.path = "/";
  s.cgroups = {c, root};
  s.processes = {{4242, 1, "python3", "vllm", "/docker/x", 5ull << 30, 6ull << 30, 0, 3ull << 30},
                 {-1, 0, "caf\xc3\xa9 \"q\" \\", "", "", 0, std::nullopt, std::nullopt, std::nullopt}};
  s.gpus = {{0, "NVIDIA H100 80GB HBM3", "GPU-1", 80ull << 30, 70ull << 30, false},
            {1, "GH200", "", std::nullopt, 5, true}};
  s.gpu_processes = {{1, 4242, 3ull << 30, "/docker/x", "pod", "ctr"}};
  ServerSample v;
  v.target = "http://127.0.0.1:8000/metrics";
  v.kind = "vllm";
  v.up = true;
  v.running = 3;
  v.waiting = 0.5;
  v.kv_usage_ratio = 0.1 + 0.2;  // not exactly representable in short decimal: must round-trip bit for bit
  v.prompt_tokens_total = 1e15;
  v.generation_tokens_total = 7;
  v.ttft_sum_s = 1.0 / 3;
  v.ttft_count = 9;
  v.context_tokens = 32768;
  v.model_bytes = 1;
  v.model_vram_bytes = 2;
  v.custom = {{"queue_depth", 17}, {"batch", 2.5}};
  ServerSample o;
  o.target = "http://127.0.0.1:11434/api/ps";
  o.kind = "ollama";
  o.problem = "refused";
  s.servers = {v, o};
  return s;
}

TEST(SampleJson, EveryFieldRoundTripsExactly) {
  Sample s = full_sample();
  json j = to_json(s);
  std::string text = dump_compact(j);
  Sample back = sample_from_json(json::parse(text));
  // Equal JSON after a trip through text means every field came back.
  EXPECT_EQ(dump_compact(to_json(back)), text);
  EXPECT_EQ(back.time_us, s.time_us);
  EXPECT_EQ(back.cgroups[0].limit, std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(back.cgroups[0].under_oom);
  EXPECT_EQ(back.processes[1].pid, -1);
  EXPECT_EQ(back.processes[1].comm, "caf\xc3\xa9 \"q\" \\");
  EXPECT_EQ(back.servers[0].kv_usage_ratio, 0.1 + 0.2);
  EXPECT_EQ(back.servers[0].ttft_sum_s, 1.0 / 3);
  EXPECT_EQ(back.servers[0].custom.at("batch"), 2.5);
  EXPECT_EQ(back.gpus[1].unified, true);
  EXPECT_EQ(back.gpu_processes[0].pod_uid, "pod");
  EXPECT_EQ(back.servers[1].problem, "refused");
}

TEST(SampleJson, AbsentStaysAbsentAndZeroStaysZero) {
  Sample s = full_sample();
  Sample back = sample_from_json(to_json(s));
  EXPECT_EQ(back.host.swap_free, 0u);  // present, zero
  EXPECT_TRUE(back.host.swap_free.has_value());
  EXPECT_FALSE(back.cgroups[1].usage.has_value());  // never read
  EXPECT_FALSE(back.gpus[1].total.has_value());
  EXPECT_FALSE(back.processes[1].hwm.has_value());
  // Absent fields take no bytes.
  json root = to_json(s)["c"][1];
  EXPECT_EQ(root.dump(), R"({"path":"/"})");
}

TEST(SampleJson, NonFiniteDoublesAreOmitted) {
  Sample s;
  s.host.psi_some_avg10 = std::nan("");
  s.servers.emplace_back();
  s.servers[0].running = std::numeric_limits<double>::infinity();
  Sample back = sample_from_json(json::parse(dump_compact(to_json(s))));
  EXPECT_FALSE(back.host.psi_some_avg10.has_value());
  EXPECT_FALSE(back.servers.at(0).running.has_value());
}

TEST(SampleJson, ToleratesUnknownMissingAndWrongTypes) {
  json j = json::parse(R"({"t": 5, "future": {"x": 1}, "h": {"mt": "many", "ma": 10, "zz": 1},
      "c": [{"path": "/a", "u": -3, "l": 7, "v": 99999999999}, 12, "text"],
      "p": [{"pid": 1e3, "rss": 5, "comm": 7}], "g": {"not": "an array"}, "s": [{}]})");
  Sample s = sample_from_json(j);
  EXPECT_EQ(s.time_us, 5);
  EXPECT_FALSE(s.host.mem_total.has_value());  // a string: skipped
  EXPECT_EQ(s.host.mem_available, 10u);
  ASSERT_EQ(s.cgroups.size(), 1u);  // non-objects skipped
  EXPECT_FALSE(s.cgroups[0].usage.has_value());  // negative: skipped
  EXPECT_EQ(s.cgroups[0].limit, 7u);
  EXPECT_EQ(s.cgroups[0].version, 0);  // out of int range: skipped
  ASSERT_EQ(s.processes.size(), 1u);
  EXPECT_EQ(s.processes[0].pid, 0);  // a float: skipped
  EXPECT_EQ(s.processes[0].rss, 5u);
  EXPECT_TRUE(s.gpus.empty());
  ASSERT_EQ(s.servers.size(), 1u);
  EXPECT_FALSE(s.servers[0].up);
  // Not an object at all: an empty sample, no exception.
  EXPECT_EQ(sample_from_json(json::array()).time_us, 0);
  EXPECT_EQ(event_from_json(json("x")).kind, "");
}

TEST(SampleJson, EventsRoundTrip) {
  Event e{1764428400000000, "oom_kill", "pod-uid", "python3 was killed", R"({"layer":"container_limit"})"};
  Event back = event_from_json(json::parse(dump_compact(to_json(e))));
  EXPECT_EQ(back.time_us, e.time_us);
  EXPECT_EQ(back.kind, e.kind);
  EXPECT_EQ(back.key, e.key);
  EXPECT_EQ(back.summary, e.summary);
  EXPECT_EQ(back.body, e.body);
}

TEST(SampleJson, InvalidUtf8IsReplacedNotThrown) {
  Sample s;
  s.processes.emplace_back();
  s.processes[0].comm = "bad\xff\xfe";
  std::string text;
  ASSERT_NO_THROW(text = dump_compact(to_json(s)));
  EXPECT_EQ(sample_from_json(json::parse(text)).processes.at(0).comm.substr(0, 3), "bad");
}

// The store's body is written without the tree (sample_body.cc): it must be
// the tree's dump byte for byte, whatever is present, absent or odd.
TEST(SampleJson, BodyWrittenDirectlyIsTheTreesDump) {
  std::vector<Sample> cases;
  cases.push_back(full_sample());
  cases.emplace_back();  // nothing at all: {"t":0}
  Sample only_cgroups_and_processes = full_sample();
  only_cgroups_and_processes.gpus.clear();
  only_cgroups_and_processes.gpu_processes.clear();
  only_cgroups_and_processes.servers.clear();
  cases.push_back(only_cgroups_and_processes);
  Sample odd;
  odd.time_us = -5;
  odd.host.psi_some_avg10 = std::nan("");  // the only host field, not finite: no "h"
  odd.host.psi_full_avg10 = 1e-7;
  odd.host.oom_kills = 0;
  CgroupSample c;
  c.path = "/a\"b\n\x01\x7f";
  c.version = -1;
  c.under_oom = true;
  odd.cgroups = {c};
  odd.processes = {{7, -3, "bad\xff\xfe", "r\xc3\xa9le", "/tab\there", 0, 0, std::nullopt, 1},
                   {std::numeric_limits<int>::min(), 0, "", "", "", std::numeric_limits<uint64_t>::max(), std::nullopt,
                    0, std::nullopt}};
  odd.servers.emplace_back();  // servers without GPUs
  odd.servers[0].custom = {{"nan", std::nan("")}, {"z", 0.1}};
  cases.push_back(odd);
  Sample host_only;
  host_only.host.swap_free = 0;
  cases.push_back(host_only);
  Sample gpu_processes_only;
  gpu_processes_only.gpu_processes = {{0, 1, 2, "", "", ""}};
  cases.push_back(gpu_processes_only);
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_EQ(sample_body(cases[i]), dump_compact(to_json(cases[i]))) << "case " << i;
}

}  // namespace
}  // namespace aimem::watch
