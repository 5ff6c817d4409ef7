// Whole structured documents among the inputs: `docker inspect` JSON (object or
// array), its `--format '{{json .HostConfig.Memory}}'` output (a bare number),
// `kubectl get pod -o json|yaml` (a Pod or a List), `kubectl get events -o
// json`, `nvidia-smi -q -x` XML. Line recognizers already see these inputs
// line by line; the document reader adds what only the structure tells: which
// container a limit belongs to, which container was OOM-killed.
#pragma once

#include <string>
#include <string_view>

#include "evidence/line.h"
#include "evidence/sink.h"

namespace aimem {

struct DocumentResult {
  bool recognized = false;  // the input was one of the documents above
  std::string problem;      // a document that looked structured but did not parse ("line 12: ...")
};

// `content` is the whole input (small: under 64 KiB).
DocumentResult read_document(std::string_view content, const SourceContext& source, FactSink& sink);

}  // namespace aimem
