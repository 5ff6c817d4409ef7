// Hard-wrapped pastes (src/recognize/unwrap.cc): a terminal or an issue form
// cut every line at a fixed width; the scanner rejoins them before reading a
// small input; facts are placed by the rejoined lines and show the input's own.
#include <gtest/gtest.h>

#include "recognize/unwrap.h"
#include "support/test_support.h"

namespace aimem {
namespace {

// What a terminal of `width` columns does to each line (ASCII input).
std::string hard_wrap(const std::string& text, size_t width) {
  std::string out;
  size_t col = 0;
  for (char c : text) {
    if (c == '\n') {
      out += c;
      col = 0;
      continue;
    }
    if (col == width) {
      out += '\n';
      col = 0;
    }
    out += c;
    ++col;
  }
  return out;
}

// A memcg OOM in the kernel's 5.x format for a Kubernetes container, written
// for this test (the layout of tests/recognize/kernel_oom_test.cc's capture).
constexpr const char* kPodReport = R"([ 4410.117230] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=969
[ 4410.117262] memory: usage 4194304kB, limit 4194304kB, failcnt 8812
[ 4410.117264] memory+swap: usage 4194304kB, limit 9007199254740988kB, failcnt 0
[ 4410.117266] Memory cgroup stats for /kubepods/burstable/pod3c5e7a91-2b4d-4f6e-8a0c-1d3e5f7a9b2c/9f8e7d6c5b4a39281706f5e4d3c2b1a0:
[ 4410.117301] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=9f8e7d6c5b4a39281706f5e4d3c2b1a0,mems_allowed=0,oom_memcg=/kubepods/burstable/pod3c5e7a91-2b4d-4f6e-8a0c-1d3e5f7a9b2c/9f8e7d6c5b4a39281706f5e4d3c2b1a0,task_memcg=/kubepods/burstable/pod3c5e7a91-2b4d-4f6e-8a0c-1d3e5f7a9b2c/9f8e7d6c5b4a39281706f5e4d3c2b1a0,task=python3,pid=31337,uid=1000
[ 4410.117325] Memory cgroup out of memory: Killed process 31337 (python3) total-vm:9812340kB, anon-rss:4151020kB, file-rss:30112kB, shmem-rss:0kB, UID:1000 pgtables:8712kB oom_score_adj:969
)";

const Fact* kill_in(const std::vector<Fact>& facts) {
  for (const Fact& f : facts)
    if (f.kind == FactKind::kernel_oom_kill) return &f;
  return nullptr;
}

TEST(Unwrap, AKernelReportWrappedAt80Or120ColumnsReadsAsTheOriginal) {
  std::vector<Fact> whole = test::facts_of(kPodReport);
  const Fact* k0 = kill_in(whole);
  ASSERT_NE(k0, nullptr);
  const Diagnosis d0 = test::diagnose_text(kPodReport);
  EXPECT_EQ(d0.layer, Layer::k8s_pod_limit);
  for (size_t width : {80u, 120u}) {
    std::string wrapped = hard_wrap(kPodReport, width);
    ASSERT_NE(wrapped, kPodReport);
    std::vector<Fact> facts = test::facts_of(wrapped);
    const Fact* k = kill_in(facts);
    ASSERT_NE(k, nullptr) << width;
    EXPECT_EQ(k->pid, 31337);
    EXPECT_EQ(k->cgroup, k0->cgroup) << width;
    EXPECT_EQ(k->limit, k0->limit);
    EXPECT_EQ(k->layer, Layer::container_limit);
    Diagnosis d = test::diagnose_text(wrapped);
    EXPECT_EQ(d.layer, d0.layer) << width;
    EXPECT_EQ(d.cause, d0.cause) << width;
  }
}

// A global OOM with the kernel's task table in a syslog paste (written for
// this test in the layout of a 5.x report): another program holds most of
// the RAM. Each table row is a record with column padding; wrapped at 80
// columns, the rows are rejoined and the other program still reads.
constexpr const char* kSyslogTable =
    "Jan 15 03:08:35 db-3 kernel: java invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE), order=0, oom_score_adj=0\n"
    "Jan 15 03:08:35 db-3 kernel: 8388608 pages RAM\n"
    "Jan 15 03:08:35 db-3 kernel: Tasks state (memory values in pages):\n"
    "Jan 15 03:08:35 db-3 kernel: [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name\n"
    "Jan 15 03:08:35 db-3 kernel: [    631]     0   631    12171      527   126976        0         -1000 systemd-udevd\n"
    "Jan 15 03:08:35 db-3 kernel: [   2977]   996  2977 14295083  7277315 82317056        0          -950 scylla\n"
    "Jan 15 03:08:35 db-3 kernel: [   3012]   996  3012  1863412    81244  1179648        0             0 java\n"
    "Jan 15 03:08:35 db-3 kernel: oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
    "task_memcg=/system.slice/scylla-jmx.service,task=java,pid=3012,uid=996\n"
    "Jan 15 03:08:35 db-3 kernel: Out of memory: Killed process 3012 (java) total-vm:7453648kB, anon-rss:324976kB, "
    "file-rss:0kB, shmem-rss:0kB, UID:996 pgtables:1152kB oom_score_adj:0\n";

TEST(Unwrap, AKernelTaskTableInASyslogPasteIsRejoinedRowByRow) {
  const Diagnosis d0 = test::diagnose_text(kSyslogTable);
  ASSERT_EQ(d0.layer, Layer::host_ram);
  ASSERT_EQ(d0.cause, Cause::other_process);
  const std::string wrapped = hard_wrap(kSyslogTable, 80);
  auto u = unwrap_hard_wrapped(wrapped);
  ASSERT_TRUE(u.has_value());
  EXPECT_NE(u->text.find("kernel: [   2977]   996  2977 14295083  7277315 82317056        0          -950 scylla\n"),
            std::string::npos)
      << u->text;
  const Diagnosis d = test::diagnose_text(wrapped);
  EXPECT_EQ(d.layer, d0.layer);
  EXPECT_EQ(d.cause, d0.cause);
}

TEST(Unwrap, FactsKeepTheLineNumbersOfTheWrappedInput) {
  std::string wrapped = hard_wrap(kPodReport, 80);
  auto u = unwrap_hard_wrapped(wrapped);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->text, kPodReport);
  // Every rejoined line starts on the input line where its first piece is.
  size_t line = 1;
  size_t logical = 0;
  for (size_t pos = 0; pos < wrapped.size(); ++pos) {
    bool starts = pos == 0 || wrapped[pos - 1] == '\n';
    if (starts && wrapped[pos] == '[') {
      ASSERT_LT(logical, u->first_line.size());
      EXPECT_EQ(u->first_line[logical++], line);
    }
    if (wrapped[pos] == '\n') ++line;
  }
  EXPECT_EQ(logical, u->first_line.size());
  const std::vector<Fact> facts = test::facts_of(wrapped);
  const Fact* k = kill_in(facts);
  ASSERT_NE(k, nullptr);
  // The victim line is the report's last record: the evidence shows its
  // first piece's input line; the fact is placed by the rejoined lines, as
  // in the plain report (nearness and order read as they would there).
  EXPECT_EQ(shown_line(k->where), u->first_line.back());
  EXPECT_EQ(k->where.line, u->first_line.size());
}

// Modelled on vLLM V1's KV-cache check (vllm/v1/core/kv_cache_utils.py) as an
// issue form shows it, wrapped at 120 columns; our own sizes.
TEST(Unwrap, APrefixedEngineErrorCutMidWordIsRejoined) {
  const std::string wrapped = hard_wrap(
      "(EngineCore_0 pid=811) INFO 05-11 08:14:02 [gpu_worker.py:276] Available KV cache memory: 3.12 GiB\n"
      "(EngineCore_0 pid=811) ERROR 05-11 08:14:02 [core.py:700] ValueError: To serve at least one request with the model's "
      "max seq len (131072), (16.00 GiB KV cache is needed, which is larger than the available KV cache memory (3.12 GiB). "
      "Based on the available memory, the estimated maximum model length is 25536. Try increasing `gpu_memory_utilization` "
      "or decreasing `max_model_len` when initializing the engine.\n",
      120);
  auto u = unwrap_hard_wrapped(wrapped);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->joins, 3u);
  EXPECT_NE(u->text.find("model's max seq len (131072), (16.00 GiB KV cache is needed"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(wrapped).layer, Layer::gpu_vram);
}

// Python's rich log handler wraps a long message inside its own column,
// indented to where the message starts, with the source flush right on the
// record's first line (modelled on an infinity_emb embedding server's log of
// 2024; our figures). Rejoined, PyTorch's OOM message reads whole: the GPU,
// and what the other process held.
TEST(Unwrap, ARichHandlersWrappedMessageIsRejoined) {
  const std::string log =
      "INFO     2024-11-28 13:20:02,101 infinity_emb INFO: ready to batch requests.   batch_handler.py:386\n"
      "ERROR    2024-11-28 13:24:44,248 infinity_emb ERROR: CUDA   batch_handler.py:574\n"
      "         out of memory. Tried to allocate 2.75 GiB. GPU 0                       \n"
      "         has a total capacity of 44.42 GiB of which 1.11                        \n"
      "         GiB is free. Process 412733 has 6.10 GiB memory in                     \n"
      "         use. Process 418902 has 37.21 GiB memory in use.                       \n"
      "         Of the allocated memory 5.61 GiB is allocated by                       \n"
      "         PyTorch, and 12.40 MiB is reserved by PyTorch but                      \n"
      "         unallocated.                                                           \n"
      "INFO:     10.0.0.7:50412 - \"POST /embeddings HTTP/1.1\" 500 Internal Server Error\n";
  auto u = unwrap_hard_wrapped(log);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->joins, 7u);
  EXPECT_NE(u->text.find("infinity_emb ERROR: CUDA out of memory. Tried to allocate 2.75 GiB. GPU 0 has a total capacity"),
            std::string::npos);
  EXPECT_EQ(u->text.find("batch_handler.py:574"), std::string::npos);  // the source column is dropped
  EXPECT_EQ(u->first_line.size(), 3u);
  EXPECT_EQ(u->first_line[2], 10u);
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  // Lines indented to another column, or a record without the source
  // column, are not a message's continuation.
  EXPECT_FALSE(unwrap_hard_wrapped("INFO     starting the engine                         engine.py:12\n"
                                   "                 11.61     ms tokenization\n"
                                   "                 58.03     ms inference\n"));
  EXPECT_FALSE(unwrap_hard_wrapped("ERROR    CUDA out of memory\n         Tried to allocate 2.75 GiB\n"));
}

TEST(Unwrap, RecordsTablesAndShortLogsAreLeftAlone) {
  // A command alone at a terminal's width (132 columns) with its output below:
  // no other line shows a wrap, so the command was not cut.
  const std::string command =
      "$ docker inspect -f '{{.State.Status}} OOMKilled={{.State.OOMKilled}} exit={{.State.ExitCode}} limit={{.HostConfig.Memory}}' "
      "vosk-en";
  ASSERT_EQ(command.size(), 132u);
  EXPECT_FALSE(unwrap_hard_wrapped(command + "\nexited OOMKilled=true exit=137 limit=5368709120\n"));
  // Not a command: the same line is taken as cut.
  EXPECT_TRUE(unwrap_hard_wrapped(command.substr(2) + "xy\nexited OOMKilled=true exit=137 limit=5368709120\n"));
  // Lines that reach the same width but each open a record of their own.
  EXPECT_FALSE(unwrap_hard_wrapped(
      "2026-03-01 10:00:00 INFO worker 1 loaded shard 00001 of 00004 in 2.1 s from /models/llama/w.safetensors\n"
      "2026-03-01 10:00:02 INFO worker 1 loaded shard 00002 of 00004 in 2.0 s from /models/llama/w.safetensors\n"
      "2026-03-01 10:00:03 INFO all shards loaded\n"
      "2026-03-01 10:00:03 INFO serving on :8000\n"
      "done\n"));
  // A fixed-width table: every row padded to the same width.
  EXPECT_FALSE(unwrap_hard_wrapped(
      "$ kubectl get pods -n ml -o wide\n"
      "NAME                              READY   STATUS      RESTARTS   AGE     IP            NODE\n"
      "vllm-7d9f8b6c5-x2x9k              0/1     OOMKilled   4          12m     10.1.2.3      gpu-1\n"
      "vllm-7d9f8b6c5-q8w7e              1/1     Running     0          12m     10.1.2.4      gpu-2\n"
      "vllm-7d9f8b6c5-k3k3k              1/1     Running     0          2m      10.1.2.5      g3\n"));
  // Framed tables: nvidia-smi's ASCII frame and a rich traceback panel's box drawing.
  EXPECT_FALSE(unwrap_hard_wrapped(
      "+-----------------------------------------------------------------------------------------+\n"
      "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
      "|=========================================================================================|\n"
      "|    0   N/A  N/A     41122      C   python3                                    79010MiB |\n"
      "+-----------------------------------------------------------------------------------------+\n"));
  EXPECT_FALSE(unwrap_hard_wrapped(
      "\xE2\x94\x82 /srv/app/serve.py:41 in main                                                      \xE2\x94\x82\n"
      "\xE2\x94\x82 /srv/venv/lib/python3.11/site-packages/vllm/engine/llm_engine.py:88 in __init__   \xE2\x94\x82\n"
      "RuntimeError: CUDA out of memory\n"));
  // The longest of a program's records followed by a bare line: one join at a
  // width no terminal has is not a wrap.
  EXPECT_FALSE(unwrap_hard_wrapped(
      "[indexer] batch 40 rss=1522MB heapUsed=1270MB external=24MB queueDepth=162\n"
      "[indexer] batch 50 rss=1830MB heapUsed=1555MB external=24MB queueDepth=199\n"
      "Killed\n"));
  // Short lines are not a terminal's width.
  EXPECT_FALSE(unwrap_hard_wrapped("Killed\nexit status 137\nKilled\n"));
  // Numbered rows of one width (ps, its PIDs differing) and the shell's
  // "Killed" after them (modelled on vector-env workers listed before a
  // kill, 2025; our own PIDs): rows and a report of their own.
  const std::string rows =
      " 118483 2605384 /home/ana/bin/python -c spawn_main(tracker_fd=6, pipe_handle=30) --multiprocessing-fork\n"
      " 118484 2604660 /home/ana/bin/python -c spawn_main(tracker_fd=6, pipe_handle=32) --multiprocessing-fork\n";
  EXPECT_FALSE(unwrap_hard_wrapped(rows + "Killed\n"));
  EXPECT_EQ(test::diagnose_text(rows + "Killed\n").layer, Layer::host_ram);
  // A traceback whose frames are indented: each frame is its own line.
  EXPECT_FALSE(unwrap_hard_wrapped(
      "Traceback (most recent call last):\n"
      "  File \"/srv/app/serve.py\", line 41, in <module>\n"
      "    model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16).cuda()\n"
      "  File \"/srv/venv/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 9\n"
      "    return self._apply(lambda t: t.cuda(device)) + something_long_enough_here_x\n"));
}

}  // namespace
}  // namespace aimem
