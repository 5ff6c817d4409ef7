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
  k_k_idxs_s,
  k_v_idxs_s,
  k_kq_mask_s,
  k_rlogits,
  k_argsort,
  k_weights,
  k_wsum,
  k_wclamp,
  k_experts,
  k_moe_out,
  k_sh_gate,
  k_sh_up,
  k_sh_glu,
  k_sh_out,
  k_sh_ginp,
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

// Kept whole: it allocates the worst-case graph's tensors in llama.cpp's node
// order (llm_graph_context's build_inp_*, build_attn, build_ffn, the output),
// one call per upstream tensor, so the order that decides the peak can be read
// line by line against upstream; cut into steps, the live tensors crossing
// them would be passed around.
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
  // llama_kv_cache_iswa: the SWA cache's own indices and mask (build_attn_inp_kv_iswa)
  auto is_swa = [&](uint64_t il) { return g.n_kv_swa && il < g.swa.size() && g.swa[il]; };
  uint64_t last_full = 0, last_swa = 0;
  bool any_swa = false;
  for (uint64_t il = 0; il < L; ++il) {
    if (is_swa(il)) last_swa = il, any_swa = true;
    else last_full = il;
  }
  if (any_swa) {
    a.alloc(k_k_idxs_s, 8 * T);
    a.alloc(k_v_idxs_s, FA ? 8 * T : 8 * Ekv * T);
    a.alloc(k_kq_mask_s, g.n_kv_swa * T * (FA ? 2 : 4));
  }
  a.alloc(k_out_ids, 4 * std::max<uint64_t>(n_out, 1));
  a.alloc(k_res, 4 * E * T);
  a.free(k_inp_tokens);
  for (uint64_t il = 0; il < L; ++il) {
    const bool last = il == L - 1, swa = is_swa(il);
    const bool last_b = any_swa ? il == last_full && !swa : last;  // the base cache's inputs die here
    const bool last_s = any_swa && il == last_swa;                 // the SWA cache's inputs die here
    const uint64_t n_kv_l = swa ? g.n_kv_swa : n_kv;
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
    if (last_b) a.free(k_k_idxs);
    if (last_s) a.free(k_k_idxs_s);
    a.free(k_v);
    if (last_b) a.free(k_v_idxs);
    if (last_s) a.free(k_v_idxs_s);
    if (FA) {
      a.alloc(k_att, 4 * Eq * T);
      a.free(k_q);
      if (last_b) a.free(k_kq_mask);
      if (last_s) a.free(k_kq_mask_s);
      if (vrot) {
        a.alloc(k_att_h, 4 * Eq * T); a.free(k_att); a.rename(k_att_h, k_att);
        if (last) a.free(k_v_rot);
      }
    } else {
      a.alloc(k_kq, 4 * n_kv_l * T * g.n_head);
      a.free(k_q);
      if (last_b) a.free(k_kq_mask);
      if (last_s) a.free(k_kq_mask_s);
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
    if (g.n_expert) {
      // build_moe_ffn (src/llama-graph.cpp): router logits, softmax in place,
      // argsort (its first n_expert_used columns select), the selected
      // weights (normalised: sum_rows, clamp, div in place), then up, gate,
      // the GLU and down over n_expert_used columns, weighted in place, and
      // the columns added into a new tensor (the first add; the rest in place).
      const uint64_t NE = g.n_expert, K = std::max<uint64_t>(1, g.n_expert_used), FE = g.n_ff_exp;
      a.alloc(k_rlogits, 4 * NE * Tn);
      a.alloc(k_argsort, 4 * NE * Tn);
      a.alloc(k_weights, 4 * K * Tn);
      a.free(k_rlogits);
      if (g.norm_w) {
        a.alloc(k_wsum, 4 * Tn);
        a.alloc(k_wclamp, 4 * Tn);
        a.free(k_wsum);
        a.free(k_wclamp);
      }
      a.alloc(k_up, 4 * FE * K * Tn);
      a.alloc(k_gate, 4 * FE * K * Tn);
      if (!g.n_ff_shexp) a.free(k_norm);
      a.alloc(k_swiglu, 4 * FE * K * Tn);
      a.free(k_gate);
      a.free(k_up);
      a.alloc(k_experts, 4 * E * K * Tn);
      a.free(k_argsort);
      a.free(k_swiglu);
      a.free(k_weights);
      if (K > 1) {
        a.alloc(k_moe_out, 4 * E * Tn);
        a.free(k_experts);
      } else {
        a.alloc(k_moe_out, 4 * E * Tn);  // ggml_cont of the one column
        a.free(k_experts);
      }
      if (g.n_ff_shexp) {  // the shared expert (build_ffn) and its sigmoid gate
        const uint64_t FS = g.n_ff_shexp;
        a.alloc(k_sh_up, 4 * FS * Tn);
        a.alloc(k_sh_gate, 4 * FS * Tn);
        if (!g.shexp_gate) a.free(k_norm);
        a.alloc(k_sh_glu, 4 * FS * Tn);
        a.free(k_sh_gate);
        a.free(k_sh_up);
        a.alloc(k_sh_out, 4 * E * Tn);
        a.free(k_sh_glu);
        if (g.shexp_gate) {
          a.alloc(k_sh_ginp, 4 * Tn);
          a.free(k_norm);
          a.free(k_sh_ginp);  // sigmoid and the mul in place
        }
        a.free(k_sh_out);  // added into moe_out in place
      }
      a.rename(k_moe_out, k_res);
      a.free(k_ffn_inp);
      continue;
    }
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
