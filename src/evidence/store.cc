#include "evidence/store.h"

namespace aimem {

void FactStore::add(Fact fact) {
  size_t k = static_cast<size_t>(fact.kind) % per_kind_.size();
  if (is_failure(fact.kind)) {
    if (failures_ >= kMaxFailures) {
      ++dropped_;
      return;
    }
    ++failures_;
  } else {
    if (per_kind_[k] >= kMaxPerContextKind) {
      ++dropped_;
      return;
    }
  }
  ++per_kind_[k];
  facts_.push_back(std::move(fact));
}

}  // namespace aimem
