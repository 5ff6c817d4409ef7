// Work refused at admission or submission for its memory request
// (src/recognize/families/admission_rejects.cc): look-alikes. Written in
// each program's format with our own names and figures, modelled on the
// kubelet's OutOfmemory admission failures (kubernetes/kubernetes#103421),
// PBS's queue limit refusal (cBio/cbio-cluster#93) and Slurm's sbatch errors.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(AdmissionRejects, TheKubeletsOutOfmemoryAdmissionIsNotAMemoryFailure) {
  const char* text =
      "NAME                     READY   STATUS        RESTARTS   AGE\n"
      "web-5d8c7f9b6d-2hq8k     1/1     Running       0          2m\n"
      "web-5d8c7f9b6d-x7q2n     0/1     OutOfmemory   0          11s\n"
      "$ kubectl describe pod web-5d8c7f9b6d-x7q2n | grep -E '^(Reason|Message):'\n"
      "Reason:       OutOfmemory\n"
      "Message:      Pod Node didn't have enough resource: memory, requested: 536870912, used: 7516192768, capacity: 7818182656\n";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  // A runtime's OutOfMemory (its own capitals) is no admission.
  EXPECT_NE(test::diagnose_text("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n").layer, Layer::not_memory);
}

TEST(AdmissionRejects, BatchQueuesRefusingAMemoryRequestAreNotMemoryFailures) {
  for (const char* line : {"qsub: submit error (Job exceeds queue resource limits MSG=cannot satisfy queue max mem requirement)\n",
                           "sbatch: error: Memory specification can not be satisfied\n",
                           "sbatch: error: Batch job submission failed: Requested node configuration is not available\n"}) {
    Diagnosis d = test::diagnose_text(std::string("$ cat job.sh\n#PBS -l mem=64gb\n#SBATCH --mem=512G\n") + line);
    EXPECT_EQ(d.layer, Layer::not_memory) << line;
  }
  // A real kill in the same paste is still the failure.
  Diagnosis real = test::diagnose_text(
      "sbatch: error: Memory specification can not be satisfied\n"
      "slurmstepd: error: Detected 1 oom_kill event in StepId=4411.batch. Some of the step tasks have been OOM Killed.\n");
  EXPECT_NE(real.layer, Layer::not_memory);
}

// The kubelet's device accounting refusing GPUs (kubernetes/kubernetes#42412,
// kubeflow/trainer#999; our names): not memory.
TEST(AdmissionRejects, GpusUnavailableAtAdmissionAreNotMemory) {
  for (const char* line :
       {"  Warning  FailedSync  12s (x3 over 38s)  kubelet, gpu-3  Error syncing pod, skipping: failed to \"StartContainer\" for \"smoke\" "
        "with RunContainerError: \"runContainer: requested number of GPUs unavailable. Requested: 2, Available: 0\"\n",
        "Failed UnexpectedAdmissionError: Update plugin resources failed due to requested number of devices unavailable for "
        "nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected.\n"})
    EXPECT_EQ(test::diagnose_text(line).layer, Layer::not_memory) << line;
}

// The API server's admission refusing a pod for a namespace's LimitRange
// or ResourceQuota (modelled on a RAG deployment's ReplicaSet events and a
// batch job's kubectl apply, 2024; our own names and sizes): the pod never
// ran. A quota counts the whole namespace, so its refusal is the weaker.
TEST(AdmissionRejects, ALimitRangeOrAQuotaRefusingAPodIsNotMemory) {
  Diagnosis range = test::diagnose_text(
      "Warning  FailedCreate  3m12s (x19 over 23m)  replicaset-controller  Error creating: pods \"rag-llm-5d8f6c7b49-\" is "
      "forbidden: maximum memory usage per Container is 4Gi, but limit is 12Gi\n");
  EXPECT_EQ(range.layer, Layer::not_memory) << test::reason_text(range);
  EXPECT_GT(range.confidence, 0.75f);
  Diagnosis quota = test::diagnose_text(
      "Error from server (Forbidden): error when creating \"embed-batch.yaml\": pods \"embed-batch\" is forbidden: exceeded quota: "
      "ml-quota, requested: requests.cpu=12,requests.memory=48Gi, used: requests.cpu=41250m,requests.memory=101376Mi, limited: "
      "requests.cpu=50,requests.memory=140Gi\n");
  EXPECT_EQ(quota.layer, Layer::not_memory) << test::reason_text(quota);
  EXPECT_LT(quota.confidence, range.confidence);
  // A quota on CPU alone says nothing of memory.
  EXPECT_EQ(test::diagnose_text("Error creating: pods \"x\" is forbidden: exceeded quota: q, requested: requests.cpu=2, used: "
                                "requests.cpu=9, limited: requests.cpu=10\n")
                .layer,
            Layer::none);
}

}  // namespace
}  // namespace aimem
