// Engine versions as data: one table per runtime, one row per set of releases
// that size memory the same way. Each row cites the upstream files (and the
// release) its numbers were read from; plan_vllm, plan_sglang and plan_hf read
// the row instead of hard-coding one version's behaviour. `--runtime vllm@0.6`
// picks a row; `fit --against LOG` picks it from the version the log prints.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <fmt/format.h>

#include "core/text.h"
#include "fit/runtime.h"

namespace aimem::fit {
namespace {

EngineRules vllm_row(const char* version, const char* covers, const char* label, const char* source) {
  EngineRules r;
  r.runtime = Runtime::kVllm;
  r.version = version;
  r.covers = covers;
  r.label = label;
  r.source = source;
  return r;
}

// TGI's rows: the warm-up's arithmetic by release.
void add_tgi_rows(std::vector<EngineRules>& t) {
  EngineRules tgi1;
  tgi1.runtime = Runtime::kTgi;
  tgi1.version = "1";
  tgi1.covers = "0.9-1.0";
  tgi1.label = "TGI 0.9-1.0 (max_batch_total_tokens from the warm-up, all free memory)";
  tgi1.source =
      "huggingface/text-generation-inference v1.0: server/text_generation_server/models/flash_causal_lm.py "
      "warmup (free = mem_get_info - (1 - MEMORY_FRACTION) x total; num_blocks = free // (16 x per-token KV "
      "bytes x layers) + the warm-up batch's blocks; read after generate_token with no empty_cache, so the "
      "prefill's reserved blocks count) and generate_token (prefill logprobs: torch.log_softmax(out, -1), a copy), "
      "router/client/src/client.rs warmup (prefill_logprobs: true, so the lm_head runs over every prompt token), "
      "server/text_generation_server/utils/layers.py TensorParallelHead.forward (shards gather [vocab, tokens]), "
      "launcher max_batch_prefill_tokens default 4096";
  tgi1.block_size = 16;
  tgi1.wiggle_room = 1.0;
  tgi1.prefill_tokens = 4096;
  tgi1.logits_softmax_copy = true;
  t.push_back(tgi1);
  EngineRules tgi2;
  tgi2.runtime = Runtime::kTgi;
  tgi2.version = "2";
  tgi2.covers = "1.1-2.x";
  tgi2.label = "TGI 1.1-2.x (max_batch_total_tokens from the warm-up, 5% kept back)";
  tgi2.source =
      "huggingface/text-generation-inference v2.x: server/text_generation_server/models/flash_causal_lm.py "
      "warmup (num_blocks = free x TGI_WIGGLE_ROOM // (16 x per-token KV bytes x layers) + the warm-up batch's "
      "blocks; max_batch_total_tokens = num_blocks x 16), server/text_generation_server/utils/import_utils.py "
      "get_free_memory (free = mem_get_info - (1 - cuda_memory_fraction) x total), launcher "
      "max_batch_prefill_tokens default 4096; v1.1-v2.x flash_causal_lm.py generate_token (prefill logprobs: "
      "torch.log_softmax(out, -1), a copy, until huggingface/text-generation-inference#2661 made it in place), "
      "router/client/src/client.rs warmup (prefill_logprobs: true), v1.x utils/layers.py and v2.x "
      "layers/tensor_parallel.py TensorParallelHead.forward ([vocab/tp, tokens] slice all-gathered into "
      "[vocab, tokens]), utils/awq/quantize/qmodule.py and layers/awq/quantize/qmodule.py WQLinear "
      "(awq_inference_engine.gemm_forward_cuda with split_k_iters 8: llm-awq's kernel fills "
      "[8, tokens, out_features] and sums it)";
  tgi2.block_size = 16;
  tgi2.wiggle_room = 0.95;
  tgi2.prefill_tokens = 4096;
  tgi2.logits_softmax_copy = true;
  tgi2.awq_split_k = 8;
  t.push_back(tgi2);
  EngineRules tgi3 = tgi2;
  tgi3.version = "3";
  tgi3.covers = "3.x";
  tgi3.label = "TGI 3.x (max_batch_total_tokens from the warm-up, flashinfer blocks of 1)";
  tgi3.source =
      "huggingface/text-generation-inference v3.x: server/text_generation_server/models/flash_causal_lm.py "
      "warmup (the same arithmetic, BLOCK_SIZE 1 with flashinfer and prefix caching), "
      "server/text_generation_server/models/globals.py (BLOCK_SIZE, TGI_WIGGLE_ROOM 0.95); generate_token "
      "computes the prefill logprobs in place (torch.log_softmax(out, -1, out=out), "
      "huggingface/text-generation-inference#2661, in the files with prefill chunking); AWQ as 2.x (not re-read)";
  tgi3.block_size = 1;
  tgi3.logits_softmax_copy = false;
  t.push_back(tgi3);
}

const std::vector<EngineRules>& table() {
  static const std::vector<EngineRules> rows = [] {
    std::vector<EngineRules> t;
    // vLLM V0 (0.5.3-0.7; 0.8-0.9 with VLLM_USE_V1=0).
    EngineRules v0 = vllm_row(
        "0.6", "0.5.3-0.7 (V0 engine)", "vLLM V0 engine (0.5.3-0.7 rules: profile run at max_num_batched_tokens)",
        "vllm-project/vllm v0.6.x: vllm/config.py SchedulerConfig (max_num_batched_tokens = max(max_model_len, 2048) "
        "without chunked prefill, 512 with it), vllm/engine/arg_utils.py (chunked prefill on by default for "
        "max_model_len > 32K), vllm/worker/worker.py determine_num_available_blocks (KV = total x utilization - "
        "weights - activation peak - non-torch; '# GPU blocks' = KV // (16 x bytes per token)), "
        "vllm/worker/model_runner.py profile_run (max_num_seqs rows sampled with top_p 0.99, top_k vocab - 1), "
        "vllm/model_executor/layers/sampler.py _apply_top_k_top_p, vllm/model_executor/layers/logits_processor.py "
        "_gather_logits (logits gathered to the driver), vllm/executor/distributed_gpu_executor.py "
        "determine_num_available_blocks (min over workers)");
    v0.v1 = false;
    v0.chunked_auto_above = 32768;
    v0.chunked_batched = 512;
    v0.unchunked_min = 2048;
    // V0's forward peak grows with the whole profiled batch (one prefill of
    // up to max_model_len tokens): about 1.0 x the per-token intermediates
    // (corpus c03/c04: 2.07 and 2.99 GiB at 20000 and 29000 tokens on
    // Llama-3.1-8B). The sampler is read from the source, not fitted:
    // vllm/worker/model_runner.py profile_run samples max_num_seqs rows with
    // SamplingParams(top_p=0.99, top_k=vocab_size - 1), so
    // vllm/model_executor/layers/sampler.py Sampler.forward takes the
    // _apply_top_k_top_p path; per vocabulary entry it holds the model-dtype
    // logits (2 B), their fp32 copy (4), the sorted values (4) and int64
    // indices (8), the top-k mask (1), the softmax (4) and its cumsum (4), the
    // top-p mask (1) and the re-sorted logits (4): 32 bytes. Only the driver
    // samples (vllm/model_executor/layers/logits_processor.py _gather_logits:
    // tensor_model_parallel_gather to rank 0, "None may be returned for rank
    // > 0"), after the forward's activations are freed, and the engine keeps
    // the least of the workers' block counts (min over workers:
    // vllm/engine/llm_engine.py _init_cache up to 0.3,
    // vllm/executor/distributed_gpu_executor.py determine_num_available_blocks
    // from 0.4). The 0.2-0.3 sampler sorts the same way. Non-torch memory as
    // V0 printed it: 1.79 / 3.58 GiB on H100s at tp 1 / 2 (c01/c02), ~0.3 GiB
    // on PCIe and consumer GPUs whatever the tp (c03, c05, c12).
    v0.act_factor = 1.0;
    v0.sampler_bytes = 32;
    v0.sampler_on_driver = true;
    v0.act_fixed_mib = 0;
    v0.non_torch_mib = 1833;
    v0.non_torch_tp_mib = 3666;
    v0.non_torch_small_mib = 358;
    // vLLM V0 before long contexts turned chunked prefill on: the same
    // profiling, but no release before 0.5.3 enabled chunked prefill by
    // itself, so the profile run takes max(max_model_len, 2048) tokens at
    // once however long the context (vllm-project/vllm#6666, "Enable chunked
    // prefill by default for long context models", merged for v0.5.3).
    EngineRules v04 = v0;
    v04.version = "0.4";
    v04.covers = "0.2-0.5.2 (V0 engine)";
    v04.label = "vLLM V0 engine (0.2-0.5.2 rules: profile run at max(max_model_len, 2048), no chunked prefill by default)";
    v04.source =
        "vllm-project/vllm v0.2-v0.5.2: vllm/config.py SchedulerConfig (max_num_batched_tokens = max(max_model_len, "
        "2048) unless set), vllm/engine/arg_utils.py (enable_chunked_prefill off unless asked for; the >32K default "
        "arrived with vllm-project/vllm#6666 in v0.5.3), vllm/worker/worker.py determine_num_available_blocks";
    v04.chunked_auto_above = 0;
    t.push_back(v04);
    t.push_back(v0);
    // vLLM V1, before the hybrid KV cache manager.
    EngineRules v18 = vllm_row(
        "0.8", "0.8-0.9 (V1 engine)", "vLLM V1 engine (0.8-0.9 rules: chunked prefill always on, one KV group)",
        "vllm-project/vllm v0.8.x: vllm/engine/arg_utils.py _set_default_args_v1 (chunked prefill on, API-server "
        "max_num_batched_tokens 2048), vllm/v1/worker/gpu_worker.py determine_available_memory, "
        "vllm/v1/core/kv_cache_utils.py ('GPU KV cache size: N tokens' = blocks x 16)");
    v18.v1 = true;
    v18.chunked_batched = 2048;
    t.push_back(v18);
    // vLLM V1 with the hybrid KV cache manager and GPU-size defaults.
    EngineRules v111 = vllm_row(
        "0.11", "0.10-0.11 and later (V1 engine)",
        "vLLM V1 engine (0.10-0.11 rules: profile run, block_size 16, hybrid KV cache manager)",
        "vllm-project/vllm v0.10-v0.11: vllm/engine/arg_utils.py _set_default_args (API-server "
        "max_num_batched_tokens 8192 / max_num_seqs 1024 on GPUs >= 70 GiB, else 2048 / 256), "
        "vllm/v1/worker/gpu_worker.py determine_available_memory, vllm/v1/core/kv_cache_utils.py "
        "get_kv_cache_groups / get_num_blocks / _report_kv_cache_config");
    v111.v1 = true;
    v111.gpu_size_defaults = true;
    v111.hybrid_kv = true;
    t.push_back(v111);

    EngineRules sg;
    sg.runtime = Runtime::kSglang;
    sg.version = "0.4";
    sg.covers = "0.3-0.4";
    sg.label = "SGLang 0.4 (token pool from --mem-fraction-static)";
    sg.source =
        "sgl-project/sglang v0.4.x: python/sglang/srt/model_executor/model_runner.py profile_max_num_token "
        "(max_total_num_tokens = (free GiB after loading - total GiB x (1 - mem_fraction_static)) x 2^30 // "
        "(kv_heads/tp x head_dim x layers x 2 x dtype bytes)), python/sglang/srt/server_args.py __post_init__ "
        "(mem_fraction_static 0.88 / 0.87 / 0.85 / 0.81 / 0.79 for tp 1 / 2 / 4 / 8 / 16; chunked_prefill_size "
        "2048 under 25 GB of GPU memory, else 8192; page_size 1; cuda_graph_max_bs 160)";
    sg.block_size = 1;
    sg.mem_fraction_by_tp = true;
    sg.chunked_prefill_small = 2048;
    sg.chunked_prefill_big = 8192;
    sg.cuda_graph_max_bs = 160;
    t.push_back(sg);

    add_tgi_rows(t);
    return t;
  }();
  return rows;
}

// major.minor of "v0.6.4.post1", "0.11.0rc2", "2.4.1".
std::pair<int, int> major_minor(std::string_view s) {
  while (!s.empty() && !std::isdigit(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  int major = -1, minor = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), major);
  if (r.ec != std::errc()) return {-1, 0};
  if (r.ptr < s.data() + s.size() && *r.ptr == '.') std::from_chars(r.ptr + 1, s.data() + s.size(), minor);
  return {major, minor};
}

// The third number of "0.5.3.post1" (0 when absent).
int patch_of(std::string_view s) {
  size_t dot = s.find('.');
  if (dot == std::string_view::npos) return 0;
  dot = s.find('.', dot + 1);
  int patch = 0;
  if (dot != std::string_view::npos) std::from_chars(s.data() + dot + 1, s.data() + s.size(), patch);
  return patch;
}

}  // namespace

const EngineRules* engine_rules(Runtime r, std::string_view version) {
  const EngineRules* last = nullptr;
  for (const EngineRules& row : table()) {
    if (row.runtime != r) continue;
    if (!version.empty() && version == row.version) return &row;
    last = &row;
  }
  return version.empty() ? last : nullptr;
}

const EngineRules* engine_rules_for_release(Runtime r, std::string_view release) {
  auto [major, minor] = major_minor(release);
  if (major < 0) return engine_rules(r, "");
  switch (r) {
    case Runtime::kVllm:
      if (major == 0 && (minor < 5 || (minor == 5 && patch_of(release) < 3))) return engine_rules(r, "0.4");
      if (major == 0 && minor < 8) return engine_rules(r, "0.6");
      if (major == 0 && minor < 10) return engine_rules(r, "0.8");
      return engine_rules(r, "0.11");
    // TGI 1.1 moved the warm-up to mem_get_info and kept 5% of the free
    // memory back ("Leave 5% for some wiggle room", flash_causal_lm.py of the
    // 1.x releases with set_cache_manager and CUDA_GRAPHS): 1.1-1.4 size the
    // KV cache like 2.x, as the "2" row's covers says; 0.9-1.0 are row "1".
    case Runtime::kTgi:
      return engine_rules(r, major >= 3 ? "3" : major == 2 || (major == 1 && minor >= 1) ? "2" : "1");
    default: return engine_rules(r, "");
  }
}

std::string rule_versions(Runtime r) {
  std::string out;
  for (const EngineRules& row : table())
    if (row.runtime == r) out += (out.empty() ? "" : ", ") + std::string(row.version);
  return out;
}

Result<RuntimeSpec> parse_runtime_spec(std::string_view s) {
  size_t at = s.find('@');
  std::string_view name = s.substr(0, at);
  auto r = parse_runtime(name);
  if (!r) {
    return make_error(fmt::format("--runtime {}: expected llama.cpp, ollama, vllm, sglang, tgi, transformers or all "
                                    "(with a version for vllm, sglang and tgi: vllm@0.6, vllm@0.11)", s));
  }
  RuntimeSpec spec{*r, ""};
  if (at == std::string_view::npos) return spec;
  std::string_view v = s.substr(at + 1);
  std::string known = rule_versions(*r);
  if (known.empty()) {
    return make_error(fmt::format("--runtime {}: {} has no version rules; drop '@{}'", s, to_string(*r), v));
  }
  const EngineRules* row = engine_rules(*r, v);
  if (!row) row = engine_rules_for_release(*r, v);  // a release number ("0.6.4") maps to its row
  if (!row || major_minor(v).first < 0) {
    return make_error(fmt::format("--runtime {}: no rules for {} {}; known: {}", s, to_string(*r), v, known));
  }
  spec.version = row->version;
  return spec;
}

}  // namespace aimem::fit
