// The one table of recognizers (see recognizer.h). Order does not matter for
// matching; it is the order in which recognizers see a line matched by several.
#include "recognize/families/families.h"

namespace aimem {

namespace {
// Pointers, so the table never depends on the order in which other files'
// statics are initialised.
const RecognizerEntry* const kRecognizers[] = {
    &kKernelOomEntry,
    &kPyTorchEntry,
    &kVllmEntry,
    &kLlamaCppEntry,
    &kTgiEntry,
    &kSglangEntry,
    &kTensorrtLlmEntry,
    &kOnnxRuntimeEntry,
    &kLevelZeroEntry,
    &kTorchMemorySummaryEntry,
    &kTensorflowJaxEntry,
    &kGpuErrorsEntry,
    &kNvidiaSmiEntry,
    &kRayEntry,
    &kMlPhaseEntry,
    &kNodeEntry,
    &kJvmEntry,
    &kJvmBudgetsEntry,
    &kDotnetEntry,
    &kPythonEntry,
    &kSystemdEntry,
    &kUserspaceKillersEntry,
    &kDockerEntry,
    &kHostToolsEntry,
    &kKubernetesEntry,
    &kExitStatusEntry,
    &kHpcEntry,
    &kGenericAllocEntry,
    &kGenericLimitEntry,
    &kMemorySeriesEntry,
    &kAllocatorStatsEntry,
    &kUnifiedMemoryEntry,
    &kPreviousRunLogEntry,
    &kDockerStatsEntry,
    &kCloudPlatformsEntry,
    &kTimeLimitsEntry,
    &kStackLimitsEntry,
    &kSharedMemoryEntry,
    &kKernelAllocEntry,
    &kRedisEntry,
    &kProgramCapsEntry,
    &kDuckDbEntry,
    &kRabbitMqEntry,
    &kZfsArcEntry,
    &kShellCopiesEntry,
    &kLimitChangeEntry,
    &kCgroupFilesEntry,
    &kMacosJetsamEntry,
    &kRocmSmiEntry,
    &kEndlessAllocEntry,
    &kFreebsdOomEntry,
    &kOpenvzOomEntry,
    &kClickHouseEntry,
    &kVmSizeEntry,
    &kVgpuEntry,
    &kOsLimitsEntry,
    &kOllamaSchedEntry,
    &kRolloutEntry,
    &kContainerGenerationsEntry,
    &kGracefulReloadEntry,
    &kContextGrowthEntry,
    &kFailureMarkersEntry,
    &kProcessTableEntry,
    &kTritonEntry,
    &kDeviceHoldersEntry,
    &kModelVersionsEntry,
    &kWindowsMemoryEntry,
};
}  // namespace

std::span<const RecognizerEntry* const> all_recognizers() { return kRecognizers; }

}  // namespace aimem
