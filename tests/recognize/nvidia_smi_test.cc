// nvidia-smi in its four output forms, as context.
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::MiB;

std::vector<Fact> states(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::gpu_state) out.push_back(f);
  return out;
}

TEST(NvidiaSmi, DefaultTableWithProcesses) {
  const char* text = R"(+-----------------------------------------------------------------------------+
| NVIDIA-SMI 525.60.13    Driver Version: 525.60.13    CUDA Version: 12.0     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0  On |                  N/A |
| 30%   45C    P2    70W / 350W |  22000MiB / 24576MiB |     95%      Default |
+-------------------------------+----------------------+----------------------+
|   1  NVIDIA GeForce ...  Off  | 00000000:02:00.0 Off |                  N/A |
|  0%   31C    P8    20W / 350W |      4MiB / 24576MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                                  |
|  GPU   GI   CI        PID   Type   Process name                  GPU Memory |
|        ID   ID                                                   Usage      |
|=============================================================================|
|    0   N/A  N/A      1234      C   python                          20000MiB |
|    0   N/A  N/A      1300      G   /usr/lib/xorg/Xorg                 50MiB |
+-----------------------------------------------------------------------------+
)";
  auto g = states(text);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].usage, 22000 * MiB);
  EXPECT_EQ(g[0].total, 24576 * MiB);
  EXPECT_EQ(g[0].free, 2576 * MiB);
  EXPECT_EQ(g[0].count, 2u);
  EXPECT_EQ(g[0].process, "NVIDIA GeForce ...");
  EXPECT_EQ(g[1].gpu, 1);
  EXPECT_EQ(g[1].usage, 4 * MiB);
  // 90% full is context, never a failure.
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::none);
  ASSERT_FALSE(d.headroom.empty());
}

// nvidia-smi run after the failed process ended shows its device empty: the
// pool the diagnosis names is then the device's size, not "0 B used".
TEST(NvidiaSmi, AnEmptyDeviceAfterTheFailureIsNotThePoolsUse) {
  const std::string text =
      "RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB\n"
      "$ nvidia-smi --query-gpu=name,memory.total,memory.used --format=csv\n"
      "name, memory.total [MiB], memory.used [MiB]\n"
      "Tesla V100-SXM2-16GB, 16384 MiB, 0 MiB\n";
  Diagnosis d = test::diagnose_text(text);
  ASSERT_FALSE(d.incidents.empty());
  const Incident& inc = d.incidents[0];
  EXPECT_EQ(inc.layer, Layer::gpu_vram);
  EXPECT_FALSE(inc.pool.used_bytes && *inc.pool.used_bytes == 0) << "an empty device is not the pool as it failed";
}

TEST(NvidiaSmi, QueryForm) {
  const char* text = R"(==============NVSMI LOG==============

Attached GPUs                             : 1
GPU 00000000:01:00.0
    Product Name                          : NVIDIA GeForce RTX 3090
    FB Memory Usage
        Total                             : 24576 MiB
        Reserved                          : 310 MiB
        Used                              : 22000 MiB
        Free                              : 2265 MiB
    BAR1 Memory Usage
        Total                             : 256 MiB
        Used                              : 1 MiB
        Free                              : 255 MiB
    Processes
        GPU instance ID                   : N/A
        Process ID                        : 1234
            Type                          : C
            Name                          : python
            Used GPU Memory               : 20000 MiB
)";
  auto g = states(text);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].process, "NVIDIA GeForce RTX 3090");
  EXPECT_EQ(g[0].total, 24576 * MiB);  // not BAR1's 256 MiB
  EXPECT_EQ(g[0].usage, 22000 * MiB);
  EXPECT_EQ(g[0].free, 2265 * MiB);
  EXPECT_EQ(g[0].count, 1u);
}

TEST(NvidiaSmi, XmlForm) {
  const char* text = R"(<?xml version="1.0" ?>
<nvidia_smi_log>
	<attached_gpus>1</attached_gpus>
	<gpu id="00000000:01:00.0">
		<product_name>NVIDIA A100-SXM4-80GB</product_name>
		<fb_memory_usage>
			<total>81920 MiB</total>
			<reserved>512 MiB</reserved>
			<used>75000 MiB</used>
			<free>6408 MiB</free>
		</fb_memory_usage>
		<bar1_memory_usage>
			<total>131072 MiB</total>
			<used>1 MiB</used>
			<free>131071 MiB</free>
		</bar1_memory_usage>
		<processes>
			<process_info>
				<pid>4242</pid>
				<used_memory>74000 MiB</used_memory>
			</process_info>
		</processes>
	</gpu>
</nvidia_smi_log>
)";
  auto g = states(text);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].process, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(g[0].total, 81920 * MiB);
  EXPECT_EQ(g[0].usage, 75000 * MiB);
  EXPECT_EQ(g[0].free, 6408 * MiB);
  EXPECT_EQ(g[0].count, 1u);
}

TEST(NvidiaSmi, CsvWithHeaderAndWithout) {
  const char* text = R"(index, name, memory.used [MiB], memory.total [MiB]
0, NVIDIA A100-SXM4-80GB, 75000 MiB, 81920 MiB
1, NVIDIA A100-SXM4-80GB, 1200 MiB, 81920 MiB
)";
  auto g = states(text);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[1].gpu, 1);
  EXPECT_EQ(g[1].usage, 1200 * MiB);
  EXPECT_EQ(g[0].process, "NVIDIA A100-SXM4-80GB");
  const char* bare = "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,nounits\n75000, 81920\n";
  auto b = states(bare);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].usage, 75000 * MiB);
  EXPECT_EQ(b[0].total, 81920 * MiB);
  // Numbers that merely look like CSV are not read without a header.
  EXPECT_TRUE(states("12, 34\n56, 78\n").empty());
}

// A shell loop that prints its own clock before each row (modelled on
// fauxpilot/fauxpilot#167's monitoring loop; values ours): the clock is not a
// cell, and each clock starts a new snapshot of the same GPU, numbered 0 again.
// Two GPUs under one clock stay two.
TEST(NvidiaSmi, ALoopsClockBeforeEachRowIsASnapshotNotACell) {
  const char* loop =
      "$ while true; do echo \"$(date +%T) $(nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader)\"; sleep 300; done\n"
      "09:41:00 10240 MiB, 24576 MiB\n"
      "09:46:00 11890 MiB, 24576 MiB\n"
      "09:51:00 13002 MiB, 24576 MiB\n";
  auto g = states(loop);
  ASSERT_EQ(g.size(), 3u);
  for (const Fact& f : g) {
    EXPECT_EQ(f.gpu, 0);
    EXPECT_EQ(f.total, 24576 * MiB);
  }
  EXPECT_EQ(g[0].usage, 10240 * MiB);
  EXPECT_EQ(g[2].usage, 13002 * MiB);
  const char* two = "$ nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader\n"
                    "2025-03-10 09:41:00 10240 MiB, 24576 MiB\n"
                    "20480 MiB, 24576 MiB\n";
  auto t = states(two);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].usage, 10240 * MiB);
  EXPECT_EQ(t[1].gpu, 1);
}

// The loop nvidia-smi runs itself (-l N) with the timestamp as the query's
// first column: each new time is the next sample of the same GPU, not
// another GPU (our figures, in the CSV's own shape). Two GPUs sampled at one
// time share it and stay two.
TEST(NvidiaSmi, ATimestampColumnIsTheSamplesClock) {
  const char* loop =
      "$ nvidia-smi --query-gpu=timestamp,memory.used,memory.total --format=csv -l 3600\n"
      "timestamp, memory.used [MiB], memory.total [MiB]\n"
      "2023/08/10 10:00:00.412, 27014 MiB, 32768 MiB\n"
      "2023/08/10 11:00:00.419, 28622 MiB, 32768 MiB\n"
      "2023/08/10 12:00:00.427, 30188 MiB, 32768 MiB\n";
  auto g = states(loop);
  ASSERT_EQ(g.size(), 3u);
  for (const Fact& f : g) EXPECT_EQ(f.gpu, 0);
  EXPECT_EQ(g[2].usage, 30188 * MiB);
  const char* two =
      "$ nvidia-smi --query-gpu=timestamp,index,memory.used,memory.total --format=csv\n"
      "timestamp, index, memory.used [MiB], memory.total [MiB]\n"
      "2023/08/10 10:00:00.412, 0, 27014 MiB, 32768 MiB\n"
      "2023/08/10 10:00:00.412, 1, 1024 MiB, 32768 MiB\n";
  auto t = states(two);
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[1].gpu, 1);
}

TEST(NvidiaSmi, ComputeAppsList) {
  const char* text = "pid, process_name, used_gpu_memory [MiB]\n1234, python, 20000 MiB\n5678, vllm, 30000 MiB\n";
  auto g = states(text);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].count, 2u);
}

// --query-compute-apps with a header that names the fields without units
// (as pasted from `--format=csv` with units in the cells): the rows after it
// are read (modelled on google/brax threads of a second JAX process on a
// shared V100; values are ours). A header that does not match is not one.
TEST(NvidiaSmi, ComputeAppsHeaderWithoutUnitsStillReadsTheRows) {
  const std::string cmd = "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv\n";
  const std::string oom =
      "$ python train.py\nRuntimeError: Resource exhausted: Out of memory while trying to allocate 536870912 bytes.\n";
  Diagnosis d = test::diagnose_text(cmd + "pid, process_name, used_memory\n28731, python, 14621 MiB\n" + oom);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::other_process);
  EXPECT_NE(test::diagnose_text(cmd + "pid, name\n28731, python, 14621 MiB\n" + oom).cause, Cause::other_process);
}

// --query-gpu with the name (or a timestamp) first: its rows open with words,
// not a number (modelled on zml/zml#125's query; our own values).
TEST(NvidiaSmi, CsvRowsThatOpenWithTheName) {
  auto s = states("name, memory.used [MiB], memory.total [MiB]\nNVIDIA L40S, 36843 MiB, 49140 MiB\n");
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(*s[0].usage, 36843 * MiB);
  EXPECT_EQ(*s[0].total, 49140 * MiB);
  EXPECT_EQ(s[0].process, "NVIDIA L40S");
}

// Copies of one workload on one GPU (docs/diagnose.md, "parallel copies"):
// the listing's rows of one program, alike in size, four or more of them or
// three holding three quarters, are counted in `sequences`, and a device
// OOM beside them is the copies' number, not a stranger's process. Modelled
// on a gunicorn server whose workers each load a spaCy model onto one card
// (own values); rows on different GPUs (by bus id) are not copies.
TEST(NvidiaSmi, ManyAlikeCopiesOfOneProgramOnOneGpuAreCounted) {
  const std::string oom =
      "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 268,435,456 bytes (allocated so far: 1,342,177,280 bytes).\n";
  const std::string apps =
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader\n"
      "51200, /srv/api/bin/python3.11, 2010 MiB\n51213, /srv/api/bin/python3.11, 2010 MiB\n"
      "51226, /srv/api/bin/python3.11, 2010 MiB\n51239, /srv/api/bin/python3.11, 2034 MiB\n"
      "51252, /srv/api/bin/python3.11, 2010 MiB\n";
  auto s = states(apps);
  ASSERT_EQ(s.size(), 1u);
  ASSERT_TRUE(s[0].sequences);
  EXPECT_EQ(*s[0].sequences, 5u);
  Diagnosis d = test::diagnose_text(oom + apps);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_LT(d.confidence, 0.8);  // a lean: the copies may be an earlier generation's
  // Unlike sizes are different work, not copies.
  const std::string mixed =
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader\n"
      "51200, /srv/api/bin/python3.11, 9010 MiB\n51213, /srv/api/bin/python3.11, 2010 MiB\n"
      "51226, /srv/api/bin/python3.11, 4010 MiB\n51239, /srv/api/bin/python3.11, 600 MiB\n";
  auto m = states(mixed);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_FALSE(m[0].sequences);
  EXPECT_EQ(test::diagnose_text(oom + mixed).cause, Cause::other_process);
  // One copy on each of four GPUs: no GPU holds copies.
  const std::string spread =
      "$ nvidia-smi --query-compute-apps=gpu_bus_id,pid,process_name,used_memory --format=csv,noheader\n"
      "00000000:41:00.0, 7001, python3, 23840 MiB\n00000000:61:00.0, 7002, python3, 23840 MiB\n"
      "00000000:81:00.0, 7003, python3, 23840 MiB\n00000000:C1:00.0, 7004, python3, 23840 MiB\n";
  auto sp = states(spread);
  ASSERT_EQ(sp.size(), 1u);
  EXPECT_FALSE(sp[0].sequences);
  // Three alike holding under three quarters of what is listed: not copies.
  const std::string three =
      "$ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader\n"
      "61200, python3, 3000 MiB\n61213, python3, 3000 MiB\n61226, python3, 3000 MiB\n61239, java, 9000 MiB\n";
  auto th = states(three);
  ASSERT_EQ(th.size(), 1u);
  EXPECT_FALSE(th[0].sequences);
}


// A loop over --query-compute-apps sampling one process: modelled on a
// pytorch forum thread of a worker whose device memory grew task after task;
// values ours.
TEST(NvidiaSmi, OneProcessSampledInALoopIsItsGrowthNotOtherProcesses) {
  const char* text = R"($ for i in 1 2 3 4; do nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader; sleep 600; done
20417, python, 3072 MiB
20417, python, 5120 MiB
20417, python, 7936 MiB
20417, python, 10240 MiB
RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.92 GiB total capacity; 9.70 GiB already allocated; 301.44 MiB free; 10.10 GiB reserved in total by PyTorch)
)";
  std::vector<Fact> apps;
  for (Fact& f : test::facts_of_kind(text, FactKind::gpu_state))
    if (f.family == Family::nvidia) apps.push_back(f);
  ASSERT_EQ(apps.size(), 1u);
  EXPECT_EQ(apps[0].count, 1u);  // one process
  EXPECT_FALSE(apps[0].other_processes);
  std::vector<Fact> grew;  // (the series reader may read the rows' figures too)
  for (Fact& f : test::facts_of_kind(text, FactKind::memory_usage))
    if (f.family == Family::nvidia) grew.push_back(f);
  ASSERT_EQ(grew.size(), 1u);
  EXPECT_EQ(grew[0].usage, 10240ULL << 20);
  EXPECT_EQ(grew[0].count, 4u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  // Two processes, each once: other processes, as before.
  const char* two = R"($ nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv,noheader
20417, python, 3072 MiB
20999, python, 5120 MiB
)";
  auto both = test::facts_of_kind(two, FactKind::gpu_state);
  ASSERT_EQ(both.size(), 1u);
  EXPECT_EQ(both[0].other_processes, 8192ULL << 20);
  for (const Fact& f : test::facts_of_kind(two, FactKind::memory_usage)) EXPECT_NE(f.family, Family::nvidia);
}

}  // namespace
}  // namespace aimem
