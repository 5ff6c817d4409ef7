/* A stand-in for libnvidia-ml.so with scripted values, so tests exercise the
 * real dlopen/dlsym path of src/sources/nvml.cc without a GPU.
 *   AIMEM_FAKE_NVML_DEVICES="NAME:TOTAL_MIB:USED_MIB:NPROCS;NAME:..."
 *   AIMEM_FAKE_NVML_INIT_FAIL=1   nvmlInit fails with DRIVER_NOT_LOADED (9)
 *   AIMEM_FAKE_NVML_HANG=1        nvmlInit never returns (deadline test)
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned int pid; unsigned long long usedGpuMemory; unsigned int gi, ci; } proc_v2;

#define MAXDEV 16
static struct { char name[64]; unsigned long long total, used; unsigned nprocs; } devs[MAXDEV];
static unsigned ndev;

static void load(void) {
  const char* s = getenv("AIMEM_FAKE_NVML_DEVICES");
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
    devs[ndev].total = strtoull(f[1], 0, 10) << 20;
    devs[ndev].used = strtoull(f[2], 0, 10) << 20;
    devs[ndev].nprocs = k > 3 ? (unsigned)strtoul(f[3], 0, 10) : 0;
    ++ndev;
  }
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
int nvmlDeviceGetMemoryInfo(void* h, nvmlMemory_t* m) {
  unsigned i = idx(h);
  m->total = devs[i].total;
  m->used = devs[i].used;
  m->free = devs[i].total > devs[i].used ? devs[i].total - devs[i].used : 0;
  return 0;
}
int nvmlDeviceGetComputeRunningProcesses_v3(void* h, unsigned* count, proc_v2* out) {
  unsigned i = idx(h), n = devs[i].nprocs;
  if (*count < n) { *count = n; return 7; }
  for (unsigned k = 0; k < n; ++k) {
    out[k].pid = 1000 + k;
    out[k].usedGpuMemory = devs[i].used / n;
    out[k].gi = out[k].ci = 0;
  }
  *count = n;
  return 0;
}
const char* nvmlErrorString(int r) { return r == 9 ? "Driver Not Loaded" : "Unknown Error"; }
