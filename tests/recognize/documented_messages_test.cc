// The generic layer's reach (issue 14: "a real failure is never none"):
// the out-of-memory messages of runtimes, drivers, engines, platforms and
// orchestrators as their documentation or source prints them, one per
// program, and the look-alikes that are not memory. Each line is written here
// in the program's own wording with our own sizes, PIDs and names; none is a
// corpus case. The expected pool is the taxonomy's (docs/diagnose.md): a
// program's own cap (PHP's memory_limit, Redis's maxmemory, DuckDB's limit,
// a WebAssembly module's heap) is layer unknown, a bare SIGKILL or exit 137 leaves the pool undecided,
// and a crash, a launch limit, a full disk or a time limit is not_memory.
// Written 2026-12-05 from a battery that found a dozen of them read as "none"
// or the wrong pool (V8's GC report without its FATAL line, cuMemAlloc,
// ROCm's access fault, glibc's heap corruption, fork's EAGAIN, macOS's and
// iOS's messages); the rest already held and are kept here so they go on
// holding. Below them, the same programs' healthy output full of memory
// words, which must stay "none".
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

struct Message {
  const char* program;
  const char* text;
  Layer layer;
};

constexpr Message kMessages[] = {
    {"go", "fatal error: runtime: out of memory\n", Layer::host_ram},
    {"rust", "memory allocation of 1048576 bytes failed\n", Layer::host_ram},
    {"cpp", "terminate called after throwing an instance of 'std::bad_alloc'\n", Layer::host_ram},
    {"python", "MemoryError\n", Layer::host_ram},
    {"java", "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n", Layer::jvm_heap},
    {"node", "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory\n", Layer::js_heap},
    // Alone, .NET's exception names no pool (the address space, a heap limit or the host).
    {"dotnet", "Unhandled exception. System.OutOfMemoryException: Exception of type 'System.OutOfMemoryException' was thrown.\n", Layer::unknown},
    {"ruby", "failed to allocate memory (NoMemoryError)\n", Layer::host_ram},
    {"php", "PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /var/www/index.php on line 12\n", Layer::unknown},
    {"erlang", "eheap_alloc: Cannot allocate 6801972344 bytes of memory (of type \"heap\").\n", Layer::host_ram},
    {"ghc2", "app: out of memory (requested 1048576 bytes)\n", Layer::host_ram},
    {"julia", "ERROR: OutOfMemoryError()\n", Layer::host_ram},
    {"r", "Error: cannot allocate vector of size 3.2 Gb\n", Layer::host_ram},
    {"perl", "Out of memory!\n", Layer::host_ram},
    {"lua", "lua: not enough memory\n", Layer::host_ram},
    {"ocaml", "Fatal error: exception Out_of_memory\n", Layer::host_ram},
    {"matlab", "Out of memory. The likely cause is an infinite recursion within the program.\n", Layer::host_ram},
    {"cuda", "RuntimeError: CUDA error: out of memory\n", Layer::gpu_vram},
    {"cublas", "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`\n", Layer::gpu_vram},
    {"cudnn", "RuntimeError: cuDNN error: CUDNN_STATUS_ALLOC_FAILED\n", Layer::gpu_vram},
    {"cumemalloc", "cuMemAlloc failed: out of memory\n", Layer::gpu_vram},
    {"opencl", "clEnqueueNDRangeKernel failed: CL_MEM_OBJECT_ALLOCATION_FAILURE\n", Layer::gpu_vram},
    {"vulkan", "vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY\n", Layer::gpu_vram},
    {"hip", "hipErrorOutOfMemory: out of memory\n", Layer::gpu_vram},
    {"metal", "Error: command buffer exited with error status. The Metal Performance Shaders operations encoded on it may not have completed. Error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n", Layer::gpu_vram},
    {"mps", "RuntimeError: MPS backend out of memory (MPS allocated: 17.56 GB, other allocations: 1.20 GB, max allowed: 18.13 GB). Tried to allocate 256.00 MB on private pool.\n", Layer::gpu_vram},
    {"windows", "OSError: [WinError 1455] The paging file is too small for this operation to complete\n", Layer::host_ram},
    {"enomem", "OSError: [Errno 12] Cannot allocate memory\n", Layer::host_ram},
    {"postgres", "ERROR:  out of memory\nDETAIL:  Failed on request of size 1048576 in memory context \"ExecutorState\".\n", Layer::host_ram},
    {"mysql", "ERROR 5 (HY000): Out of memory (Needed 1048576 bytes)\n", Layer::host_ram},
    {"sqlite", "Error: out of memory\n", Layer::host_ram},
    {"redis", "(error) OOM command not allowed when used memory > 'maxmemory'.\n", Layer::unknown},
    {"es", "org.elasticsearch.common.breaker.CircuitBreakingException: [parent] Data too large, data for [<http_request>] would be [1020054528/972.7mb], which is larger than the limit of [986061209/940.3mb]\n", Layer::jvm_heap},
    {"spark", "Container killed by YARN for exceeding memory limits. 5.5 GB of 5.5 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.\n", Layer::container_limit},
    {"tf", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,512,512] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n", Layer::gpu_vram},
    {"jax", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8589934592 bytes.\n", Layer::gpu_vram},
    {"onnx", "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'Conv_0' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:368 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 2147483648\n", Layer::gpu_vram},
    {"llamacpp", "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory\n", Layer::gpu_vram},
    {"swift", "Fatal error: Can't allocate region\n", Layer::host_ram},
    // WebAssembly memory is no pool of the machine (wasm_memory.cc): layer unknown, the reason names it.
    {"wasm", "RangeError: WebAssembly.Memory(): could not allocate memory\n", Layer::unknown},
    {"v8wasm", "RangeError: Array buffer allocation failed\n", Layer::host_ram},
    {"kernel", "Out of memory: Killed process 1234 (python3) total-vm:12345678kB, anon-rss:8765432kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:20000kB oom_score_adj:0\n", Layer::host_ram},
    {"k8s", "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n", Layer::k8s_pod_limit},
    {"jvm_native", "# There is insufficient memory for the Java Runtime Environment to continue.\n# Native memory allocation (mmap) failed to map 1048576 bytes for committing reserved memory.\n", Layer::host_ram},
    {"jvm_meta", "java.lang.OutOfMemoryError: Metaspace\n", Layer::jvm_heap},
    {"jvm_direct", "java.lang.OutOfMemoryError: Direct buffer memory\n", Layer::jvm_heap},
    {"jvm_thread", "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached\n", Layer::host_ram},
    {"numpy", "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array with shape (1000000000,) and data type float64\n", Layer::host_ram},
    {"pandas", "pandas.errors... MemoryError: Unable to allocate 2.00 GiB for an array with shape (268435456,) and data type int64\n", Layer::host_ram},
    {"torchcpu", "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 34359738368 bytes.\n", Layer::host_ram},
    {"nccl", "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\nCuda failure 'out of memory'\n", Layer::gpu_vram},
    {"triton", "tritonserver: failed to allocate CUDA memory with byte size 1073741824 on GPU 0: CNMEM_STATUS_OUT_OF_MEMORY\n", Layer::gpu_vram},
    {"dask", "distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:39581 (pid=12345) exceeded 95% memory budget. Restarting...\n", Layer::userspace_oom_killer},
    {"ray", "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n", Layer::userspace_oom_killer},
    {"earlyoom", "earlyoom: low memory! at or below SIGTERM limits: mem 10.00%, swap 10.00%\nearlyoom: sending SIGTERM to process 1234 uid 1000 \"python3\": badness 900, VmRSS 12000 MiB\n", Layer::userspace_oom_killer},
    {"systemd-oomd", "systemd-oomd[123]: Killed /user.slice/user-1000.slice/session-2.scope due to memory pressure for /user.slice/user-1000.slice being 72.32% > 50.00% for > 20s with reclaim activity\n", Layer::userspace_oom_killer},
    {"slurm", "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=1234.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.\n", Layer::container_limit},
    {"bash", "Killed\n", Layer::host_ram},
    {"zsh", "zsh: killed     python train.py\n", Layer::host_ram},
    {"exit137", "Process finished with exit code 137 (interrupted by signal 9: SIGKILL)\n", Layer::unknown},
    {"jupyter", "Kernel Restarting\nThe kernel for Untitled.ipynb appears to have died. It will restart automatically.\n", Layer::unknown},
    {"gcc", "c++: fatal error: Killed signal terminated program cc1plus\n", Layer::host_ram},
    {"cargo", "error: could not compile `foo` (lib)\nCaused by:\n  process didn't exit successfully: `rustc --crate-name foo` (signal: 9, SIGKILL: kill)\n", Layer::unknown},
    {"webpack", "<--- Last few GCs --->\n[1234:0x5]   123456 ms: Mark-sweep 2047.5 (2083.2) -> 2046.9 (2083.7) MB, 1234.5 / 0.0 ms  (average mu = 0.105, current mu = 0.002) allocation failure; scavenge might not succeed\n", Layer::js_heap},
    {"android", "java.lang.OutOfMemoryError: Failed to allocate a 268435472 byte allocation with 25165824 free bytes and 212MB until OOM\n", Layer::jvm_heap},
    {"duckdb", "Out of Memory Error: failed to allocate data of size 256.0 MiB (7.4 GiB/7.4 GiB used)\n", Layer::unknown},
    {"vllm", "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n", Layer::gpu_vram},
    {"sglang", "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n", Layer::gpu_vram},
    {"tgi", "torch.cuda.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n", Layer::gpu_vram},
    {"xpu", "RuntimeError: XPU out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.11 GiB total capacity; 13.02 GiB already allocated; 13.50 GiB reserved in total by PyTorch)\n", Layer::gpu_vram},
    {"vllm_kv", "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (17824). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n", Layer::gpu_vram},
    {"tgi_prefill", "Not enough memory to handle 4096 prefill tokens. You need to decrease `--max-batch-prefill-tokens`\n", Layer::gpu_vram},
    {"gallocr", "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 2147483648\nllama_new_context_with_model: failed to allocate compute buffers\n", Layer::gpu_vram},
    {"ollama_sys", "Error: model requires more system memory (12.5 GiB) than is available (8.1 GiB)\n", Layer::host_ram},
    {"ollama_killed", "Error: llama runner process has terminated: signal: killed\n", Layer::unknown},
    {"trt", "[TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::145] Error Code 2: OutOfMemory (no further information)\n", Layer::gpu_vram},
    {"trtllm", "[TensorRT-LLM][ERROR] tensorrt_llm::common::TllmException: [TensorRT-LLM][ERROR] Assertion failed: Requested amount of GPU memory (4294967296 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.\n", Layer::gpu_vram},
    {"comfy", "torch.OutOfMemoryError: Allocation on device\n", Layer::gpu_vram},
    {"directml", "RuntimeError: Could not allocate tensor with 1073741824 bytes. There is not enough GPU video memory available!\n", Layer::gpu_vram},
    {"habana", "RuntimeError: synStatus=26 [Out of memory] Device memory allocation failed\n", Layer::gpu_vram},
    {"hip", "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB of which 1.08 GiB is free.\n", Layer::gpu_vram},
    {"paddle", "ResourceExhaustedError: Out of memory error on GPU 0. Cannot allocate 96.562500MB memory on GPU 0, available memory is only 41.250000MB.\n", Layer::gpu_vram},
    {"k8sevent", "Warning  OOMKilling  node/gke-pool-1-abcd  Memory cgroup out of memory: Killed process 1234 (python) total-vm:12345678kB, anon-rss:4000000kB, file-rss:0kB, shmem-rss:0kB\n", Layer::k8s_pod_limit},
    {"getpods", "NAME                      READY   STATUS      RESTARTS      AGE\ninference-7d9f8-abcde     0/1     OOMKilled   3 (40s ago)   5m\n", Layer::k8s_pod_limit},
    {"evict", "Warning  Evicted  pod/web-1  The node was low on resource: memory. Threshold quantity: 100Mi, available: 90Mi. Container app was using 3Gi, which exceeds its request of 1Gi.\n", Layer::k8s_eviction},
    {"ecs", "Essential container in task exited\nOutOfMemoryError: Container killed due to memory usage\n", Layer::container_limit},
    {"cloudrun", "Memory limit of 512 MiB exceeded with 530 MiB used. Consider increasing the memory limit, see https://cloud.google.com/run/docs/configuring/memory-limits\n", Layer::container_limit},
    {"heroku15", "2026-01-01T10:00:00.000000+00:00 heroku[web.1]: Error R15 (Memory quota vastly exceeded)\n2026-01-01T10:00:00.000000+00:00 heroku[web.1]: Stopping process with SIGKILL\n", Layer::container_limit},
    {"lambda", "REPORT RequestId: 1a2b3c Duration: 2012.11 ms Billed Duration: 2013 ms Memory Size: 3008 MB Max Memory Used: 3008 MB\nRuntime exited with error: signal: killed Runtime.ExitError\n", Layer::container_limit},
    {"nomad", "Exit Code: 137, Exit Message: \"OOM Killed\"\n", Layer::container_limit},
    {"systemd1", "app.service: A process of this unit has been killed by the OOM killer.\n", Layer::host_ram},
    {"systemd2", "app.service: Failed with result 'oom-kill'.\n", Layer::host_ram},
    {"compose", "worker-1 exited with code 137\n", Layer::unknown},
    {"spark_gc", "java.lang.OutOfMemoryError: GC overhead limit exceeded\n", Layer::jvm_heap},
    {"celery", "billiard.exceptions.WorkerLostError: Worker exited prematurely: signal 9 (SIGKILL) Job: 12.\n", Layer::unknown},
    {"gunicorn", "[2026-01-01 10:00:00 +0000] [1] [ERROR] Worker (pid:1234) was sent SIGKILL! Perhaps out of memory?\n", Layer::unknown},
    {"uwsgi", "DAMN ! worker 1 (pid: 1234) died, killed by signal 9 :( trying respawn ...\n", Layer::unknown},
    {"pm2", "PM2 | [PM2][WORKER] Process 0 restarted because it exceeds --max-memory-restart value (current_memory=536870912 max_memory_limit=524288000 [octets])\n", Layer::userspace_oom_killer},
    {"win2004", "Windows successfully diagnosed a low virtual memory condition. The following programs consumed the most virtual memory: python.exe (1234) consumed 17179869184 bytes\n", Layer::host_ram},
    {"macos", "Your system has run out of application memory.\n", Layer::host_ram},
    {"rayoom", "(raylet) Task was killed due to the node running low on memory.\nMemory on the node (IP: 10.0.0.1, ID: abc) where the task (task ID: def, name=train, pid=1234, memory used=12.3GB) was running was 29.5GB / 31.0GB (0.95), which exceeds the memory usage threshold of 0.95.\n", Layer::userspace_oom_killer},
    {"dask_kill", "distributed.nanny - WARNING - Worker tcp://10.0.0.2:45678 (pid=1234) exceeded 95% memory budget. Restarting...\n", Layer::userspace_oom_killer},
    {"k8s_describe", "    State:          Waiting\n      Reason:       CrashLoopBackOff\n    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n", Layer::k8s_pod_limit},
    {"kernel_old", "Out of memory: Kill process 1234 (java) score 900 or sacrifice child\nKilled process 1234 (java) total-vm:8000000kB, anon-rss:6000000kB, file-rss:0kB\n", Layer::host_ram},
    {"memcg_v2", "memory: usage 4194304kB, limit 4194304kB, failcnt 12345\nMemory cgroup out of memory: Killed process 1234 (python3) total-vm:5000000kB, anon-rss:4100000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:8000kB oom_score_adj:0\n", Layer::container_limit},
    {"jemalloc", "<jemalloc>: Error in malloc(): out of memory. Requested: 1073741824, active: 8589934592\n", Layer::host_ram},
    {"glibc_abort", "Fatal glibc error: malloc.c:2599 (sysmalloc): assertion failed\n", Layer::not_memory},
    {"rocm", "Memory access fault by GPU node-1 (Agent handle: 0x55d1) on address 0x7f1. Reason: Page not present or supervisor privilege.\n", Layer::not_memory},
    {"illegal", "RuntimeError: CUDA error: an illegal memory access was encountered\n", Layer::not_memory},
    {"segv", "Segmentation fault (core dumped)\n", Layer::not_memory},
    {"doublefree", "double free or corruption (out)\nAborted (core dumped)\n", Layer::not_memory},
    {"corrupt", "malloc(): corrupted top size\nAborted (core dumped)\n", Layer::not_memory},
    {"lengtherr", "terminate called after throwing an instance of 'std::length_error'\n  what():  vector::_M_default_append\n", Layer::not_memory},
    {"bus", "Bus error (core dumped)\n", Layer::not_memory},
    {"ncclto", "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1234, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.\n", Layer::not_memory},
    {"xid", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n", Layer::not_memory},
    {"ecc", "RuntimeError: CUDA error: uncorrectable ECC error encountered\n", Layer::not_memory},
    {"nospace", "OSError: [Errno 28] No space left on device\n", Layer::not_memory},
    {"nofile", "OSError: [Errno 24] Too many open files\n", Layer::not_memory},
    {"fork", "bash: fork: retry: Resource temporarily unavailable\n", Layer::not_memory},
    {"shm", "RuntimeError: DataLoader worker (pid 1234) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n", Layer::container_limit},
    {"stackov", "Fatal Python error: Cannot recover from stack overflow.\n", Layer::not_memory},
    {"recursion", "RecursionError: maximum recursion depth exceeded\n", Layer::not_memory},
    {"jvmstack", "Exception in thread \"main\" java.lang.StackOverflowError\n", Layer::not_memory},
    {"sigterm", "Received SIGTERM, shutting down gracefully\n", Layer::not_memory},
    {"liveness", "Warning  Unhealthy  kubelet  Liveness probe failed: HTTP probe failed with statuscode: 500\nNormal   Killing    kubelet  Container app failed liveness probe, will be restarted\n", Layer::not_memory},
    {"timeout", "slurmstepd: error: *** JOB 1234 ON node01 CANCELLED AT 2026-01-01T10:00:00 DUE TO TIME LIMIT ***\n", Layer::not_memory},
    {"cudadriver", "RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version\n", Layer::not_memory},
    {"nokernel", "RuntimeError: CUDA error: no kernel image is available for execution on the device\n", Layer::not_memory},
    {"launchres", "RuntimeError: CUDA error: too many resources requested for launch\n", Layer::not_memory},
    {"devside", "RuntimeError: CUDA error: device-side assert triggered\n", Layer::not_memory},
    {"evicteddisk", "The node was low on resource: ephemeral-storage. Container app was using 12Gi, which exceeds its request of 0.\n", Layer::not_memory},
    {"exit1", "Process finished with exit code 1\n", Layer::none},
    {"exit143", "Process finished with exit code 143 (interrupted by signal 15: SIGTERM)\n", Layer::not_memory},    // A second battery (2026-12-05): accelerator libraries beyond the
    // frameworks, build tools, BSDs, schedulers, servers' own caps, and
    // resource words that are not memory (gRPC's message cap, etcd's quota,
    // a Triton kernel's shared memory per block).
    {"tpu_hbm", "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 17.85G of 15.48G hbm. Exceeded hbm capacity by 2.37G.\n", Layer::gpu_vram},
    {"xla_vmem", "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Compilation failure: Ran out of memory in memory space vmem. It should not be possible to run out of vmem - please file a bug against XLA.\n", Layer::not_memory},
    {"neuron", "2025-Mar-03 10:12:44.0123 4321:4321 ERROR  TDRV:dmem_alloc_internal                    Failed to alloc DEVICE memory: 536870912\n2025-Mar-03 10:12:44.0125 4321:4321 ERROR  NRT:nrt_allocate_tensor                     Failed to allocate tensor: out of device memory\n", Layer::gpu_vram},
    {"cupy", "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 2,147,483,648 bytes (allocated so far: 21,474,836,480 bytes).\n", Layer::gpu_vram},
    {"numba", "numba.cuda.cudadrv.driver.CudaAPIError: [2] Call to cuMemAlloc results in CUDA_ERROR_OUT_OF_MEMORY\n", Layer::gpu_vram},
    {"mxnet", "mxnet.base.MXNetError: [10:21:33] src/storage/./pooled_storage_manager.h:157: cudaMalloc failed: out of memory\n", Layer::gpu_vram},
    {"caffe", "F0312 10:21:33.123456  4321 syncedmem.cpp:71] Check failed: error == cudaSuccess (2 vs. 0)  out of memory\n", Layer::gpu_vram},
    {"darknet", "CUDA status Error: file: ./src/dark_cuda.c : () : line: 373 : build time: Jan  3 2024 - 10:00:00 \n CUDA Error: out of memory\n", Layer::gpu_vram},
    {"blender", "Error: System is out of GPU memory\nCUDA error: Out of memory in cuMemAlloc(&device_pointer, size), line 1234\n", Layer::gpu_vram},
    {"faiss", "Faiss assertion 'err == cudaSuccess' failed in void* faiss::gpu::StandardGpuResourcesImpl::allocMemory(const faiss::gpu::AllocRequest&) at /faiss/gpu/StandardGpuResources.cpp:452; details: Failed to cudaMalloc 1073741824 bytes on device 0 (error 2 out of memory\n", Layer::gpu_vram},
    // RAPIDS' pool resource at its maximum, wrapped in a host exception: the device's (rmm/mr/device).
    {"rmm_pool", "MemoryError: std::bad_alloc: RMM failure at:/opt/rapids/include/rmm/mr/device/pool_memory_resource.hpp:179: Maximum pool size exceeded\n", Layer::gpu_vram},
    // A game engine's render hardware interface (Unreal's LogRHI): out of video memory.
    {"ue_rhi", "[2024.01.06-17.22.41:512][  0]LogRHI:Error: Out of video memory trying to allocate a rendering resource. Exiting...\n", Layer::gpu_vram},
    {"rmm", "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: /opt/conda/include/rmm/mr/device/cuda_memory_resource.hpp:70: cudaErrorMemoryAllocation out of memory\n", Layer::gpu_vram},
    {"xgboost", "xgboost.core.XGBoostError: [10:21:33] /workspace/src/common/device_helpers.cuh:1234: Memory allocation error on worker 0: std::bad_alloc: cudaErrorMemoryAllocation: out of memory\n- Free memory: 104857600\n- Requested memory: 2147483648\n", Layer::gpu_vram},
    {"juliacuda", "ERROR: Out of GPU memory trying to allocate 1.500 GiB\nEffective GPU memory usage: 99.52% (23.498 GiB/23.613 GiB)\nMemory pool usage: 20.125 GiB (22.000 GiB reserved)\n", Layer::gpu_vram},
    {"emscripten", "Cannot enlarge memory arrays to size 2147549184 bytes (OOM). Either (1) compile with -sINITIAL_MEMORY=X with X higher than the current value 16777216, (2) compile with -sALLOW_MEMORY_GROWTH which allows increasing the size at runtime, or (3) if you want malloc to return NULL (0) instead of this abort, compile with -sABORTING_MALLOC=0\n", Layer::unknown},
    {"matlab_pref", "Error using zeros\nRequested 100000x100000 (74.5GB) array exceeds maximum array size preference (31.8GB). This might cause MATLAB to become unresponsive.\n", Layer::unknown},
    {"gradle", "Expiring Daemon because JVM heap space is exhausted\n", Layer::jvm_heap},
    {"ffmpeg", "[libx264 @ 0x55d4c3a1b2c0] malloc of size 2097152 failed\nError initializing output stream 0:0 -- Error while opening encoder for output stream #0:0 - maybe incorrect parameters such as bit_rate, rate, width or height\nCannot allocate memory\n", Layer::host_ram},
    {"imagemagick", "convert-im6.q16: cache resources exhausted `scan.tif' @ error/cache.c/OpenPixelCache/4095.\n", Layer::unknown},
    // Language runtimes' own heap caps: GHC's +RTS -M (rts/RtsMessages.c), SBCL's dynamic space (gencgc.c).
    {"ghc_heap", "indexer: Heap exhausted;\nindexer: Current maximum heap size is 1073741824 bytes (1024 MB).\nindexer: Use `+RTS -M<size>' to increase it.\n", Layer::unknown},
    {"r_vsize", "> x <- read.maf(maf = m)\nError: vector memory exhausted (limit reached?)\n", Layer::unknown},
    {"sbcl_heap", "Heap exhausted during allocation: 8192 bytes available, 65552 requested.\nfatal error encountered in SBCL pid 4410:\nHeap exhausted, game over.\n", Layer::unknown},
    // AMD's driver timing out a ring and resetting the GPU (amdgpu_job.c): a hang, not memory.
    {"amdgpu_reset", "[ 5120.331201] [drm:amdgpu_job_timedout [amdgpu]] *ERROR* ring gfx_0.0.0 timeout, signaled seq=1201, emitted seq=1203\n[ 5120.331540] amdgpu 0000:03:00.0: amdgpu: GPU reset begin!\n[ 5122.004113] [drm] VRAM is lost due to GPU reset!\n", Layer::not_memory},
    {"gdal", "ERROR 2: Out of memory allocating 4294967296 bytes.\n", Layer::host_ram},
    {"git", "fatal: Out of memory, malloc failed (tried to allocate 2147483648 bytes)\n", Layer::host_ram},
    {"llvm", "LLVM ERROR: out of memory\nAllocation failed\n", Layer::host_ram},
    {"ptxas", "ptxas fatal   : Memory allocation failure\n", Layer::host_ram},
    {"cicc", "nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n", Layer::unknown},
    {"tcpmem", "[12345.678901] TCP: out of memory -- consider tuning tcp_mem\n", Layer::host_ram},
    {"qemu", "qemu-system-x86_64: cannot set up guest memory 'pc.ram': Cannot allocate memory\n", Layer::host_ram},
    {"mesos", "TASK_FAILED (Memory limit exceeded: Requested: 512MB Maximum Used: 514MB\n\nMEMORY STATISTICS: \ncache 1234\nrss 538968064)\n", Layer::container_limit},
    {"sge", "job 4321.1 exceeds job hard limit \"h_vmem\" of queue \"all.q@node07\" (8589934592.00000 > limit:8589934592.00000) - sending SIGKILL\n", Layer::container_limit},
    {"fly", "2024-05-02T10:21:33Z app[3d8d1e4b] iad [info] Out of memory: Killed process 513 (node) total-vm:1512344kB, anon-rss:221040kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1234kB oom_score_adj:0\n2024-05-02T10:21:33Z app[3d8d1e4b] iad [info] Process appears to have been OOM killed!\n", Layer::host_ram},
    {"render", "==> Ran out of memory (used over 512MB) while running your code.\n", Layer::container_limit},
    {"grpc", "rpc error: code = ResourceExhausted desc = grpc: received message larger than max (8388608 vs. 4194304)\n", Layer::not_memory},
    {"etcd", "etcdserver: mvcc: database space exceeded\n", Layer::not_memory},
    {"jvm_reserve", "Error occurred during initialization of VM\nCould not reserve enough space for object heap\nError: Could not create the Java Virtual Machine.\nError: A fatal exception has occurred. Program will exit.\n", Layer::host_ram},
    {"memcached", "SERVER_ERROR out of memory storing object\n", Layer::unknown},
    {"innodb", "2024-05-02T10:21:33.123456Z 0 [ERROR] [MY-012681] [InnoDB] mmap(137428992 bytes) failed; errno 12\n", Layer::host_ram},
    {"macos_swap", "kernel[0]: low swap: killing largest compressed process with pid 4321 (python3.11) and size 31744 MB\n", Layer::host_ram},
    {"openbsd", "UVM: pid 4321 (python3.11), uid 1000 killed: out of swap\n", Layer::host_ram},
    {"triton_smem", "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: 101376. Reducing block sizes or `num_stages` may help.\n", Layer::not_memory},
    {"go_win", "runtime: VirtualAlloc of 1048576 bytes failed with errno=1455\nfatal error: out of memory\n", Layer::host_ram},
    {"lmkd", "lowmemorykiller: Kill 'com.example.app' (4321), uid 10123, oom_score_adj 900 to free 123456kB rss, 1234kB swap; reason: low watermark is breached and swap is low (1234kB < 314572kB)\n", Layer::userspace_oom_killer},
    {"mongo", "MongoServerError: PlanExecutor error during aggregation :: caused by :: Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.\n", Layer::unknown},
    {"es_cb", "org.elasticsearch.common.breaker.CircuitBreakingException: [parent] Data too large, data for [<http_request>] would be [1031698432/983.9mb], which is larger than the limit of [1020054732/972.7mb], real usage: [1031698432/983.9mb], new bytes reserved: [0/0b]\n", Layer::jvm_heap},
    {"supervisor", "2024-05-02 10:21:33,123 INFO exited: worker (terminated by SIGKILL; not expected)\n", Layer::unknown},
    {"surefire", "[ERROR] The forked VM terminated without properly saying goodbye. VM crash or System.exit called?\n[ERROR] Command was /bin/sh -c cd /build && /usr/lib/jvm/java-17/bin/java -Xmx2g -jar /build/target/surefire/surefirebooter.jar\n", Layer::unknown},
    {"bazel", "Server terminated abruptly (error code: 14, error message: 'Socket closed', log file: '/root/.cache/bazel/_bazel_root/abc/server/jvm.out')\n", Layer::unknown},
    {"hugetlb", "[ 1234.567890] hugetlb: allocating 512 of page size 2.00 MiB failed.  Only allocated 128 hugepages.\n", Layer::host_ram},
    {"nginx", "2024/05/02 10:21:33 [crit] 1234#1234: ngx_slab_alloc() failed: no memory in SSL session shared cache \"SSL\"\n", Layer::unknown},
};

TEST(DocumentedMessages, EachProgramsOwnWordingIsReadInItsPool) {
  for (const Message& m : kMessages) {
    Diagnosis d = test::diagnose_text(m.text);
    EXPECT_EQ(d.layer, m.layer) << m.program << ": " << m.text << "-> " << to_string(d.layer);
  }
}

// Healthy output full of memory words, as the same programs print it when
// nothing failed (start-up sizing, stats lines, GC logs at a heap's high
// water, a GPU at 97%, a swap nearly full, an alert firing, Redis's INFO):
// none of it is a failure.
struct Healthy {
  const char* program;
  const char* text;
};

constexpr Healthy kHealthy[] = {
    {"vllm_start", "INFO 12-05 10:00:01 [gpu_worker.py:276] Memory profiling takes 4.21 seconds\nINFO 12-05 10:00:01 [gpu_worker.py:276] the current vLLM instance can use total_gpu_memory (79.19GiB) x gpu_memory_utilization (0.90) = 71.27GiB\nINFO 12-05 10:00:01 [kv_cache_utils.py:634] GPU KV cache size: 412,304 tokens\nINFO 12-05 10:00:01 [kv_cache_utils.py:637] Maximum concurrency for 32,768 tokens per request: 12.58x\n"},
    {"vllm_stats", "INFO 12-05 10:05:00 [loggers.py:116] Engine 000: Avg prompt throughput: 1200.3 tokens/s, Avg generation throughput: 450.1 tokens/s, Running: 64 reqs, Waiting: 0 reqs, GPU KV cache usage: 93.4%, Prefix cache hit rate: 41.2%\n"},
    {"tf_device", "2026-12-05 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 21770 MB memory:  -> device: 0, name: NVIDIA GeForce RTX 4090, pci bus id: 0000:01:00.0, compute capability: 8.9\n"},
    {"jvm_gc", "[2026-12-05T10:00:00.123+0000][info][gc] GC(1234) Pause Young (Normal) (G1 Evacuation Pause) 3012M->1203M(4096M) 12.345ms\n[2026-12-05T10:00:01.123+0000][info][gc] GC(1235) Pause Young (Allocation Failure) 3100M->1210M(4096M) 11.2ms\n"},
    {"node_trace_gc", "[4417:0x5b0c2e0]   183211 ms: Scavenge 139.8 (181.4) -> 138.9 (182.1) MB, 1.2 / 0.0 ms  (average mu = 0.941, current mu = 0.911) allocation failure;\n"},
    {"smi_full", "+-----------------------------------------------------------------------------------------+\n|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |\n| N/A   45C    P0            280W /  400W |   79800MiB /  81920MiB |     98%      Default |\n+-----------------------------------------------------------------------------------------+\n"},
    {"free", "$ free -h\n               total        used        free      shared  buff/cache   available\nMem:            62Gi        58Gi       1.2Gi       0.1Gi       3.1Gi       3.4Gi\nSwap:          8.0Gi       7.9Gi       0.1Gi\n"},
    {"alert", "[FIRING:1] HighMemoryUsage (node-exporter node01 warning)\nsummary: Memory usage above 90% on node01\ndescription: node01 memory usage is 93.4%\n"},
    {"earlyoom_start", "earlyoom 1.7\nmem total: 15923 MiB, swap total: 2047 MiB\nsending SIGTERM when mem <= 10.00% and swap <= 10.00%,\n        SIGKILL when mem <= 5.00% and swap <= 5.00%\n"},
    {"k8s_limits", "    Limits:\n      memory:  4Gi\n    Requests:\n      memory:  2Gi\n    State:          Running\n      Started:      Sat, 05 Dec 2026 10:00:00 +0000\n    Last State:     Terminated\n      Reason:       Completed\n      Exit Code:    0\n"},
    {"ollama_load", "time=2026-12-05T10:00:00.000Z level=INFO source=server.go:135 msg=\"system memory\" total=\"62.5 GiB\" free=\"48.1 GiB\" free_swap=\"8.0 GiB\"\ntime=2026-12-05T10:00:00.000Z level=INFO source=memory.go:356 msg=\"offload to cuda\" layers.requested=-1 layers.model=33 layers.offload=33 layers.split=\"\" memory.available=\"[23.1 GiB]\" memory.gpu_overhead=\"0 B\" memory.required.full=\"6.2 GiB\"\n"},
    {"torch_summary", "|===========================================================================|\n|                  PyTorch CUDA memory summary, device ID 0                 |\n|---------------------------------------------------------------------------|\n|            CUDA OOMs: 0            |        cudaMalloc retries: 0         |\n"},
    {"llama_ok", "llama_kv_cache_init:      CUDA0 KV buffer size =  1024.00 MiB\nllama_new_context_with_model: KV self size  = 1024.00 MiB, K (f16):  512.00 MiB, V (f16):  512.00 MiB\nllama_new_context_with_model:      CUDA0 compute buffer size =   560.00 MiB\n"},
    {"redis_info", "# Memory\nused_memory:1073741824\nused_memory_human:1.00G\nmaxmemory:4294967296\nmaxmemory_policy:allkeys-lru\n"},
    {"postgres_ok", "LOG:  checkpoint complete: wrote 1234 buffers (7.5%); 0 WAL file(s) added, 0 removed, 1 recycled; write=120.1 s, sync=0.002 s, total=120.2 s\n"},
    {"docker_stats", "CONTAINER ID   NAME   CPU %   MEM USAGE / LIMIT     MEM %   NET I/O   BLOCK I/O   PIDS\n4f1e2d3c4b5a   api    12.5%   1.9GiB / 2GiB     95.0%   1kB / 2kB  0B / 0B    42\n"},
    {"errno120", "INFO pool: 12 workers up\nsocket: setsockopt failed; errno 120 ignored\n"},  // errno 12 is ENOMEM, 120 is not
    {"dmesg_ok", "[    0.000000] Memory: 65843212K/67108864K available (16384K kernel code, 4096K rwdata, 8192K rodata, 2048K init, 4096K bss, 1265652K reserved, 0K cma-reserved)\n"},
};

TEST(DocumentedMessages, HealthyOutputFullOfMemoryWordsIsNoFailure) {
  for (const Healthy& h : kHealthy) {
    Diagnosis d = test::diagnose_text(h.text);
    EXPECT_EQ(d.layer, Layer::none) << h.program << ": " << h.text << "-> " << to_string(d.layer);
  }
}

}  // namespace
}  // namespace aimem
