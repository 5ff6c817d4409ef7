// FactSink: where facts go. Recognizers and sources write to one; the
// FactStore (store.h) is the one the commands keep.
#pragma once

#include "evidence/fact.h"

namespace aimem {

class FactSink {
 public:
  virtual ~FactSink() = default;
  virtual void add(Fact fact) = 0;
};

}  // namespace aimem
