// Work refused before it ran because its memory request did not fit what a
// node or a queue admits: nothing ran, nothing was exhausted. The words look
// like an out-of-memory report; they are a look-alike (not_memory_failure,
// layer not_memory): the request, or where it was sent, is what to change.
//
//   nginx-6f8d4b7c9d-5mzt9   0/1   OutOfmemory   0   9s        kubectl get pods: the kubelet's admission
//   Reason:       OutOfmemory                                        rejected the pod ("OutOf" + the resource's
//   Message:      Pod Node didn't have enough resource: memory, requested: 314572800, used: 2831155200, capacity: 3022274560
//                                                                    name, lower case: OutOfcpu, OutOfpods too),
//                                                                    a pod bound to a node without the scheduler
//   qsub: submit error (Job exceeds queue resource limits MSG=cannot satisfy queue max mem requirement)   PBS / Torque
//   sbatch: error: Memory specification can not be satisfied                                             Slurm
//   sbatch: error: Batch job submission failed: Requested node configuration is not available            Slurm
//   runContainer: requested number of GPUs unavailable. Requested: 2, Available: 0                      the kubelet's
//   UnexpectedAdmissionError: ... requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0
//                                                                    device accounting: GPUs, not memory
//   pods "x" is forbidden: maximum memory usage per Container is 4Gi, but limit is 12Gi      the API server's
//   pods "x" is forbidden: exceeded quota: ml-quota, requested: requests.memory=48Gi, used: ...,   admission:
//       limited: requests.memory=140Gi                               a namespace's LimitRange or ResourceQuota
//                                                                    (bookkeeping on requests and limits)
//
// "OutOfmemory" is matched with its own capitals: the kubelet writes the
// resource's name in lower case after "OutOf", where every runtime's error
// spells OutOfMemory.
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"OutOfmemory"},
    {"didn't have enough resource: memory", kCompanion},
    {"exceeds queue resource limits", kCompanion},
    {"Memory specification can not be satisfied", kCompanion},
    {"Requested node configuration is not available", kCompanion},
    {"requested number of GPUs unavailable", kCompanion},
    {"requested number of devices unavailable", kCompanion},
    {"maximum memory usage per (Container|Pod) is", kRegex | kCompanion},
    {"is forbidden: exceeded quota: ", kCompanion},
};

class AdmissionRejects final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (sent_ || guards::is_advice_line(s)) return;
    std::string detail;
    if (text::contains(s, "OutOfmemory") || text::contains(s, "didn't have enough resource: memory")) {
      detail = "the kubelet refused the pod at admission (OutOfmemory): the node's allocatable memory could not hold its "
               "request; it never ran, nothing ran out of memory";
    } else if (text::contains(s, "requested number of GPUs unavailable") || text::contains(s, "requested number of devices unavailable")) {
      detail = "the kubelet refused the container: the devices it asked for (GPUs) were not available to allocate; not memory";
    } else if (text::contains(s, "maximum memory usage per Container is") || text::contains(s, "maximum memory usage per Pod is")) {
      detail = "the API server refused the pod at admission: its memory limit is above the namespace's LimitRange maximum; it "
               "never ran, nothing ran out of memory";
    } else if (text::contains(s, "is forbidden: exceeded quota: ") && text::contains(s, "memory")) {
      detail = "the API server refused the pod at admission: its memory request would exceed the namespace's ResourceQuota; it "
               "never ran, nothing ran out of memory";
    } else if (text::contains(s, "exceeds queue resource limits")) {
      detail = "the batch queue refused the job: its memory request exceeds the queue's limit; it never ran";
    } else if (text::contains(s, "Memory specification can not be satisfied") ||
               (text::contains(s, "Requested node configuration is not available") && text::contains(s, "sbatch"))) {
      detail = "Slurm refused the job at submission: no node can satisfy its memory request; it never ran";
    } else {
      return;
    }
    sent_ = true;
    // A quota counts every pod of the namespace: one refused in a rollout is
    // the old and the new copies together (weaker than a single pod's own cap).
    const bool quota = text::contains(s, "exceeded quota");
    out.add(look_alike(line, Family::runtime, quota ? 0.7f : 0.8f, std::move(detail)));
  }

 private:
  bool sent_ = false;
};

}  // namespace

const RecognizerEntry kAdmissionRejectsEntry{"admission_rejects", Family::runtime, kPatterns,
                                             [] { return std::unique_ptr<Recognizer>(new AdmissionRejects); }};

}  // namespace aimem
