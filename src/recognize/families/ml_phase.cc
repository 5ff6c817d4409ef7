// What a workload was doing when it failed, read from the lines and traceback
// frames around the failure: loading a model, sizing or filling a KV cache,
// or stepping a batch (a training step, a profile or warm-up run, CUDA-graph
// capture, serving). A memory failure's message is the same text in every
// phase (a PyTorch OOM, a kernel kill, a bare "Killed"); the phase is what
// tells model_load from kv_cache_context from concurrency_batch.
//
// Each cue is a word or phrase with the cause it points at and a weight:
//   model_load        loading / Loading ... / load_model / from_pretrained / load_state_dict / torch.load /
//                     pickle.load / checkpoint / safetensors / weights / quantizing / model.to( / .cuda() /
//                     nn.Module's own _apply / convert frames (any module moved to a device whole) /
//                     a shard's file name (-00001-of-00004) / a conversion script (convert_hf..., convert_checkpoint) /
//                     a constructor's "= Parameter(" (the module creating its weights) /
//                     reading a whole data file (read_parquet( / read_csv( / np.load( and their frames) / JSON.parse( /
//                     a whole file into one buffer (Go's ioutil.ReadFile( / os.ReadFile(, .NET's File.ReadAllBytes()
//   kv_cache_context  KV cache / kv_cache / cache_engine / allocate_gpu_cache / GPU blocks / K-shift /
//                     context shift / token pool / past_key_value / CUDA graph capture (it runs in what
//                     the KV reservation left) / long settings: max_model_len / n_ctx / max_seq_len /
//                     cache_length / seq_length / node-llama-cpp's "A context size of N" and contextSize /
//                     transformers' "Input length of input_ids is N" (16k tokens or more)
//   (a worker count's fact carries the count in `sequences`)
//   concurrency_batch backward / optimizer / train_step / training_step / epoch / prefill / profile_run /
//                     darknet's "detector train" and its cfg's subdivisions /
//                     dummy run / warmup / forward / generate / sampler / batch size (more than 2) /
//                     parallel copies: -j N (also MAKEOPTS="-jN", MAKEFLAGS=-jN), --jobs N, -np N, --n-processes N, num_workers=N, pool of N,
//                     Spark's --executor-cores N / spark.executor.cores=N (tasks at once in one executor's heap),
//                     `make -j` with no number (no limit: counted as 64),
//                     concurrency: N ("concurrency":N in JSON), WORKERS=N, --processes N, xargs -P N,
//                     stress --vm N (its memory workers; also ["--vm","N"] in a manifest's args)
//                     (--max-procs; 0 counted as 64), and a count before the word: "spawning
//                     4 render workers", "with 24 processes" (4 or more; the fact carries the count)
//                     work in flight counted before the words ("37 inputs in flight", "412 requests in-flight"),
//                     requests in flight: "Running: N reqs", "active requests: N", inflight_requests=N (8 or more; the
//                     fact carries the count in `count`)
// Every line with a cue gives one phase fact per cause it names (phase_load for
// model_load, phase_serve otherwise), carrying the cause and the cue's weight
// as its strength; the diagnosis weighs the cues before a failure by how close
// they stand to it (the innermost frames and the last log lines decide).
//
// Recovered (recovered): the program caught the failure and went on ("retrying
//   with batch size 32", "attempting to recover from OOM", "skipping batch"):
//   the diagnosis reports such a failure as a warning, not as the failure.
//
// Lines that give advice ("reduce max_num_tokens", "Try to lower your batch
// size", "Possible solutions: ...") name remedies, not phases: they are skipped.
#include <array>
#include <cctype>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr std::string_view kLlamaContext = "creating a long context (its KV cache)";

struct Cue {
  std::string_view word;  // matched case-insensitively
  Cause cause;
  float weight;
  std::string_view detail;
  // A setting whose value decides: a context length is a cue only when it is
  // long; a batch size only when it is more than 2 (a batch of one or two
  // sequences cannot be what a failure grew with: their length is).
  // A worker count ("-j 32", "-np 16", "num_workers=8") is a cue only when
  // it is 4 or more, and only with its number.
  // A count of requests in flight ("Running: 64 reqs") is a cue when it is 8
  // or more; it is the moment's load, not a setting of the run.
  // A count before the word ("4 render workers") is `counted`: the number one
  // or two words before it, with the same bounds as `workers`.
  // A constructor's frame (`ctor`) speaks only outside Python's own library:
  // subprocess.Popen's __init__ forks a process, it builds no model.
  // A word of the running work (`run_word`: "epoch") is a cue where the run
  // prints it, not as a setting's name ("begin_epoch=0", "epochs=100",
  // "epochs: 100" in an arguments dump): that configures a run that may not
  // have started.
  // `jvm_workers`: a worker count that shares one JVM's heap (Spark's executor
  // cores): it speaks for a JVM's own failure only (the fact's family is jvm).
  // `self_concat`: a code line that concatenates a variable onto itself
  // ("preds = logits if preds is None else torch.cat((preds, logits), dim=0)"):
  // each pass keeps everything the passes before it made.
  // `model_ctor`: a class whose name ends in "Model", constructed and
  // assigned on the line ("model = WhisperModel(").
  // `assigned_model`: the statement assigns to a model ("model = ...", "net = ...").
  enum Setting { none, context, batch, workers, load, counted, ctor, xargs, cxx_frame, frame_name, run_word, torch_module, jvm_workers, self_concat, list_concat, command, model_ctor, assigned_model } setting = none;
};

constexpr Cue kCues[] = {
    // Loading and converting weights.
    {"loading", Cause::model_load, 1.0f, "loading"},
    {"load_model", Cause::model_load, 1.0f, "load_model"},
    {"loadModel", Cause::model_load, 0.9f, "loadModel"},  // a JVM / Kotlin / JS frame's camel case
    {"load model", Cause::model_load, 1.0f, "loading the model"},
    // A restore of saved state read back into memory ("Restoring mina
    // indexer database from snapshot file ..."). (ComfyUI's "Requested to
    // load X" was tried too: it precedes sampling as often as loading, and
    // moved as many verdicts away from their labels as towards them.)
    {"restoring ", Cause::model_load, 0.8f, "restoring saved data into memory"},
    {"from_pretrained", Cause::model_load, 1.0f, "from_pretrained"},
    {"load_state_dict", Cause::model_load, 1.0f, "load_state_dict"},
    {"load_checkpoint", Cause::model_load, 1.0f, "loading a checkpoint"},
    {"torch.load(", Cause::model_load, 1.0f, "torch.load"},
    {"pickle.load", Cause::model_load, 0.9f, "unpickling a model"},
    {"load_weights", Cause::model_load, 1.0f, "loading weights"},
    // A server's start-up line for its model (text-embeddings-inference:
    // "Starting model backend", "Starting JinaBertModel model on Cpu").
    {"Starting model", Cause::model_load, 0.8f, "starting the model"},
    {" model on Cpu", Cause::model_load, 0.8f, "starting the model"},
    {" model on Cuda", Cause::model_load, 0.8f, "starting the model"},
    // DeepSpeed ZeRO's set-up: partitioning the weights and their optimizer
    // copies before any step ("finished initializing model",
    // "Before creating fp16 partitions", "Before creating fp32 partitions").
    {"initializing model", Cause::model_load, 0.8f, "initializing the model"},
    {"creating fp16 partitions", Cause::model_load, 0.9f, "partitioning the weights at set-up"},
    {"creating fp32 partitions", Cause::model_load, 0.9f, "partitioning the weights at set-up"},
    // A traceback frame of a function named for loading (gensim's
    // load_word2vec_format, a library's _load_pretrained): what the frame
    // was reading is the model's data. json's "loads" is not one.
    {", in load_", Cause::model_load, 0.7f, "a load function's frame"},
    {", in _load_", Cause::model_load, 0.7f, "a load function's frame"},
    // IPython before 8 names a frame "<ipython-input-4-1e0c9d54f2b7> in load_images(paths, size)"
    // (IPython 8: "File ~/x.py:12, in load_images(...)", read above).
    {"> in load_", Cause::model_load, 0.7f, "a load function's frame"},
    {"> in _load_", Cause::model_load, 0.7f, "a load function's frame"},
    // A frame that sets the model up before any step: DeepSpeed's initialize and
    // initialize_optimizer_states, a script's setup_model_and_optimizer.
    {", in initialize", Cause::model_load, 0.9f, "setting the model up (initialize)", Cue::frame_name},
    {", in setup_model", Cause::model_load, 0.9f, "setting the model up"},
    // Creating the optimizer's state (a copy or two of the weights) at set-up.
    {"initialize_optimizer", Cause::model_load, 1.0f, "creating the optimizer's state at set-up"},
    {"init_optimizer", Cause::model_load, 1.0f, "creating the optimizer's state at set-up"},
    // The same in a C++ frame ("NDArrayCacheMetadata::FileRecord::Load(", "LLMChat::Reload(");
    // not std::atomic's load.
    {"::load(", Cause::model_load, 0.6f, "a load function's frame", Cue::cxx_frame},
    {"::reload(", Cause::model_load, 0.6f, "a load function's frame", Cue::cxx_frame},
    // TensorRT placing a serialized engine (the weights in it) on the device.
    {"deserializecudaengine", Cause::model_load, 0.9f, "deserializing the engine"},
    {"deserialize cuda engine", Cause::model_load, 0.9f, "deserializing the engine"},
    // Building a TensorRT engine from a loaded model: the builder copies the
    // weights into the engine beside the model's own copy (torch_tensorrt's
    // "TRT INetwork construction", the builder's buildSerializedNetwork frame,
    // trtllm-build).
    {"inetwork construction", Cause::model_load, 0.8f, "building the TensorRT engine (a second copy of the weights)"},
    {"buildserializednetwork", Cause::model_load, 0.8f, "building the TensorRT engine (a second copy of the weights)"},
    {"torch_tensorrt.compile(", Cause::model_load, 0.8f, "building the TensorRT engine (a second copy of the weights)"},
    {"trtllm-build ", Cause::model_load, 0.8f, "building the TensorRT engine (a second copy of the weights)"},
    // TensorRT samples' and trtexec-style tools' own progress lines.
    {"begin building engine", Cause::model_load, 0.8f, "building the TensorRT engine (a second copy of the weights)"},
    {"building engine...", Cause::model_load, 0.8f, "building the TensorRT engine (a second copy of the weights)"},
    {"checkpoint shards", Cause::model_load, 1.0f, "loading checkpoint shards"},
    {"model loading took", Cause::model_load, 1.0f, "loading model weights"},
    {"llama_model_load", Cause::model_load, 1.0f, "llama.cpp loading the model"},
    {"load_tensors", Cause::model_load, 1.0f, "llama.cpp loading tensors"},
    {"safetensors", Cause::model_load, 0.6f, "reading safetensors"},
    {"quantizing", Cause::model_load, 0.8f, "quantizing weights"},
    {"in-situ quantization", Cause::model_load, 0.9f, "quantizing weights as they load"},  // mistral.rs ISQ
    // A sharded checkpoint's files ("pytorch_model-00001-of-00002.bin",
    // "model-00003-of-00004.safetensors") are named only while weights are read.
    {"-of-0000", Cause::model_load, 0.9f, "reading a checkpoint shard"},
    // Conversion scripts read the whole checkpoint (convert_hf_to_gguf.py,
    // convert_hf_checkpoint.py, TensorRT-LLM's convert_checkpoint.py).
    // The program a command runs, named for converting or quantizing a
    // model ("python3 -m llama.convert_llama", "./llama-quantize", "python
    // merge_lora.py"): on the command's line, or the shell's report of the
    // job it killed ("[1]  48113 killed  python3 -m llama.convert_llama ...").
    // Not in a traceback, where TensorFlow's convert_to_tensor is in every step.
    {"convert", Cause::model_load, 0.7f, "converting a checkpoint", Cue::command},
    {"quantize", Cause::model_load, 0.7f, "quantizing weights", Cue::command},
    {"merge_lora", Cause::model_load, 0.7f, "merging adapter weights into the model", Cue::command},
    {"merge_peft", Cause::model_load, 0.7f, "merging adapter weights into the model", Cue::command},
    {"convert_hf", Cause::model_load, 0.9f, "converting a checkpoint"},
    {"convert-hf", Cause::model_load, 0.9f, "converting a checkpoint"},
    {"convert_checkpoint", Cause::model_load, 0.9f, "converting a checkpoint"},
    // llama.cpp's first converters (convert-pth-to-ggml.py) and their kin.
    {"convert-pth", Cause::model_load, 0.9f, "converting a checkpoint"},
    // A script named convert.py run on a checkpoint (llama.cpp's first
    // converter, DeepSeek-V3's inference/convert.py): the whole checkpoint read in.
    {"convert.py ", Cause::model_load, 0.7f, "converting a checkpoint"},
    {"convert_pth", Cause::model_load, 0.9f, "converting a checkpoint"},
    {"-to-ggml", Cause::model_load, 0.9f, "converting a checkpoint"},
    {"_to_gguf", Cause::model_load, 0.9f, "converting a checkpoint"},
    // Reading a whole data file into memory (pandas, modin, polars, numpy): the
    // load of the data the work starts from, before any step.
    {"read_parquet(", Cause::model_load, 0.8f, "reading a data file into memory"},
    {"read_csv(", Cause::model_load, 0.8f, "reading a data file into memory"},
    {"read_feather(", Cause::model_load, 0.8f, "reading a data file into memory"},
    {"read_hdf(", Cause::model_load, 0.8f, "reading a data file into memory"},
    {", in read_parquet", Cause::model_load, 0.8f, "reading a data file into memory"},
    {", in read_csv", Cause::model_load, 0.8f, "reading a data file into memory"},
    {"np.load(", Cause::model_load, 0.8f, "reading an array file into memory"},
    // A program's own word that it reads or loads something whole ("reading
    // s3://.../part-0042.parquet into memory", "Loading index into memory").
    {"into memory", Cause::model_load, 0.7f, "reading data into memory"},
    // A whole file read into one buffer: Go's ioutil.ReadFile / os.ReadFile frames, .NET's File.ReadAllBytes.
    {"ioutil.ReadFile(", Cause::model_load, 0.8f, "reading a whole file into memory"},
    {"os.ReadFile(", Cause::model_load, 0.8f, "reading a whole file into memory"},
    {"File.ReadAllBytes(", Cause::model_load, 0.8f, "reading a whole file into memory"},
    // A whole JSON document parsed at once: V8's stack frame
    // ("1: JSON.parse(aka parse) [...] <Very long string[265112917]>") or the
    // code that does it ("JSON.parse(fs.readFileSync(file))").
    {"JSON.parse(", Cause::model_load, 0.8f, "parsing a whole JSON document into memory"},
    // A server bringing its data back into memory at start (Prometheus's
    // "Replaying WAL", a database's redo or AOF replay, a snapshot restore):
    // the start-up load of what it serves, before any request.
    {"replaying", Cause::model_load, 0.8f, "replaying its log into memory at start-up"},
    {"wal segment loaded", Cause::model_load, 0.8f, "replaying its log into memory at start-up"},
    // Redis reading its data back at start ("Reading RDB preamble from AOF
    // file...", "Loading RDB produced by version 6.0.6").
    {"from aof file", Cause::model_load, 0.8f, "loading its data file at start-up"},
    {"loading rdb", Cause::model_load, 0.8f, "loading its data file at start-up"},
    // A scanner or an index reading its databases at start (clamd's
    // "Reading databases from /var/lib/clamav", a search engine's "loading index").
    {"reading databases", Cause::model_load, 0.8f, "loading its databases at start-up"},
    {"loading index", Cause::model_load, 0.7f, "loading its index at start-up"},
    {"restoring snapshot", Cause::model_load, 0.7f, "restoring a snapshot into memory"},
    {"initialize_model", Cause::model_load, 0.8f, "initialising the model"},
    // Caffe building its net layer by layer ("net.cpp:100] Creating Layer conv6/dw"): each
    // layer's blobs allocated as it is set up, before any forward pass.
    {"] creating layer ", Cause::model_load, 0.8f, "constructing the network (Caffe's layer set-up)"},
    // Exporting a model to ONNX (torch.onnx's frames): its weights traced and folded into a graph.
    {"onnx.export(", Cause::model_load, 0.9f, "exporting the model to ONNX (its weights converted)"},
    {"_model_to_graph", Cause::model_load, 0.9f, "exporting the model to ONNX (its weights converted)"},
    // RAPIDS setting up its device pool before any work (rmm.reinitialize, as dask-cuda's worker plugin calls it).
    {"rmm.reinitialize(", Cause::model_load, 0.8f, "initialising the device memory pool"},
    // ONNX Runtime creating a session: the graph's initializers (its weights)
    // placed on the device. Its constructor's frames only: a statement that
    // made a session ("sess = ort.InferenceSession(...)" at a prompt) had
    // finished before the run that failed.
    {"_create_inference_session", Cause::model_load, 0.8f, "creating the inference session (its weights loading)"},
    {"initialize_session", Cause::model_load, 0.8f, "creating the inference session (its weights loading)"},
    {"init_model", Cause::model_load, 0.8f, "initialising the model"},
    {"model.cuda(", Cause::model_load, 0.9f, "moving the model to the GPU"},
    {"model.to(", Cause::model_load, 0.9f, "moving the model to the device"},
    // FSDP's own frame placing the whole (unsharded) module on the device.
    {"_move_module_to_device", Cause::model_load, 0.9f, "moving the model to the device"},
    {"model = model.", Cause::model_load, 0.8f, "moving the model to the device"},
    // A model built and moved in one statement ("model = resnet18(...).cuda().eval()").
    {").cuda()", Cause::model_load, 0.8f, "moving the model to the GPU", Cue::assigned_model},
    // PyTorch's own frames of Module.to / .cuda() / .half(): nn.Module's
    // _apply and the convert it applies to each parameter ("pipe.to('cuda')"
    // in diffusers, any module moved whole). Only in torch/nn/modules/module.py:
    // PIL's Image.convert is an image's.
    {", in _apply", Cause::model_load, 0.9f, "moving the model's parameters to the device", Cue::torch_module},
    {", in convert", Cause::model_load, 0.9f, "moving the model's parameters to the device", Cue::torch_module},
    // IPython's frames: ".../torch/nn/modules/module.py in convert(t)".
    {".py in _apply(", Cause::model_load, 0.9f, "moving the model's parameters to the device", Cue::torch_module},
    {".py in convert(", Cause::model_load, 0.9f, "moving the model's parameters to the device", Cue::torch_module},
    // A constructor's frame: the object is being built, its weights placed
    // (faster_whisper's WhisperModel.__init__, a pipeline's __init__).
    {", in __init__", Cause::model_load, 0.5f, "constructing the model", Cue::ctor},
    // A module's constructor creating its weights ("self.weight = Parameter(torch.empty(...))").
    {"= Parameter(", Cause::model_load, 0.9f, "creating the model's parameters"},
    {"= nn.Parameter(", Cause::model_load, 0.9f, "creating the model's parameters"},
    // A model class constructed on the statement that failed ("model =
    // WhisperModel('large-v3', device='cuda')", "llm = LlamaModel(path)"):
    // its constructor loads or creates the weights.
    {"Model(", Cause::model_load, 0.7f, "constructing the model", Cue::model_ctor},
    // KV-cache sizing and allocation (the cache for the configured context).
    // Not "kv cache" alone: serving engines print "KV cache usage: 5%" in every stats line.
    // llama.cpp creating its context after the weights, for a long context:
    // the KV cache and the compute buffers for n_ctx come next
    // ("llama_new_context_with_model: n_ctx = 16464", newer builds'
    // "llama_init_from_model: n_ctx = ..."). The weights are in place by then:
    // the line also ends the load (kLoadFinished). For a short context the
    // weights' share decides, as the message's figures say (classify.cc).
    {"llama_new_context_with_model: n_ctx", Cause::kv_cache_context, 0.9f, kLlamaContext, Cue::context},
    {"llama_init_from_model: n_ctx", Cause::kv_cache_context, 0.9f, kLlamaContext, Cue::context},
    {"kv cache is allocated", Cause::kv_cache_context, 1.0f, "allocating the KV cache"},
    {"kv cache pool", Cause::kv_cache_context, 1.0f, "the KV token pool"},
    {"kv cache could not be created", Cause::kv_cache_context, 1.0f, "allocating the KV cache"},
    {"allocating kv cache", Cause::kv_cache_context, 1.0f, "allocating the KV cache"},
    {"kv_cache", Cause::kv_cache_context, 1.0f, "the KV cache"},
    {"kvcache", Cause::kv_cache_context, 1.0f, "the KV cache"},
    {"cache_engine", Cause::kv_cache_context, 1.0f, "allocating the KV cache"},
    {"allocate_gpu_cache", Cause::kv_cache_context, 1.0f, "allocating the KV cache"},
    {"gpu blocks", Cause::kv_cache_context, 0.6f, "sizing the KV cache"},
    {"determine_num_available_blocks", Cause::kv_cache_context, 0.8f, "sizing the KV cache"},
    {"k-shift", Cause::kv_cache_context, 1.0f, "shifting the KV cache"},
    {"context shift", Cause::kv_cache_context, 1.0f, "shifting the context"},
    {"kv_pool", Cause::kv_cache_context, 1.0f, "the KV token pool"},
    {"token pool", Cause::kv_cache_context, 0.8f, "the KV token pool"},
    {"init_memory_pool", Cause::kv_cache_context, 0.8f, "allocating the KV token pool"},
    {"cache(model", Cause::kv_cache_context, 0.9f, "allocating the KV cache"},
    // A frame in a KV cache's own module (exllamav2/cache.py, transformers' cache_utils.py).
    {"cache.py\"", Cause::kv_cache_context, 0.8f, "the KV cache's module"},
    {"cache_utils.py\"", Cause::kv_cache_context, 0.8f, "the KV cache's module"},
    {"max_model_len", Cause::kv_cache_context, 0.5f, "the context length", Cue::context},
    {"max-model-len", Cause::kv_cache_context, 0.5f, "the context length", Cue::context},
    {"n_ctx", Cause::kv_cache_context, 0.5f, "the context length", Cue::context},
    {"num_ctx", Cause::kv_cache_context, 0.5f, "the context length", Cue::context},  // Ollama's option
    {"context_length", Cause::kv_cache_context, 0.5f, "the context length", Cue::context},  // SGLang, OLLAMA_CONTEXT_LENGTH
    {"max_seq_len", Cause::kv_cache_context, 0.4f, "the context length", Cue::context},
    {"cache_length", Cause::kv_cache_context, 0.6f, "the context length", Cue::context},
    {"context length", Cause::kv_cache_context, 0.6f, "the context length", Cue::context},
    {"input_length", Cause::kv_cache_context, 0.5f, "the input length", Cue::context},
    {"seq_length", Cause::kv_cache_context, 0.6f, "the sequence length", Cue::context},
    // node-llama-cpp's refusal names the context it could not fit:
    // "InsufficientMemoryError: A context size of 131072 is too large for the available VRAM";
    // its option as the library logs it: "contextSize: 131072".
    {"A context size of ", Cause::kv_cache_context, 1.0f, "the context size the engine could not fit", Cue::context},
    // transformers' generate() warning names the prompt's length: "Input length of input_ids is 30000, ...".
    {"Input length of input_ids is ", Cause::kv_cache_context, 0.7f, "the prompt's length", Cue::context},
    {"contextSize: ", Cause::kv_cache_context, 0.6f, "the context size", Cue::context},
    {"seq_len", Cause::kv_cache_context, 0.6f, "the sequence length", Cue::context},
    {"sequence_length", Cause::kv_cache_context, 0.6f, "the sequence length", Cue::context},
    {"sequence length", Cause::kv_cache_context, 0.6f, "the sequence length", Cue::context},
    {"prompt tokens", Cause::kv_cache_context, 0.6f, "the prompt's length", Cue::context},
    {"prompt_tokens", Cause::kv_cache_context, 0.6f, "the prompt's length", Cue::context},
    // Hugging Face attention appending this step's keys to the cache.
    {"past_key_value", Cause::kv_cache_context, 1.0f, "appending to the KV cache (past_key_value)"},
    // One query's operators in a JVM stack (Elasticsearch's aggregation
    // phase, Trino's group-by and join builds): the size of that query's work.
    {"AggregationPhase", Cause::concurrency_batch, 0.8f, "a query's aggregation"},
    {"buildAggregation", Cause::concurrency_batch, 0.8f, "a query's aggregation"},
    {"GroupByHash", Cause::concurrency_batch, 0.8f, "a query's group-by"},
    {"HashAggregationOperator", Cause::concurrency_batch, 0.8f, "a query's aggregation"},
    {"HashBuilderOperator", Cause::concurrency_batch, 0.8f, "a query's join build"},
    // A Spark driver gathering a whole result (Dataset.collect's frames): one
    // result set, the work's size, into one heap.
    {"executeCollect", Cause::concurrency_batch, 0.9f, "a result collected whole into the driver"},
    {"collectFromPlan", Cause::concurrency_batch, 0.9f, "a result collected whole into the driver"},
    {"TaskResultGetter", Cause::concurrency_batch, 0.8f, "the tasks' results gathered into the driver"},
    {"toPandas", Cause::concurrency_batch, 0.8f, "a result collected whole into the driver (toPandas)"},
    // Hugging Face's Trainer keeps every evaluation batch's outputs on the
    // device and concatenates them (prediction_loop / evaluation_loop with
    // eval_accumulation_steps unset): what fills it accumulated over the run.
    {"nested_concat", Cause::leak_or_accumulation, 1.0f, "evaluation outputs kept and concatenated batch after batch"},
    {"torch_pad_and_concatenate", Cause::leak_or_accumulation, 1.0f, "evaluation outputs kept and concatenated batch after batch"},
    // Vectors added to an in-memory index (FAISS's add / add_with_ids, hnswlib's
    // add_items): the index keeps every one, so what fills the memory is the
    // corpus embedded so far.
    {"index.add(", Cause::leak_or_accumulation, 0.9f, "vectors added to an in-memory index that keeps every one"},
    {"add_with_ids", Cause::leak_or_accumulation, 0.9f, "vectors added to an in-memory index that keeps every one"},
    {".add_items(", Cause::leak_or_accumulation, 0.9f, "vectors added to an in-memory index that keeps every one"},
    // The same by hand: a result concatenated onto itself each pass.
    {"cat((", Cause::leak_or_accumulation, 0.7f, "a result concatenated onto itself pass after pass", Cue::self_concat},
    {"cat([", Cause::leak_or_accumulation, 0.7f, "a result concatenated onto itself pass after pass", Cue::self_concat},
    {"concatenate((", Cause::leak_or_accumulation, 0.7f, "a result concatenated onto itself pass after pass", Cue::self_concat},
    {"concatenate([", Cause::leak_or_accumulation, 0.7f, "a result concatenated onto itself pass after pass", Cue::self_concat},
    {"concat([", Cause::leak_or_accumulation, 0.7f, "a result concatenated onto itself pass after pass", Cue::self_concat},
    // A list of every batch's results joined at the end ("all_probs = torch.cat(prob_list, dim=0)"):
    // the list held them all until then.
    {"cat(", Cause::leak_or_accumulation, 0.7f, "every batch's results kept in a list and joined at the end", Cue::list_concat},
    {"concatenate(", Cause::leak_or_accumulation, 0.7f, "every batch's results kept in a list and joined at the end", Cue::list_concat},
    // Stepping a batch: training, profiling, warm-up, graph capture, serving.
    {"backward", Cause::concurrency_batch, 1.0f, "a training step (backward)"},
    // The optimizer's step, not its name: "optimizer" is also in set-up code
    // (setup_model_and_optimizer, DeepSpeed's zero_optimizer.py building state).
    {"optimizer.step", Cause::concurrency_batch, 0.9f, "a training step (optimizer)"},
    {"optimizer_step", Cause::concurrency_batch, 0.9f, "a training step (optimizer)"},
    {"optim/", Cause::concurrency_batch, 0.6f, "a training step (optimizer)"},
    {", in step", Cause::concurrency_batch, 0.6f, "a training step (optimizer)", Cue::frame_name},
    {"train_step", Cause::concurrency_batch, 1.0f, "a training step"},
    // darknet's training run ("./darknet detector train ...") and its cfg's
    // subdivisions (a step holds batch / subdivisions images at once).
    {"detector train", Cause::concurrency_batch, 0.9f, "a darknet training step"},
    {"subdivisions", Cause::concurrency_batch, 0.8f, "darknet's mini-batch (batch / subdivisions)"},
    {"training_step", Cause::concurrency_batch, 1.0f, "a training step"},
    {"trainer.train(", Cause::concurrency_batch, 0.8f, "a training step"},
    // Keras: the fit loop's frames and its progress bar ("2048/91520 [====..] - ETA: 21:44 - loss: 9.7012").
    {"_fit_loop", Cause::concurrency_batch, 0.8f, "a training step (Keras fit)"},
    {", in fit", Cause::concurrency_batch, 0.7f, "a training step (Keras fit)", Cue::frame_name},
    {"train_function", Cause::concurrency_batch, 0.8f, "a training step (Keras fit)"},
    {" - loss: ", Cause::concurrency_batch, 0.7f, "a training step (a progress line with its loss)"},
    {"_inner_training_loop", Cause::concurrency_batch, 0.8f, "a training step"},
    {"epoch", Cause::concurrency_batch, 0.6f, "a training epoch", Cue::run_word},
    // A data loader's worker assembling a batch (PyTorch's collate_fn,
    // default_collate, a library's own *_collate): the allocation holds one
    // whole batch of samples.
    {"collate", Cause::concurrency_batch, 0.7f, "a batch being assembled (collate)"},
    // A child that multiprocessing spawned (Windows' only start method, and
    // macOS's default) re-imports everything the parent imported: each of
    // the DataLoader's or pool's workers holds its own copy of the libraries
    // and their commit.
    {"spawn_main", Cause::concurrency_batch, 0.6f, "a spawned worker process (each re-imports the libraries)"},
    {"batch_size", Cause::concurrency_batch, 0.7f, "the batch size", Cue::batch},
    {"batch size", Cause::concurrency_batch, 0.7f, "the batch size", Cue::batch},
    {"batch-size", Cause::concurrency_batch, 0.7f, "the batch size", Cue::batch},
    {"batchsize", Cause::concurrency_batch, 0.7f, "the batch size", Cue::batch},  // --maxBatchSize 8, batchSize: 16
    {"running-req", Cause::concurrency_batch, 0.6f, "the running batch"},
    {"max_num_seqs", Cause::concurrency_batch, 0.6f, "the number of sequences"},
    {"prefill", Cause::concurrency_batch, 0.7f, "a prefill batch"},
    {"profile_run", Cause::concurrency_batch, 1.0f, "profiling a max-size batch"},
    {"_dummy_run", Cause::concurrency_batch, 1.0f, "profiling a max-size batch"},
    {"dummy_sampler", Cause::concurrency_batch, 1.0f, "profiling the sampler"},
    {"warmup", Cause::concurrency_batch, 0.8f, "warm-up of a max-size batch"},
    // CUDA-graph capture runs after the KV cache has taken its share of the
    // budget (vLLM's gpu_memory_utilization, SGLang's mem-fraction-static) and
    // lives in what is left: both engines' remedy is a smaller reservation.
    {"capture_model", Cause::kv_cache_context, 1.0f, "CUDA graph capture in what the KV cache reservation left"},
    {"capturing cudagraphs", Cause::kv_cache_context, 1.0f, "CUDA graph capture in what the KV cache reservation left"},
    {"capturing cuda graph", Cause::kv_cache_context, 1.0f, "CUDA graph capture in what the KV cache reservation left"},
    {"capture cuda graph", Cause::kv_cache_context, 1.0f, "CUDA graph capture in what the KV cache reservation left"},
    {"capture_one_batch_size", Cause::kv_cache_context, 1.0f, "CUDA graph capture in what the KV cache reservation left"},
    {"execute_model", Cause::concurrency_batch, 0.8f, "executing the model on a batch"},
    {"engine_step", Cause::concurrency_batch, 0.8f, "an engine step"},
    {"run_engine_loop", Cause::concurrency_batch, 0.6f, "the engine loop"},
    {"generate_token", Cause::concurrency_batch, 0.6f, "generating tokens"},
    {"sampler", Cause::concurrency_batch, 0.6f, "sampling"},
    {"logits", Cause::concurrency_batch, 0.5f, "computing logits"},
    {", in forward", Cause::concurrency_batch, 0.5f, "a forward pass"},
    {", in _forward", Cause::concurrency_batch, 0.5f, "a forward pass"},
    {".generate(", Cause::concurrency_batch, 0.5f, "generation"},
    {", in generate", Cause::concurrency_batch, 0.5f, "generation"},
    {"num_beams", Cause::concurrency_batch, 0.5f, "beam search"},
    // Requests in flight as serving engines report them.
    {"Running: ", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    {"#running-req: ", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    {"active requests: ", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    {"in-flight requests: ", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    {"concurrent requests: ", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    // The same gauge as a structured log's field ("inflight_requests=14").
    {"inflight_requests=", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    {"in_flight_requests=", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    {"concurrent_requests=", Cause::concurrency_batch, 0.7f, "the requests running at once", Cue::load},
    // A function named for the batch it processes ("_process_batch",
    // "run_batch", "predict_batch", "encode_batch"): the batch at once.
    {"process_batch", Cause::concurrency_batch, 0.8f, "processing a batch"},
    {"run_batch", Cause::concurrency_batch, 0.8f, "processing a batch"},
    {"predict_batch", Cause::concurrency_batch, 0.8f, "processing a batch"},
    {"encode_batch", Cause::concurrency_batch, 0.8f, "processing a batch"},
    {"embed_batch", Cause::concurrency_batch, 0.8f, "processing a batch"},
    // A vision encoder steps every image of the batch at once.
    {"mm_encoder", Cause::concurrency_batch, 0.8f, "encoding the batch's images"},
    {"embed_multimodal", Cause::concurrency_batch, 0.8f, "encoding the batch's images"},
    {"pixel_values", Cause::concurrency_batch, 0.6f, "encoding the batch's images"},
    // Parallel copies of the work: each holds its own memory.
    {" -j", Cause::concurrency_batch, 0.8f, "parallel build jobs", Cue::workers},
    // A build's settings quote or assign the flag: MAKEOPTS="-j16",
    // PARALLEL_MAKE = "-j 8", MAKEFLAGS=-j12.
    {"\"-j", Cause::concurrency_batch, 0.8f, "parallel build jobs", Cue::workers},
    {"=-j", Cause::concurrency_batch, 0.8f, "parallel build jobs", Cue::workers},
    {"--jobs", Cause::concurrency_batch, 0.8f, "parallel jobs", Cue::workers},
    {"--parallel", Cause::concurrency_batch, 0.8f, "parallel build jobs", Cue::workers},  // cmake --build --parallel 8, build scripts
    {" -np ", Cause::concurrency_batch, 0.8f, "parallel worker processes", Cue::workers},
    {"--n-processes", Cause::concurrency_batch, 0.8f, "parallel worker processes", Cue::workers},
    {"--num-processes", Cause::concurrency_batch, 0.8f, "parallel worker processes", Cue::workers},
    {"--num_proc", Cause::concurrency_batch, 0.8f, "parallel worker processes", Cue::workers},
    {"num_proc=", Cause::concurrency_batch, 0.8f, "parallel worker processes", Cue::workers},
    {"--workers", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::workers},
    {" --vm ", Cause::concurrency_batch, 0.7f, "parallel memory workers (stress --vm)", Cue::workers},
    {"\"--vm\",\"", Cause::concurrency_batch, 0.7f, "parallel memory workers (stress --vm)", Cue::workers},
    {"num_workers", Cause::concurrency_batch, 0.6f, "parallel workers", Cue::workers},
    // Spark runs as many tasks at once in one executor JVM as it has cores,
    // each with its own buffers in the one heap (spark-submit's flag, the conf key).
    {"--executor-cores", Cause::concurrency_batch, 0.7f, "tasks running at once in one executor", Cue::jvm_workers},
    {"spark.executor.cores", Cause::concurrency_batch, 0.7f, "tasks running at once in one executor", Cue::jvm_workers},
    {"max_workers", Cause::concurrency_batch, 0.6f, "parallel workers", Cue::workers},
    // php-fpm's pool size ("pm.max_children = 12"): that many PHP processes at once.
    {"pm.max_children", Cause::concurrency_batch, 0.8f, "php-fpm children at once", Cue::workers},
    {"pool of", Cause::concurrency_batch, 0.7f, "a pool of parallel workers", Cue::workers},
    {"concurrency", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::workers},
    // A load test's own setting ("'concurrent_number': 100", Milvus' benchmark
    // harness) and a count of clients before the word ("64 concurrent clients").
    {"concurrent_number", Cause::concurrency_batch, 0.7f, "concurrent clients", Cue::workers},
    {" concurrent clients", Cause::concurrency_batch, 0.7f, "concurrent clients", Cue::counted},
    {" concurrent users", Cause::concurrency_batch, 0.7f, "concurrent clients", Cue::counted},
    {" concurrent requests", Cause::concurrency_batch, 0.7f, "concurrent requests", Cue::counted},
    {" concurrent connections", Cause::concurrency_batch, 0.7f, "concurrent connections", Cue::counted},
    {" simultaneous requests", Cause::concurrency_batch, 0.7f, "concurrent requests", Cue::counted},
    {" parallel requests", Cause::concurrency_batch, 0.7f, "concurrent requests", Cue::counted},
    // Work in flight counted before the words, whatever the work is called
    // ("37 inputs in flight were failed", "412 requests in-flight").
    {" in flight", Cause::concurrency_batch, 0.7f, "requests or inputs", Cue::counted},
    {" in-flight", Cause::concurrency_batch, 0.7f, "requests or inputs", Cue::counted},
    {"workers=", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::workers},
    {"workers_", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::workers},  // "workers_count=10"
    // PyTorch's extension builds (torch.utils.cpp_extension, setup.py) run ninja
    // with MAX_JOBS jobs, or one per CPU when it is unset: "-- Using
    // MAX_JOBS=26 for ninja", "MAX_JOBS not set, using nproc: 8".
    {"MAX_JOBS=", Cause::concurrency_batch, 0.8f, "parallel build jobs", Cue::workers},
    {"using nproc: ", Cause::concurrency_batch, 0.8f, "parallel build jobs", Cue::workers},
    {"--processes", Cause::concurrency_batch, 0.7f, "parallel worker processes", Cue::workers},
    {"num_processes", Cause::concurrency_batch, 0.7f, "parallel worker processes", Cue::workers},
    {"n_jobs", Cause::concurrency_batch, 0.7f, "parallel jobs", Cue::workers},
    {"xargs ", Cause::concurrency_batch, 0.7f, "parallel copies (xargs -P)", Cue::xargs},
    {" workers", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::counted},
    {" worker threads", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::counted},
    {" worker processes", Cause::concurrency_batch, 0.7f, "parallel worker processes", Cue::counted},
    // A server's setting for its pool ("sonar.ce.workerCount=4", "worker_count: 8").
    {"workercount", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::workers},
    {"worker_count", Cause::concurrency_batch, 0.7f, "parallel workers", Cue::workers},
    // A pre-forking server's setting (unicorn's "worker_processes 4", as config/unicorn.rb has it).
    {"worker_processes", Cause::concurrency_batch, 0.7f, "parallel worker processes", Cue::workers},
    {" worker processes", Cause::concurrency_batch, 0.7f, "parallel worker processes", Cue::counted},
    {" processes", Cause::concurrency_batch, 0.6f, "parallel processes", Cue::counted},
    {" actions running", Cause::concurrency_batch, 0.7f, "parallel build actions", Cue::counted},  // Bazel's "[14,212 / 16,044] 16 actions running"
    // PyTorch's extension builder handing ninja its default job count (cores + 2): "Allowing ninja to set a
    // default number of workers... (overridable by setting the environment variable MAX_JOBS=N)".
    {"default number of workers", Cause::concurrency_batch, 0.8f, "a build at ninja's default parallelism (a job per core)"},
};

struct Recovery {
  std::string_view word;
  std::string_view detail;
};
constexpr Recovery kRecoveries[] = {
    {"retrying with a smaller", "retried with a smaller batch"},
    {"retrying with batch size", "retried with a smaller batch"},
    {"reducing batch size to", "retried with a smaller batch"},
    // A batch-size finder's probe (accelerate's find_executable_batch_size, Lightning's
    // BatchSizeFinder): an OOM it catches, then a smaller batch.
    {"-> halving", "retried with a smaller batch"},
    {"halving the batch", "retried with a smaller batch"},
    {"halving batch", "retried with a smaller batch"},
    {"trying batch_size=", "retried with a smaller batch"},
    {"trying batch size", "retried with a smaller batch"},
    // Composer's automatic gradient accumulation: "CUDA out of memory detected. Gradient Accumulation
    // increased from 1 -> 2, and the batch will be retrained." (the micro-batch halves).
    {"gradient accumulation increased", "retried with a smaller micro-batch"},
    {"the batch will be retrained", "retried with a smaller micro-batch"},
    // A launcher that lowers the context after the engine could not allocate its KV cache
    // ("retrying with --ctx-size 131072 (attempt 1/4)"), as wrappers around llama-server do.
    {"retrying with --ctx-size", "retried with a smaller context"},
    {"retrying with a smaller context", "retried with a smaller context"},
    // A decoder that falls back to tiles after its whole-frame pass ran out
    // ("retrying with tiled VAE decoding", "Freeing cache and retrying once
    // with VAE tiling enabled"), then goes on.
    {"retrying with tiled", "retried in tiles"},
    {"retrying once with vae tiling", "retried in tiles"},
    {"attempting to recover from oom", "skipped the batch and went on"},
    {"skipping batch", "skipped the batch and went on"},
    // A build whose tests printed the errors and passed (Maven's "BUILD SUCCESS", Gradle's "BUILD SUCCESSFUL").
    {"BUILD SUCCESS", kTestsPassed},
};

// A batch size that went down on its own line after an OOM the program caught
// (deepmd's "Adjust batch size from 2048 to 1024", "batch_size: 64 -> 32",
// "new batch size = 16 (was 32)" is not read): the arithmetic, not the
// wording, says it was retried smaller.
constexpr std::string_view kBatchDown = "batch[ _-]?size[^0-9\\n]{0,24}[0-9]+ *(to|->|=>|\\xe2\\x86\\x92) *[0-9]+";

// Words of a failure nearby: cues are held back in a short ring and given
// only around such a line, so a long healthy log full of "loading" and
// "epoch" does not fill the fact store (whose per-kind caps keep the first
// facts) before the failure at its end is reached.
constexpr std::string_view kTriggers[] = {"of memory", "ofmemory", "alloc", "kill", "oom", "exhaust", "memoryerror",
                                          "enough memory", "exit code", "exitcode", "signal", "error", "fatal", "abort",
                                          "crashed", "available ram", "exited with code", "evict"};

// A load that says it finished ("Loaded model in 10.2 seconds", vLLM's
// "Model loading took 14.99 GiB", "Loading weights took 9.8 seconds", a server now serving): the
// loading cues before it name a phase that is over. One phase_load fact with
// detail kLoadFinished (strength 0: it votes for nothing) marks the line.
// A server that says it serves ("llama server listening at http://...", "main: server is listening on",
// uvicorn's "Application startup complete.", "ready to receive") has its model loaded too.
constexpr std::string_view kLoadDone[] = {"loaded model in", "loaded the model in", "model loading took", "loading weights took",
                                          "model loaded in", "finished loading", "weights loaded in", "loaded checkpoint in",
                                          "server listening at", "server is listening on", "application startup complete",
                                          // Prometheus's "Server is ready to receive web requests." and
                                          // "Completed loading of configuration file".
                                          "ready to receive", "completed loading",
                                          // Triton's model repository and endpoints; a uvicorn-served app up.
                                          "successfully loaded '", "started grpcinferenceservice", "started httpservice",
                                          "uvicorn running on",
                                          // Ollama's runner answering after its model loaded.
                                          "runner started in"};

// A pool of worker processes starting: gunicorn's "[9] [INFO] Booting worker
// with pid: 9", Puma's "- Worker 0 (PID: 4127) booted in 0.35s, phase: 0",
// uvicorn's "INFO:     Started server process [17]" (one a worker).
// Four or more, each within kBootGap lines of the last, are that many copies
// of the application, each holding its own memory (the fact carries the
// count in `sequences`, as a worker count does). A worker booted again after
// a kill stands apart from the others and starts a new count.
constexpr std::string_view kBoots[] = {"booting worker with pid", ") booted", "started server process ["};
constexpr uint64_t kBootGap = 3;

// Spark's console progress bar: "[Stage 3:=====>        (8 + 80) / 1000]",
// tasks done + tasks running at once / tasks in the stage. Four or more
// running are that many tasks sharing the executor's memory (a worker count,
// in `sequences`).
constexpr std::string_view kSparkStage = "[Stage ";
// A Python traceback's first line: the statement typed just before it at an
// interactive prompt (">>> df = pd.read_csv(...)", IPython's "In [4]: ...")
// is the one operation that raised, however long the traceback under it.
constexpr std::string_view kTraceback = "Traceback (most recent call last)";

constexpr unsigned kCue = kContext | kCaseless;

// A shell prompt before a command: "$ python ...", "user@host:~/dir$ ...",
// "(venv) $ ...", zsh's "% ...", PowerShell's "PS C:\\work> ...". A phase
// cue on such a line names what the whole run that follows was doing (a
// conversion script, a training launcher); the next prompt ends that run.
constexpr std::string_view kPromptRegex =
    "^[ \\t]*(\\([^)]{1,40}\\)[ \\t]*)?(\\[[^\\]]{1,80}\\]|\\S{0,80})[$%#] \\S|^[ \\t]*PS [A-Za-z]:[^>]{0,80}> \\S";

bool shell_prompt(std::string_view s) {
  std::string_view t = text::trim_left(s);
  if (text::starts_with(t, "(")) {
    size_t close = t.substr(0, 42).find(')');
    if (close == std::string_view::npos) return false;
    t = text::trim_left(t.substr(close + 1));
  }
  if (text::starts_with(t, "PS ") && t.size() > 4 && t[4] == ':') {
    size_t gt = t.substr(0, 90).find("> ");
    return gt != std::string_view::npos && gt + 2 < t.size() && t[gt + 2] != ' ';
  }
  // "[user@host dir]$ " and root's "[root@host ~]# ".
  if (text::starts_with(t, "[")) {
    size_t close = t.substr(0, 82).find(']');
    return close != std::string_view::npos && close + 3 < t.size() && (t[close + 1] == '$' || t[close + 1] == '#') &&
           t[close + 2] == ' ' && t[close + 3] != ' ';
  }
  // "$ ", "user@host:~/dir$ ", "% ", and root's "root@host:~# " (a '#'
  // only after a user@host: a line starting with '#' is a comment or a heading).
  bool at_host = false;
  for (size_t i = 0; i < t.size() && i <= 80; ++i) {
    char c = t[i];
    // zsh's bare "% " only first on the line ("  5% done" is progress; curl's header "% Total" is no prompt).
    if (c == '%' && (i > 0 || text::starts_with(t, "% Total"))) return false;
    if (c == '$' || c == '%' || (c == '#' && at_host)) return i + 2 < t.size() && t[i + 1] == ' ' && t[i + 2] != ' ';
    if (c == ' ' || c == '\t' || c == '#' || c == '>') return false;
    at_host = at_host || c == '@';
  }
  return false;
}

// zsh's and bash's report of a job killed: "[1]    48113 killed     python3 ...",
// "[2]+  Killed                  ./llama-quantize ...".
bool job_killed(std::string_view s) {
  std::string_view t = text::trim_left(s);
  if (!text::starts_with(t, "[")) return false;
  size_t close = t.substr(0, 8).find(']');
  if (close == std::string_view::npos || !text::parse_u64(t.substr(1, close - 1))) return false;
  return text::icontains(t.substr(close, 40), " killed ");
}

// Whether a cue word that follows `before` (a command's line up to it) stands
// in the name of the program the command runs: its first word, or the
// script or module an interpreter or launcher runs ("python3 -m
// llama.convert_llama", "torchrun --nproc_per_node 8 convert.py" is not
// read: flags first). "tail sra_convert.log" runs tail.
bool in_program_name(std::string_view before) {
  std::string_view t = text::trim_left(before);
  if (text::starts_with(t, "[")) {  // "[1]    48113 killed     " or "[user@host dir]$ "
    size_t close = t.find(']');
    t = close == std::string_view::npos ? t : t.substr(close + 1);
    if (size_t k = text::ifind(t, " killed "); k != std::string_view::npos) t = t.substr(k + 8);
  }
  // Past the prompt: up to "$ ", "% ", "# " or "> ".
  for (std::string_view p : {"$ ", "% ", "# ", "> "})
    if (size_t at = t.substr(0, 120).find(p); at != std::string_view::npos) {
      t = t.substr(at + 2);
      break;
    }
  std::vector<std::string_view> words;
  for (std::string_view w : text::split(text::trim_left(t), ' '))
    if (!w.empty() && words.size() < 8) words.push_back(w);
  // The word the cue stands in ("llama." of "llama.convert_llama") is the program's own.
  if (!words.empty() && !t.empty() && t.back() != ' ') words.pop_back();
  static constexpr std::string_view kRunners[] = {"python", "python3", "python2", "py", "bash", "sh", "node", "uv", "poetry",
                                                  "sudo", "nohup", "time", "exec", "run", "-m", "-u", "conda"};
  for (std::string_view w : words) {
    bool runner = false;
    for (std::string_view r : kRunners) runner = runner || w == r || text::starts_with(w, "python3.");
    if (!runner) return false;  // a program already named before the cue: the cue is an argument
  }
  return true;
}

// One pattern per cue, recovery phrase and trigger, in the tables' order.
constexpr auto kPatterns = [] {
  std::array<Pattern, std::size(kCues) + std::size(kRecoveries) + std::size(kTriggers) + std::size(kLoadDone) + std::size(kBoots) + 4> p{};
  size_t i = 0;
  p[i++] = {kPromptRegex.data(), kContext | kRegex};
  p[i++] = {kBatchDown.data(), kCue | kRegex};
  p[i++] = {kSparkStage.data(), kCue};
  p[i++] = {kTraceback.data(), kCue};
  for (std::string_view b : kBoots) p[i++] = {b.data(), kCue};
  for (std::string_view d : kLoadDone) p[i++] = {d.data(), kCue};
  for (const Cue& c : kCues) p[i++] = {c.word.data(), kCue};
  for (const Recovery& r : kRecoveries) p[i++] = {r.word.data(), kCue};
  for (std::string_view t : kTriggers) p[i++] = {t.data(), kCue};
  return p;
}();

constexpr size_t kRing = 48;         // cue facts held back
constexpr uint64_t kAfterTrigger = 20;  // lines after a trigger whose cues go straight out

// Lines that name a remedy, not what was running.
bool remedy_line(std::string_view s) {
  static constexpr std::string_view kWords[] = {"try ", "reduce ", "decrease ", "lower ", "consider ", "please ",
                                                "possible solution", "set --", "you can", "increase ", "use --"};
  for (std::string_view w : kWords)
    if (text::icontains(s, w)) return true;
  return false;
}

// A context of at least kLongContext tokens in the first number after a
// setting's name ("n_ctx = 131072", "max_model_len=32768", "cache_length: 65536").
constexpr uint64_t kLongContext = 16384;

std::optional<uint64_t> first_number(std::string_view after) {
  size_t i = 0;
  while (i < after.size() && i < 24 && !(after[i] >= '0' && after[i] <= '9')) ++i;
  return text::parse_u64(after.substr(std::min(i, after.size())));
}

// A worker count within its bounds (see Cue::setting).
bool worker_count(std::optional<uint64_t> n) { return n && *n >= 4 && *n <= 4096; }

// The count one or two words before a word ("4 render workers", "24 processes").
std::optional<uint64_t> count_before(std::string_view before) {
  for (int words = 0; words < 2; ++words) {
    while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
    size_t b = before.find_last_of(' ');
    std::string_view w = before.substr(b == std::string_view::npos ? 0 : b + 1);
    if (auto n = text::parse_u64(w); n && std::to_string(*n) == w) {
      // "Killed 7 processes", "reaped 3 workers": a count of what ended, not of what ran at once.
      std::string_view prev = text::trim(before.substr(0, b == std::string_view::npos ? 0 : b));
      prev = prev.substr(prev.find_last_of(' ') == std::string_view::npos ? 0 : prev.find_last_of(' ') + 1);
      for (std::string_view ended : {"killed", "terminated", "reaped", "stopped", "exited", "lost", "restarted"})
        if (text::iequals(prev, ended)) return std::nullopt;
      return n;
    }
    if (b == std::string_view::npos) break;
    before = before.substr(0, b);
  }
  return std::nullopt;
}

// The count a workers or counted cue names, or nullopt.
// `make -j` with no number runs as many jobs as there are targets ready: no limit at all.
constexpr uint64_t kUnboundedJobs = 64;

// A count given as the machine's CPUs ("-j$(nproc)", "--jobs=`nproc`",
// "-j$(getconf _NPROCESSORS_ONLN)"): one job per CPU the machine reports,
// which inside a container is the host's, whatever its memory limit. Its
// number is not in the paste: kPerCpuJobs marks it (the fact's detail says
// so, and the diagnosis prints no number for it).
bool per_cpu(std::string_view v) {
  if (!v.empty() && v[0] == '"') v.remove_prefix(1);
  for (std::string_view p : {"$(nproc", "`nproc", "$(getconf _NPROCESSORS_ONLN", "$(nproc --all"})
    if (text::starts_with(v, p)) return true;
  return false;
}

// `per_cpu` (when given) says whether the count was the machine's CPUs
// ("-j$(nproc)", kPerCpuJobs), not a figure of the paste.
std::optional<uint64_t> worker_count_of(Cue::Setting kind, std::string_view before, std::string_view after, bool* per_cpu_out = nullptr) {
  if (kind == Cue::counted) return count_before(before);
  if (kind == Cue::xargs) {
    // xargs's own options, up to the command it runs: "-P 24", "-P24",
    // "--max-procs=24" (0: as many as it can); a -P after the command is
    // that command's (scp -P 22).
    std::string_view rest = after;
    for (int tokens = 0; tokens < 8; ++tokens) {
      rest = text::trim_left(rest);
      std::string_view tok = rest.substr(0, rest.find(' '));
      if (tok.empty() || tok[0] != '-') return std::nullopt;
      rest.remove_prefix(tok.size());
      std::optional<uint64_t> n;
      if (tok == "-P") n = text::parse_u64(text::trim_left(rest));
      else if (text::starts_with(tok, "-P")) n = text::parse_u64(tok.substr(2));
      else if (text::starts_with(tok, "--max-procs=")) n = text::parse_u64(tok.substr(12));
      else {
        if (tok == "-n" || tok == "-I" || tok == "-L" || tok == "-d" || tok == "-s" || tok == "-a" || tok == "-E") {
          rest = text::trim_left(rest);
          rest.remove_prefix(std::min(rest.size(), rest.find(' ')));
        }
        continue;
      }
      return n && *n == 0 ? std::optional<uint64_t>(kUnboundedJobs) : n;
    }
    return std::nullopt;
  }
  // (cmake --build's "-j" with no number hands the native tool its own default: make's is no limit.)
  if (text::ends_with(text::trim(before), "make") || text::contains(before, "cmake --build")) {
    std::string_view rest = text::trim_left(after);
    if (after.empty() || ((after[0] == ' ' || after[0] == ';' || after[0] == '&') && (rest.empty() || rest[0] < '0' || rest[0] > '9')))
      return kUnboundedJobs;
  }
  // "-j 8", "--workers=8", "concurrency: 8", and JSON's "concurrency":8.
  // The name may go on with a word for "how many" ("workers_count=10",
  // "worker_num: 8", "workerCount=4").
  for (std::string_view tail : {"_count", "Count", "count", "_num", "_size"})
    if (text::starts_with(after, tail)) {
      after.remove_prefix(tail.size());
      break;
    }
  size_t i = 0;
  // Python's repr quotes the key ("'concurrent_number': 100").
  while (i < after.size() && i < 3 && (after[i] == ' ' || after[i] == '=' || after[i] == ':' || ((after[i] == '"' || after[i] == '\'') && i == 0))) ++i;
  if (per_cpu(after.substr(i))) {
    if (per_cpu_out) *per_cpu_out = true;
    return kPerCpuJobs;
  }
  // The count is a word of its own: "--jobs 8e2c1f4a-..." names a job, not 8.
  std::string_view rest;
  auto n = text::parse_u64(after.substr(i), &rest);
  if (n && !rest.empty() && (platform::is_alnum(rest[0]) || rest[0] == '-' || rest[0] == '_')) return std::nullopt;
  return n;
}

// "loading" inside "Downloading", "Uploading", "Unloading": moving files
// or freeing a model, not reading one into memory ("Offloading" layers to a
// GPU is part of a load and stays a cue). XLA's "Error loading program
// 'jit_f'" loads a compiled program onto the device, any time a new shape
// is compiled: not a model's load either.
bool inside_other_word(std::string_view s, size_t at, std::string_view word) {
  if (word != "loading") return false;
  if (text::starts_with(s.substr(at + word.size()), " program")) return true;
  // A program's configuration, settings or plugins (Flink's "Loading
  // configuration property: taskmanager.numberOfTaskSlots, 8", sbt's
  // "loading settings for project"), or a compiled extension (DeepSpeed's
  // and PyTorch's JIT "Loading extension module cpu_adam..."): read at
  // start-up, not a model into memory. On the training split a failure
  // after one alone was never a load's (2026-12-07).
  for (std::string_view what : {" configuration", " config", " settings", " plugin", " properties", " extension module"})
    if (text::istarts_with(s.substr(at + word.size()), what)) return true;
  if (at == 0) return false;
  auto ends = [&](std::string_view w) { return at >= w.size() && text::iequals(s.substr(at - w.size(), w.size()), w); };
  return ends("down") || ends("up") || ends("un");
}

// A batch size's own value follows its name ("batch_size = 2", "batch size:
// 1", Hugging Face's "batch size per device = 1"); "set batch size for
// cuda:0 to 2880" names no value there.
std::optional<uint64_t> batch_value(std::string_view after) {
  for (std::string_view per : {" per device", " per_device", " per gpu"})
    if (text::istarts_with(after, per)) after.remove_prefix(per.size());
  size_t i = 0;
  while (i < after.size() && (after[i] == ' ' || after[i] == '=' || after[i] == ':' || after[i] == '"')) ++i;
  return text::parse_u64(after.substr(i));
}

// "Total batch size", "Total train batch size": summed over steps and ranks.
bool summed_batch(std::string_view before) {
  before = text::trim(before);
  for (std::string_view w : {"total", "total train"})
    if (before.size() >= w.size() && text::iequals(before.substr(before.size() - w.size()), w)) return true;
  return false;
}

// Whether a setting's value makes it a cue (see Cue::setting).
// "NAME = ... cat((NAME, more), ...)": the assignment's target is the first
// thing concatenated (`before` ends just before the call's name, `after`
// starts at its first argument).
bool concatenated_onto_itself(std::string_view before, std::string_view after) {
  size_t eq = before.find('=');
  if (eq == std::string_view::npos || eq == 0 || (eq + 1 < before.size() && before[eq + 1] == '=')) return false;
  std::string_view target = text::trim(before.substr(0, before[eq - 1] == '+' ? eq - 1 : eq));
  std::string_view first = text::trim(after.substr(0, after.find(',')));
  if (target.empty() || target.size() > 64 || first != target) return false;
  for (char c : target)
    if (!platform::is_alnum(c) && c != '_' && c != '.') return false;
  return true;
}

// The first argument of a concatenation names a list kept across the
// batches: "prob_list", "preds_lst", "all_logits", "outputs_all".
bool joins_a_kept_list(std::string_view after) {
  size_t e = 0;
  while (e < after.size() && e < 48 && (platform::is_alnum(after[e]) || after[e] == '_' || after[e] == '.')) ++e;
  if (e == 0 || e == after.size() || (after[e] != ',' && after[e] != ')')) return false;
  std::string name(after.substr(0, e));
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  name = name.substr(name.rfind('.') == std::string::npos ? 0 : name.rfind('.') + 1);
  return text::ends_with(name, "list") || text::ends_with(name, "_lst") || text::starts_with(name, "all_") ||
         text::ends_with(name, "_all");
}

// An epoch's own number after the word ("Epoch 3/40", "epoch 10, step 612",
// "Epoch [2/20]", "Epoch: 4", Keras' "Epoch 00003:") at 2 or more: at least
// one whole epoch ran before it, whether the run counts from 0 or from 1.
bool later_epoch(std::string_view after) {
  size_t i = 0;
  while (i < after.size() && i < 3 && (after[i] == ' ' || after[i] == ':' || after[i] == '[' || after[i] == '#')) ++i;
  auto n = text::parse_u64(after.substr(i));
  return n && *n >= 2 && *n < 1000000;
}

bool setting_speaks(Cue::Setting kind, std::string_view before, std::string_view after) {
  if (kind == Cue::none) return true;
  if (kind == Cue::cxx_frame) return !text::contains(before, "atomic");
  if (kind == Cue::command) return (shell_prompt(before) || job_killed(before)) && in_program_name(before);
  if (kind == Cue::run_word) {
    std::string_view a = after;
    const bool plural = !a.empty() && (a[0] == 's' || a[0] == 'S');
    if (plural) a.remove_prefix(1);
    a = text::trim_left(a);
    return !(text::starts_with(a, "=") || (plural && text::starts_with(a, ":")));
  }
  // The frame's function is the word itself: "in initialize", "in step"; not
  // "initialize_cache" (vLLM's KV cache), "initializer" or "step_scheduler".
  if (kind == Cue::frame_name) return after.empty() || after[0] == ' ' || after[0] == '\r';
  if (kind == Cue::torch_module)
    return (after.empty() || after[0] == ' ' || after[0] == '\r' || text::ends_with(before, "nn/modules/module")) &&
           (text::contains(before, "nn/modules/module.py") || text::ends_with(before, "nn/modules/module"));
  if (kind == Cue::self_concat) return concatenated_onto_itself(before, after);
  if (kind == Cue::list_concat) return joins_a_kept_list(after);
  if (kind == Cue::assigned_model) {
    size_t eq = before.find('=');
    if (eq == std::string_view::npos || eq == 0 || (eq + 1 < before.size() && before[eq + 1] == '=')) return false;
    std::string_view target = before.substr(0, eq);
    while (!target.empty() && target.back() == ' ') target.remove_suffix(1);
    auto ends = [&](std::string_view w) { return target.size() >= w.size() && text::iequals(target.substr(target.size() - w.size()), w); };
    return ends("model") || ends("net");
  }
  if (kind == Cue::model_ctor) {
    // "= WhisperModel(": a class name ending in the word, assigned.
    size_t name = before.size();
    while (name > 0 && (platform::is_alnum(before[name - 1]) || before[name - 1] == '_' || before[name - 1] == '.')) --name;
    if (name == before.size()) return false;  // a bare "Model(" call names no class
    // The class's own spelling, not a variable's ("self.model(x)" runs a
    // forward pass): "Model(" as written, after a capitalised name.
    if (std::string_view(before.data() + before.size(), 6) != "Model(") return false;
    std::string_view cls = before.substr(name);
    if (size_t dot = cls.rfind('.'); dot != std::string_view::npos) cls = cls.substr(dot + 1);
    if (cls.empty() || !(cls[0] >= 'A' && cls[0] <= 'Z')) return false;
    std::string_view lead = before.substr(0, name);
    while (!lead.empty() && lead.back() == ' ') lead.remove_suffix(1);
    return !lead.empty() && lead.back() == '=' && (lead.size() < 2 || (lead[lead.size() - 2] != '=' && lead[lead.size() - 2] != '!'));
  }
  if (kind == Cue::ctor) {
    bool stdlib = (text::contains(before, "lib/python") || text::icontains(before, "\\lib\\")) && !text::contains(before, "-packages");
    return !stdlib && !text::contains(before, "subprocess.py") && !text::contains(before, "threading.py");
  }
  auto n = first_number(after);
  if (kind == Cue::context) return n && *n >= kLongContext;
  if (kind == Cue::load) {
    // Elasticsearch's breaker usages ("in_flight_requests=2130/2kb") are bytes, not requests.
    std::string_view rest;
    auto count = text::parse_u64(text::trim_left(after), &rest);
    return count && *count >= 8 && (rest.empty() || (rest[0] != '/' && !platform::is_alnum(rest[0])));
  }
  if (kind == Cue::workers || kind == Cue::counted || kind == Cue::xargs || kind == Cue::jvm_workers)
    return worker_count(worker_count_of(kind, before, after));
  // A batch summed over accumulation steps and ranks ("Total train batch
  // size (w. parallel, distributed & accumulation) = 64") is not the batch
  // one step holds.
  if (summed_batch(before)) return false;
  auto own = batch_value(after);
  return !own || *own > 2;
}

// kBatchDown's two numbers, the second smaller and not zero.
bool batch_went_down(std::string_view s) {
  size_t p = text::ifind(s, "batch");
  if (p == std::string_view::npos) return false;
  std::string_view rest = s.substr(p);
  size_t i = rest.find_first_of("0123456789");
  if (i == std::string_view::npos || i > 40) return false;
  rest = rest.substr(i);
  auto from = text::parse_u64(rest);
  size_t end = rest.find_first_not_of("0123456789");
  if (!from || end == std::string_view::npos) return false;
  rest = text::trim_left(rest.substr(end));
  bool arrow = false;
  for (std::string_view a : {"to ", "->", "=>", "\xe2\x86\x92"}) {
    if (!text::starts_with(rest, a)) continue;
    rest.remove_prefix(a.size());
    arrow = true;
    break;
  }
  if (!arrow) return false;
  auto to = text::parse_u64(text::trim_left(rest));
  return to && *to > 0 && *to < *from;
}

// A shared library being loaded ("Error loading \"...\\torch\\lib\\shm.dll\"
// or one of its dependencies", "error while loading shared libraries:
// libcudart.so.12"): a process starting, not a model's weights.
bool library_load(std::string_view s) {
  for (std::string_view w : {".dll", ".so\"", ".so.", ".so ", ".so'", ".dylib", "shared librar", "shared object"})
    if (text::icontains(s, w)) return true;
  return text::ends_with(s, ".so");
}

// A shell command with flags: a prompt ("$ ", "# ", "> ", "...$ ") or a
// launcher first, and a "--flag" after it.
bool command_line(std::string_view s) {
  std::string_view t = text::trim_left(s);
  size_t prompt = t.substr(0, 120).find("$ ");
  bool started = prompt != std::string_view::npos || text::starts_with(t, "# ") || text::starts_with(t, "> ");
  for (std::string_view launcher : {"python", "torchrun", "accelerate ", "deepspeed ", "srun ", "docker run", "vllm serve"})
    started = started || text::starts_with(t, launcher);
  return started && text::contains(t, " --");
}

class MlPhase final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, kTraceback)) return prompt_statement(line);
    for (const Recovery& r : kRecoveries) {
      if (!text::icontains(s, r.word)) continue;
      Fact f = make_fact(line, FactKind::recovered, Family::runtime);
      f.detail = std::string(r.detail);
      out.add(std::move(f));
      return;
    }
    if (batch_went_down(s) && !guards::is_advice_line(s) && !remedy_line(s)) {
      Fact f = make_fact(line, FactKind::recovered, Family::runtime);
      f.detail = "retried with a smaller batch";
      out.add(std::move(f));
      return;
    }
    bool trigger = false;
    for (std::string_view t : kTriggers) trigger = trigger || text::icontains(s, t);
    if (trigger) {
      for (Fact& f : ring_) out.add(std::move(f));
      ring_.clear();
      armed_until_ = line.number + kAfterTrigger;
    }
    if (guards::is_advice_line(s) || remedy_line(s)) return;
    bool finished = false;
    for (std::string_view d : kLoadDone) {
      if (!text::icontains(s, d)) continue;
      keep(line, phase_mark(line, Family::runtime, kLoadFinished), out);
      finished = true;
      break;
    }
    // "loading 18442907 calls ... done (7.9 GB in memory)": a load that says
    // on its own line that it finished is over, not a cue (its line's other
    // cues still count).
    bool load_done_here = false;
    if (size_t l = text::ifind(s, "loading"); !finished && l != std::string_view::npos) {
      std::string_view after = s.substr(l);
      load_done_here = text::icontains(after, "... done") || text::icontains(after, "...done");
      if (load_done_here) keep(line, phase_mark(line, Family::runtime, kLoadFinished), out);
    }
    const bool prompt = shell_prompt(s);
    if (prompt && command_cue_) {
      out.add(phase_mark(line, Family::cli, kCommandEnded));
      command_cue_ = false;
    }
    if (boot(line, out)) return;
    if (spark_stage(line, out)) return;
    // The strongest cue of each cause on this line.
    const Cue* best[3] = {nullptr, nullptr, nullptr};
    std::optional<uint64_t> workers, load;
    bool per_cpu_jobs = false;  // the count was the machine's CPUs ("-j$(nproc)"), not a figure
    for (const Cue& c : kCues) {
      size_t at = text::ifind(s, c.word);
      if (at == std::string_view::npos) continue;
      if (inside_other_word(s, at, c.word)) continue;
      if (!setting_speaks(c.setting, s.substr(0, at), s.substr(at + c.word.size()))) continue;
      int k = c.cause == Cause::model_load ? 0 : c.cause == Cause::kv_cache_context ? 1 : 2;
      if (k == 0 && (library_load(s) || load_done_here)) continue;
      if (c.setting == Cue::workers || c.setting == Cue::counted || c.setting == Cue::xargs || c.setting == Cue::jvm_workers) {
        per_cpu_jobs = false;
        workers = worker_count_of(c.setting, s.substr(0, at), s.substr(at + c.word.size()), &per_cpu_jobs);
      }
      if (c.setting == Cue::load) load = text::parse_u64(text::trim_left(s.substr(at + c.word.size())));
      if (!best[k] || c.weight > best[k]->weight) best[k] = &c;
    }
    batch_of_one(line, out);
    for (const Cue* c : best) {
      if (!c) continue;
      Fact f = make_fact(line, c->cause == Cause::model_load ? FactKind::phase_load : FactKind::phase_serve, Family::runtime);
      f.cause = c->cause;
      f.strength = c->weight;
      // A batch size on the command that started the run is configuration,
      // not the step that failed (a load that fails before any step still
      // shows its flags): it speaks at half the weight of the same setting
      // logged by the run. (A third was tried: it lost as many right
      // verdicts on the training split as it saved.)
      if (c->setting == Cue::batch && command_line(s)) f.strength *= 0.5f;
      f.detail = std::string(c->detail);
      if (c->setting == Cue::run_word && later_epoch(s.substr(text::ifind(s, c->word) + c->word.size())))
        f.detail = std::string(kLaterEpoch);
      // Python prints a frame's code indented by four under its "File" line.
      f.code_line = s.size() > 4 && s.substr(0, 4) == "    " && !text::contains(s, "File \"");
      // A worker count configures the whole run: the diagnosis weighs it
      // wherever it was printed (sequences = the count).
      if (c->setting == Cue::workers || c->setting == Cue::counted || c->setting == Cue::xargs || c->setting == Cue::jvm_workers)
        f.sequences = workers;
      if (per_cpu_jobs && c->setting == Cue::workers) f.detail = std::string(kPerCpuDetail);
      if (c->setting == Cue::jvm_workers) f.family = Family::jvm;
      // Requests in flight are the moment's load: `count`, not a setting.
      if (c->setting == Cue::load) f.count = load;
      if (c->detail == kLlamaContext) keep(line, phase_mark(line, Family::runtime, kLoadFinished), out);
      // A load's cue on the command that started the run (a conversion
      // script, a loader): it speaks for the run, out at once (a long log
      // must not push it out of the ring). A step's cues there are settings
      // (a batch size, a worker count), read as such.
      if (prompt && c->cause == Cause::model_load) {
        f.family = Family::cli;
        command_cue_ = true;
        out.add(std::move(f));
        continue;
      }
      keep(line, std::move(f), out);
    }
  }

 private:
  // A batch size stated as 1 or 2 (kBatchOfOne, the size in `count`): a mark
  // the diagnosis reads beside a step's cues. A line that also states a
  // batch of more than 2 ("batch_size=1 ... eval_batch_size=8") marks nothing.
  void batch_of_one(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    uint64_t small = 0;
    for (std::string_view w : {"batch_size", "batch size", "batch-size", "batchsize"}) {
      for (size_t at = text::ifind(s, w); at != std::string_view::npos; at = text::ifind(s, w, at + w.size())) {
        if (summed_batch(s.substr(0, at))) continue;
        auto n = batch_value(s.substr(at + w.size()));
        if (!n) continue;
        if (*n > 2) return;  // a batch cue of its own
        small = std::max(small, *n);
      }
    }
    if (!small) return;
    Fact f = make_fact(line, FactKind::phase_serve, Family::runtime);
    f.cause = Cause::kv_cache_context;
    f.strength = 0;
    f.count = small;
    f.detail = std::string(kBatchOfOne);
    keep(line, std::move(f), out);
  }

  // A worker of a pool booting (see kBoots): counts the run it belongs to.
  bool boot(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    bool gunicorn = text::icontains(s, kBoots[0]) || text::icontains(s, kBoots[2]);
    if (!gunicorn && !(text::icontains(s, kBoots[1]) && text::icontains(s, "worker ") && text::icontains(s, "(pid: "))) return false;
    boots_ = line.number <= last_boot_ + kBootGap ? boots_ + 1 : 1;
    last_boot_ = line.number;
    if (boots_ >= 4 && (boots_ & (boots_ - 1)) == 0) {  // at 4, 8, 16, ...: the count so far
      Fact f = make_fact(line, FactKind::phase_serve, Family::runtime);
      f.cause = Cause::concurrency_batch;
      f.strength = 0.7f;
      f.sequences = boots_;
      f.detail = std::to_string(boots_) + " worker processes booted together";
      keep(line, std::move(f), out);
    }
    return true;
  }

  bool spark_stage(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    size_t p = text::ifind(s, kSparkStage);
    if (p == std::string_view::npos) return false;
    // "(8 + 80) / 1000]": the last parenthesis on the line (the bar redraws with \r).
    size_t open = s.rfind('(');
    if (open == std::string_view::npos || open < p) return true;
    std::string_view rest;
    auto done = text::parse_u64(s.substr(open + 1), &rest);
    if (!done || !text::starts_with(rest, " + ")) return true;
    auto running = text::parse_u64(rest.substr(3), &rest);
    if (!running || !text::starts_with(rest, ") / ") || *running < 4 || *running > 1000000) return true;
    if (last_spark_ && line.number <= last_spark_ + kBootGap) return true;  // the bar redrawn
    last_spark_ = line.number;
    Fact f = make_fact(line, FactKind::phase_serve, Family::runtime);
    f.cause = Cause::concurrency_batch;
    f.strength = 0.6f;
    f.sequences = running;
    f.detail = "Spark tasks running at once";
    keep(line, std::move(f), out);
    return true;
  }

  // The cue on the prompt line right above a traceback speaks for the whole
  // failure, as an engine's statement of its phase does (diagnose/classify.cc,
  // phase_vote): it is marked with the interpreter's family.
  void prompt_statement(const Line& line) {
    for (Fact& f : ring_) {
      std::string_view t = text::trim_left(f.text);
      if (f.where.line + 1 == line.number && (text::starts_with(t, ">>> ") || text::starts_with(t, "In [")))
        f.family = Family::python;
    }
  }

  // Out now near a trigger; else held in the ring until one comes.
  void keep(const Line& line, Fact f, FactSink& out) {
    if (line.number <= armed_until_) {
      out.add(std::move(f));
    } else {
      if (ring_.size() == kRing) ring_.pop_front();
      ring_.push_back(std::move(f));
    }
  }

  std::deque<Fact> ring_;
  uint64_t armed_until_ = 0;
  bool command_cue_ = false;  // a cue on a command's line since the last prompt
  uint64_t boots_ = 0, last_boot_ = 0;
  uint64_t last_spark_ = 0;
};

}  // namespace

const RecognizerEntry kMlPhaseEntry{
    "ml_phase", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new MlPhase); }};

}  // namespace aimem
