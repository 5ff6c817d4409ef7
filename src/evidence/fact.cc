#include "evidence/fact.h"

namespace aimem {

std::string_view to_string(FactKind kind) {
  switch (kind) {
    case FactKind::kernel_oom_kill: return "kernel_oom_kill";
    case FactKind::kernel_oom_event: return "kernel_oom_event";
    case FactKind::cgroup_oom_counter: return "cgroup_oom_counter";
    case FactKind::gpu_oom: return "gpu_oom";
    case FactKind::kv_cache_shortage: return "kv_cache_shortage";
    case FactKind::host_alloc_failure: return "host_alloc_failure";
    case FactKind::host_memory_refused: return "host_memory_refused";
    case FactKind::host_exhausted: return "host_exhausted";
    case FactKind::js_heap_oom: return "js_heap_oom";
    case FactKind::jvm_heap_oom: return "jvm_heap_oom";
    case FactKind::jvm_native_oom: return "jvm_native_oom";
    case FactKind::userspace_kill: return "userspace_kill";
    case FactKind::k8s_oomkilled: return "k8s_oomkilled";
    case FactKind::k8s_evicted: return "k8s_evicted";
    case FactKind::docker_oomkilled: return "docker_oomkilled";
    case FactKind::systemd_oom_result: return "systemd_oom_result";
    case FactKind::process_killed: return "process_killed";
    case FactKind::exit_status: return "exit_status";
    case FactKind::not_memory_failure: return "not_memory_failure";
    case FactKind::memory_limit: return "memory_limit";
    case FactKind::memory_request: return "memory_request";
    case FactKind::memory_usage: return "memory_usage";
    case FactKind::gpu_state: return "gpu_state";
    case FactKind::host_state: return "host_state";
    case FactKind::runtime_setting: return "runtime_setting";
    case FactKind::kv_capacity: return "kv_capacity";
    case FactKind::restarts: return "restarts";
    case FactKind::phase_load: return "phase_load";
    case FactKind::phase_serve: return "phase_serve";
    case FactKind::stop_or_restart: return "stop_or_restart";
    case FactKind::recovered: return "recovered";
    case FactKind::platform: return "platform";
  }
  return "unknown";
}

std::string_view to_string(Family family) {
  switch (family) {
    case Family::kernel: return "kernel";
    case Family::cgroup: return "cgroup";
    case Family::procfs: return "procfs";
    case Family::pytorch: return "pytorch";
    case Family::vllm: return "vllm";
    case Family::llamacpp: return "llamacpp";
    case Family::tgi: return "tgi";
    case Family::tensorflow: return "tensorflow";
    case Family::jax: return "jax";
    case Family::node: return "node";
    case Family::jvm: return "jvm";
    case Family::python: return "python";
    case Family::systemd: return "systemd";
    case Family::userspace_killer: return "userspace_killer";
    case Family::docker: return "docker";
    case Family::kubernetes: return "kubernetes";
    case Family::exit_status: return "exit_status";
    case Family::nvidia: return "nvidia";
    case Family::cuda: return "cuda";
    case Family::nccl: return "nccl";
    case Family::ray: return "ray";
    case Family::runtime: return "runtime";
    case Family::cli: return "cli";
    case Family::generic: return "generic";
    case Family::sglang: return "sglang";
    case Family::tensorrt_llm: return "tensorrt_llm";
    case Family::onnxruntime: return "onnxruntime";
    case Family::level_zero: return "level_zero";
  }
  return "unknown";
}

std::string_view source_label(Family family) {
  switch (family) {
    case Family::kernel: return "kernel log";
    case Family::cgroup: return "cgroup files";
    case Family::procfs: return "/proc";
    case Family::pytorch: return "PyTorch";
    case Family::vllm: return "vLLM";
    case Family::llamacpp: return "llama.cpp / Ollama";
    case Family::tgi: return "TGI";
    case Family::tensorflow: return "TensorFlow";
    case Family::jax: return "JAX / XLA";
    case Family::node: return "Node.js";
    case Family::jvm: return "JVM";
    case Family::python: return "application";
    case Family::systemd: return "systemd";
    case Family::userspace_killer: return "user-space OOM killer";
    case Family::docker: return "docker";
    case Family::kubernetes: return "kubernetes";
    case Family::exit_status: return "exit status";
    case Family::nvidia: return "NVIDIA driver";
    case Family::cuda: return "CUDA";
    case Family::nccl: return "NCCL";
    case Family::ray: return "Ray";
    case Family::runtime: return "runtime";
    case Family::cli: return "command line";
    case Family::generic: return "log";
    case Family::sglang: return "SGLang";
    case Family::tensorrt_llm: return "TensorRT-LLM";
    case Family::onnxruntime: return "ONNX Runtime";
    case Family::level_zero: return "Intel GPU runtime (Level Zero / SYCL)";
  }
  return "evidence";
}

bool is_failure(FactKind kind) {
  return static_cast<uint8_t>(kind) <= static_cast<uint8_t>(FactKind::not_memory_failure);
}

}  // namespace aimem
