// A platform ending a workload for its own reasons, which a client sees as
// the same reset, 137 or vanished node that an OOM kill gives: a look-alike
// (not_memory_failure), named in the platform's own words.
//
// Health checks that failed:
//   Task failed ELB health checks in (target-group arn:aws:...)          (ECS's stoppedReason; exit 137 after it)
//   Task failed container health checks                                  (ECS)
//   ... Replica(id='k7wq2m0d', ...) failed health check, stopping it.   (Ray Serve's controller)
// Capacity taken back:
//   Exit status: -102. Diagnostics: Container preempted by scheduler     (YARN)
//   state_message: Terminated due to preemption                          (Ray's node record on a spot node)
//   compute.instances.preempted                                          (GCE's operation on a spot/preemptible VM)
//   EC2 Spot Instance interruption notice / BidEvictedEvent              (AWS, Azure spot)
//   disrupting nodeclaim(s) via delete ... / disrupting via consolidation   (Karpenter)
// Admission and queueing before anything ran:
//   Failed to create pod ...: admission webhook "warden-validating..." denied the request: ...   (GKE Autopilot)
//   "message": "Preempted to accommodate a workload (UID: ...) due to prioritization in the ClusterQueue"   (Kueue)
// Process managers' own limits:
//   ActivityManager: Killing PhantomProcessRecord{9a2c0f3 14721:com.termux/u0a311}: Trimming phantom processes
//   worker 4 (pid: 21734) is taking too much time to die...NO MERCY !!!   (uWSGI on a reload)
// An engine's own "preempted" (vLLM's sequences preempted for KV cache
// space) is memory pressure and not read here.
#include <array>
#include <iterator>
#include <string>
#include <string_view>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

struct Stop {
  std::string_view phrase;
  std::string_view detail;
  std::string_view also = {};  // a second phrase the line must hold too (empty: none)
};

constexpr Stop kStops[] = {
    {"failed ELB health checks", "ECS stopped the task for failing its load balancer's health checks"},
    {"failed container health checks", "ECS stopped the task for failing its container health checks"},
    {"failed health check, stopping it", "Ray Serve stopped the replica for failing its health check"},
    {"Container preempted by scheduler", "YARN's scheduler preempted the container (exit -102)"},
    {"Terminated due to preemption", "the node was preempted (a spot or preemptible machine taken back)"},
    {"compute.instances.preempted", "the VM was preempted (a spot or preemptible machine taken back)"},
    {"Spot Instance interruption", "the spot instance was interrupted (the machine taken back)"},
    {"BidEvictedEvent", "the spot VM was evicted by its price (the machine taken back)"},
    {"disrupting nodeclaim", "Karpenter removed the node (consolidation or a spot interruption)"},
    {"disrupting via consolidation", "Karpenter removed the node (consolidation)"},
    {"Preempted to accommodate a workload", "Kueue preempted the workload for a higher-priority one in its ClusterQueue"},
    {"denied the request", "an admission webhook refused to create the pod (it never started)", "admission webhook"},
    // The kubelet's graceful node shutdown (a preemptible pool's machine taken back).
    {"in response to imminent node shutdown", "the kubelet stopped the pod because its node was shutting down (graceful node shutdown)"},
    {"Shutdown manager detected shutdown event", "the kubelet stopped the pod because its node was shutting down (graceful node shutdown)"},
    // Slurm's job state when the node it ran on stopped answering (sacct's State column).
    {" NODE_FAIL ", "the job's node failed (Slurm NODE_FAIL: the node stopped responding)"},
    {"Trimming phantom processes", "Android's phantom-process limit (Android 12 and later) killed the child process"},
    {"too much time to die...NO MERCY", "uWSGI's master killed a worker that did not exit in time on a reload or shutdown (NO MERCY)"},
};

constexpr auto kPatterns = [] {
  std::array<Pattern, std::size(kStops)> p{};
  for (size_t i = 0; i < std::size(kStops); ++i) p[i] = {kStops[i].phrase.data(), kCompanion};
  return p;
}();

class PlatformStops final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    // A command that searches for the event ("--filter='operationType=
    // compute.instances.preempted'") is not the event; its output below is.
    if (said_ || guards::is_command_line(line.text)) return;
    for (const Stop& st : kStops) {
      if (!text::contains(line.text, st.phrase) || (!st.also.empty() && !text::contains(line.text, st.also))) continue;
      said_ = true;
      Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
      f.layer = Layer::not_memory;
      f.strength = 0.7f;
      f.detail = std::string(st.detail) + ", not memory";
      out.add(std::move(f));
      return;
    }
  }

 private:
  bool said_ = false;
};

}  // namespace

const RecognizerEntry kPlatformStopsEntry{"platform_stops", Family::runtime, kPatterns,
                                          [] { return std::unique_ptr<Recognizer>(new PlatformStops); }};

}  // namespace aimem
