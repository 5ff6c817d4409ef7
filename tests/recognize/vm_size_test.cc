// A local VM's configured memory (src/recognize/families/vm_size.cc) and what
// the diagnosis makes of it beside a global OOM (modelled on microsoft/WSL
// threads with a .wslconfig cap, kubernetes/minikube and abiosoft/colima
// start commands; values are ours).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::optional<uint64_t> vm_memory(const std::string& text) {
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::runtime_setting && f.detail.rfind("VM memory", 0) == 0) return f.limit;
  return std::nullopt;
}

TEST(VmSize, EachToolsSettingInItsDefaultUnit) {
  EXPECT_EQ(vm_memory("PS C:\\> type .wslconfig\n[wsl2]\nmemory=4GB\nprocessors=6\n"), 4 * units::GiB);
  EXPECT_EQ(vm_memory("$ minikube start --cpus 4 --memory=4096\n"), 4096 * units::MiB);
  EXPECT_EQ(vm_memory("$ minikube start --memory 8g\n"), 8 * units::GiB);
  EXPECT_EQ(vm_memory("$ colima start --cpu 4 --memory 6\n"), 6 * units::GiB);
  EXPECT_EQ(vm_memory("$ podman machine init --cpus 2 --memory 2048\n"), 2048 * units::MiB);
  EXPECT_EQ(vm_memory("$ multipass launch --name k3s --memory 4G\n"), 4 * units::GiB);
  EXPECT_EQ(vm_memory("$ docker-machine create -d virtualbox --virtualbox-memory 2048 dev\n"), 2048 * units::MiB);
  EXPECT_EQ(vm_memory("  \"memoryMiB\": 3072,\n"), 3072 * units::MiB);
  // A "memory=" line outside a [wsl2] section is some other file's.
  EXPECT_FALSE(vm_memory("[mysqld]\nmemory=4GB\n"));
}

TEST(VmSize, AVictimHoldingMostOfTheConfiguredVmIsTheSettingTooLow) {
  const std::string kill =
      "[ 1842.332410] Out of memory: Killed process 2214 (python) total-vm:5237712kB, anon-rss:3684212kB, file-rss:4120kB, "
      "shmem-rss:0kB, UID:1000 pgtables:7508kB oom_score_adj:0\n";
  Diagnosis d = test::diagnose_text("[wsl2]\nmemory=4GB\n$ python merge.py\nKilled\n" + kill);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  // A VM far larger than the victim says nothing of the kind.
  EXPECT_NE(test::diagnose_text("[wsl2]\nmemory=64GB\n$ python merge.py\nKilled\n" + kill).cause, Cause::limit_too_low);
}

}  // namespace
}  // namespace aimem
