// Host allocation failures inside processes (src/recognize/families/python.cc).
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

std::vector<Fact> allocs(const std::string& text) {
  std::vector<Fact> out;
  for (auto& f : test::facts_of(text))
    if (f.kind == FactKind::host_alloc_failure) out.push_back(f);
  return out;
}

TEST(PythonHost, TracebackMemoryErrorIsHostRam) {
  const char* log = R"(Traceback (most recent call last):
  File "embed.py", line 12, in <module>
    vectors.append(model.encode(chunk))
MemoryError
)";
  auto f = allocs(log);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].layer, Layer::host_ram);
  EXPECT_EQ(f[0].detail, "Python MemoryError");
  EXPECT_EQ(test::diagnose_text(log).layer, Layer::host_ram);
  // Behind a torchrun rank prefix, and with a message.
  EXPECT_EQ(allocs("[rank0]: MemoryError: out of memory\n").size(), 1u);
}

TEST(PythonHost, NumpyArrayAllocationGivesTheSize) {
  auto f = allocs("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.50 GiB for an array with shape (100000, 4700) and data type float64\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].requested, static_cast<uint64_t>(3.5 * units::GiB));
  EXPECT_EQ(f[0].detail, "numpy array allocation");
}

TEST(PythonHost, CxxGoRustAndEnomem) {
  auto cxx = allocs("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc\nAborted (core dumped)\n");
  ASSERT_EQ(cxx.size(), 1u);  // terminate and what() are one failure
  EXPECT_EQ(cxx[0].detail, "std::bad_alloc");
  auto go = allocs("runtime: out of memory: cannot allocate 4194304-byte block (3848470528 in use)\nfatal error: runtime: out of memory\n");
  ASSERT_EQ(go.size(), 1u);
  EXPECT_EQ(go[0].requested, 4194304u);
  auto rust = allocs("memory allocation of 34359738368 bytes failed\n");
  ASSERT_EQ(rust.size(), 1u);
  EXPECT_EQ(rust[0].requested, 34359738368u);
  auto enomem = allocs("OSError: [Errno 12] Cannot allocate memory\n");
  ASSERT_EQ(enomem.size(), 1u);
  EXPECT_EQ(enomem[0].layer, Layer::host_ram);
}

// Go's allocator failure without the sysMap line before it (golang/go#13728),
// with Windows' VirtualAlloc line giving the size (mandiant/GoReSym#51), and
// mmap's ENOMEM at start-up (MetaCubeX/mihomo#1636); numpy's MemoryError with
// the size printed as "201. GiB" (numpy/numpy#17595). Values are ours.
TEST(PythonHost, GoAndNumpyVariantsAreHostRamWithTheSize) {
  auto go = allocs("fatal error: out of memory\n\nruntime stack:\nruntime.throw(0x7b2190, 0xd)\n");
  ASSERT_EQ(go.size(), 1u);
  EXPECT_EQ(go[0].detail, "Go runtime: out of memory");
  EXPECT_EQ(test::diagnose_text("fatal error: out of memory\n").layer, Layer::host_ram);
  auto win = allocs("runtime: VirtualAlloc of 536870912 bytes failed with errno=1455\nfatal error: out of memory\n");
  ASSERT_EQ(win.size(), 1u);  // the two lines are one failure
  EXPECT_EQ(win[0].requested, 536870912u);
  EXPECT_EQ(allocs("fatal error: runtime: cannot allocate memory\n").size(), 1u);
  auto np = allocs("MemoryError: Unable to allocate 48. GiB for an array with shape (80000, 80000) and data type float64\n");
  ASSERT_EQ(np.size(), 1u);
  EXPECT_EQ(np[0].requested, 48 * units::GiB);
  const char* np2 = "numpy._core._exceptions._ArrayMemoryError: Unable to allocate 3.2 GiB for an array with shape (21000, 20480) and data type float64\n";
  ASSERT_EQ(allocs(np2).size(), 1u);
  EXPECT_NEAR(static_cast<double>(*allocs(np2)[0].requested), 3.2 * units::GiB, 1.0);
  EXPECT_EQ(test::diagnose_text(np2).layer, Layer::host_ram);
}

// numpy before 1.17 printed no size, only the shape and type (modelled on the
// format in numpy/numpy#10951 and scverse threads; values are ours): the
// request is their product, and against `free`'s available it is one
// request larger than the host could give.
TEST(PythonHost, OldNumpyMessageGivesTheSizeFromShapeAndType) {
  auto np = allocs("MemoryError: Unable to allocate array with shape (20000, 60000) and data type float64\n");
  ASSERT_EQ(np.size(), 1u);
  EXPECT_EQ(np[0].requested, 20000ull * 60000 * 8);
  EXPECT_EQ(allocs("MemoryError: Unable to allocate array with shape (3000000, 300) and data type float32\n")[0].requested,
            3000000ull * 300 * 4);
  EXPECT_EQ(allocs("MemoryError: Unable to allocate array with shape (5000000000,) and data type int8\n")[0].requested, 5000000000ull);
  // A type whose width is not known, a shape that overflows, or no shape: no size.
  EXPECT_FALSE(allocs("MemoryError: Unable to allocate array with shape (100, 100) and data type <U32\n")[0].requested);
  EXPECT_FALSE(allocs("MemoryError: Unable to allocate array with shape (99999999999, 99999999999, 9999999) and data type float64\n")[0]
                   .requested);
  EXPECT_FALSE(allocs("MemoryError: Unable to allocate array\n")[0].requested);
  const char* log = R"($ free -h
              total        used        free      shared  buff/cache   available
Mem:           15Gi       2.1Gi       9.9Gi       201Mi       3.3Gi        12Gi
Swap:         2.0Gi          0B       2.0Gi
$ python rank.py counts.csv
Traceback (most recent call last):
  File "/opt/conda/lib/python3.7/site-packages/pandas/core/internals/managers.py", line 1793, in _stack_arrays
    stacked = np.empty(shape, dtype=dtype)
MemoryError: Unable to allocate array with shape (20000, 60000) and data type float64
)";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

TEST(PythonHost, EnomemUnderAContainerLimitIsThatLimit) {
  Diagnosis d = test::diagnose_text("docker run --memory 2g worker:1\n-bash: fork: Cannot allocate memory\n");
  EXPECT_EQ(d.layer, Layer::container_limit);
}

TEST(PythonHost, LookAlikesAreNotHostFailures) {
  const char* log = R"(torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB
java.lang.OutOfMemoryError: Java heap space
    except MemoryError:
If you see MemoryError: Unable to allocate, reduce the batch size.
Hint: "Cannot allocate memory" means the host is out of RAM, consider adding swap
NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory
)";
  EXPECT_TRUE(allocs(log).empty());
}

// A Python MemoryError whose C++ frames below it name a device allocator
// (modelled on PaddlePaddle/Paddle threads of dygraph training failing in
// "paddle::memory::allocation::CUDAAllocator::AllocateImpl"; our own paths):
// the device ran out, not the host. Frames of a host allocator leave it the host's.
TEST(PythonHost, AMemoryErrorOverADeviceAllocatorsFramesIsTheDevices) {
  const std::string head =
      "  File \"/srv/train.py\", line 41, in <module>\n"
      "    model.train(num_epochs=2, train_dataset=ds)\n"
      "MemoryError: \n"
      "\n"
      "--------------------------------------\n"
      "C++ Traceback (most recent call last):\n"
      "--------------------------------------\n"
      "0   paddle::imperative::Tracer::TraceOp(std::string const&)\n"
      "1   paddle::memory::allocation::Allocator::Allocate(unsigned long)\n";
  Diagnosis dev = test::diagnose_text(head + "2   paddle::memory::allocation::CUDAAllocator::AllocateImpl(unsigned long)\n");
  EXPECT_EQ(dev.layer, Layer::gpu_vram);
  Diagnosis host = test::diagnose_text(head + "2   paddle::memory::allocation::CPUAllocator::AllocateImpl(unsigned long)\n");
  EXPECT_EQ(host.layer, Layer::host_ram);
  // Paddle's summary below the frames (modelled on PaddlePaddle/PaddleOCR#7091;
  // our figures): its "Out of memory error on GPU 0" makes the error the device's.
  Diagnosis summary = test::diagnose_text(
      head + "----------------------\nError Message Summary:\n----------------------\nResourceExhaustedError:\n\n"
             "Out of memory error on GPU 0. Cannot allocate 96.000000MB memory on GPU 0, 7.812500GB memory has been allocated and "
             "available memory is only 18.250000MB.\n");
  EXPECT_EQ(summary.layer, Layer::gpu_vram);
  // Paddle's own refusal, in words the generic reader knows.
  EXPECT_EQ(test::diagnose_text("Cannot malloc 52.5 MB GPU memory. Please shrink FLAGS_fraction_of_gpu_memory_to_use environment "
                                "variable to a lower value.\n")
                .layer,
            Layer::gpu_vram);
}

}  // namespace
}  // namespace aimem
