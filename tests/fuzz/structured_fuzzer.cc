// libFuzzer target for the readers of YAML and JSON files users give aimem:
// `aimem check`'s deployment files, the policy of check/rules, watch's
// --config, the limits file of probe --save-limits, and the bounded reader
// under them all (core/doc_reader.h). A hostile file must give a result or an
// error, never a crash, a hang, an escaping exception or memory past the
// reader's bounds.
//   clang build:  cmake -DAIMEM_FUZZ=ON -DCMAKE_CXX_COMPILER=clang++ ...; ./structured_fuzzer structured_corpus/
//   every build:  the `structured_corpus_replay` test runs the seeds through it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "check/check.h"
#include "check/policy.h"
#include "core/doc_reader.h"
#include "probe/limits.h"
#include "watch/watch_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto report = aimem::check::check_inputs({{"fuzz.yaml", text}}, {}, aimem::check::Policy{});
  (void)report;
  auto policy = aimem::check::parse_policy(text, "fuzz-policy.yaml");
  (void)policy;
  aimem::watch::WatchOptions options;
  auto config = aimem::watch::apply_watch_config(text, "fuzz-config.yaml", options);
  (void)config;
  auto limits = aimem::probe::limits_from_json(text, "fuzz-limits.json");
  (void)limits;
  auto json = aimem::doc::parse_json(text, "fuzz.json");
  (void)json;
  auto checked_json = aimem::doc::check_json(text, "fuzz.json");
  auto checked_yaml = aimem::doc::check_yaml(text, "fuzz.yaml");
  (void)checked_json;
  (void)checked_yaml;
  return 0;
}
