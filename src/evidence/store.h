// FactStore: the sink every source writes to. Bounded, so that a log with a
// million OOM lines cannot make aimem itself run out of memory: failures and
// each kind of context fact have caps, and what is dropped is counted.
#pragma once

#include <array>
#include <vector>

#include "evidence/sink.h"

namespace aimem {

class FactStore final : public FactSink {
 public:
  static constexpr size_t kMaxFailures = 4000;
  static constexpr size_t kMaxPerContextKind = 400;

  void add(Fact fact) override;

  std::vector<Fact>& facts() { return facts_; }
  const std::vector<Fact>& facts() const { return facts_; }
  uint64_t dropped() const { return dropped_; }

 private:
  std::vector<Fact> facts_;
  size_t failures_ = 0;
  std::array<size_t, 64> per_kind_{};
  uint64_t dropped_ = 0;
};

}  // namespace aimem
