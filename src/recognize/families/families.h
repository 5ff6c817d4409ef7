// Every recognizer's registry entry; the table itself is in registry.cc.
#pragma once

#include "recognize/recognizer.h"

namespace aimem {

extern const RecognizerEntry kKernelOomEntry;
extern const RecognizerEntry kPyTorchEntry;
extern const RecognizerEntry kVllmEntry;
extern const RecognizerEntry kLlamaCppEntry;
extern const RecognizerEntry kTgiEntry;
extern const RecognizerEntry kSglangEntry;
extern const RecognizerEntry kTensorrtLlmEntry;
extern const RecognizerEntry kOnnxRuntimeEntry;
extern const RecognizerEntry kLevelZeroEntry;
extern const RecognizerEntry kTorchMemorySummaryEntry;
extern const RecognizerEntry kTensorflowJaxEntry;
extern const RecognizerEntry kGpuErrorsEntry;
extern const RecognizerEntry kNvidiaSmiEntry;
extern const RecognizerEntry kRayEntry;
extern const RecognizerEntry kMlPhaseEntry;
extern const RecognizerEntry kNodeEntry;
extern const RecognizerEntry kJvmEntry;
extern const RecognizerEntry kJvmBudgetsEntry;
extern const RecognizerEntry kDotnetEntry;
extern const RecognizerEntry kPythonEntry;
extern const RecognizerEntry kSystemdEntry;
extern const RecognizerEntry kUserspaceKillersEntry;
extern const RecognizerEntry kDockerEntry;
extern const RecognizerEntry kHostToolsEntry;
extern const RecognizerEntry kKubernetesEntry;
extern const RecognizerEntry kExitStatusEntry;
extern const RecognizerEntry kHpcEntry;
extern const RecognizerEntry kGenericAllocEntry;
extern const RecognizerEntry kGenericLimitEntry;
extern const RecognizerEntry kMemorySeriesEntry;
extern const RecognizerEntry kAllocatorStatsEntry;
extern const RecognizerEntry kStackLimitsEntry;
extern const RecognizerEntry kSharedMemoryEntry;
extern const RecognizerEntry kKernelAllocEntry;
extern const RecognizerEntry kRedisEntry;
extern const RecognizerEntry kProgramCapsEntry;
extern const RecognizerEntry kDuckDbEntry;
extern const RecognizerEntry kRabbitMqEntry;
extern const RecognizerEntry kZfsArcEntry;
extern const RecognizerEntry kDevicePoolsEntry;
extern const RecognizerEntry kKubectlTopEntry;
extern const RecognizerEntry kFileSizesEntry;
extern const RecognizerEntry kShellCopiesEntry;
extern const RecognizerEntry kLimitChangeEntry;
extern const RecognizerEntry kCgroupFilesEntry;
extern const RecognizerEntry kMacosJetsamEntry;
extern const RecognizerEntry kRocmSmiEntry;
extern const RecognizerEntry kEndlessAllocEntry;
extern const RecognizerEntry kFreebsdOomEntry;
extern const RecognizerEntry kOpenvzOomEntry;
extern const RecognizerEntry kClickHouseEntry;
extern const RecognizerEntry kVmSizeEntry;
extern const RecognizerEntry kVgpuEntry;
extern const RecognizerEntry kKafkaWireEntry;
extern const RecognizerEntry kForkSafetyEntry;
extern const RecognizerEntry kPlatformStopsEntry;
extern const RecognizerEntry kTcmallocEntry;
extern const RecognizerEntry kWasmMemoryEntry;
extern const RecognizerEntry kAddressSpaceEntry;
extern const RecognizerEntry kOomKilledReportsEntry;
extern const RecognizerEntry kOsLimitsEntry;
extern const RecognizerEntry kOllamaSchedEntry;
extern const RecognizerEntry kGracefulReloadEntry;
extern const RecognizerEntry kContextGrowthEntry;
extern const RecognizerEntry kXgBoostEntry;
extern const RecognizerEntry kAdmissionRejectsEntry;
extern const RecognizerEntry kUnifiedMemoryEntry;
extern const RecognizerEntry kPreviousRunLogEntry;
extern const RecognizerEntry kDockerStatsEntry;
extern const RecognizerEntry kCloudPlatformsEntry;
extern const RecognizerEntry kTimeLimitsEntry;
extern const RecognizerEntry kRolloutEntry;
extern const RecognizerEntry kContainerGenerationsEntry;
extern const RecognizerEntry kFailureMarkersEntry;
extern const RecognizerEntry kProcessTableEntry;
extern const RecognizerEntry kTritonEntry;
extern const RecognizerEntry kDeviceHoldersEntry;
extern const RecognizerEntry kModelVersionsEntry;
extern const RecognizerEntry kWindowsMemoryEntry;

}  // namespace aimem
