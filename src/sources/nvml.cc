// NVIDIA GPUs as facts for `aimem diagnose`: one scan through the NVML
// binding (nvml_types.h: loaded with dlopen so the binary runs on hosts
// without a driver; absent NVML is normal, not an error; AIMEM_NVML_LIBRARY
// names another library, tests use a stand-in with scripted values). The
// whole scan runs with a deadline: a wedged driver must not hang the diagnosis.

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <fmt/format.h>

#include "core/units.h"
#include "sources/live.h"
#include "sources/nvml_types.h"

namespace aimem {
namespace {

using namespace nvml;

GpuScan scan(FactSink& sink) {
  GpuScan result;
  Api api;
  auto opened = open_api(api);
  if (!opened || !*opened) {
    result.problem = opened ? "no NVIDIA driver (libnvidia-ml.so.1 not found): GPU memory not checked" : opened.error().message;
    return result;
  }
  auto err = [&](nvmlReturn_t r) { return api.error ? std::string(api.error(r)) : fmt::format("NVML error {}", r); };
  if (!api.init || !api.count || !api.by_index || !api.memory) {
    result.problem = "NVML library lacks nvmlInit / nvmlDeviceGetCount / nvmlDeviceGetMemoryInfo";
    return result;  // the handle stays loaded: unloading a half-used driver library is not safe
  }
  if (nvmlReturn_t r = api.init(); r != kSuccess) {
    result.problem = "NVML did not initialise: " + err(r);
    return result;
  }
  result.library = true;
  int procs_version = 3;
  Reading reading = read_devices(api, procs_version);
  result.devices = reading.count;
  for (const DeviceReading& d : reading.devices) {
    Fact f;
    f.kind = FactKind::gpu_state;
    f.family = Family::nvidia;
    f.where.source = "NVML";
    f.gpu = static_cast<int>(d.index);
    f.process = d.name;
    if (d.memory_result == kSuccess && d.memory.total > 0) {
      f.total = d.memory.total;
      f.usage = d.memory.used;
      f.free = d.memory.free;
    } else {
      f.detail = "memory not reported (unified-memory GPU: its memory is host RAM)";
    }
    unsigned cnt = 0;
    for (const ProcessReading& p : reading.processes) cnt += p.gpu == d.index;
    f.count = cnt;
    f.text = fmt::format("GPU {} {}: {} used of {}, {} compute processes", d.index, d.name,
                         f.usage ? units::format_bytes(*f.usage) : "?", f.total ? units::format_bytes(*f.total) : "?", cnt);
    sink.add(std::move(f));
  }
  if (api.shutdown) api.shutdown();
  return result;
}

// Facts produced on the NVML thread, handed over only if it finished in time.
class Buffer final : public FactSink {
 public:
  void add(Fact f) override { facts.push_back(std::move(f)); }
  std::vector<Fact> facts;
};

}  // namespace

GpuScan scan_gpus(FactSink& sink) {
  auto buffer = std::make_shared<Buffer>();
  auto task = std::make_shared<std::packaged_task<GpuScan()>>([buffer] { return scan(*buffer); });
  auto future = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    GpuScan r;
    r.problem = "NVML did not answer within 5 s (driver busy or wedged): GPU memory not checked";
    return r;
  }
  GpuScan r = future.get();
  for (auto& f : buffer->facts) sink.add(std::move(f));
  return r;
}

}  // namespace aimem
