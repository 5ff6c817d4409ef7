// Writes a mixed service log of a given size for the diagnose benchmark:
// ordinary lines (HTTP access, application INFO/DEBUG, GC and scheduler
// chatter, some with memory words that must not count as failures) with
// kernel OOM reports, PyTorch CUDA OOMs and V8 heap failures sprinkled through.
// Deterministic (fixed seed), so runs compare.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

uint64_t state = 0x9E3779B97F4A7C15ULL;
uint64_t next() {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

const char* kPaths[] = {"/v1/completions", "/v1/chat/completions", "/healthz", "/metrics", "/v1/embeddings", "/api/generate"};
const char* kWords[] = {"request", "batch", "token", "cache", "worker", "queue", "shard", "model", "memory", "scheduler"};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: gen_mixed_log FILE SIZE_MIB\n");
    return 2;
  }
  FILE* out = std::fopen(argv[1], "w");
  if (!out) {
    std::perror(argv[1]);
    return 2;
  }
  const uint64_t target = std::strtoull(argv[2], nullptr, 10) << 20;
  uint64_t written = 0, line = 0;
  char buf[1024];
  while (written < target) {
    ++line;
    int sec = static_cast<int>(line / 200 % 86400);
    int n = 0;
    uint64_t r = next();
    if (line % 2'000'003 == 0) {
      // A kernel memcg OOM report (new format).
      n = std::snprintf(buf, sizeof buf,
                        "Nov 29 %02d:%02d:%02d node-7 kernel: [%llu.%06u] python3 invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n"
                        "Nov 29 %02d:%02d:%02d node-7 kernel: [%llu.%06u] memory: usage 4194304kB, limit 4194304kB, failcnt 1273\n"
                        "Nov 29 %02d:%02d:%02d node-7 kernel: [%llu.%06u] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/docker/4f1e2d3c4b5a,task_memcg=/docker/4f1e2d3c4b5a,task=python3,pid=%llu,uid=0\n"
                        "Nov 29 %02d:%02d:%02d node-7 kernel: [%llu.%06u] Memory cgroup out of memory: Killed process %llu (python3) total-vm:5242880kB, anon-rss:4190000kB, file-rss:4000kB, shmem-rss:0kB, UID:0 pgtables:8400kB oom_score_adj:0\n",
                        sec / 3600, sec / 60 % 60, sec % 60, static_cast<unsigned long long>(line / 100), static_cast<unsigned>(r % 1000000),
                        sec / 3600, sec / 60 % 60, sec % 60, static_cast<unsigned long long>(line / 100), static_cast<unsigned>(r % 1000000),
                        sec / 3600, sec / 60 % 60, sec % 60, static_cast<unsigned long long>(line / 100), static_cast<unsigned>(r % 1000000),
                        static_cast<unsigned long long>(1000 + line % 30000),
                        sec / 3600, sec / 60 % 60, sec % 60, static_cast<unsigned long long>(line / 100), static_cast<unsigned>(r % 1000000),
                        static_cast<unsigned long long>(1000 + line % 30000));
    } else if (line % 3'000'017 == 0) {
      n = std::snprintf(buf, sizeof buf,
                        "2026-11-29T%02d:%02d:%02dZ ERROR worker: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.25 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 78.12 GiB memory in use. Of the allocated memory 75.01 GiB is allocated by PyTorch, and 1.20 GiB is reserved by PyTorch but unallocated.\n",
                        sec / 3600, sec / 60 % 60, sec % 60);
    } else if (line % 4'000'037 == 0) {
      n = std::snprintf(buf, sizeof buf, "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n");
    } else if (r % 10 < 6) {
      n = std::snprintf(buf, sizeof buf, "10.0.%u.%u - - [29/Nov/2026:%02d:%02d:%02d +0000] \"POST %s HTTP/1.1\" 200 %u \"-\" \"python-httpx/0.27.0\" rt=%u.%03u\n",
                        static_cast<unsigned>(r >> 8 & 255), static_cast<unsigned>(r >> 16 & 255), sec / 3600, sec / 60 % 60, sec % 60,
                        kPaths[(r >> 24) % 6], static_cast<unsigned>(r >> 32 & 65535), static_cast<unsigned>(r >> 40 & 3),
                        static_cast<unsigned>(r >> 44 & 999));
    } else if (r % 10 < 9) {
      n = std::snprintf(buf, sizeof buf, "2026-11-29T%02d:%02d:%02d.%03uZ INFO  [app.%s] processed %s id=%llu tokens=%u latency_ms=%u\n",
                        sec / 3600, sec / 60 % 60, sec % 60, static_cast<unsigned>(r % 1000), kWords[(r >> 12) % 10],
                        kWords[(r >> 20) % 10], static_cast<unsigned long long>(r >> 24), static_cast<unsigned>(r >> 8 & 4095),
                        static_cast<unsigned>(r >> 30 & 1023));
    } else {
      n = std::snprintf(buf, sizeof buf, "2026-11-29T%02d:%02d:%02dZ DEBUG gc: heap used %u MB of %u MB, %u objects freed; kv cache usage %u%%\n",
                        sec / 3600, sec / 60 % 60, sec % 60, static_cast<unsigned>(r % 2048), 4096u, static_cast<unsigned>(r >> 16 & 65535),
                        static_cast<unsigned>(r >> 40 % 100));
    }
    if (n > 0) {
      std::fwrite(buf, 1, static_cast<size_t>(n), out);
      written += static_cast<uint64_t>(n);
    }
  }
  std::fclose(out);
  return 0;
}
