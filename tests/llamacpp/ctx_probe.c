// Loads a GGUF in the real llama.cpp that node-llama-cpp ships (its prebuilt
// libllama and CPU backends) and creates one context with settings that
// node-llama-cpp does not expose -- above all kv_unified = true, which its
// addon hard-codes to false (llama/addon/AddonContext.cpp) -- then frees it.
// llama.cpp's own log lines go to stdout, unchanged, for the test to parse.
//
//   ctx_probe BACKENDS_DIR MODEL.gguf N_CTX N_SEQ N_BATCH FLASH_ATTN(0|1) KV_UNIFIED(0|1)
//
// Built at test time against the llama.h of the same release (the source
// bundle node-llama-cpp ships, llama/gitRelease.bundle); see
// tests/fit/llamacpp_unified_test.cc. Exit 0 when the context was created.
#include <stdio.h>
#include <stdlib.h>

#include "ggml-backend.h"
#include "llama.h"

static void on_log(enum ggml_log_level level, const char* text, void* user) {
  (void)level;
  (void)user;
  fputs(text, stdout);
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: ctx_probe BACKENDS_DIR MODEL.gguf N_CTX N_SEQ N_BATCH FLASH_ATTN KV_UNIFIED\n");
    return 2;
  }
  llama_log_set(on_log, NULL);
  ggml_backend_load_all_from_path(argv[1]);
  llama_backend_init();
  struct llama_model_params mp = llama_model_default_params();
  mp.n_gpu_layers = 0;
  struct llama_model* model = llama_model_load_from_file(argv[2], mp);
  if (!model) {
    fprintf(stderr, "ctx_probe: loading %s failed\n", argv[2]);
    return 1;
  }
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)strtoul(argv[3], NULL, 10);
  cp.n_seq_max = (uint32_t)strtoul(argv[4], NULL, 10);
  cp.n_batch = cp.n_ubatch = (uint32_t)strtoul(argv[5], NULL, 10);
  cp.flash_attn_type = atoi(argv[6]) ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
  cp.kv_unified = atoi(argv[7]) != 0;
  cp.swa_full = false;  // llama-server's default (common_params), and node-llama-cpp's; the library default is true
  cp.n_threads = cp.n_threads_batch = 1;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) {
    fprintf(stderr, "ctx_probe: creating the context failed\n");
    llama_model_free(model);
    return 1;
  }
  llama_free(ctx);
  llama_model_free(model);
  fflush(stdout);
  return 0;
}
