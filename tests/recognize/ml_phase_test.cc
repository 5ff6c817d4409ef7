// Load / serve phase markers and how they decide a GPU OOM's cause.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace aimem {
namespace {

const char* kOom =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 MiB. GPU 0 has a total capacity of 23.64 GiB of "
    "which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.50 GiB memory in use. Of the allocated "
    "memory 23.00 GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but unallocated.\n";

std::vector<Fact> of_kind(const std::string& text, FactKind kind) { return test::facts_of_kind(text, kind); }

TEST(MlPhase, LoadingCheckpointMakesModelLoad) {
  std::string text = std::string("Loading checkpoint shards:  50%|#####     | 2/4 [00:10<00:10,  5.00s/it]\n") +
                     "  File \"/app/serve.py\", line 12, in <module>\n    model = AutoModelForCausalLM.from_pretrained(name)\n" + kOom;
  EXPECT_FALSE(of_kind(text, FactKind::phase_load).empty());
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

// Caffe building its net layer by layer (modelled on a MobileNet-SSD set-up
// on a Jetson, BVLC/caffe-style net.cpp lines; our own layers and figures):
// killed while a layer is created, the network was being constructed. The
// same kill after the net was built ("Network initialization done") is not.
TEST(MlPhase, KilledWhileCaffeCreatesItsLayersIsTheLoad) {
  const std::string setup =
      "I1006 12:33:32.846038  5136 net.cpp:165] Memory required for data: 15313280\n"
      "I1006 12:33:32.846130  5136 net.cpp:100] Creating Layer conv5/relu\n"
      "I1006 12:33:32.938613  5136 net.cpp:157] Top shape: 1 256 19 19 (92416)\n"
      "I1006 12:33:32.938771  5136 net.cpp:100] Creating Layer conv6/dw\n";
  Diagnosis d = test::diagnose_text(setup + "Killed\n");
  EXPECT_EQ(d.cause, Cause::model_load);
  EXPECT_EQ(test::diagnose_text("I1006 12:33:40.102133  5136 net.cpp:255] Network initialization done.\nKilled\n").cause,
            Cause::unknown);
}

// A result concatenated onto itself on the failing code line (modelled on
// huggingface/transformers' prediction_loop before nested_concat, our own
// figures): every pass kept what the passes before it made. A concatenation
// of other names, or a comparison, is not that.
TEST(MlPhase, AResultConcatenatedOntoItselfIsAccumulation) {
  auto trace = [](const std::string& code) {
    return "Traceback (most recent call last):\n"
           "  File \"/app/eval.py\", line 71, in run_eval\n"
           "    " + code + "\n" + std::string(kOom);
  };
  Diagnosis d = test::diagnose_text(trace("preds = logits if preds is None else torch.cat((preds, logits), dim=0)"));
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
  EXPECT_EQ(test::diagnose_text(trace("all_rows = pd.concat([all_rows, chunk], ignore_index=True)")).cause, Cause::leak_or_accumulation);
  EXPECT_NE(test::diagnose_text(trace("out = torch.cat((left, right), dim=1)")).cause, Cause::leak_or_accumulation);
  EXPECT_NE(test::diagnose_text(trace("same = x == torch.cat((x, y))")).cause, Cause::leak_or_accumulation);
}

// A Spark driver's heap filling inside Dataset.collect's frames, or while
// its result getter gathers the tasks' results (modelled on
// spark-jobserver/spark-jobserver#1161; our own names): one result set
// collected whole.
// Vectors added to an in-memory index (modelled on facebookresearch/faiss
// threads building a flat index from a sentence encoder; own script and
// counts): the index keeps every vector, so the failed add is the corpus
// accumulated, not one batch.
TEST(MlPhase, AnAddToAnInMemoryIndexIsAccumulation) {
  Diagnosis d = test::diagnose_text(
      "$ python build_index.py\n"
      "indexed 2,400,000 / 5,000,000\n"
      "Traceback (most recent call last):\n"
      "  File \"build_index.py\", line 31, in <module>\n"
      "    index.add(np.asarray(vectors, dtype='float32'))\n"
      "  File \"/usr/lib/python3/dist-packages/faiss/class_wrappers.py\", line 228, in replacement_add\n"
      "    self.add_c(n, swig_ptr(x))\n"
      "MemoryError: std::bad_alloc\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::leak_or_accumulation);
}

// PyTorch's extension builder leaving ninja at its default job count, then
// the compiler's front end killed (modelled on Dao-AILab/flash-attention's
// install threads; own paths): the parallel compile jobs are what did not
// fit, as the same build with MAX_JOBS=4 shows.
TEST(MlPhase, NinjasDefaultParallelismBeforeAKilledCompilerIsTheBatch) {
  Diagnosis d = test::diagnose_text(
      "      Allowing ninja to set a default number of workers... (overridable by setting the environment variable MAX_JOBS=N)\n"
      "      [1/49] /usr/local/cuda/bin/nvcc -c csrc/flash_fwd_hdim64_bf16_sm80.cu --threads 4\n"
      "      FAILED: build/temp.linux-x86_64-cpython-310/csrc/flash_bwd_hdim160_fp16_sm80.o\n"
      "      nvcc error   : 'cicc' died due to signal 9 (Kill signal)\n"
      "      ninja: build stopped: subcommand failed.\n");
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

// Every batch's outputs kept in a list and joined at the end (modelled on a
// change-detection repository's validate(); own paths and sizes): the list
// held the whole validation set. A join of two tensors named otherwise is
// one step's work, not that.
TEST(MlPhase, AListOfEveryBatchsResultsJoinedAtTheEndIsAccumulation) {
  auto trace = [](const std::string& code) {
    return "Traceback (most recent call last):\n"
           "  File \"main.py\", line 188, in validate\n"
           "    " + code + "\n"
           "RuntimeError: [enforce fail at alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate "
           "2936012800 bytes.\n";
  };
  EXPECT_EQ(test::diagnose_text(trace("all_probs = torch.cat(prob_list, dim=0)")).cause, Cause::leak_or_accumulation);
  EXPECT_EQ(test::diagnose_text(trace("preds = np.concatenate(all_preds)")).cause, Cause::leak_or_accumulation);
  EXPECT_NE(test::diagnose_text(trace("h = torch.cat(left, right)")).cause, Cause::leak_or_accumulation);
}

// Exporting a model to ONNX (torch.onnx's frames; modelled on a Stable
// Diffusion export thread, own paths and sizes) and RAPIDS setting up its
// device pool (rmm.reinitialize through dask-cuda's worker plugin) are
// loads: the weights converted, the runtime initialised.
TEST(MlPhase, AnOnnxExportAndAnRmmPoolSetUpAreLoads) {
  Diagnosis onnx = test::diagnose_text(
      "Traceback (most recent call last):\n"
      "  File \"save_onnx.py\", line 31, in convert\n"
      "    torch.onnx.export(unet, args, \"unet.onnx\", opset_version=14, do_constant_folding=True)\n"
      "  File \"/venv/lib/site-packages/torch/onnx/utils.py\", line 1141, in _model_to_graph\n"
      "    params_dict = _C._jit_pass_onnx_constant_fold(\n"
      "RuntimeError: [enforce fail at alloc_cpu.cpp:81] data. DefaultCPUAllocator: not enough memory: you tried to allocate "
      "838860800 bytes.\n");
  EXPECT_EQ(onnx.cause, Cause::model_load);
  Diagnosis rmm = test::diagnose_text(
      "  File \"/conda/lib/python3.8/site-packages/dask_cuda/utils.py\", line 52, in setup\n"
      "    rmm.reinitialize(\n"
      "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/conda/include/rmm/mr/device/pool_memory_resource.hpp:183: "
      "Maximum pool size exceeded\n");
  EXPECT_EQ(rmm.layer, Layer::gpu_vram);
  EXPECT_EQ(rmm.cause, Cause::model_load);
}

TEST(MlPhase, ASparkDriverCollectingAWholeResultIsTheBatch) {
  const std::string collect =
      "2024-05-02 10:14:36 ERROR JobManagerActor:606 - Got Throwable\n"
      "java.lang.OutOfMemoryError: Java heap space\n"
      "        at scala.collection.mutable.ArrayBuffer.ensureSize(ArrayBuffer.scala:48)\n"
      "        at org.apache.spark.sql.execution.SparkPlan.executeCollect(SparkPlan.scala:279)\n"
      "        at org.apache.spark.sql.Dataset.collect(Dataset.scala:2728)\n";
  Diagnosis d = test::diagnose_text(collect);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

// Bazel's progress line counts the actions it runs at once (modelled on
// The-OpenROAD-Project/bazel-orfs#869; our targets): parallel copies.
TEST(MlPhase, BazelsActionsRunningAreParallelCopies) {
  const std::string log =
      "[8,101 / 9,977] 12 actions running\n"
      "    Compiling src/core/solver.cc; 211s linux-sandbox\n"
      "Server terminated abruptly (error code: 14, error message: 'Socket closed', log file: '/root/.cache/bazel/server/jvm.out')\n"
      "[Tue Mar  3 10:14:09 2026] Out of memory: Killed process 4412 (cc1plus) total-vm:3322144kB, anon-rss:3011208kB, file-rss:2048kB, "
      "shmem-rss:0kB, UID:1000 pgtables:6292kB oom_score_adj:0\n";
  EXPECT_EQ(test::diagnose_text(log).cause, Cause::concurrency_batch);
  std::string two = log;
  two.replace(two.find("12 actions"), 2, "2");
  EXPECT_NE(test::diagnose_text(two).cause, Cause::concurrency_batch);
}

// The statement typed at a Python prompt right above a traceback is the one
// operation that raised, however many library frames lie under it (modelled
// on pandas-dev/pandas read_csv MemoryError reports; values ours). The same
// statement as a log line above the traceback, not at a prompt, speaks only
// by its distance, and sixteen frames away it is too far.
// nn.Module's own frames of .to() (its _apply, and the convert applied to
// each parameter) under a call that names no model ("pipe = pipe.to('cuda')",
// diffusers' shape; our figures): the model moving to the device, a load.
// PIL's Image.convert in a batch's preprocessing is not.
TEST(MlPhase, TorchModuleToFramesAreTheModelMovingToTheDevice) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total capacity of 23.64 GiB of which "
      "1.02 GiB is free. Including non-PyTorch memory, this process has 22.60 GiB memory in use. Of the allocated memory 21.90 GiB "
      "is allocated by PyTorch, and 243.12 MiB is reserved by PyTorch but unallocated.\n";
  Diagnosis moved = test::diagnose_text(
      "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    pipe = pipe.to('cuda')\n"
      "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 900, in _apply\n    module._apply(fn)\n"
      "  File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1326, in convert\n    return t.to(device)\n" +
      oom);
  EXPECT_EQ(moved.layer, Layer::gpu_vram);
  EXPECT_EQ(moved.cause, Cause::model_load);
  Diagnosis image = test::diagnose_text(
      "Traceback (most recent call last):\n  File \"infer.py\", line 40, in <module>\n    x = prep(img)\n"
      "  File \"/usr/lib/python3/site-packages/PIL/Image.py\", line 995, in convert\n    im = self.im.convert(mode, dither)\n" +
      oom);
  EXPECT_NE(image.cause, Cause::model_load);
  // IPython prints the same frame as "<path> in convert(t)" (modelled on
  // facebookresearch/seamless_communication#416; our paths).
  Diagnosis ipython = test::diagnose_text(
      "/usr/local/lib/python3.10/dist-packages/torch/nn/modules/module.py in convert(t)\n" + std::string(kOom));
  EXPECT_EQ(ipython.cause, Cause::model_load);
}

// ONNX Runtime's session constructor in the frames (its initializers placed
// on the device) is the load; a session made by a finished statement, then a
// run that fails, is not (modelled on microsoft/onnxruntime#9939's shape, the
// corpus's tr-067; our figures).
TEST(MlPhase, OnnxRuntimesSessionConstructorIsTheLoadAFinishedOneIsNot) {
  const std::string ort_oom =
      "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : "
      "/onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, "
      "onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 3221225472\n";
  Diagnosis creating = test::diagnose_text(
      "Traceback (most recent call last):\n  File \"infer.py\", line 9, in <module>\n"
      "    sess = ort.InferenceSession(\"detector.onnx\", providers=[\"CUDAExecutionProvider\"])\n"
      "  File \"/usr/lib/python3/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py\", line 452, in "
      "_create_inference_session\n    sess.initialize_session(providers, provider_options, disabled_optimizers)\n" +
      ort_oom);
  EXPECT_EQ(creating.layer, Layer::gpu_vram);
  EXPECT_EQ(creating.cause, Cause::model_load);
  Diagnosis running = test::diagnose_text(
      ">>> sess = ort.InferenceSession(\"detector.onnx\", providers=[\"CUDAExecutionProvider\"])\n"
      ">>> out = sess.run(None, {\"images\": batch})\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
      "  File \"/usr/lib/python3/site-packages/onnxruntime/capi/onnxruntime_inference_collection.py\", line 220, in run\n"
      "    return self._sess.run(output_names, input_feed, run_options)\n" +
      ort_oom);
  EXPECT_NE(running.cause, Cause::model_load);
}

TEST(MlPhase, APromptStatementAboveATracebackIsTheOperation) {
  auto paste = [](const char* prompt) {
    std::string s = std::string(prompt) + "df = pd.read_csv(\"events_2019.csv\", sep=\"\\t\")\n";
    s += "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n";
    for (int k = 0; k < 8; ++k)
      s += "  File \"pandas/_libs/parsers.pyx\", line " + std::to_string(800 + 40 * k) + ", in pandas._libs.parsers.TextReader._step" +
           std::to_string(k) + "\n    self._step(rows)\n";
    return s + "MemoryError\n";
  };
  EXPECT_EQ(test::diagnose_text(paste(">>> ")).cause, Cause::model_load);
  EXPECT_EQ(test::diagnose_text(paste("In [4]: ")).cause, Cause::model_load);
  EXPECT_NE(test::diagnose_text(paste("INFO running: ")).cause, Cause::model_load);
}

// A database restored from a snapshot is read back into memory: the load
// (modelled on a mina-indexer restore killed by a global OOM; values ours).
// The same kill without the restore line is no load.
TEST(MlPhase, RestoringSavedDataIsTheLoad) {
  const std::string kill =
      "Dec 01 10:14:02 ci-7 kernel: oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
      "task_memcg=/user.slice/user-1000.slice/session-3.scope,task=indexer,pid=41022,uid=1000\n"
      "Dec 01 10:14:02 ci-7 kernel: Out of memory: Killed process 41022 (indexer) total-vm:18102216kB, anon-rss:15844012kB, "
      "file-rss:1024kB, shmem-rss:0kB, UID:1000 pgtables:32140kB oom_score_adj:0\n";
  std::string text = "2026-12-01T10:02:11.377695+00:00 - INFO Restoring indexer database from snapshot file \"snap/41.snapshot\"\n" + kill;
  EXPECT_FALSE(of_kind(text, FactKind::phase_load).empty());
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::model_load);
  EXPECT_TRUE(of_kind(kill, FactKind::phase_load).empty());
  EXPECT_NE(test::diagnose_text(kill).cause, Cause::model_load);
}

// Ray's memory monitor killing workers whose task is the model's set-up
// (verl's WorkerDict.actor_rollout_init_model; values are ours): the load.
TEST(MlPhase, ATaskNamedInitModelIsTheLoad) {
  const std::string kill =
      "(main_task pid=48213) ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
      "PID\tMEM(GB)\tCOMMAND\n51370\t118.31\tray::WorkerDict.actor_rollout_init_model\n"
      "51371\t117.96\tray::WorkerDict.actor_rollout_init_model\n";
  Diagnosis d = test::diagnose_text(kill);
  EXPECT_EQ(d.layer, Layer::userspace_oom_killer);
  EXPECT_EQ(d.cause, Cause::model_load);
}

// A module's constructor creating its weights is the model being built,
// whatever the command line's batch size says (modelled on
// meta-llama/llama#913; values ours).
TEST(MlPhase, ConstructorCreatingParametersIsModelLoad) {
  std::string text = std::string("$ torchrun --nproc_per_node 4 chat.py --ckpt_dir ckpt/ --max_batch_size 8\n") +
                     "  File \"/srv/llama/model.py\", line 301, in __init__\n"
                     "    self.w1 = ColumnParallelLinear(\n"
                     "  File \"/usr/lib/python3/dist-packages/fairscale/nn/model_parallel/layers.py\", line 262, in __init__\n"
                     "    self.weight = Parameter(torch.Tensor(self.output_size_per_partition, self.in_features))\n" +
                     kOom;
  EXPECT_FALSE(of_kind(text, FactKind::phase_load).empty());
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::model_load);
}

TEST(MlPhase, ForwardPassMakesConcurrencyBatch) {
  std::string text = std::string("  File \"/app/model.py\", line 88, in forward\n    x = self.attn(x)\n") + kOom;
  auto s = of_kind(text, FactKind::phase_serve);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].detail, "a forward pass");
  EXPECT_EQ(s[0].cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

TEST(MlPhase, ProfilingAndGraphCaptureAreTheBatch) {
  std::string text = std::string("INFO 05-01 10:00:00 model_runner.py:1077] Loading model weights took 14.99 GB\n") +
                     "  File \"/vllm/worker/model_runner.py\", line 1230, in profile_run\n" + kOom;
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

// The innermost frames decide: a KV-cache allocation below the load frames
// (modelled on vllm-project/vllm#1283, CacheEngine.allocate_gpu_cache).
TEST(MlPhase, InnermostFramesDecide) {
  std::string text = std::string("  File \"/app/bench.py\", line 11, in <module>\n    llm = LLM(model=\"m\")\n") +
                     "  File \"/vllm/engine/llm_engine.py\", line 89, in __init__\n    self._init_cache()\n" +
                     "  File \"/vllm/worker/cache_engine.py\", line 39, in __init__\n    self.gpu_cache = self.allocate_gpu_cache()\n" +
                     "  File \"/vllm/worker/cache_engine.py\", line 80, in allocate_gpu_cache\n    key_blocks = torch.empty(\n" + kOom;
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::kv_cache_context);
}

// A "Loading ..." line just before a bare SIGKILL: the host ran out while the
// model loaded (modelled on kvcache-ai/ktransformers#440).
TEST(MlPhase, LoadingLineBeforeAKillIsModelLoad) {
  Diagnosis d = test::diagnose_text(
      "loading blk.57.ffn_down_exps.weight to cpu\n"
      "loading blk.58.ffn_gate_exps.weight to cpu\n"
      "Killed\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

TEST(MlPhase, RemediesAreNotPhases) {
  EXPECT_TRUE(of_kind("  KV cache: reduce free_gpu_memory_fraction\n", FactKind::phase_serve).empty());
  EXPECT_TRUE(of_kind("RuntimeError: Decode out of memory. Try to lower your batch size.\n", FactKind::phase_serve).empty());
}

TEST(MlPhase, CuesAloneAreNeverAFailure) {
  std::string text;
  for (int i = 0; i < 5; ++i) text += "  File \"/m.py\", line " + std::to_string(i) + ", in forward\n";
  EXPECT_EQ(test::diagnose_text(text).layer, Layer::none);
}

// A long healthy log full of cues does not fill the fact store before the
// failure at its end: cues are held back until a failure word is near.
TEST(MlPhase, CuesAreHeldUntilAFailureIsNear) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "| epoch " + std::to_string(i) + " | loading batch | loss 1.0\n";
  EXPECT_LE(of_kind(text, FactKind::phase_serve).size(), 0u);
  text += "loading checkpoint shards for evaluation\nKilled\n";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_NE(d.cause, Cause::unknown);
}

// A load that says it finished ends the loading phase: the cue before it no
// longer speaks for a failure after it. Modelled on exllamav2's
// test_inference.py output and cache.py traceback; our own paths and sizes.
TEST(MlPhase, ALoadThatFinishedNoLongerSpeaksForTheFailure) {
  const std::string before =
      " -- Model: /models/Qwen2-72B-Instruct-4.0bpw-exl2\n"
      "Loading: /models/Qwen2-72B-Instruct-4.0bpw-exl2 100% 0:00:21\n";
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of 47.50 GiB of which "
      "96.00 MiB is free. Including non-PyTorch memory, this process has 47.39 GiB memory in use.\n";
  const std::string done = " -- Loaded model in 21.4093 seconds\n";
  // Without the line that says the load finished, the load is the nearest phase.
  EXPECT_EQ(test::diagnose_text(before + oom).cause, Cause::model_load);
  // With it, the load is over and nothing else says what ran: the cause stays open.
  Diagnosis d = test::diagnose_text(before + done + oom);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::unknown);
  // And the frames after it decide: the cache being created.
  const std::string frames =
      "Traceback (most recent call last):\n"
      "  File \"/srv/exllamav2/test_inference.py\", line 192, in <module>\n"
      "    cache = ExLlamaV2Cache(model)\n"
      "  File \"/srv/exllamav2/exllamav2/cache.py\", line 91, in create_state_tensors\n"
      "    p_key_states = torch.zeros(self.shape_wk, dtype = self.dtype, device = device).contiguous()\n";
  EXPECT_EQ(test::diagnose_text(before + done + frames + oom).cause, Cause::kv_cache_context);
  // A load that says "... done" on its own line is over too (modelled on a
  // variant annotator under Slurm, 2024; our own counts).
  const std::string own_done = "[cnvannot] 2024-05-13 09:12:44 loading 18442907 calls ... done (7.9 GB in memory)\n";
  EXPECT_EQ(test::diagnose_text(own_done + oom).cause, Cause::unknown);
  EXPECT_EQ(test::diagnose_text("[cnvannot] 2024-05-13 09:12:44 loading 18442907 calls ...\n" + oom).cause, Cause::model_load);
}

// A program's configuration, settings or plugins, and a compiled extension,
// are read at start-up, not a model into memory (modelled on Flink's task
// manager and DeepSpeed's JIT ops, 2024 and 2023; our own values).
TEST(MlPhase, LoadingConfigurationOrAnExtensionModuleIsNoModelLoad) {
  const std::string oom =
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 320.00 MiB. GPU 0 has a total capacity of 47.50 GiB of which "
      "96.00 MiB is free. Including non-PyTorch memory, this process has 47.39 GiB memory in use.\n";
  for (const char* line : {"2024-03-27 09:58:02,114 INFO  TaskManagerRunner [] - Loading configuration property: taskmanager.numberOfTaskSlots, 8\n",
                           "Loading extension module cpu_adam...\n", "[info] loading settings for project build from plugins.sbt ...\n",
                           "Loading config file ./composer.json\n"})
    EXPECT_NE(test::diagnose_text(std::string(line) + oom).cause, Cause::model_load) << line;
  EXPECT_EQ(test::diagnose_text("Loading model weights from /models/qwen\n" + oom).cause, Cause::model_load);
}

// Modelled on a notebook's MemoryError (IPython 7's frame format) while a
// loader builds the whole dataset in RAM (debajyotikarmaker/cvpr_4234#15),
// and on stress's memory workers in a pod's args (containerd/containerd#6323).
TEST(MlPhase, IPythonsLoadFrameAndStresssMemoryWorkers) {
  const std::string nb =
      "MemoryError                               Traceback (most recent call last)\n"
      "<ipython-input-7-3c1d2e4f5a6b> in <module>\n"
      "----> 2 X = load_frames(paths)\n"
      "<ipython-input-5-9a8b7c6d5e4f> in load_frames(paths)\n"
      "----> 9     return np.stack(frames)\n"
      "MemoryError: Unable to allocate 9.8 GiB for an array with shape (64000, 224, 224, 3) and data type uint8\n";
  Diagnosis d = test::diagnose_text(nb);
  EXPECT_EQ(d.cause, Cause::model_load);
  // (Cues are kept only beside a failure: the pod's kill here.)
  const std::string kill = "Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n";
  auto w = test::facts_of_kind("    Args:\n      [\"--vm\",\"12\",\"--vm-bytes\",\"96m\"]\n" + kill, FactKind::phase_serve);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].sequences, 12u);
  auto c = test::facts_of_kind("$ stress --vm 8 --vm-bytes 256M --timeout 60s\n" + kill, FactKind::phase_serve);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].sequences, 8u);
  EXPECT_EQ(test::diagnose_text("$ stress --vm 8 --vm-bytes 256M --timeout 60s\n" + kill).cause, Cause::concurrency_batch);
}

// A load test's clients are the work at once: Milvus' benchmark harness logs
// its settings as a Python dict ("'concurrent_number': 100", modelled on
// milvus-io/milvus#37120's querynode kills), a bench client counts them before
// the word. A "max_concurrent_requests: 128" is a ceiling, not a count, and a
// count of 2 is no crowd. Our own names and figures.
TEST(MlPhase, ALoadTestsConcurrentClientsAreTheBatch) {
  const std::string kill = "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n";
  const std::string dict = "[Base] client params: {'dataset': 'laion_768_1m', 'concurrent_number': 80, 'during_time': '1h'}\n";
  auto f = test::facts_of_kind(dict + kill, FactKind::phase_serve);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].sequences, 80u);
  EXPECT_EQ(test::diagnose_text(dict + kill).cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text("[bench] launching 48 concurrent clients\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_NE(test::diagnose_text("[bench] launching 2 concurrent clients\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_TRUE(test::facts_of_kind("max_concurrent_requests: 128\n" + kill, FactKind::phase_serve).empty());
}

// Work in flight counted before the words, whatever it is called: a
// platform's runner failing the inputs it held at the kill (the shape of
// Modal's "N inputs in flight were failed"; our figures), a gateway's
// "requests in-flight". Two in flight is no crowd.
TEST(MlPhase, WorkInFlightIsTheBatch) {
  const std::string kill = "Runner terminated: container ta-01 exceeded its memory limit (256 MiB) and was OOM-killed (exit code 137).\n";
  auto f = test::facts_of_kind("serve: 37 inputs in flight\n" + kill, FactKind::phase_serve);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].sequences, 37u);
  EXPECT_EQ(test::diagnose_text("serve: 37 inputs in flight\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text("gateway: 412 requests in-flight\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_NE(test::diagnose_text("serve: 2 inputs in flight\n" + kill).cause, Cause::concurrency_batch);
}

// Start-up and training phases in other words: text-embeddings-inference's
// model start line before a pod's kill (huggingface/text-embeddings-inference#303),
// DeepSpeed ZeRO partitioning the weights (deepspeedai/DeepSpeed#4239), and
// Keras's fit loop with its progress bar (tensorflow/tensor2tensor#782); our
// own names and figures.
TEST(MlPhase, ModelStartUpPartitioningAndKerasFitAreTheirPhases) {
  const std::string kill = "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n";
  Diagnosis tei = test::diagnose_text(
      "2024-06-24T07:58:13.511207Z  INFO text_embeddings_router: router/src/lib.rs:194: Starting model backend\n"
      "2024-06-24T07:58:13.512440Z  INFO text_embeddings_backend_candle: backends/candle/src/lib.rs:121: Starting BertModel model on Cpu\n" +
      kill);
  EXPECT_EQ(tei.cause, Cause::model_load);
  Diagnosis zero = test::diagnose_text(
      "[2023-08-29 14:02:11,410] [INFO] [utils.py:785:see_memory_usage] Before creating fp16 partitions\n"
      "[2023-08-29 14:03:21,045] [INFO] [utils.py:785:see_memory_usage] Before creating fp32 partitions\n"
      "[  912.118002] Out of memory: Killed process 51870 (python3) total-vm:301428320kB, anon-rss:248729404kB, file-rss:0kB\n");
  EXPECT_EQ(zero.cause, Cause::model_load);
  Diagnosis keras = test::diagnose_text(
      "Epoch 1/12\n"
      " 1024/60000 [..............................] - ETA: 11:02 - loss: 2.3012\n"
      "  File \"/usr/lib/python3/dist-packages/keras/engine/training.py\", line 1235, in _fit_loop\n"
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[60000,512] and type "
      "float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n");
  EXPECT_EQ(keras.layer, Layer::gpu_vram);
  EXPECT_EQ(keras.cause, Cause::concurrency_batch);
}

// Reading a whole data file, or converting a checkpoint, is the load
// (modelled on modin-project/modin#6639 and ggml-org/llama.cpp#76; our own
// sizes and pids).
TEST(MlPhase, ReadingADataFileOrConvertingACheckpointIsTheLoad) {
  Diagnosis convert = test::diagnose_text(
      "$ python3 convert-pth-to-ggml.py models/7B/ 1\n"
      "n_parts =  1\n"
      "Processing part 0\n"
      "Killed\n");
  EXPECT_EQ(convert.cause, Cause::model_load);
  Diagnosis read = test::diagnose_text(
      "Traceback (most recent call last):\n"
      "  File \"/srv/join.py\", line 21, in main\n"
      "    left = pd.read_parquet(path)\n"
      "MemoryError: Unable to allocate 3.1 GiB for an array with shape (415000000,) and data type int64\n");
  EXPECT_EQ(read.layer, Layer::host_ram);
  EXPECT_EQ(read.cause, Cause::model_load);
  // The program's own word that it reads a file whole (modelled on an Argo
  // step's log before its OOMKilled row; our own partition and sizes).
  Diagnosis whole = test::diagnose_text(
      "2024-02-01 09:12:40,118 INFO partition=p-17 size_on_disk=5.2GiB rows=24011290\n"
      "2024-02-01 09:12:40,119 INFO reading gs://features/raw/p-17.parquet into memory\n"
      "    State:          Terminated\n"
      "      Reason:       OOMKilled\n"
      "      Exit Code:    137\n"
      "    Limits:\n"
      "      memory:  3Gi\n");
  EXPECT_EQ(whole.cause, Cause::model_load);
}

// Spark's console progress bar: tasks done + running / total (modelled on a
// local-mode Spark job's heap OOM; our own stage and counts). Four or more
// running tasks are a worker count; one or two are not.
TEST(MlPhase, SparksProgressBarCountsTheTasksRunningAtOnce) {
  const std::string oom =
      "25/03/11 10:41:07 ERROR Executor: Exception in task 12.0 in stage 95.0 (TID 4412)\n"
      "java.lang.OutOfMemoryError: Java heap space\n";
  const std::string many = "[Stage 95:=====>                                      (120 + 64) / 1000]\n" + oom;
  auto f = test::facts_of_kind(many, FactKind::phase_serve);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(*f[0].sequences, 64u);
  Diagnosis d = test::diagnose_text(many);
  EXPECT_EQ(d.layer, Layer::jvm_heap);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
  EXPECT_TRUE(test::facts_of_kind("[Stage 95:=====>      (120 + 2) / 1000]\n" + oom, FactKind::phase_serve).empty());
}

// Quantizing the weights as they load (mistral.rs's in-situ quantization,
// modelled on EricLBuehler/mistral.rs#834; our model and counts) is the load.
TEST(MlPhase, InSituQuantizationIsTheLoad) {
  Diagnosis d = test::diagnose_text(
      "2024-11-02T08:01:12.402910Z  INFO mistralrs_core::pipeline::isq: Applying in-situ quantization into Q4K to 480 tensors.\n"
      "[00:00:09] [#########>------------------------------] 131/480 (31s)\n"
      "thread '<unnamed>' panicked at mistralrs-core/src/pipeline/isq.rs:265:38:\n"
      "called `Result::unwrap()` on an `Err` value: Cuda(Cuda(DriverError(CUDA_ERROR_OUT_OF_MEMORY, \"out of memory\")))\n");
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

// A build's settings quote or assign the jobs flag (modelled on
// kraj/meta-clang#6 and rfjakob/earlyoom#357: Yocto's PARALLEL_MAKE and
// Gentoo's MAKEOPTS; our counts and pids). Each is a worker count; "-jar"
// is no count.
TEST(MlPhase, QuotedOrAssignedBuildJobsAreAWorkerCount) {
  const std::string kill =
      "| collect2: fatal error: ld terminated with signal 9 [Killed]\n"
      "[ 9123.448812] Out of memory: Kill process 21877 (ld) score 247 or sacrifice child\n"
      "[ 9123.449021] Killed process 21877 (ld) total-vm:2216420kB, anon-rss:1990412kB, file-rss:1204kB\n";
  for (const char* setting : {"PARALLEL_MAKE = \"-j 8\"\n", "MAKEOPTS=\"-j16 -l16\"\n", "export MAKEFLAGS=-j12\n"}) {
    auto f = test::facts_of_kind(setting + kill, FactKind::phase_serve);
    ASSERT_EQ(f.size(), 1u) << setting;
    EXPECT_GE(*f[0].sequences, 8u) << setting;
    Diagnosis d = test::diagnose_text(setting + kill);
    EXPECT_EQ(d.layer, Layer::host_ram) << setting;
    EXPECT_EQ(d.cause, Cause::concurrency_batch) << setting;
  }
  EXPECT_TRUE(test::facts_of_kind("JAVA_OPTS=\"-jar /srv/app.jar\"\n" + kill, FactKind::phase_serve).empty());
  EXPECT_EQ(test::diagnose_text(kill).cause, Cause::unknown);
}

// A whole JSON document parsed at once is the load of the work's input: V8's
// stack frame or the code that does it (modelled on
// nerik/google-timeline-to-csv#2; our sizes and addresses). Without it the
// same heap failure says nothing of why.
TEST(MlPhase, ParsingAWholeJsonDocumentIsTheLoad) {
  const std::string gcs =
      "<--- Last few GCs --->\n\n"
      "[5120:0x4e1f0a0]    41022 ms: Mark-sweep 1391.2 (1433.6) -> 1390.9 (1434.1) MB, 1512.4 / 0.0 ms  allocation failure GC in old space requested\n"
      "[5120:0x4e1f0a0]    42870 ms: Mark-sweep 1390.9 (1434.1) -> 1390.8 (1411.3) MB, 1848.0 / 0.0 ms  last resort GC in old space requested\n\n"
      "<--- JS stacktrace --->\n\n==== JS stack trace =========================================\n\n";
  const std::string fatal = "\nFATAL ERROR: CALL_AND_RETRY_LAST Allocation failed - JavaScript heap out of memory\n";
  Diagnosis parse = test::diagnose_text(
      gcs + "    1: JSON.parse(aka parse) [0x2b6f1c089b1](this=0x2b6f1c08931 <Object map = 0x3d1a4e04619>,0x1c8e0b82291 <Very long string[301554112]>)\n" +
      "    2: main [/srv/tools/export/index.js:22] [bytecode=0x3e17a9d2c1 offset=37](this=0x1f0c3a10c0f1 <JSGlobal Object>)\n" + fatal);
  EXPECT_EQ(parse.layer, Layer::js_heap);
  EXPECT_EQ(parse.cause, Cause::model_load);
  Diagnosis plain = test::diagnose_text(
      gcs + "    2: main [/srv/tools/export/index.js:22] [bytecode=0x3e17a9d2c1 offset=37](this=0x1f0c3a10c0f1 <JSGlobal Object>)\n" + fatal);
  EXPECT_EQ(plain.layer, Layer::js_heap);
  EXPECT_EQ(plain.cause, Cause::unknown);
}

// Redis reading its data back at start is the load (modelled on
// redis/redis#7594: a container killed while it replays its AOF; our times
// and pids).
TEST(MlPhase, RedisReadingItsDataFileAtStartIsTheLoad) {
  Diagnosis d = test::diagnose_text(
      "1:M 02 Aug 2021 10:01:12.410 * Reading RDB preamble from AOF file...\n"
      "1:M 02 Aug 2021 10:01:31.877 * Reading the remaining AOF tail...\n"
      "[ 9120.331002] Out of memory: Killed process 5120 (redis-server) total-vm:2402112kB, anon-rss:1901220kB, file-rss:0kB, shmem-rss:0kB, UID:999 pgtables:3812kB oom_score_adj:0\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
}

// A scanner reading its databases at start is the load of its data, and
// the reason says so rather than naming a model (modelled on
// mailserver2/mailserver#63 and hestiacp/hestiacp#1840; our times).
TEST(MlPhase, AScannerReadingItsDatabasesIsTheLoadOfItsData) {
  Diagnosis d = test::diagnose_text(
      "2024-05-02T03:11:31.771802+00:00 mail clamd[610]: Reading databases from /var/lib/clamav\n"
      "[ 9120.331002] Out of memory: Killed process 610 (clamd) total-vm:1603384kB, anon-rss:1393116kB, file-rss:1044kB, shmem-rss:0kB\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
  ASSERT_FALSE(d.incidents.empty());
  std::string reasons;
  for (const auto& r : d.incidents[0].reasons) reasons += r + "\n";
  EXPECT_NE(reasons.find("its data was loading"), std::string::npos) << reasons;
}

// "epoch" as a setting's name in an arguments dump ("begin_epoch=0,
// end_epoch=10", "epochs: 100") configures a run that may not have started;
// the run printing its epoch is a step (modelled on apache/mxnet#4224 and a
// Kafka broker's FETCH body, "current_leader_epoch=-1"; our values).
TEST(MlPhase, AnEpochSettingIsNoStepButARunningEpochIs) {
  const std::string oom =
      "[11:42:09] src/storage/./pooled_storage_manager.h:79: cudaMalloc failed: out of memory\n";
  EXPECT_TRUE(test::facts_of_kind("Called with argument: Namespace(begin_epoch=0, dataset='PascalVOC', end_epoch=10, gpus='0')\n" + oom,
                                  FactKind::phase_serve)
                  .empty());
  EXPECT_TRUE(test::facts_of_kind("  epochs: 100\n" + oom, FactKind::phase_serve).empty());
  EXPECT_FALSE(test::facts_of_kind("Epoch 3/10\n" + oom, FactKind::phase_serve).empty());
}

// A training step over a batch stated as one sequence ("--per_device_train_batch_size 1",
// Hugging Face's "Instantaneous batch size per device = 1"): nothing in the step grew
// with the batch, so the sequence's length is what did not fit. A batch of two
// stated nearer the failure, a larger batch beside it, or a count of parallel
// workers leave the step to the batch (modelled on artidoro/qlora's command
// line and a LoRA run of the torchtune kind; our values).
TEST(MlPhase, AStepOverABatchOfOneSequenceIsTheSequencesLength) {
  const std::string step =
      "  File \"/opt/qlora/qlora.py\", line 769, in train\n    train_result = trainer.train()\n"
      "  File \"/opt/venv/lib/python3.11/site-packages/transformers/models/llama/modeling_llama.py\", line 350, in forward\n"
      "    attn_weights = torch.matmul(query_states, key_states.transpose(2, 3))\n";
  const std::string oom =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.64 GiB (GPU 0; 23.65 GiB total capacity; 21.70 GiB "
      "already allocated; 1.12 GiB free; 22.01 GiB reserved in total by PyTorch)\n";
  Diagnosis one = test::diagnose_text(
      "$ python qlora.py --model_name_or_path ./llama-13b --per_device_train_batch_size 1 --source_max_len 6144\n"
      "{'loss': 1.0412, 'learning_rate': 0.0002, 'epoch': 0.01}\n" + step + oom);
  EXPECT_EQ(one.layer, Layer::gpu_vram);
  EXPECT_EQ(one.cause, Cause::kv_cache_context);
  ASSERT_FALSE(one.incidents.empty());
  std::string reasons;
  for (const auto& r : one.incidents[0].reasons) reasons += r + "\n";
  EXPECT_NE(reasons.find("a batch of one sequence (line 1)"), std::string::npos) << reasons;
  // Hugging Face's banner: the per-device batch is 1; the total sums accumulation.
  Diagnosis banner = test::diagnose_text(
      "  Instantaneous batch size per device = 1\n  Total train batch size (w. parallel, distributed & accumulation) = 16\n" + step + oom);
  EXPECT_EQ(banner.cause, Cause::kv_cache_context);
  // Batch 1 first, then the run again at batch 2: the batch grew.
  Diagnosis two = test::diagnose_text("Batch size: 1, resolution 832x640\nBatch size: 2, resolution 832x640\n" + step + oom);
  EXPECT_EQ(two.cause, Cause::concurrency_batch);
  // A larger batch stated beside it (evaluation's) is a batch cue of its own.
  Diagnosis larger = test::diagnose_text("args: batch_size=1, eval_batch_size=16\n" + step + oom);
  EXPECT_EQ(larger.cause, Cause::concurrency_batch);
  // Parallel workers counted: copies, not one sequence.
  Diagnosis workers = test::diagnose_text("BATCH_SIZE=1 torchrun --nproc_per_node 1 train.py --num_workers 8\n" + step + oom);
  EXPECT_NE(workers.cause, Cause::kv_cache_context);
}

// Spark runs as many tasks at once in one executor's heap as it has cores: a
// JVM heap exhausted under --executor-cores 32 is those tasks together. The
// same count says nothing of a YARN container killed over its physical
// limit, which is the executor's whole process (modelled on apache/hudi and
// Spark-on-YARN reports; our values).
TEST(MlPhase, SparksExecutorCoresAreTasksSharingOneHeap) {
  const std::string submit = "$ spark-submit --master yarn --num-executors 4 --executor-cores 32 --executor-memory 96g job.jar\n";
  Diagnosis heap = test::diagnose_text(submit +
                                       "24/03/11 02:10:44 ERROR Executor: Exception in task 17.0 in stage 3.0 (TID 3017)\n"
                                       "java.lang.OutOfMemoryError: Java heap space\n\tat java.util.Arrays.copyOf(Arrays.java:3236)\n");
  EXPECT_EQ(heap.layer, Layer::jvm_heap);
  EXPECT_EQ(heap.cause, Cause::concurrency_batch);
  Diagnosis yarn = test::diagnose_text(
      submit + "24/03/11 02:10:44 WARN YarnAllocator: Container killed by YARN for exceeding memory limits. 105.6 GB of 105.6 GB "
               "physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.\n");
  EXPECT_NE(yarn.cause, Cause::concurrency_batch);
}

// A pre-forking server's worker count as its config states it (unicorn's
// "worker_processes 4"): copies of the application, each with its own memory,
// when the host's kernel kills one (our figures).
TEST(MlPhase, APreforkingServersWorkerProcessesAreParallelCopies) {
  Diagnosis d = test::diagnose_text(
      "$ grep worker_processes config/unicorn.rb\nworker_processes 6\n"
      "[1813420.551207] Out of memory: Kill process 14068 (ruby2.3) score 191 or sacrifice child\n"
      "[1813420.552917] Killed process 14068 (ruby2.3) total-vm:1021772kB, anon-rss:773012kB, file-rss:0kB\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}

// Go prints the goroutine's frames after "fatal error: runtime: out of
// memory", each call with its arguments in hex: a whole file read into one
// buffer there (ioutil.ReadFile) is the load of the data (modelled on a
// filebrowser thread; our addresses).
TEST(MlPhase, GosFramesAfterTheErrorAndAWholeFileReadAreTheLoad) {
  Diagnosis d = test::diagnose_text(
      "fatal error: runtime: out of memory\n\nruntime stack:\nruntime.throw(0x10d8a2b, 0x16)\n"
      "        /usr/local/go/src/runtime/panic.go:608 +0x72\n\ngoroutine 113 [running]:\n"
      "runtime.makeslice(0xee11a0, 0x480000200, 0x480000200)\n        /usr/local/go/src/runtime/slice.go:70 +0x77\n"
      "io/ioutil.readAll(0x1942260, 0xc000530000, 0x480000200)\n        /usr/local/go/src/io/ioutil/ioutil.go:34 +0x93\n"
      "io/ioutil.ReadFile(0xc00003b680, 0x51, 0x0, 0x0)\n        /usr/local/go/src/io/ioutil/ioutil.go:73 +0xd3\n");
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::model_load);
}


// Modelled on NVIDIA/Torch-TensorRT threads where the builder runs out while
// the loaded model still holds its copy (the builder's allocator error, then
// "Builder failed while building the network"); values ours.
TEST(MlPhase, BuildingATensorRtEngineIsTheLoadOfASecondCopy) {
  const char* text = R"(INFO:torch_tensorrt.dynamo.conversion._TRTInterpreter:TRT INetwork construction elapsed time: 0:00:38.120411
[03/11/2025-14:02:10] [TRT] [E] 1: [defaultAllocator.cpp::allocate::19] Error Code 1: Cuda Runtime (out of memory)
[03/11/2025-14:02:10] [TRT] [W] Requested amount of GPU memory (9663676416 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.
[03/11/2025-14:02:11] [TRT] [E] 4: [builder.cpp::buildSerializedNetwork::751] Error Code 4: Internal Error (Builder failed while building the network)
)";
  auto p = test::facts_of_kind(text, FactKind::phase_load);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].where.line, 1u);
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::model_load);
}


// darknet's training (AlexeyAB/darknet threads: "CUDA Error: out of memory"
// while building the layers, with batch and subdivisions in the cfg); values ours.
TEST(MlPhase, DarknetsTrainingAndSubdivisionsAreTheBatch) {
  const char* text = R"($ ./darknet detector train data/obj.data cfg/yolov4-custom.cfg yolov4.conv.137 -dont_show
yolov4-custom
subdivisions: Using default '1'
layer     filters    size              input                output
    0 conv     32  3 x 3 / 1   608 x 608 x   3   ->   608 x 608 x  32
    1 CUDA Error: out of memory
darknet: ./src/cuda.c:36: check_error: Assertion `0' failed.
)";
  Diagnosis d = test::diagnose_text(text);
  EXPECT_EQ(d.layer, Layer::gpu_vram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch);
}


// php-fpm's pool size is that many PHP processes at once (modelled on a
// MediaWiki-on-Kubernetes thread; values ours).
TEST(MlPhase, PhpFpmsMaxChildrenAreCopiesAtOnce) {
  const char* text = R"(pm = static
pm.max_children = 16
[05-Mar-2020 10:34:18] WARNING: [pool www] child 19 exited on signal 9 (SIGKILL) after 266.913402 seconds from start
    Last State:     Terminated
      Reason:       OOMKilled
      Exit Code:    137
    Limits:
      memory:  2Gi
)";
  auto p = test::facts_of_kind(text, FactKind::phase_serve, Cause::concurrency_batch);
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].sequences, 16u);
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

// A frame named for the batch it processes (modelled on OpenBMB/UltraRAG#96's
// embedding server; our paths and sizes): the batch at once, as a step is.
TEST(MlPhase, AFrameNamedForItsBatchIsTheBatch) {
  const char* text = R"(Traceback (most recent call last):
  File "/srv/embed/server.py", line 88, in embed
    vectors = await self.handler.image_embed(images=chunk)
  File "/opt/venv/lib/python3.11/site-packages/infinity_emb/inference/batch_handler.py", line 281, in _process_batch
    embed = self.model.encode_core(feat)
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.25 GiB. GPU 0 has a total capacity of 23.55 GiB of which 2.81 GiB is free. Including non-PyTorch memory, this process has 20.72 GiB memory in use. Of the allocated memory 19.90 GiB is allocated by PyTorch, and 402.11 MiB is reserved by PyTorch but unallocated.
)";
  EXPECT_FALSE(test::facts_of_kind(text, FactKind::phase_serve, Cause::concurrency_batch).empty());
  EXPECT_EQ(test::diagnose_text(text).cause, Cause::concurrency_batch);
}

// The command that started the run names its work (modelled on
// turboderp/exllamav2 convert.py runs killed at the head layer, and on
// facebookresearch/llama conversion scripts killed by zsh; our own figures):
// its cue speaks for a failure anywhere in its run, not for one after the
// next prompt; and only as the program's name ("tail x_convert.log" runs tail).
TEST(MlPhase, TheCommandThatStartedTheRunNamesItsPhase) {
  std::string steps;
  for (int i = 0; i < 30; ++i) steps += " -- Linear: model.layers." + std::to_string(i) + ".mlp.up_proj -> 4.13 bpw\n";
  auto run = [&](const std::string& command, const std::string& between) {
    return command + "\n -- Beginning new job\n" + steps + between + "Killed\n" +
           "$ sudo dmesg | tail -1\n"
           "[ 7814.402117] Out of memory: Killed process 20631 (python) total-vm:41822016kB, anon-rss:14988212kB, "
           "file-rss:1936kB, shmem-rss:0kB, UID:1000 pgtables:31188kB oom_score_adj:0\n";
  };
  Diagnosis conv = test::diagnose_text(run("$ python exllamav2/convert.py -i zephyr-7b -o quant -b 5.0", ""));
  EXPECT_EQ(conv.layer, Layer::host_ram);
  EXPECT_EQ(conv.cause, Cause::model_load) << test::reason_text(conv);
  // The module a launcher runs, and zsh's report of the job it killed.
  EXPECT_EQ(test::diagnose_text("[1]    48113 killed     python3 -m llama.convert_llama --ckpt_dir /ckpt --model_size 65B\n").cause,
            Cause::model_load);
  // After the next prompt the run is another command's.
  EXPECT_NE(test::diagnose_text(run("$ python exllamav2/convert.py -i zephyr-7b -o quant -b 5.0", "$ python serve.py\n")).cause,
            Cause::model_load);
  // The word in an argument, not the program's name.
  EXPECT_NE(test::diagnose_text(run("$ tail -f sra_convert_run.log", "")).cause, Cause::model_load);
}

// A job count given as the machine's CPUs (modelled on Homebrew and CI
// builds run as `make -j"$(nproc)"` in a pod whose nproc is the node's;
// our own figures): one job per CPU, without a number the paste does not
// show. A fixed small count says nothing.
TEST(MlPhase, AJobCountOfOnePerCpuIsTheParallelWork) {
  auto run = [](const std::string& jobs) {
    return "Run make " + jobs + " all\n  make " + jobs + " all\n"
           "g++: fatal error: Killed signal terminated program cc1plus\n"
           "    State:          Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
           "    Limits:\n      memory:  4Gi\n";
  };
  Diagnosis d = test::diagnose_text(run("-j\"$(nproc)\""));
  EXPECT_EQ(d.cause, Cause::concurrency_batch) << test::reason_text(d);
  EXPECT_NE(test::reason_text(d).find("one per CPU"), std::string::npos) << test::reason_text(d);
  EXPECT_NE(test::diagnose_text(run("-j2")).cause, Cause::concurrency_batch);
  // Eight jobs written as a figure are eight, not "one per CPU".
  Diagnosis eight = test::diagnose_text(run("-j8"));
  EXPECT_EQ(eight.cause, Cause::concurrency_batch);
  EXPECT_EQ(test::reason_text(eight).find("one per CPU"), std::string::npos) << test::reason_text(eight);
}

// Triton says the model loaded and its endpoints started (modelled on
// triton-inference-server/fastertransformer_backend reports; our own
// figures): the loading lines above are over, and a client's batch that
// follows is what failed. Without those lines the load is still in view.
TEST(MlPhase, TritonsLoadedModelAndEndpointsEndTheLoad) {
  auto log = [](bool started) {
    std::string t = "I0805 14:22:08.411293 3677168 libfastertransformer.cc:465] After Loading Model:\n"
                    "after allocation    : free: 12.46 GB, total: 47.54 GB, used: 35.08 GB\n";
    if (started)
      t += "I0805 14:22:08.530114 3677168 model_repository_manager.cc:1352] successfully loaded 'fastertransformer' version 1\n"
           "I0805 14:22:09.017342 3677168 grpc_server.cc:4587] Started GRPCInferenceService at 0.0.0.0:8001\n"
           "I0805 14:22:09.017609 3677168 http_server.cc:3303] Started HTTPService at 0.0.0.0:8000\n";
    return t + "$ python3 client.py --batch-size 64 --output-len 256\n"
               "terminate called after throwing an instance of 'std::runtime_error'\n"
               "  what():  [FT][ERROR] CUDA runtime error: out of memory /workspace/src/fastertransformer/utils/memory_utils.cu:26\n";
  };
  Diagnosis up = test::diagnose_text(log(true));
  EXPECT_EQ(up.layer, Layer::gpu_vram);
  EXPECT_EQ(up.cause, Cause::concurrency_batch) << test::reason_text(up);
  EXPECT_EQ(test::diagnose_text(log(false)).cause, Cause::model_load);
}

// A model class constructed on the statement that failed, at a REPL
// (modelled on faster-whisper's WhisperModel constructor failing in Intel
// MKL's allocator; our session): its constructor loads the weights. The
// allocator names itself ("mkl_malloc:"), a host allocator, whatever device
// the constructor was given. A forward pass through a variable called
// model ("out = self.model(x)") constructs nothing.
TEST(MlPhase, AModelClassConstructedOnTheFailingLineIsTheLoad) {
  Diagnosis d = test::diagnose_text(
      ">>> from faster_whisper import WhisperModel\n"
      ">>> model = WhisperModel(\"large-v3\", device=\"cuda\", compute_type=\"float16\")\n"
      "mkl_malloc: failed to allocate memory\n");
  EXPECT_EQ(d.layer, Layer::host_ram) << test::reason_text(d);
  EXPECT_EQ(d.cause, Cause::model_load) << test::reason_text(d);
  Diagnosis forward = test::diagnose_text(
      "  File \"train.py\", line 88, in step\n"
      "    out = self.model(batch)\n"
      "mkl_malloc: failed to allocate memory\n");
  EXPECT_NE(forward.cause, Cause::model_load) << test::reason_text(forward);
}

// A DataLoader worker's collate function holding a whole batch when the
// CPU allocator refused it (modelled on an arcgis.learn detector's training,
// 2021; our paths): the batch. The same refusal under a frame that loads
// nothing names no phase.
TEST(MlPhase, ACollateFrameIsTheBatch) {
  auto log = [](const std::string& frame) {
    return "RuntimeError: Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback (most recent call last):\n"
           "  File \"/opt/conda/lib/python3.7/site-packages/torch/utils/data/_utils/fetch.py\", line 47, in fetch\n" + frame +
           "RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to allocate "
           "231211008 bytes. Error code 12 (Cannot allocate memory)\n";
  };
  Diagnosis d = test::diagnose_text(log("    return self.collate_fn(data)\n"));
  EXPECT_EQ(d.layer, Layer::host_ram);
  EXPECT_EQ(d.cause, Cause::concurrency_batch) << test::reason_text(d);
  EXPECT_NE(test::diagnose_text(log("    return self.transform(data)\n")).cause, Cause::concurrency_batch);
}

// Ollama says its runner answers once the model is loaded ("llama runner
// started in 3.28 seconds", modelled on an Ollama 0.6 log on Windows; our
// times): a device failure after it is no load's, though the scheduler's
// "loading" line stands above it.
TEST(MlPhase, OllamasRunnerStartedEndsTheLoad) {
  auto log = [](bool started) {
    return std::string("time=2025-03-21T19:03:15.107+08:00 level=INFO source=sched.go:715 msg=\"new model will fit in available "
                       "VRAM in single GPU, loading\"\n") +
           (started ? "time=2025-03-21T19:03:18.402+08:00 level=INFO source=server.go:619 msg=\"llama runner started in 3.28 seconds\"\n"
                    : "") +
           "CUDA error: out of memory\n  current device: 0, in function ggml_cuda_pool_malloc_vmm at ggml-cuda.cu:375\n";
  };
  EXPECT_EQ(test::diagnose_text(log(false)).cause, Cause::model_load);
  Diagnosis after = test::diagnose_text(log(true));
  EXPECT_EQ(after.layer, Layer::gpu_vram);
  EXPECT_NE(after.cause, Cause::model_load) << test::reason_text(after);
}

// Windows' commit limit hit while a DataLoader's spawned workers each
// re-import torch (modelled on SwinIR and VITS training threads of 2022-2023;
// our paths): "Error loading ...\\shm.dll" loads a library, not a model, and
// the spawned child is one of several copies.
TEST(MlPhase, ASpawnedChildLoadingALibraryIsACopyNotAModelLoad) {
  auto log = [](bool spawned) {
    return std::string("Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n") +
           (spawned ? "  File \"D:\\env\\lib\\multiprocessing\\spawn.py\", line 116, in spawn_main\n"
                      "    exitcode = _main(fd, parent_sentinel)\n"
                    : "") +
           "  File \"D:\\src\\train.py\", line 10, in <module>\n    import torch\n"
           "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "
           "\"D:\\env\\lib\\site-packages\\torch\\lib\\shm.dll\" or one of its dependencies.\n";
  };
  Diagnosis alone = test::diagnose_text(log(false));
  EXPECT_EQ(alone.layer, Layer::host_ram) << test::reason_text(alone);
  EXPECT_NE(alone.cause, Cause::model_load) << test::reason_text(alone);
  Diagnosis spawned = test::diagnose_text(log(true));
  EXPECT_EQ(spawned.cause, Cause::concurrency_batch) << test::reason_text(spawned);
}

// A TensorRT sample's own progress line before the kernel's kill (modelled
// on a YOLOv3 engine build on a Jetson Nano, 2019; our pid and sizes), and
// FSDP's frame placing the unsharded module on the device (a single-GPU
// FSDP run, 2023): both are the model being loaded or built.
TEST(MlPhase, AnEngineBuildAndFsdpsMoveToTheDeviceAreTheLoad) {
  Diagnosis build = test::diagnose_text(
      "Begin parsing model...\nEnd parsing model...\nBegin building engine...\n"
      "[ 5123.440712] Out of memory: Killed process 8120 (runYolov3) total-vm:9811012kB, anon-rss:3198812kB, file-rss:0kB, "
      "shmem-rss:0kB, UID:1000 pgtables:8120kB oom_score_adj:0\n");
  EXPECT_EQ(build.cause, Cause::model_load) << test::reason_text(build);
  Diagnosis fsdp = test::diagnose_text(
      "  File \"/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_init_utils.py\", line 526, in "
      "_move_module_to_device\n"
      "OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB (GPU 0; 15.77 GiB total capacity; 14.92 GiB already "
      "allocated; 95.38 MiB free; 14.97 GiB reserved in total by PyTorch)\n");
  EXPECT_EQ(fsdp.cause, Cause::model_load) << test::reason_text(fsdp);
}

// A model built and moved to the GPU in one statement at a REPL, then the
// shell's "Killed" (modelled on trt_pose on a 2 GB Jetson Nano, 2021; our
// session): the load. The same call on a tensor named otherwise is not.
TEST(MlPhase, AModelBuiltAndMovedToTheGpuInOneStatementIsTheLoad) {
  auto log = [](const std::string& target) {
    return ">>> " + target + " = trt_pose.models.resnet18_baseline_att(18, 42).cuda().eval()\nKilled\n";
  };
  EXPECT_EQ(test::diagnose_text(log("model")).cause, Cause::model_load);
  EXPECT_NE(test::diagnose_text(log("batch")).cause, Cause::model_load);
}

// A build's parallelism as cmake and build scripts spell it: "--parallel 4",
// and cmake --build's bare "-j" (the native tool's default: make's is no
// limit). Modelled on ggml-org/llama.cpp's CUDA Docker builds and
// microsoft/onnxruntime's build.bat; our own targets.
TEST(MlPhase, CmakesParallelFlagsAreTheBuildsParallelJobs) {
  const std::string kill =
      "[ 4120.551203] Out of memory: Killed process 9318 (cicc) total-vm:2395484kB, anon-rss:1949320kB, file-rss:0kB, shmem-rss:0kB\n";
  EXPECT_EQ(test::diagnose_text("$ cmake --build build --config Release --parallel 12\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text("RUN cmake --build /src/build --config Release -j --target llama-server\n" + kill).cause,
            Cause::concurrency_batch);
  EXPECT_NE(test::diagnose_text("$ cmake --build build --config Release --parallel 1\n" + kill).cause, Cause::concurrency_batch);
}

// A worker count whose name goes on with a word for "how many"
// ("workers_count=10", petastorm's make_reader; "worker_num: 8") is the
// count; a timeout after the same name is not (our own reader).
TEST(MlPhase, AWorkerCountNamedWithItsCountWordIsTheParallelism) {
  const std::string kill =
      "[ 9412.803104] Out of memory: Killed process 6112 (python) total-vm:19847312kB, anon-rss:15338840kB, file-rss:1020kB, shmem-rss:0kB\n";
  EXPECT_EQ(test::diagnose_text("reader = make_reader(url, reader_pool_type='thread', workers_count=10)\n" + kill).cause,
            Cause::concurrency_batch);
  EXPECT_NE(test::diagnose_text("reader = make_reader(url, reader_pool_type='thread', workers_timeout=30)\n" + kill).cause,
            Cause::concurrency_batch);
}

// PyTorch's extension builds say how many ninja jobs they run: MAX_JOBS, or
// one per CPU when it is unset (modelled on pytorch/pytorch source builds
// of flash-attention kernels; our own paths and counts). Two jobs is no cue.
TEST(MlPhase, PytorchExtensionBuildsNameTheirParallelJobs) {
  const std::string kill =
      "[Wed Oct 18 21:47:09 2023] Out of memory: Killed process 1184420 (cicc) total-vm:5133820kB, anon-rss:4561208kB, file-rss:1236kB, "
      "shmem-rss:0kB, UID:1000 pgtables:9184kB oom_score_adj:0\n";
  EXPECT_EQ(test::diagnose_text("-- Using MAX_JOBS=24 for ninja\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_EQ(test::diagnose_text("-- MAX_JOBS not set, using nproc: 16\n" + kill).cause, Cause::concurrency_batch);
  EXPECT_NE(test::diagnose_text("-- Using MAX_JOBS=2 for ninja\n" + kill).cause, Cause::concurrency_batch);
}

}  // namespace
}  // namespace aimem
