/* A stand-in for libcuda.so.1 with a scripted device, so that aimem_cuda_oom's
 * own logic (entry points, the allocation loop, the OOM line, exit statuses)
 * is tested on machines without a GPU. It is no driver: tests/gpu/
 * device_check.sh is what meets a real one.
 *
 * FAKE_CUDA_DEVICES  number of devices (default 1; 0 makes cuInit answer
 *                    CUDA_ERROR_NO_DEVICE as the real driver does)
 * FAKE_CUDA_MIB      memory of device 0 in MiB (default 64)
 * Declarations follow cuda.h; the error names and strings are the driver's. */
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef unsigned long long CUdeviceptr;

static unsigned long long used_bytes, next_ptr = 0x7f0000000000ULL;
static int have_ctx;

static long env_long(const char* name, long fallback) {
  const char* v = getenv(name);
  return v && *v ? strtol(v, NULL, 10) : fallback;
}
static unsigned long long total_bytes(void) { return (unsigned long long)env_long("FAKE_CUDA_MIB", 64) << 20; }

CUresult cuInit(unsigned flags) {
  (void)flags;
  return env_long("FAKE_CUDA_DEVICES", 1) > 0 ? 0 : 100; /* CUDA_ERROR_NO_DEVICE */
}
CUresult cuDeviceGetCount(int* n) {
  *n = (int)env_long("FAKE_CUDA_DEVICES", 1);
  return 0;
}
CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= env_long("FAKE_CUDA_DEVICES", 1)) return 101; /* CUDA_ERROR_INVALID_DEVICE */
  *d = ordinal;
  return 0;
}
CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  (void)d;
  strncpy(name, "Fake CUDA Device", (size_t)len);
  return 0;
}
CUresult cuCtxCreate_v2(CUcontext* c, unsigned flags, CUdevice d) {
  (void)flags;
  (void)d;
  have_ctx = 1;
  *c = (CUcontext)&have_ctx;
  return 0;
}
CUresult cuCtxDestroy_v2(CUcontext c) {
  (void)c;
  have_ctx = 0;
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t bytes) {
  if (!have_ctx) return 201; /* CUDA_ERROR_INVALID_CONTEXT */
  if (bytes == 0) return 1;  /* CUDA_ERROR_INVALID_VALUE */
  if (used_bytes + bytes > total_bytes()) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  used_bytes += bytes;
  *p = next_ptr;
  next_ptr += bytes;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  (void)p;
  return 0;
}
CUresult cuMemGetInfo_v2(size_t* free_b, size_t* total_b) {
  *total_b = (size_t)total_bytes();
  *free_b = (size_t)(total_bytes() - used_bytes);
  return 0;
}
CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case 0: *s = "CUDA_SUCCESS"; return 0;
    case 1: *s = "CUDA_ERROR_INVALID_VALUE"; return 0;
    case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
    case 100: *s = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 101: *s = "CUDA_ERROR_INVALID_DEVICE"; return 0;
    case 201: *s = "CUDA_ERROR_INVALID_CONTEXT"; return 0;
    default: *s = NULL; return 1;
  }
}
CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case 0: *s = "no error"; return 0;
    case 1: *s = "invalid argument"; return 0;
    case 2: *s = "out of memory"; return 0;
    case 100: *s = "no CUDA-capable device is detected"; return 0;
    case 101: *s = "invalid device ordinal"; return 0;
    case 201: *s = "invalid device context"; return 0;
    default: *s = NULL; return 1;
  }
}
