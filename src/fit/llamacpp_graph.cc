// The compute buffer llama.cpp reserves, by replaying its graph allocator.
// ggml-alloc (ggml/src/ggml-alloc.c, ggml_dyn_tallocr) sizes the buffer as the
// high-water mark of a best-fit allocator over the worst-case graph's nodes,
// with in-place reuse and frees after each tensor's last consumer. Because of
// fragmentation no closed form matches it, so this replays the same
// allocator over the same node order as the llama graph builder
// (src/models/llama.cpp, build_attn in src/llama-graph.cpp) of the llama.cpp
// build node-llama-cpp 3.22.1 bundles. docs/fit-llamacpp.md derives it and
// shows it equal to the logged "CPU compute buffer size" to the printed
// precision on 264 configurations. Written by hand because no library models
// ggml's allocator.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "fit/runtime.h"

namespace aimem::fit {
namespace {

class Replay {
 public:
  explicit Replay(uint64_t align) : align_(align) { blocks_.push_back({0, uint64_t(1) << 62}); }

  void alloc(const std::string& name, uint64_t size) {
    size = (size + align_ - 1) / align_ * align_;
    // Best fit among all but the open tail; ties go to the later block.
    int best = -1;
    uint64_t best_size = 0;
    for (size_t i = 0; i + 1 < blocks_.size(); ++i) {
      if (blocks_[i].size >= size && (best < 0 || blocks_[i].size <= best_size)) {
        best = int(i);
        best_size = blocks_[i].size;
      }
    }
    if (best < 0) best = int(blocks_.size()) - 1;
    Block& b = blocks_[best];
    uint64_t off = b.off;
    b.off += size;
    b.size -= size;
    if (b.size == 0) blocks_.erase(blocks_.begin() + best);
    max_ = std::max(max_, off + size);
    live_[name] = {off, size};
  }

  void free(const std::string& name) {
    auto it = live_.find(name);
    if (it == live_.end()) return;
    Block t = it->second;
    live_.erase(it);
    auto& b = blocks_;
    for (size_t i = 0; i < b.size(); ++i) {
      if (b[i].off + b[i].size == t.off) {  // append, maybe join the next
        b[i].size += t.size;
        if (i + 1 < b.size() && b[i].off + b[i].size == b[i + 1].off) {
          b[i].size += b[i + 1].size;
          b.erase(b.begin() + i + 1);
        }
        return;
      }
      if (t.off + t.size == b[i].off) {  // prepend, maybe join the previous
        b[i].off = t.off;
        b[i].size += t.size;
        if (i > 0 && b[i - 1].off + b[i - 1].size == b[i].off) {
          b[i - 1].size += b[i].size;
          b.erase(b.begin() + i);
        }
        return;
      }
    }
    size_t i = 0;
    while (i < b.size() && b[i].off < t.off) ++i;
    b.insert(b.begin() + i, t);
  }

  // An in-place op takes its parent's memory.
  void rename(const std::string& from, const std::string& to) {
    auto it = live_.find(from);
    if (it == live_.end()) return;
    Block t = it->second;
    live_.erase(it);
    live_[to] = t;
  }

  uint64_t peak() const { return max_; }

 private:
  struct Block {
    uint64_t off, size;
  };
  uint64_t align_;
  std::vector<Block> blocks_;
  std::map<std::string, Block> live_;
  uint64_t max_ = 0;
};

}  // namespace

uint64_t llamacpp_graph_replay(const GraphShape& g) {
  const uint64_t E = g.n_embd, FF = g.n_ff, V = g.n_vocab, L = std::max<uint64_t>(1, g.n_layer);
  const bool FA = g.flash_attn;
  const uint64_t Eq = g.n_head * g.head_dim, Ekv = g.n_head_kv * g.head_dim;
  const uint64_t T0 = std::max<uint64_t>(1, g.n_ubatch), nseq = std::max<uint64_t>(1, g.n_seq);
  const uint64_t T = (T0 + nseq - 1) / nseq * nseq;  // graph_reserve: a multiple of n_seqs
  const uint64_t n_out = g.has_output ? T0 : 0, n_kv = g.n_kv;
  const bool krot = g.k_quant && g.head_dim % 64 == 0;  // llama_kv_cache attn_rot_k
  const bool vrot = g.v_quant && g.head_dim % 64 == 0;
  Replay a(g.alignment);
  a.alloc("inp_tokens", 4 * T);
  a.alloc("inp_embd", 4 * E * T);
  if (krot) {
    uint64_t n = 64;
    while (g.head_dim % (2 * n) == 0) n *= 2;
    a.alloc("k_rot", 4 * n * n);
  }
  a.alloc("inp_pos", 4 * T);
  if (vrot) a.alloc("v_rot", 4 * 64 * 64);
  a.alloc("k_idxs", 8 * T);
  a.alloc("v_idxs", FA ? 8 * T : 8 * Ekv * T);
  a.alloc("kq_mask", n_kv * T * (FA ? 2 : 4));
  a.alloc("out_ids", 4 * std::max<uint64_t>(n_out, 1));
  a.alloc("res", 4 * E * T);
  a.free("inp_tokens");
  for (uint64_t il = 0; il < L; ++il) {
    const bool last = il == L - 1;
    a.alloc("norm", 4 * E * T);
    a.alloc("q_mm", 4 * Eq * T);
    a.alloc("q", 4 * Eq * T);
    a.free("q_mm");
    if (krot) { a.alloc("q_h", 4 * Eq * T); a.free("q"); a.rename("q_h", "q"); }
    a.alloc("v", 4 * Ekv * T);
    if (vrot) { a.alloc("v_h", 4 * Ekv * T); a.free("v"); a.rename("v_h", "v"); }
    a.alloc("k_mm", 4 * Ekv * T);
    a.free("norm");
    a.alloc("k", 4 * Ekv * T);
    a.free("k_mm");
    if (krot) {
      a.alloc("k_h", 4 * Ekv * T); a.free("k"); a.rename("k_h", "k");
      if (last) a.free("k_rot");
    }
    if (last) a.free("inp_pos");
    a.free("k");
    if (last) a.free("k_idxs");
    a.free("v");
    if (last) a.free("v_idxs");
    if (FA) {
      a.alloc("att", 4 * Eq * T);
      a.free("q");
      if (last) a.free("kq_mask");
      if (vrot) {
        a.alloc("att_h", 4 * Eq * T); a.free("att"); a.rename("att_h", "att");
        if (last) a.free("v_rot");
      }
    } else {
      a.alloc("kq", 4 * n_kv * T * g.n_head);
      a.free("q");
      if (last) a.free("kq_mask");
      a.alloc("kqv", 4 * Eq * T);
      a.free("kq");
      a.alloc("att", 4 * Eq * T);
      a.free("kqv");
    }
    a.alloc("attn_out", 4 * E * T);
    a.free("att");
    uint64_t Tn = T;
    if (last && n_out > 0) {  // get_rows(out_ids) on both branches
      a.alloc("r1", 4 * E * n_out);
      a.free("attn_out");
      a.alloc("r2", 4 * E * n_out);
      a.free("res");
      a.free("out_ids");
      a.rename("r1", "ffn_inp");
      a.free("r2");
      Tn = n_out;
    } else {
      a.rename("attn_out", "ffn_inp");
      a.free("res");
    }
    a.alloc("norm", 4 * E * Tn);
    a.alloc("gate", 4 * FF * Tn);
    a.alloc("up", 4 * FF * Tn);
    a.free("norm");
    a.alloc("swiglu", 4 * FF * Tn);
    a.free("gate");
    a.free("up");
    a.alloc("ffn_out", 4 * E * Tn);
    a.free("swiglu");
    a.rename("ffn_out", "res");
    a.free("ffn_inp");
  }
  if (n_out > 0) a.alloc("logits", 4 * V * n_out);
  return a.peak();
}

}  // namespace aimem::fit
