// The model plan a server's rules need (model_plan.cc).
#pragma once

#include <map>
#include <string>

#include "check/rules.h"
#include "fit/model.h"

namespace aimem::check {

class ModelCache {
 public:
  // `quant`: fit's --quant spelling ("" = as stored).
  Result<fit::ModelSpec> load(const std::string& name, const std::string& quant = "");

 private:
  std::map<std::string, Result<fit::ModelSpec>> cache_;
};

PlanInfo plan_for(const Workload& w, const Container& c, const ServerConfig& cfg, const Policy& policy,
                  ModelCache& models);

}  // namespace aimem::check
