// TensorFlow and JAX / XLA allocation failures.
#include <gtest/gtest.h>

#include "core/units.h"
#include "support/test_support.h"

namespace aimem {
namespace {

using units::GiB;

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(TensorflowJax, ActivationTensorIsABatch) {
  const char* text =
      "ResourceExhaustedError: OOM when allocating tensor with shape[128,128,109,109] and type float on "
      "/job:localhost/replica:0/task:0/device:GPU:1 by allocator GPU_1_bfc\n"
      "\t [[Node: replica_1/xception/block2_sepconv1_bn/FusedBatchNorm = FusedBatchNorm[T=DT_FLOAT, is_training=true]]]\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].gpu, 1);
  EXPECT_EQ(g[0].requested, 128ull * 128 * 109 * 109 * 4);
  EXPECT_NE(g[0].detail.find("batch"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

// TensorFlow 1.x restoring a checkpoint onto a full device
// (salesforce/ctrl#43's shape; our own figures): the copy's destination could
// not be allocated. Beside the BFC Stats block at its Limit it is sure.
TEST(TensorflowJax, DstTensorNotInitializedIsTheDeviceFull) {
  const std::string err = "ERROR:tensorflow:Error recorded from training_loop: Dst tensor is not initialized.\n"
                          "\t [[node save/RestoreV2 (defined at train.py:98) ]]\n";
  const std::string stats = "2019-06-02 11:40:12.118402: I tensorflow/core/common_runtime/bfc_allocator.cc:824] Stats: \n"
                            "Limit:                 11330676327\n"
                            "InUse:                 11330675968\n"
                            "MaxInUse:              11330675968\n";
  auto alone = of_kind(err, FactKind::gpu_oom);
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_FLOAT_EQ(alone[0].strength, 0.7f);
  auto full = of_kind(stats + err, FactKind::gpu_oom);
  ASSERT_EQ(full.size(), 1u);
  EXPECT_FLOAT_EQ(full[0].strength, 0.85f);
  EXPECT_EQ(test::diagnose_text(stats + err).layer, Layer::gpu_vram);
}

TEST(TensorflowJax, VariableInitializerIsNotABatch) {
  const char* text =
      "ResourceExhaustedError (see above for traceback): OOM when allocating tensor of shape [563354,256] and type float\n"
      "\t [[Node: embeddings/Adam/Initializer/zeros = Const[dtype=DT_FLOAT, _device=\"/job:localhost/replica:0/task:0/device:GPU:0\"]()]]\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].requested, 563354ull * 256 * 4);
  EXPECT_EQ(g[0].detail.find("batch"), std::string::npos);
  // A conv kernel of rank 4 is not a batch either when the op is its initializer.
  const char* kernel =
      "OOM when allocating tensor with shape[3,3,512,512] and type half on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n"
      "\t [[{{node conv5/kernel/Initializer/random_uniform}}]]\n";
  auto k = of_kind(kernel, FactKind::gpu_oom);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].requested, 3ull * 3 * 512 * 512 * 2);
  EXPECT_EQ(k[0].detail.find("batch"), std::string::npos);
}

TEST(TensorflowJax, CpuDeviceIsHostRam) {
  const char* text =
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,1024,1024] "
      "and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu [Op:MatMul]\n";
  auto h = of_kind(text, FactKind::host_alloc_failure);
  ASSERT_EQ(h.size(), 1u);
  EXPECT_EQ(h[0].layer, Layer::host_ram);
  EXPECT_TRUE(of_kind(text, FactKind::gpu_oom).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::host_ram);
}

TEST(TensorflowJax, AllocatorWarningIsReplacedByTheException) {
  std::string text =
      "W tensorflow/core/common_runtime/bfc_allocator.cc:456] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.00GiB (rounded to 2147483648)requested by op MatMul\n";
  for (int i = 0; i < 50; ++i) text += "I tensorflow/core/common_runtime/bfc_allocator.cc:1050] InUse at 7f0000 of size 256 next 1\n";
  text += "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[32,4096,4096] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:MatMul]\n";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].where.line, 52u);
  EXPECT_EQ(g[0].requested, 32ull * 4096 * 4096 * 4);
  // Alone, the warning is the failure.
  auto w = of_kind("W bfc_allocator.cc:456] Allocator (GPU_3_bfc) ran out of memory trying to allocate 2.00GiB (rounded to 2147483648)requested by op MatMul\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].gpu, 3);
  EXPECT_EQ(w[0].requested, 2 * GiB);
}

TEST(TensorflowJax, NotAFailureWarningIsIgnored) {
  const char* text =
      "W tensorflow/core/common_runtime/bfc_allocator.cc:246] Allocator (GPU_0_bfc) ran out of memory trying to allocate "
      "2.19GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be "
      "performance gains if more memory were available.\n";
  EXPECT_TRUE(test::facts_of(text).empty());
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

TEST(TensorflowJax, JaxOomInsideACompiledCallIsAnActivationPeak) {
  const char* text = R"(/usr/local/lib/python3.7/dist-packages/jax/interpreters/xla.py in _execute_compiled(compiled, avals, handlers, kept_var_idx, *args)
--> 960   out_bufs = compiled.execute(input_bufs)

RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.
)";
  auto g = of_kind(text, FactKind::gpu_oom);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].family, Family::jax);
  EXPECT_EQ(g[0].requested, 14285187448u);
  EXPECT_NE(g[0].detail.find("activation"), std::string::npos);
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
  // Without the execute frames the purpose is not known.
  auto bare = of_kind("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 5.24GiB.\n", FactKind::gpu_oom);
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(bare[0].detail.find("activation"), std::string::npos);
  EXPECT_EQ(bare[0].requested, static_cast<uint64_t>(5.24 * GiB + 0.5));
}

TEST(TensorflowJax, OtherXlaForms) {
  auto a = of_kind("XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 1.00GiB (1073741824B) on device ordinal 2\n", FactKind::gpu_oom);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].gpu, 2);
  EXPECT_EQ(a[0].requested, GiB);
  auto b = of_kind("XlaRuntimeError: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 1.62G. That was not possible. There are 1.03G free.; (0x0x0_HBM0)\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].free, static_cast<uint64_t>(1.03 * GiB + 0.5));
  auto c = of_kind("XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 17.70G of 15.48G hbm. Exceeded hbm capacity by 2.22G.\n",
                   FactKind::gpu_oom);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].total, static_cast<uint64_t>(15.48 * GiB + 0.5));
  // RESOURCE_EXHAUSTED is also a quota / rate-limit status.
  EXPECT_TRUE(test::facts_of("grpc error: RESOURCE_EXHAUSTED: Quota exceeded for quota metric 'Requests'\n").empty());
}

TEST(TensorflowJax, PreallocationNoticeIsHealthy) {
  const char* text =
      "I1125 09:30:13.002 xla_bridge.py:889] XLA_PYTHON_CLIENT_MEM_FRACTION=.75: preallocating 75% of GPU memory (60.0 GiB of 80.0 GiB)\n"
      "step 100 | loss 2.113 | 1.92 steps/s\n";
  auto s = of_kind(text, FactKind::runtime_setting);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_DOUBLE_EQ(*s[0].ratio, 0.75);
  auto g = of_kind(text, FactKind::gpu_state);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].total, 80 * GiB);
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// The BFC allocator's Stats block: a pool with room for the request but no
// chunk to hold it is fragmentation; a full one is not (modelled on a TF 1.x
// conv OOM and its allocator dump).
TEST(TensorflowJax, BfcStatsTellFragmentationFromAFullPool) {
  auto text = [](const std::string& in_use) {
    return "2018-09-28 10:14:07.512803: W tensorflow/core/common_runtime/bfc_allocator.cc:271] Allocator (GPU_0_bfc) ran out "
           "of memory trying to allocate 1.53GiB.  Current allocation summary follows.\n"
           "2018-09-28 10:14:07.513879: I tensorflow/core/common_runtime/bfc_allocator.cc:686] Stats: \n"
           "Limit:                 10468941005\n"
           "InUse:                  " + in_use + "\n"
           "MaxInUse:               7712935936\n"
           "2018-09-28 10:14:07.514022: W tensorflow/core/framework/op_kernel.cc:1318] OP_REQUIRES failed at conv_ops.cc:693 : "
           "Resource exhausted: OOM when allocating tensor with shape[16,256,320,320] and type float on "
           "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
  };
  Diagnosis pieces = test::diagnose_text(text("6646531840"));
  EXPECT_EQ(pieces.layer, Layer::gpu_vram);
  EXPECT_EQ(pieces.cause, Cause::fragmentation);
  Diagnosis full = test::diagnose_text(text("10268941005"));
  EXPECT_EQ(full.layer, Layer::gpu_vram);
  EXPECT_NE(full.cause, Cause::fragmentation);
  // A pool a sliver short of full (modelled on tensorflow/models#8487: 64
  // MB left for a 49 MB tensor; values ours) is full: 1.53 GiB asked with
  // 1.55 GiB left.
  Diagnosis sliver = test::diagnose_text(text("8804000000"));
  EXPECT_EQ(sliver.layer, Layer::gpu_vram);
  EXPECT_NE(sliver.cause, Cause::fragmentation);
}

// Modelled on torch_xla on TPU (pytorch/xla#1735, #2569): the runtime's
// "Attempting to allocate/reserve N. That was not possible." after the old
// "Resource exhausted: " status, or on the line below it; our own figures.
TEST(TensorflowJax, TheTpuRuntimesRefusalIsTheDevicesMemory) {
  auto one = test::facts_of_kind(
      "2021-03-04 10:11:12 10.1.0.7 [2]   (0) Resource exhausted: Attempting to allocate 96.25M. That was not possible. "
      "There are 71.40M free.; (0x1x0_HBM0)\n",
      FactKind::gpu_oom);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].layer, Layer::gpu_vram);
  ASSERT_TRUE(one[0].requested);
  EXPECT_NEAR(static_cast<double>(*one[0].requested) / (1 << 20), 96.25, 0.01);
  const std::string below =
      "Exception in device=TPU:3: Resource exhausted: From /job:tpu_worker/replica:0/task:0:\n"
      "Attempting to reserve 6.02G at the bottom of memory. That was not possible. There are 3.90G free, 0B reserved, and 3.90G reservable.;\n"
      "HBM capacity 16.00G:\n";
  auto two = test::facts_of_kind(below, FactKind::gpu_oom);
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(test::diagnose_text(below).layer, Layer::gpu_vram);
  // The refusal after what the runtime was doing when it came: loading a
  // compiled program (tpu-inference on vLLM, modelled on
  // AI-Hypercomputer/tpu-recipes#151; our own figures). Loading a program
  // is not loading the model: the cue for a model's load stays silent.
  const std::string program =
      "INFO 02-11 07:12:40 [kv_cache_utils.py:1087] GPU KV cache size: 2,113,536 tokens\n"
      "ERROR 02-11 07:13:02 [core.py:708] jaxlib._jax.XlaRuntimeError: RESOURCE_EXHAUSTED: Error loading program "
      "'jit_step_fn': Attempting to reserve 4.20G at the bottom of memory. That was not possible. There are 3.05G free, "
      "0B reserved, and 3.05G reservable.\n";
  auto three = test::facts_of_kind(program, FactKind::gpu_oom);
  ASSERT_EQ(three.size(), 1u);
  EXPECT_NEAR(static_cast<double>(*three[0].requested) / (1ull << 30), 4.20, 0.01);
  EXPECT_TRUE(test::facts_of_kind(program, FactKind::phase_load).empty());
  Diagnosis d = test::diagnose_text(program);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_NE(d.cause, Cause::model_load);
  // A quota's RESOURCE_EXHAUSTED is not memory, with or without those words nearby.
  EXPECT_TRUE(test::facts_of_kind("Resource exhausted: Quota exceeded for quota metric 'Requests'\n", FactKind::gpu_oom).empty());
}

// A PJRT client's pool capped at a share of the device (ZML's line, modelled
// on zml/zml#125; our own sizes): where nvidia-smi shows the device with room
// for the refused request outside the pool, the cap bound, not the device.
// With the device full, the same share is not the cause.
TEST(TensorflowJax, APjrtPoolCapWithRoomOutsideItIsTheLimit) {
  const std::string log =
      "$ nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv\n"
      "name, memory.used [MiB], memory.total [MiB]\n"
      "NVIDIA L40S, 36843 MiB, 49140 MiB\n"
      "info(pjrt): CUDA client: preallocate=true memory_fraction=0.75\n"
      "error(zml): RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8053063680 bytes.\n";
  Diagnosis d = test::diagnose_text(log);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::limit_too_low);
  std::string full = log;
  full.replace(full.find("36843 MiB"), 9, "48800 MiB");
  EXPECT_NE(test::diagnose_text(full).cause, Cause::limit_too_low);
}

// TensorFlow 1.x's BFC pool far under what the device had free when the
// process took it (modelled on cardwing/Codes-for-Lane-Detection#66's
// GPU_MEMORY_FRACTION of 0.05; our own sizes): the pool was capped, and the
// cap ran out. A pool about the size of the free memory is the device's.
TEST(TensorflowJax, ABfcPoolFarUnderTheDevicesFreeMemoryIsACap) {
  auto log = [](const char* limit) {
    return std::string("totalMemory: 5.93GiB freeMemory: 5.52GiB\n"
                       "W tensorflow/core/common_runtime/bfc_allocator.cc:267] Allocator (GPU_0_bfc) ran out of memory trying to "
                       "allocate 56.25MiB.  Current allocation summary follows.\n"
                       "Limit:                   ") +
           limit +
           "\nInUse:                   284521216\n"
           "W tensorflow/core/framework/op_kernel.cc:1273] OP_REQUIRES failed at conv_ops.cc:446 : Resource exhausted: OOM when "
           "allocating tensor with shape[1,64,288,800] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator "
           "GPU_0_bfc\n";
  };
  Diagnosis capped = test::diagnose_text(log("317718528"));
  EXPECT_EQ(capped.layer, Layer::gpu_vram);
  EXPECT_EQ(capped.cause, Cause::limit_too_low);
  EXPECT_NE(test::diagnose_text(log("5600000000")).cause, Cause::limit_too_low);
}

// XLA's own figures say the memory was free but not in one piece (modelled on
// jax-ml/jax#7913; our sizes): the request fits what is free and not the
// largest region, so the cause is fragmentation whichever reader read it.
TEST(TensorflowJax, TheLargestContiguousRegionBelowTheRequestIsFragmentation) {
  Diagnosis d = test::diagnose_text(
      "Training...:  91%|#########1| 183211/201000 [41:02:10<3:59:04,  1.24it/s]\n"
      "jax._src.traceback_util.UnfilteredStackTrace: RuntimeError: Resource exhausted: Attempting to allocate 510.00M. That "
      "was not possible. There are 1.74G free. Due to fragmentation, the largest contiguous region of free memory is "
      "384.00M.; (0x0x0_HBM0):\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::fragmentation);
  // The same figures with a region large enough say nothing of fragmentation.
  Diagnosis big = test::diagnose_text(
      "RuntimeError: Resource exhausted: Attempting to allocate 510.00M. That was not possible. There are 1.74G free. Due to "
      "fragmentation, the largest contiguous region of free memory is 600.00M.; (0x0x0_HBM0):\n");
  EXPECT_NE(big.cause, Cause::fragmentation);
}

// PaddlePaddle's OOM report states the pool's fraction in use ("... is 0.50
// now, please set it to a higher value"); with the device half empty beside
// it, the cap ran out, not the GPU. The advice's "=xxx" placeholder is no
// value, and the default 0.92 with the device full names no cap (modelled on
// PaddlePaddle/Paddle's system_allocator.cc report; our figures).
TEST(TensorflowJax, PaddlesStatedFractionWithTheDeviceHalfEmptyIsTheCap) {
  auto report = [](const std::string& fraction) {
    return "ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 52.250244MB memory on GPU 0, available memory is "
           "only 3.500000MB.\n\nPlease check whether there is any other process using GPU 0.\n"
           "   2) FLAGS_fraction_of_gpu_memory_to_use is " + fraction + " now, please set it to a higher value but less than 1.0.\n"
           "      The command is `export FLAGS_fraction_of_gpu_memory_to_use=xxx`.\n";
  };
  const std::string smi = "| 38%   52C    P2    61W / 175W |   3901MiB /  8192MiB |     12%      Default |\n";
  Diagnosis capped = test::diagnose_text(report("0.45") + smi);
  EXPECT_EQ(capped.layer, Layer::gpu_vram);
  EXPECT_EQ(capped.cause, Cause::limit_too_low);
  EXPECT_NE(test::diagnose_text(report("0.92") + "| 38%   52C    P2    61W / 175W |   8101MiB /  8192MiB |     99%      Default |\n").cause,
            Cause::limit_too_low);
  EXPECT_TRUE(test::facts_of_kind("      The command is `export FLAGS_fraction_of_gpu_memory_to_use=xxx`.\n", FactKind::runtime_setting).empty());
}

// The TPU compiler giving up before it runs out, with XLA's human-readable
// sizes (modelled on google/jax threads of 2023-2025; own figures): a request
// in exabytes is a size bug, a request a little over the core is the HBM.
TEST(TensorflowJax, TheTpuCompilersEarlyAbortReadsItsSizes) {
  auto line = [](const char* need) {
    return std::string("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Compilation "
                       "failure: Aborting compilation early because it's unlikely to have enough memory. Requires ") +
           need + ", has 15.48G available. If more detailed logging is desired, set --xla_tpu_impure_oom_fast_exit_threshold=-1\n";
  };
  Diagnosis bug = test::diagnose_text(line("2.22E"));
  EXPECT_EQ(bug.layer, Layer::not_memory);
  Diagnosis hbm = test::diagnose_text(line("19.71G"));
  EXPECT_EQ(hbm.layer, Layer::gpu_vram);
}

// TensorFlow 1.0 printed the device's total and free memory on lines of their
// own when it found the device (modelled on anishathalye/neural-style's
// issue threads): most of it gone before TensorFlow allocated anything is
// another process's. Our own card and figures.
TEST(TensorflowJax, TensorFlowOnesDeviceLinesShowMemoryHeldBeforeItStarted) {
  const std::string found =
      "I tensorflow/core/common_runtime/gpu/gpu_device.cc:951] Found device 0 with properties: \n"
      "name: GeForce GTX 1060 6GB\nmajor: 6 minor: 1 memoryClockRate (GHz) 1.7085\npciBusID 0000:01:00.0\n";
  const std::string fail =
      "W tensorflow/core/common_runtime/bfc_allocator.cc:275] Ran out of memory trying to allocate 96.00MiB.  See logs for memory state.\n"
      "W tensorflow/core/framework/op_kernel.cc:968] Resource exhausted: OOM when allocating tensor with shape[1,512,768,64]\n";
  Diagnosis held = test::diagnose_text(found + "Total memory: 5.93GiB\nFree memory: 402.19MiB\n" + fail);
  EXPECT_EQ(held.layer, Layer::gpu_vram);
  EXPECT_EQ(held.cause, Cause::other_process) << test::reason_text(held);
  Diagnosis free = test::diagnose_text(found + "Total memory: 5.93GiB\nFree memory: 5.71GiB\n" + fail);
  EXPECT_NE(free.cause, Cause::other_process) << test::reason_text(free);
}

// TensorFlow 2 creates its device with what was free when it started: far
// less than the card (its deviceMemorySize), or than an earlier process's
// device on the same GPU, is memory held before it started (modelled on a
// multi-worker strategy with two workers on one node's T4s, 2020, and two
// model runners sharing one card, 2022; our own sizes). A device that size
// under a cap the user set is the cap's, and a full-size device says nothing.
TEST(TensorflowJax, ADeviceCreatedFarSmallerThanTheCardShowsMemoryHeldBeforeIt) {
  const std::string props =
      "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1561] Found device 0 with properties: \n"
      "pciBusID: 0000:00:04.0 name: Tesla T4 computeCapability: 7.5\n"
      "coreClock: 1.59GHz coreCount: 40 deviceMemorySize: 14.75GiB deviceMemoryBandwidth: 298.08GiB/s\n";
  auto created = [](int mb) {
    return "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1247] Created TensorFlow device "
           "(/job:localhost/replica:0/task:0/device:GPU:0 with " + std::to_string(mb) + " MB memory) -> physical GPU (device: 0, "
           "name: Tesla T4, pci bus id: 0000:00:04.0, compute capability: 7.5)\n";
  };
  const std::string fail =
      "W tensorflow/core/common_runtime/bfc_allocator.cc:462] Allocator (GPU_0_bfc) ran out of memory trying to allocate 768.00MiB "
      "(rounded to 805306368)requested by op sequential/conv2d/Conv2D\n"
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[512,32,26,26] and type "
      "float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
  Diagnosis small = test::diagnose_text(props + created(664) + fail);
  EXPECT_EQ(small.cause, Cause::other_process) << test::reason_text(small);
  Diagnosis second = test::diagnose_text(created(13792) + created(664) + fail);
  EXPECT_EQ(second.cause, Cause::other_process) << test::reason_text(second);
  Diagnosis whole = test::diagnose_text(props + created(14221) + fail);
  EXPECT_NE(whole.cause, Cause::other_process) << test::reason_text(whole);
  Diagnosis capped = test::diagnose_text(
      "tf.config.set_logical_device_configuration(gpu, [tf.config.LogicalDeviceConfiguration(memory_limit=664)])\n" + props +
      created(664) + fail);
  EXPECT_NE(capped.cause, Cause::other_process) << test::reason_text(capped);
}

}  // namespace
}  // namespace aimem
