/* A stand-in for libnvidia-ml.so with scripted values, so tests exercise the
 * real dlopen/dlsym path of src/sources/nvml.cc and src/sources/gpu.cc without a GPU.
 *   AIMEM_FAKE_NVML_DEVICES="NAME:TOTAL_MIB:USED_MIB:NPROCS;NAME:..."
 *                                 TOTAL_MIB "NS": the memory call is NOT_SUPPORTED (3)
 *                                 (unified memory, like total 0); NPROCS synthetic
 *                                 processes get pids 1000.. and share USED equally
 *   AIMEM_FAKE_NVML_PROCS="DEV:PID:MIB;..."  scripted process lists (replace NPROCS)
 *   AIMEM_FAKE_NVML_INSUFFICIENT=1 the first process-list call after init answers
 *                                 INSUFFICIENT_SIZE (7) with the count, as when the
 *                                 list grows between calls
 *   AIMEM_FAKE_NVML_PROCS_API=N   only the process-list version N (3, 2 or 1)
 *                                 answers; newer ones say FUNCTION_NOT_FOUND (13)
 *   AIMEM_FAKE_NVML_INIT_FAIL=1   nvmlInit fails with DRIVER_NOT_LOADED (9)
 *   AIMEM_FAKE_NVML_HANG=1        nvmlInit never returns (deadline test)
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gi, ci; } proc_v2;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; } proc_v1;

#define MAXDEV 16
#define MAXPROC 64
static struct {
  char name[64];
  unsigned long long total, used;
  int not_supported;
  unsigned nprocs;
  unsigned pids[MAXPROC];
  unsigned long long bytes[MAXPROC];
} devs[MAXDEV];
static unsigned ndev;
static int insufficient_pending, procs_api = 3;

static void load(void) {
  const char* s = getenv("AIMEM_FAKE_NVML_DEVICES");
  memset(devs, 0, sizeof devs);
  ndev = 0;
  if (!s) return;
  char buf[1024];
  strncpy(buf, s, sizeof buf - 1);
  buf[sizeof buf - 1] = 0;
  char* save = 0;
  for (char* d = strtok_r(buf, ";", &save); d && ndev < MAXDEV; d = strtok_r(0, ";", &save)) {
    char* f[4] = {0};
    int k = 0;
    char* s2 = 0;
    for (char* p = strtok_r(d, ":", &s2); p && k < 4; p = strtok_r(0, ":", &s2)) f[k++] = p;
    if (k < 3) continue;
    strncpy(devs[ndev].name, f[0], 63);
    devs[ndev].not_supported = strcmp(f[1], "NS") == 0;
    devs[ndev].total = strtoull(f[1], 0, 10) << 20;
    devs[ndev].used = strtoull(f[2], 0, 10) << 20;
    unsigned n = k > 3 ? (unsigned)strtoul(f[3], 0, 10) : 0;
    if (n > MAXPROC) n = MAXPROC;
    devs[ndev].nprocs = n;
    for (unsigned j = 0; j < n; ++j) {
      devs[ndev].pids[j] = 1000 + j;
      devs[ndev].bytes[j] = devs[ndev].used / n;
    }
    ++ndev;
  }
  const char* procs = getenv("AIMEM_FAKE_NVML_PROCS");
  if (procs) {
    for (unsigned i = 0; i < ndev; ++i) devs[i].nprocs = 0;
    strncpy(buf, procs, sizeof buf - 1);
    buf[sizeof buf - 1] = 0;
    for (char* d = strtok_r(buf, ";", &save); d; d = strtok_r(0, ";", &save)) {
      unsigned dev = 0, pid = 0;
      unsigned long long mib = 0;
      char* e = 0;
      dev = (unsigned)strtoul(d, &e, 10);
      if (*e++ != ':') continue;
      pid = (unsigned)strtoul(e, &e, 10);
      if (*e++ != ':') continue;
      mib = strtoull(e, 0, 10);
      if (dev >= ndev || devs[dev].nprocs >= MAXPROC) continue;
      devs[dev].pids[devs[dev].nprocs] = pid;
      devs[dev].bytes[devs[dev].nprocs] = mib << 20;
      ++devs[dev].nprocs;
    }
  }
  insufficient_pending = getenv("AIMEM_FAKE_NVML_INSUFFICIENT") != 0;
  procs_api = getenv("AIMEM_FAKE_NVML_PROCS_API") ? atoi(getenv("AIMEM_FAKE_NVML_PROCS_API")) : 3;
}

int nvmlInit_v2(void) {
  if (getenv("AIMEM_FAKE_NVML_HANG")) for (;;) sleep(1);
  if (getenv("AIMEM_FAKE_NVML_INIT_FAIL")) return 9;
  load();
  return 0;
}
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned* n) { *n = ndev; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, void** h) {
  if (i >= ndev) return 2;
  *h = &devs[i];
  return 0;
}
static unsigned idx(void* h) { return (unsigned)(((char*)h - (char*)devs) / sizeof devs[0]); }
int nvmlDeviceGetName(void* h, char* out, unsigned len) {
  strncpy(out, devs[idx(h)].name, len);
  if (len) out[len - 1] = 0;
  return 0;
}
int nvmlDeviceGetUUID(void* h, char* out, unsigned len) {
  static const char* fmt = "GPU-00000000-0000-0000-0000-00000000000";
  if (len < 42) return 7;
  strcpy(out, fmt);
  out[39] = (char)('0' + idx(h) % 10);
  out[40] = 0;
  return 0;
}
int nvmlDeviceGetMemoryInfo(void* h, nvmlMemory_t* m) {
  unsigned i = idx(h);
  if (devs[i].not_supported) return 3;
  m->total = devs[i].total;
  m->used = devs[i].used;
  m->free = devs[i].total > devs[i].used ? devs[i].total - devs[i].used : 0;
  return 0;
}
/* Fills either struct layout; `wide` = nvmlProcessInfo_v2_t (used by _v2 and _v3). */
static int procs(void* h, unsigned* count, void* out, int version) {
  if (version > procs_api) return 13;
  unsigned i = idx(h), n = devs[i].nprocs;
  if (*count < n || insufficient_pending) {
    insufficient_pending = 0;
    *count = n;
    return 7;
  }
  for (unsigned k = 0; k < n; ++k) {
    if (version >= 2) {
      proc_v2* p = (proc_v2*)out + k;
      p->pid = devs[i].pids[k];
      p->usedGpuMemory = devs[i].bytes[k];
      p->gi = p->ci = 0;
    } else {
      proc_v1* p = (proc_v1*)out + k;
      p->pid = devs[i].pids[k];
      p->usedGpuMemory = devs[i].bytes[k];
    }
  }
  *count = n;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* h, unsigned* count, proc_v2* out) { return procs(h, count, out, 3); }
int nvmlDeviceGetComputeRunningProcesses_v2(void* h, unsigned* count, proc_v2* out) { return procs(h, count, out, 2); }
int nvmlDeviceGetComputeRunningProcesses(void* h, unsigned* count, proc_v1* out) { return procs(h, count, out, 1); }
const char* nvmlErrorString(int r) { return r == 9 ? "Driver Not Loaded" : "Unknown Error"; }
