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
#include <string>
#include <vector>

#include "fit/runtime.h"

namespace aimem::fit {
namespace {

enum Id : int {
  k_att,
  k_att_h,
  k_attn_out,
  k_ffn_inp,
  k_ffn_out,
  k_gate,
  k_inp_embd,
  k_inp_pos,
  k_inp_tokens,
  k_k,
  k_k_h,
  k_k_idxs,
  k_k_mm,
  k_k_rot,
  k_kq,
  k_kq_mask,
  k_kqv,
  k_logits,
  k_norm,
  k_out_ids,
  k_q,
  k_q_h,
  k_q_mm,
  k_r1,
  k_r2,
  k_res,
  k_swiglu,
  k_up,
  k_v,
  k_v_h,
  k_v_idxs,
  k_v_rot,
  kIdCount
};

class Replay {
 public:
  explicit Replay(uint64_t align) : align_(align) { blocks_.push_back({0, uint64_t(1) << 62}); }

  void alloc(Id name, uint64_t size) {
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
    alive_[name] = true;
  }

  void free(Id name) {
    if (!alive_[name]) return;
    alive_[name] = false;
    Block t = live_[name];
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
  void rename(Id from, Id to) {
    if (!alive_[from]) return;
    alive_[from] = false;
    live_[to] = live_[from];
    alive_[to] = true;
  }

  uint64_t peak() const { return max_; }

 private:
  struct Block {
    uint64_t off, size;
  };
  uint64_t align_;
  std::vector<Block> blocks_;
  Block live_[kIdCount] = {};
  bool alive_[kIdCount] = {};
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
  a.alloc(k_inp_tokens, 4 * T);
  a.alloc(k_inp_embd, 4 * E * T);
  if (krot) {
    uint64_t n = 64;
    while (g.head_dim % (2 * n) == 0) n *= 2;
    a.alloc(k_k_rot, 4 * n * n);
  }
  a.alloc(k_inp_pos, 4 * T);
  if (vrot) a.alloc(k_v_rot, 4 * 64 * 64);
  a.alloc(k_k_idxs, 8 * T);
  a.alloc(k_v_idxs, FA ? 8 * T : 8 * Ekv * T);
  a.alloc(k_kq_mask, n_kv * T * (FA ? 2 : 4));
  a.alloc(k_out_ids, 4 * std::max<uint64_t>(n_out, 1));
  a.alloc(k_res, 4 * E * T);
  a.free(k_inp_tokens);
  for (uint64_t il = 0; il < L; ++il) {
    const bool last = il == L - 1;
    a.alloc(k_norm, 4 * E * T);
    a.alloc(k_q_mm, 4 * Eq * T);
    a.alloc(k_q, 4 * Eq * T);
    a.free(k_q_mm);
    if (krot) { a.alloc(k_q_h, 4 * Eq * T); a.free(k_q); a.rename(k_q_h, k_q); }
    a.alloc(k_v, 4 * Ekv * T);
    if (vrot) { a.alloc(k_v_h, 4 * Ekv * T); a.free(k_v); a.rename(k_v_h, k_v); }
    a.alloc(k_k_mm, 4 * Ekv * T);
    a.free(k_norm);
    a.alloc(k_k, 4 * Ekv * T);
    a.free(k_k_mm);
    if (krot) {
      a.alloc(k_k_h, 4 * Ekv * T); a.free(k_k); a.rename(k_k_h, k_k);
      if (last) a.free(k_k_rot);
    }
    if (last) a.free(k_inp_pos);
    a.free(k_k);
    if (last) a.free(k_k_idxs);
    a.free(k_v);
    if (last) a.free(k_v_idxs);
    if (FA) {
      a.alloc(k_att, 4 * Eq * T);
      a.free(k_q);
      if (last) a.free(k_kq_mask);
      if (vrot) {
        a.alloc(k_att_h, 4 * Eq * T); a.free(k_att); a.rename(k_att_h, k_att);
        if (last) a.free(k_v_rot);
      }
    } else {
      a.alloc(k_kq, 4 * n_kv * T * g.n_head);
      a.free(k_q);
      if (last) a.free(k_kq_mask);
      a.alloc(k_kqv, 4 * Eq * T);
      a.free(k_kq);
      a.alloc(k_att, 4 * Eq * T);
      a.free(k_kqv);
    }
    a.alloc(k_attn_out, 4 * E * T);
    a.free(k_att);
    uint64_t Tn = T;
    if (last && n_out > 0) {  // get_rows(out_ids) on both branches
      a.alloc(k_r1, 4 * E * n_out);
      a.free(k_attn_out);
      a.alloc(k_r2, 4 * E * n_out);
      a.free(k_res);
      a.free(k_out_ids);
      a.rename(k_r1, k_ffn_inp);
      a.free(k_r2);
      Tn = n_out;
    } else {
      a.rename(k_attn_out, k_ffn_inp);
      a.free(k_res);
    }
    a.alloc(k_norm, 4 * E * Tn);
    a.alloc(k_gate, 4 * FF * Tn);
    a.alloc(k_up, 4 * FF * Tn);
    a.free(k_norm);
    a.alloc(k_swiglu, 4 * FF * Tn);
    a.free(k_gate);
    a.free(k_up);
    a.alloc(k_ffn_out, 4 * E * Tn);
    a.free(k_swiglu);
    a.rename(k_ffn_out, k_res);
    a.free(k_ffn_inp);
  }
  if (n_out > 0) a.alloc(k_logits, 4 * V * n_out);
  return a.peak();
}

}  // namespace aimem::fit
