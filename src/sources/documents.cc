#include "sources/documents.h"

#include "core/text.h"

namespace aimem {

DocumentResult read_document(std::string_view content, const SourceContext& source, FactSink& sink) {
  DocumentResult result;
  std::string_view t = text::trim(content);
  // `docker inspect NAME --format '{{json .HostConfig.Memory}}'` prints one
  // number: the container's memory limit in bytes (0 = none).
  if (!t.empty() && t.size() <= 20 && t.find_first_not_of("0123456789") == std::string_view::npos) {
    result.recognized = true;
    auto v = text::parse_u64(t);
    Line line{t, 1, {}, &source};
    Fact f = make_fact(line, FactKind::memory_limit, Family::docker);
    f.detail = "HostConfig.Memory";
    if (v && *v > 0) f.limit = *v;
    else f.detail = "HostConfig.Memory=0 (no limit)";
    sink.add(std::move(f));
  }
  return result;
}

}  // namespace aimem
