// aimem check's readers on inline inputs: runtime flags in every form,
// Compose and systemd specifics, suppressions, and unusable input (malformed
// YAML, an alias bomb, a file too large) that must be a clear error.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <fmt/format.h>

#include "check/check.h"
#include "check/readers.h"
#include "check/server.h"
#include "check/suppress.h"
#include "check/yaml_doc.h"
#include "core/units.h"

namespace aimem::check {
namespace {

Container argv_container(std::vector<std::string> words, const std::string& image = "") {
  Container c;
  c.image = image;
  int col = 1;
  for (auto& w : words) {
    c.argv.push_back({w, Loc{"x", 1, col}});
    col += int(w.size()) + 1;
  }
  return c;
}

TEST(CheckServer, VllmServeWithPositionalModelAndBothFlagForms) {
  auto s = read_server(argv_container({"vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len=32768",
                                       "--max-num-seqs", "16", "--gpu-memory-utilization", "0.85", "-tp", "2",
                                       "--kv-cache-dtype", "fp8", "--swap-space", "4", "--cpu-offload-gb", "10"}));
  EXPECT_EQ(s.server, Server::kVllm);
  ASSERT_TRUE(s.model && s.context && s.concurrency && s.gpu_fraction && s.tp && s.kv_type);
  EXPECT_EQ(s.model->value, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(s.context->value, 32768);
  EXPECT_EQ(s.context->at.column, 37);  // the word --max-model-len=32768
  EXPECT_EQ(s.concurrency->value, 16);
  EXPECT_DOUBLE_EQ(s.gpu_fraction->value, 0.85);
  EXPECT_EQ(s.tp->value, 2);
  EXPECT_EQ(s.kv_type->value, "fp8");
  EXPECT_DOUBLE_EQ(s.swap_space_gib->value, 4);
  EXPECT_DOUBLE_EQ(s.cpu_offload_gib->value, 10);
}

TEST(CheckServer, PythonModuleEntrypointsAndUnderscoreFlags) {
  auto v = read_server(argv_container({"python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m",
                                       "--max_model_len", "4096"}));
  EXPECT_EQ(v.server, Server::kVllm);
  EXPECT_EQ(v.context->value, 4096);
  auto g = read_server(argv_container({"python", "-m", "sglang.launch_server", "--model-path", "m", "--context-length",
                                       "8192", "--max-running-requests", "32", "--mem-fraction-static", "0.8", "--tp", "4"}));
  EXPECT_EQ(g.server, Server::kSglang);
  EXPECT_EQ(g.context->value, 8192);
  EXPECT_EQ(g.concurrency->value, 32);
  EXPECT_DOUBLE_EQ(g.gpu_fraction->value, 0.8);
  EXPECT_EQ(g.tp->value, 4);
}

TEST(CheckServer, ShellStringFindsTheServerAfterOtherCommands) {
  auto s = read_server(argv_container(
      {"/bin/bash", "-c", "pip install x && exec vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 16k"}));
  EXPECT_EQ(s.server, Server::kVllm);
  ASSERT_TRUE(s.model && s.context);
  EXPECT_EQ(s.model->value, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(s.context->value, 16000);  // vLLM: k = 1000
  EXPECT_EQ(s.context->at.column, int(std::string("/bin/bash -c ").size()) + 1);  // the script's word
}

TEST(CheckServer, LlamaServerContextIsSharedBySlots) {
  auto s = read_server(argv_container({"llama-server", "-m", "/m.gguf", "-c", "16384", "-np", "4", "-ngl", "99",
                                       "--no-mmap", "--mlock"}));
  EXPECT_EQ(s.server, Server::kLlamaCpp);
  EXPECT_EQ(s.total_context->value, 16384);
  EXPECT_EQ(s.context->value, 4096);
  EXPECT_EQ(s.concurrency->value, 4);
  EXPECT_EQ(s.gpu_layers->value, 99);
  EXPECT_TRUE(s.no_mmap && s.mlock);
}

TEST(CheckServer, ImageEntrypointWithFlagsOnly) {
  auto t = read_server(argv_container({"--model-id", "m", "--max-total-tokens", "8192", "--cuda-memory-fraction", "0.5"},
                                      "ghcr.io/huggingface/text-generation-inference:3.0"));
  EXPECT_EQ(t.server, Server::kTgi);
  EXPECT_EQ(t.context->value, 8192);
  EXPECT_DOUBLE_EQ(t.gpu_fraction->value, 0.5);
  auto l = read_server(argv_container({"-m", "/m.gguf", "--ctx-size", "4096"}, "ghcr.io/ggml-org/llama.cpp:server"));
  EXPECT_EQ(l.server, Server::kLlamaCpp);
  EXPECT_EQ(l.context->value, 4096);
}

TEST(CheckServer, EnvironmentSettingsOfTgiOllamaAndNode) {
  Container tgi = argv_container({}, "ghcr.io/huggingface/text-generation-inference:3.0");
  tgi.env = {{"MODEL_ID", {"m", {}}}, {"MAX_TOTAL_TOKENS", {"4096", {}}}, {"MAX_CONCURRENT_REQUESTS", {"8", {}}}};
  auto t = read_server(tgi);
  EXPECT_EQ(t.server, Server::kTgi);
  EXPECT_EQ(t.model->value, "m");
  EXPECT_EQ(t.context->value, 4096);
  EXPECT_EQ(t.concurrency->value, 8);
  Container ollama = argv_container({}, "ollama/ollama:0.6.2");
  ollama.env = {{"OLLAMA_NUM_PARALLEL", {"4", {}}}, {"OLLAMA_CONTEXT_LENGTH", {"8192", {}}},
                {"OLLAMA_MAX_LOADED_MODELS", {"2", {}}}};
  auto o = read_server(ollama);
  EXPECT_EQ(o.server, Server::kOllama);
  EXPECT_EQ(o.concurrency->value, 4);
  EXPECT_EQ(o.context->value, 8192);
  EXPECT_EQ(o.max_loaded_models->value, 2);
  Container node = argv_container({"node", "app.js"});
  node.env = {{"NODE_OPTIONS", {"--enable-source-maps --max-old-space-size=3072", {}}}};
  EXPECT_EQ(read_server(node).node_heap->value, 3072 * units::MiB);
  EXPECT_EQ(read_server(argv_container({"node", "--max-old-space-size", "512", "a.js"})).node_heap->value, 512 * units::MiB);
}

// The server's quantization flag sizes the weights the plan uses: TGI's
// QUANTIZE / --quantize, vLLM's and SGLang's --quantization.
TEST(CheckServer, QuantizationFlagsAndEnvironment) {
  Container tgi = argv_container({}, "ghcr.io/huggingface/text-generation-inference:1.4.3");
  tgi.env = {{"MODEL_ID", {"mistralai/Mixtral-8x7B-Instruct-v0.1", {}}}, {"QUANTIZE", {"bitsandbytes-nf4", {}}}};
  auto t = read_server(tgi);
  ASSERT_TRUE(t.quantization);
  EXPECT_EQ(t.quantization->value, "bitsandbytes-nf4");
  auto v = read_server(argv_container({"vllm", "serve", "m", "--quantization", "awq"}));
  ASSERT_TRUE(v.quantization);
  EXPECT_EQ(v.quantization->value, "awq");
  auto g = read_server(argv_container({"python", "-m", "sglang.launch_server", "--model-path", "m", "--quantization", "fp8"}));
  ASSERT_TRUE(g.quantization);
  EXPECT_EQ(g.quantization->value, "fp8");
  EXPECT_FALSE(read_server(argv_container({"vllm", "serve", "m"})).quantization);
}

TEST(CheckServer, UnreadableValueIsAProblemNotACrash) {
  auto s = read_server(argv_container({"vllm", "serve", "m", "--max-model-len", "lots", "--max-num-seqs"}));
  EXPECT_FALSE(s.context);
  EXPECT_EQ(s.problems.size(), 2u);
}

TEST(CheckShell, WordsQuotesAndOperators) {
  EXPECT_EQ(shell_words(R"(a 'b c' "d \"e\"" f\ g && h;i)"),
            (std::vector<std::string>{"a", "b c", "d \"e\"", "f g", "&&", "h", ";", "i"}));
  EXPECT_EQ(shell_words("x \\\n  y # comment"), (std::vector<std::string>{"x", "y"}));
  // A newline ends a command as ';' does (a script in a `sh -c |` block).
  EXPECT_EQ(shell_words("apt-get update # refresh\npython -m vllm.entrypoints.openai.api_server"),
            (std::vector<std::string>{"apt-get", "update", ";", "python", "-m", "vllm.entrypoints.openai.api_server"}));
}

TEST(CheckServer, ScriptWithTheServerOnALaterLine) {
  auto s = read_server(argv_container({"/bin/bash", "-exc",
                                       "apt-get update\npip install -U pip\npython -m vllm.entrypoints.openai.api_server \\\n"
                                       "  --model meta-llama/Llama-3.1-8B-Instruct \\\n  --max-model-len 4096\n"}));
  EXPECT_EQ(s.server, Server::kVllm);
  ASSERT_TRUE(s.model && s.context);
  EXPECT_EQ(s.model->value, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(s.context->value, 4096);
}

TEST(CheckServer, PipelineParallelStages) {
  auto v = read_server(argv_container({"vllm", "serve", "m", "--tensor-parallel-size", "8", "--pipeline_parallel_size", "2"}));
  ASSERT_TRUE(v.tp && v.pp);
  EXPECT_EQ(v.pp->value, 2);
  auto g = read_server(argv_container({"python3", "-m", "sglang.launch_server", "--model-path", "m", "--pp-size", "4"}));
  ASSERT_TRUE(g.pp);
  EXPECT_EQ(g.pp->value, 4);
}

// Kubernetes expands $(VAR) in command and args from the container's env.
TEST(CheckInputs, EnvReferencesInArgsAreExpanded) {
  auto r = check_inputs({{"e.yaml", R"Y(kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: vllm
    image: vllm/vllm-openai:v0.10.1
    command: ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    args: ["--model=$(MODEL_ID)", "--max-model-len=$(CTX)", "--served-model-name=$$(KEPT)"]
    env:
    - {name: MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}
    - {name: CTX, value: "8192"}
    resources:
      limits: {memory: 2Gi}
)Y"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  // The model is known, so the 2 GiB limit is checked against its load peak.
  bool below = false;
  for (const Finding& f : r->violations)
    if (f.rule == "limit-below-load-peak") below = f.message.find("meta-llama/Llama-3.1-8B-Instruct") != std::string::npos;
  EXPECT_TRUE(below);
}

// KServe's InferenceService (containers, or the `model:` container) and
// (Cluster)ServingRuntime, and a LeaderWorkerSet's two templates.
TEST(CheckInputs, KserveAndLeaderWorkerSetAreRead) {
  auto r = check_inputs({{"k.yaml", R"(apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: isvc}
spec:
  predictor:
    model:
      modelFormat: {name: huggingface}
      image: vllm/vllm-openai:v0.10.1
      args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
---
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: rt}
spec:
  containers:
  - name: kserve-container
    image: lmsysorg/sglang:v0.5.14
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: lws}
spec:
  leaderWorkerTemplate:
    leaderTemplate:
      spec:
        containers:
        - name: leader
          image: vllm/vllm-openai:v0.10.1
          command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct]
          resources: {limits: {memory: 64Gi}}
    workerTemplate:
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.10.1
          command: [vllm, serve, meta-llama/Llama-3.1-8B-Instruct, --headless]
          resources: {limits: {memory: 64Gi}}
)"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::multiset<std::string> memless, ungated;
  for (const Finding& f : r->violations) {
    if (f.rule == "no-memory-limit") memless.insert(f.message);
    if (f.rule == "readiness-not-gated") ungated.insert(f.message);
  }
  ASSERT_EQ(memless.size(), 2u);
  EXPECT_NE(memless.begin()->find("ClusterServingRuntime 'rt'"), std::string::npos) << *memless.begin();
  EXPECT_NE(std::next(memless.begin())->find("container 'kserve-container' of InferenceService 'isvc'"),
            std::string::npos);
  // The leader serves and has no probe; the worker serves no request.
  std::string all;
  for (const auto& m : ungated) all += m + "\n";
  EXPECT_NE(all.find("LeaderWorkerSet 'lws (leader)'"), std::string::npos) << all;
  EXPECT_EQ(all.find("lws (worker)"), std::string::npos) << all;
}

TEST(CheckUnits, DockerSystemdAndDurations) {
  EXPECT_EQ(parse_docker_size("512m"), 512 * units::MiB);
  EXPECT_EQ(parse_docker_size("16g"), 16 * units::GiB);
  EXPECT_EQ(parse_docker_size("1gb"), units::GiB);
  EXPECT_EQ(parse_docker_size("1073741824"), units::GiB);
  EXPECT_FALSE(parse_docker_size("lots"));
  EXPECT_EQ(parse_systemd_size("12G"), 12 * units::GiB);
  EXPECT_FALSE(parse_systemd_size("50%"));
  EXPECT_DOUBLE_EQ(*parse_duration_s("1m30s"), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_s("1min 30s"), 90);
  EXPECT_DOUBLE_EQ(*parse_duration_s("45"), 45);
  EXPECT_FALSE(parse_duration_s("soon"));
}

TEST(CheckSystemd, UnitKeysContinuationAndErrors) {
  auto r = read_systemd("[Service]\nExecStart=-/usr/bin/vllm serve m \\\n  --max-model-len 4096\nMemoryMax=8G\n"
                        "MemorySwapMax=1G\nTimeoutStopSec=1min 30s\nEnvironment=\"A=1\" B=2\n",
                        "x.service");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->workloads.size(), 1u);
  const Container& c = r->workloads[0].containers[0];
  EXPECT_EQ(c.argv.size(), 5u);
  EXPECT_EQ(c.argv[0].text, "/usr/bin/vllm");
  EXPECT_EQ(c.mem_limit->value, 8 * units::GiB);
  EXPECT_EQ(c.mem_limit->at.line, 4);
  EXPECT_EQ(c.mem_limit->at.column, 11);
  EXPECT_EQ(c.swap_limit->value, int64_t(units::GiB));
  EXPECT_DOUBLE_EQ(r->workloads[0].grace_s->value, 90);
  ASSERT_NE(c.env_var("B"), nullptr);
  EXPECT_EQ(c.env_var("A")->text, "1");
  auto bad = read_systemd("[Service]\nthis is not a key\n", "y.service");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("y.service:2:1"), std::string::npos) << bad.error().message;
}

TEST(CheckInputs, MalformedYamlNamesFileAndLine) {
  auto r = check_inputs({{"bad.yaml", "kind: Pod\nspec:\n  containers: [\n    - name: x\n"}}, {}, Policy{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("bad.yaml:"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("malformed YAML"), std::string::npos) << r.error().message;
  auto tab = check_inputs({{"t.yaml", "kind: Pod\nmetadata:\n\tname: x\n"}}, {}, Policy{});
  ASSERT_FALSE(tab.ok());
  EXPECT_NE(tab.error().message.find("t.yaml:3:"), std::string::npos) << tab.error().message;
}

TEST(CheckInputs, UnknownKindIsANoteAndNotAFailure) {
  auto r = check_inputs({{"k.yaml", "apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: x}\n"
                                    "---\nkind: Service\nmetadata: {name: s}\n---\n- just\n- a list\n"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(r->violations.empty());
  EXPECT_EQ(r->exit_code(), 0);
  ASSERT_EQ(r->notes.size(), 2u);  // the unknown kind and the sequence; the Service is silently not a workload
  EXPECT_NE(r->notes[0].message.find("RayService"), std::string::npos);
  EXPECT_EQ(r->notes[0].at.line, 2);
}

TEST(CheckInputs, KubectlListItemsAreRead) {
  auto r = check_inputs({{"l.yaml", R"(apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: StatefulSet
  metadata: {name: a}
  spec:
    template:
      spec:
        containers:
        - name: a
          image: busybox
- apiVersion: batch/v1
  kind: CronJob
  metadata: {name: b}
  spec:
    jobTemplate:
      spec:
        template:
          spec:
            containers:
            - name: b
              image: busybox
)"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->violations.size(), 2u);
  EXPECT_EQ(r->violations[0].rule, "no-memory-limit");
  EXPECT_EQ(r->violations[0].at.line, 11);
  EXPECT_EQ(r->violations[1].at.line, 22);
}

// "Billion laughs": nine levels of nine aliases expand to 9^9 nodes; the
// walk stops at the node cap with an error instead of running for hours.
TEST(CheckInputs, AliasBombIsRefused) {
  std::string bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    std::string prev(1, char(c - 1));
    bomb += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}, *{1}]\n", std::string(1, c), prev);
  }
  bomb += "kind: Pod\n";
  auto r = check_inputs({{"bomb.yaml", bomb}}, {}, Policy{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("alias"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("bomb.yaml:1:1"), std::string::npos) << r.error().message;
  // The same shape a few levels deep is ordinary YAML.
  auto small = load_yaml_documents("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "ok.yaml");
  EXPECT_TRUE(small.ok());
}

// The cap holds for the file, not each document: twelve documents that each
// repeat ~400,000 nodes through aliases (a fuzzer's input of this shape ran
// past its 10 s limit when each document had a cap of its own) are refused
// at the document that passes it, the third.
TEST(CheckInputs, AliasBombsSpreadOverDocumentsAddUp) {
  std::string doc = "a: &a [x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c)
    doc += fmt::format("{0}: &{0} [*{1}, *{1}, *{1}]\n", std::string(1, c), std::string(1, char(c - 1)));
  std::string file;
  for (int i = 0; i < 12; ++i) file += (i ? "---\n" : "") + doc;
  auto one = load_yaml_documents(doc, "one.yaml");
  EXPECT_TRUE(one.ok()) << one.error().message;  // one of them alone is not refused
  auto all = load_yaml_documents(file, "many.yaml");
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message.find("many.yaml:25:1: YAML document 3 takes the file past 1000000 nodes repeated"),
            std::string::npos)
      << all.error().message;
  // Documents without aliases are no bomb however many nodes they hold
  // together: 40 of 3,004 nodes each against a cap of 10,000.
  std::string list, plain;
  for (int i = 0; i < 3000; ++i) list += "1,";
  for (int i = 0; i < 40; ++i) plain += "---\nkind: ConfigMap\ndata: [" + list + "1]\n";
  auto big = load_yaml_documents(plain, "plain.yaml", 10000);
  EXPECT_TRUE(big.ok()) << big.error().message;
  if (big.ok()) {
    EXPECT_EQ(big->size(), 40u);
  }
}

TEST(CheckInputs, TooLargeIsRefusedBeforeParsing) {
  std::string huge(kMaxFileBytes + 1, '#');
  auto r = check_inputs({{"huge.yaml", huge}}, {}, Policy{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("huge.yaml"), std::string::npos);
  EXPECT_NE(r.error().message.find("MiB"), std::string::npos);
  // Under the size cap but with millions of nodes: refused before yaml-cpp
  // allocates them.
  std::string many = "[";
  for (int i = 0; i < 1100000; ++i) many += "1,";
  many += "1]";
  auto n = check_inputs({{"many.yaml", many}}, {}, Policy{});
  ASSERT_FALSE(n.ok());
  EXPECT_NE(n.error().message.find("YAML values in one document, more than the 40000"), std::string::npos) << n.error().message;
}

TEST(CheckInputs, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep(100000, '[');
  auto r = check_inputs({{"deep.yaml", deep}}, {}, Policy{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("deep.yaml:1:128: nested too deep (limit 128)"), std::string::npos) << r.error().message;
}

const char* kSuppressed = R"(# aimem: ignore no-graceful-drain because batch jobs finish before a rollout
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  template:
    spec:
      containers:
      # aimem: ignore no-memory-limit because the namespace LimitRange sets it
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        readinessProbe: {httpGet: {path: /health, port: 8000}}
        resources:
          limits: {nvidia.com/gpu: "1"}  # aimem: ignore gpu-without-host-memory
      - name: sidecar  # aimem: ignore no-memory-limit because
        image: busybox
---
kind: Deployment
metadata: {name: other}
spec:
  template:
    spec: {containers: [{name: vllm, image: "vllm/vllm-openai:v0.10.1", readinessProbe: {httpGet: {path: /health, port: 8000}}, resources: {limits: {memory: 24Gi}}}]}
)";

TEST(CheckSuppress, LineAboveSameLineAndDocumentHeader) {
  auto r = check_inputs({{"s.yaml", kSuppressed}}, {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::map<std::string, int> suppressed;
  for (const Finding& f : r->suppressed) {
    ++suppressed[f.rule];
    EXPECT_FALSE(f.suppressed_because.empty());
  }
  EXPECT_EQ(suppressed["no-memory-limit"], 1);     // line above the vllm container
  EXPECT_EQ(suppressed["no-graceful-drain"], 1);   // the first document's header
  std::vector<std::string> left;
  for (const Finding& f : r->violations) left.push_back(fmt::format("{}@{}", f.rule, f.at.line));
  // Without a reason nothing is suppressed, and the suppression itself is reported.
  EXPECT_NE(std::find(left.begin(), left.end(), "gpu-without-host-memory@15"), left.end()) << fmt::format("{}", fmt::join(left, " "));
  EXPECT_NE(std::find(left.begin(), left.end(), "invalid-suppression@15"), left.end());
  EXPECT_NE(std::find(left.begin(), left.end(), "no-memory-limit@16"), left.end());
  EXPECT_NE(std::find(left.begin(), left.end(), "invalid-suppression@16"), left.end());
  // The header of the first document does not reach the second.
  EXPECT_NE(std::find(left.begin(), left.end(), "no-graceful-drain@23"), left.end());
}

TEST(CheckSuppress, UnknownRuleIsReported) {
  auto s = parse_suppressions("x: 1  # aimem: ignore no-such-rule because reasons\n", "f.yaml");
  EXPECT_TRUE(s.items.empty());
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_EQ(s.problems[0].rule, "invalid-suppression");
  EXPECT_EQ(s.problems[0].at.line, 1);
}

TEST(CheckCompose, ServicesMemoryGpusAndHealth) {
  auto r = check_inputs({{"c.yaml", R"(services:
  llm:
    image: ollama/ollama:0.6.2
    environment: ["OLLAMA_NUM_PARALLEL=8"]
    deploy:
      resources:
        limits: {memory: 16G}
        reservations:
          memory: 4G
          devices: [{driver: nvidia, count: 1, capabilities: [gpu]}]
    stop_grace_period: 2m
)"}},
                        {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::set<std::string> rules;
  for (const Finding& f : r->violations) rules.insert(f.rule);
  EXPECT_EQ(rules, (std::set<std::string>{"request-below-limit", "readiness-not-gated"}));
}

}  // namespace
}  // namespace aimem::check

namespace aimem::check {
namespace {

// The GPU type named only by a toleration (a node pool tainted by product)
// is enough for the KV budget: the rule is evaluated, not noted as unknown.
TEST(CheckInputs, AGpuTypeInATolerationSizesTheKvBudget) {
  const std::string manifest = R"(apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  template:
    spec:
      tolerations:
      - {key: nvidia.com/gpu.product, operator: Equal, value: NVIDIA-L4, effect: NoSchedule}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct", "--max-model-len", "131072"]
        resources:
          limits: {memory: 24Gi, nvidia.com/gpu: "1"}
)";
  auto r = check_inputs({{"tol.yaml", manifest}}, {}, Policy{});
  ASSERT_TRUE(r.ok()) << r.error().message;
  bool fired = false;
  for (const auto& v : r->violations) fired |= v.rule == "kv-over-budget";
  EXPECT_TRUE(fired);
  for (const auto& n : r->notes) EXPECT_NE(n.rule, "kv-over-budget") << n.message;
}

}  // namespace
}  // namespace aimem::check
