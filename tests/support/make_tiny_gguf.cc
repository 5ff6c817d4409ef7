// make_tiny_gguf: writes a tiny real llama-architecture GGUF (see
// support/tiny_model.h) for node scripts and `aimem probe` tests.
//   make_tiny_gguf --out PATH [--layers N] [--embd N] [--heads N] [--kv-heads N]
//                  [--ff N] [--vocab N] [--ctx-train N] [--type f32|f16|q8_0]
//                  [--seed N] [--tied]
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "support/tiny_model.h"

namespace {

int usage(const char* msg) {
  if (msg) std::fprintf(stderr, "make_tiny_gguf: %s\n", msg);
  std::fprintf(stderr,
               "usage: make_tiny_gguf --out PATH [--layers N] [--embd N] [--heads N] [--kv-heads N]\n"
               "                      [--ff N] [--vocab N] [--ctx-train N] [--type f32|f16|q8_0]\n"
               "                      [--seed N] [--tied]\n");
  return 2;
}

bool parse_u64(const std::string& s, uint64_t& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || s[0] == '-') return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  aimem::test::TinyModelOptions o;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return usage(nullptr), 0;
    if (a == "--tied") {
      o.tied_output = true;
      continue;
    }
    if (i + 1 >= argc) return usage((a + " needs a value").c_str());
    const std::string val = argv[++i];
    if (a == "--out") {
      out = val;
      continue;
    }
    if (a == "--type") {
      o.type = val;
      continue;
    }
    uint64_t n = 0;
    if (!parse_u64(val, n)) return usage((a + ": '" + val + "' is not a non-negative integer").c_str());
    if (a != "--seed" && n > 0xffffffffULL) return usage((a + ": " + val + " is too large").c_str());
    const auto n32 = static_cast<uint32_t>(n);
    if (a == "--layers") o.n_layer = n32;
    else if (a == "--embd") o.n_embd = n32;
    else if (a == "--heads") o.n_head = n32;
    else if (a == "--kv-heads") o.n_head_kv = n32;
    else if (a == "--ff") o.n_ff = n32;
    else if (a == "--vocab") o.n_vocab = n32;
    else if (a == "--ctx-train") o.n_ctx_train = n32;
    else if (a == "--seed") o.seed = n;
    else return usage(("unknown option " + a).c_str());
  }
  if (out.empty()) return usage("--out is required");
  auto r = aimem::test::write_tiny_model(o, out);
  if (!r) {
    std::fprintf(stderr, "make_tiny_gguf: %s\n", r.error().message.c_str());
    return 1;
  }
  return 0;
}
