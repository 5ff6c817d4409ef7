// /dev/shm running out (src/recognize/families/shared_memory.cc). Inputs
// written here in each program's format with our own values, modelled on:
// PyTorch's DataLoader bus-error messages in a container started without
// --shm-size (bytedance/Protenix#2), TGI's download process "signaled to
// shutdown with signal 7" beside `df -h /dev/shm` (huggingface/
// text-generation-inference#446), NCCL's shared-memory segment warnings
// (the NCCL shm.h warnings as NCCL 2.10 prints them), and PostgreSQL's lock-table "out of shared memory".
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

using test::diagnose_text;

constexpr const char* kDf64 =
    "root@5c0e31d2a9f4:/workspace# df -h /dev/shm\n"
    "Filesystem      Size  Used Avail Use% Mounted on\n"
    "shm              64M   64M     0 100% /dev/shm\n";

TEST(SharedMemory, DataLoaderBusErrorIsTheContainersShmLimit) {
  Diagnosis d = diagnose_text(std::string(kDf64) +
                              "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).\n"
                              "RuntimeError: DataLoader worker (pid 2211) is killed by signal: Bus error. It is possible that dataloader's "
                              "workers are out of shared memory. Please try to raise your shared memory limit.\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("/dev/shm (64.0 MiB)"), std::string::npos) << d.incidents[0].summary;
  ASSERT_FALSE(d.incidents[0].fixes.empty());
  EXPECT_NE(d.incidents[0].fixes[0].action.find("--shm-size"), std::string::npos) << d.incidents[0].fixes[0].action;
}

// Triton's Python backend growing a model instance's shared-memory region
// (triton-inference-server/server#3678's message; our own key and sizes):
// its advice is part of the failure line, and df shows the 64 MiB default.
TEST(SharedMemory, TritonsPythonBackendPoolThatCannotGrowIsTheShmLimit) {
  const std::string triton =
      "E0304 08:12:40.118233 1 python.cc:1314] Stub process is unhealthy and it will be restarted.\n"
      "E0304 08:12:40.402117 1 python.cc:1105] Failed to increase the shared memory pool size for key "
      "'triton_python_backend_shm_region_4' to 33554432 bytes. If you are running Triton inside docker, use '--shm-size' "
      "flag to control the shared memory region size. Error: No space left on device\n";
  Diagnosis d = diagnose_text(triton + kDf64);
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // The advice alone, without the failure, is nothing.
  EXPECT_EQ(diagnose_text("If you are running Triton inside docker, use '--shm-size' flag to control the shared memory region size.\n").layer,
            Layer::none);
  // At an instance's start, in the server's model table, its error wrapped
  // onto the table's next row (modelled on a Triton 23.07 ensemble with a
  // Python tokenizer, 2023; our own model names).
  const std::string table =
      "| tokenizer  | 1       | UNAVAILABLE: Internal: Unable to initialize shared memory key 'triton_python_backend_shm_region_3' "
      "to requested size      |\n"
      "|            |         | (67108864 bytes). If you are running Triton inside docker, use '--shm-size' flag to control the "
      "shared memory region size. |\n"
      "|            |         | Each Python backend model instance requires at least 64MBs of shared memory. Error: No space left on "
      "device               |\n";
  Diagnosis t = diagnose_text(table + kDf64);
  EXPECT_EQ(t.layer, Layer::container_limit) << test::reason_text(t);
  EXPECT_EQ(t.cause, Cause::limit_too_low) << test::reason_text(t);
}

// A SIGBUS is read as /dev/shm only beside a df row that shows a small one.
TEST(SharedMemory, ASigbusBesideASmallShmIsItAndAloneIsNot) {
  const std::string bus =
      "2023-06-13T08:21:09.552006Z ERROR text_generation_launcher: Download process was signaled to shutdown with signal 7:\n"
      "Error: DownloadError\n";
  Diagnosis with = diagnose_text(bus + "$ docker run --rm --entrypoint df ghcr.io/huggingface/text-generation-inference:0.8 -h /dev/shm\n"
                                       "Filesystem      Size  Used Avail Use% Mounted on\n"
                                       "shm              64M     0   64M   0% /dev/shm\n");
  EXPECT_EQ(with.layer, Layer::container_limit);
  EXPECT_EQ(with.cause, Cause::limit_too_low);
  Diagnosis alone = diagnose_text(bus);
  EXPECT_NE(alone.layer, Layer::container_limit);
  // A host's /dev/shm (half its RAM) is no container's limit.
  Diagnosis big = diagnose_text(bus + "tmpfs            32G     0   32G   0% /dev/shm\n");
  EXPECT_NE(big.layer, Layer::container_limit);
}

TEST(SharedMemory, NcclSegmentThatCannotBeMadeIsShm) {
  Diagnosis d = diagnose_text(
      "node-3:5512:5601 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
      "node-3:5512:5601 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Q1b2Xz (size 9637888)\n"
      "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
}

// PostgreSQL's "out of shared memory" is its lock table, not /dev/shm.
TEST(SharedMemory, PostgresLockTableIsNotShm) {
  Diagnosis d = diagnose_text(
      "2024-02-01 10:11:12.345 UTC [4411] ERROR:  out of shared memory\n"
      "2024-02-01 10:11:12.345 UTC [4411] HINT:  You might need to increase max_locks_per_transaction.\n");
  EXPECT_NE(d.layer, Layer::container_limit);
}

// PostgreSQL's "out of shared memory" with its hint is the lock table
// (modelled on a pg_dump failure over thousands of partitions; names and
// counts ours): a look-alike, named as such.
TEST(SharedMemory, PostgresLockTableFullIsALookAlike) {
  const std::string log =
      "pg_dump: error: query failed: ERROR:  out of shared memory\n"
      "HINT:  You might need to increase max_locks_per_transaction.\n"
      "pg_dump: error: query was: LOCK TABLE payments.ledger_2022_11 IN ACCESS SHARE MODE\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::not_memory);
  EXPECT_EQ(d.cause, Cause::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("max_locks_per_transaction"), std::string::npos);
}

// PostgreSQL's (and Greenplum's) cap on one allocation (modelled on
// greenplum-db/gpdb#16409; the query and figures ours): a look-alike.
TEST(SharedMemory, PostgresInvalidAllocRequestSizeIsALookAlike) {
  Diagnosis d = test::diagnose_text(
      "2023-09-11 12:29:54.334424 CST,\"gpadmin\",\"dw_ops\",p1954429,th1649297536,\"192.168.2.12\",\"53028\",,\"ERROR\",\"XX000\","
      "\"invalid memory alloc request size 1073741824 (context 'ExecutorState') (mcxt.c:1271)\",,,,,,\"select distinct a.serial_no\"\n");
  EXPECT_EQ(d.layer, Layer::not_memory);
  ASSERT_FALSE(d.incidents.empty());
  EXPECT_NE(d.incidents[0].summary.find("MaxAllocSize"), std::string::npos);
}

// PyTorch's shared-memory files ("/torch_<pid>_<n>_<n>") live in /dev/shm:
// "No space left on device" writing one is the container's /dev/shm, not a disk.
TEST(SharedMemory, PytorchsShmFileFullIsTheContainersShm) {
  Diagnosis d = diagnose_text(
      "RuntimeError: unable to write to file </torch_40127_3310974821_213>: No space left on device (28)\n"
      "$ df -h /dev/shm\nFilesystem      Size  Used Avail Use% Mounted on\nshm              64M   64M     0 100% /dev/shm\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  EXPECT_EQ(diagnose_text("OSError: [Errno 28] No space left on device: '/data/ckpt/step_900.pt'\n").layer, Layer::not_memory);
}

// NCCL could not open its segment because /dev/shm was mounted without the
// world-writable sticky mode (modelled on a DDP start-up on a shared node,
// NCCL 2.4; our ids): refused for its permissions, not its space. The same
// segment refused with "No space left on device" is the container's shm.
TEST(SharedMemory, ASegmentRefusedForItsPermissionsIsNotShmRunningOut) {
  auto log = [](const char* why) {
    return std::string("node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : ") + why +
           "\n"
           "node08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment nccl-shm-recv-3f7a-0-3-0 "
           "(size 4460544)\n"
           "$ df -h /dev/shm\nFilesystem      Size  Used Avail Use% Mounted on\ntmpfs           64M   64M     0 100% /dev/shm\n";
  };
  auto denied = test::facts_of_kind(log("Permission denied"), FactKind::host_alloc_failure);
  EXPECT_TRUE(denied.empty());
  EXPECT_EQ(diagnose_text(log("Permission denied")).layer, Layer::not_memory);
  Diagnosis full = diagnose_text(log("No space left on device"));
  EXPECT_EQ(full.layer, Layer::container_limit) << test::reason_text(full);
}

// PostgreSQL says "out of memory" when one string would pass its 1 GB
// MaxAllocSize ("Cannot enlarge string buffer containing N bytes by M more
// bytes"): one value too large, not RAM (modelled on timescale/pgai
// vectorizer reports; our figures). Below the cap it is memory.
TEST(SharedMemory, PostgresStringBufferPastOneGigabyteIsTheAllocationCap) {
  auto text = [](const char* more) {
    return std::string("ERROR:  out of memory\nDETAIL:  Cannot enlarge string buffer containing 0 bytes by ") + more +
           " more bytes.\nCONTEXT:  COPY docs_embedding_store, line 1, column chunk\n";
  };
  Diagnosis cap = test::diagnose_text(text("1288490188"));
  EXPECT_EQ(cap.layer, Layer::not_memory) << test::reason_text(cap);
  EXPECT_NE(test::reason_text(cap).find("MaxAllocSize"), std::string::npos);
  EXPECT_NE(test::diagnose_text(text("52428800")).layer, Layer::not_memory);
}

}  // namespace
}  // namespace aimem
