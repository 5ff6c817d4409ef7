#include "check/check.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <fmt/format.h>

#include "check/model_plan.h"
#include "check/readers.h"
#include "check/suppress.h"
#include "check/yaml_doc.h"
#include "sources/deploy_files.h"

namespace aimem::check {

int Report::errors() const {
  return int(std::count_if(violations.begin(), violations.end(), [](const Finding& f) { return f.severity == Severity::kError; }));
}
int Report::warnings() const {
  return int(std::count_if(violations.begin(), violations.end(), [](const Finding& f) { return f.severity == Severity::kWarning; }));
}

namespace {

// One input into workloads (and reader notes), by its format.
Result<ReadResult> read_input(const Input& in) {
  if (looks_like_systemd(in.text, in.name)) {
    if (in.text.size() > kMaxFileBytes)
      return make_error(fmt::format("{}: {} bytes, more than the {} MiB aimem check reads from one file", in.name,
                                    in.text.size(), kMaxFileBytes >> 20));
    return read_systemd(in.text, in.name);
  }
  ReadResult out;
  auto docs = read_yaml_documents(in.text, in.name, [&](const YAML::Node& doc, int i) {
    if (looks_like_compose(doc)) read_compose(doc, in.name, out);
    else read_kubernetes(doc, in.name, i, out);
  });
  if (!docs) return docs.error();
  if (out.workloads.empty() && out.notes.empty())
    out.notes.push_back({Loc{in.name, 0, 0}, "nothing aimem check reads here (no workload, Compose service or unit)"});
  return out;
}

// At most one byte past the cap, so that too much is an error, not memory
// (a FIFO or /dev/zero has no size to check beforehand).
std::string read_bounded(std::istream& in) {
  std::string buf(kMaxFileBytes + 1, '\0');
  in.read(buf.data(), std::streamsize(buf.size()));
  buf.resize(size_t(in.gcount()));
  buf.shrink_to_fit();
  return buf;
}

bool before(const Loc& a, const Loc& b, const std::map<std::string, size_t>& order) {
  auto ia = order.count(a.file) ? order.at(a.file) : order.size();
  auto ib = order.count(b.file) ? order.at(b.file) : order.size();
  if (ia != ib) return ia < ib;
  if (a.line != b.line) return a.line < b.line;
  return a.column < b.column;
}

}  // namespace

Result<Report> check_inputs(const std::vector<Input>& inputs, const std::vector<std::string>& command,
                            const Policy& policy) {
  Context ctx;
  ctx.policy = policy;
  if (policy.envelope_path) {
    auto env = probe::read_limits_file(*policy.envelope_path);
    if (!env) return make_error(fmt::format("envelope: {}", env.error().message));
    ctx.envelope = *env;
    ctx.envelope_file = *policy.envelope_path;
  }
  Report rep;
  std::vector<std::unique_ptr<Workload>> workloads;  // stable addresses for the subjects
  std::map<std::string, Suppressions> suppressions;
  std::map<std::string, size_t> order;
  std::vector<Note> reader_notes;
  for (const Input& in : inputs) {
    auto read = read_input(in);
    if (!read) return read.error();
    rep.files_checked.push_back(in.name);
    order.emplace(in.name, order.size());
    for (auto& w : read->workloads) workloads.push_back(std::make_unique<Workload>(std::move(w)));
    for (auto& n : read->notes) reader_notes.push_back(Note{"", n.at, n.message});
    suppressions.emplace(in.name, parse_suppressions(in.text, in.name));
  }
  if (!command.empty()) {
    workloads.push_back(std::make_unique<Workload>(read_command_line(command)));
    order.emplace("<command line>", order.size());
  }
  ModelCache models;
  std::vector<Subject> subjects;
  for (const auto& w : workloads)
    for (const Container& c : w->containers) {
      Subject s;
      s.workload = w.get();
      s.container = &c;
      s.server = read_server(c);
      for (const std::string& p : s.server.problems)
        reader_notes.push_back(Note{"", s.server.at.line ? s.server.at : c.at, fmt::format("{}; ignored", p)});
      if (s.server.server != Server::kNone) s.plan = plan_for(*w, c, s.server, policy, models);
      subjects.push_back(std::move(s));
    }
  Sink sink;
  run_rules(subjects, ctx, sink);
  for (const auto& [file, sup] : suppressions)
    for (const Finding& f : sup.problems) rep.violations.push_back(f);
  for (Finding& f : sink.findings) {
    auto it = suppressions.find(f.at.file);
    std::optional<std::string> why = it == suppressions.end() ? std::nullopt : it->second.covers(f);
    if (why) {
      f.suppressed_because = *why;
      rep.suppressed.push_back(std::move(f));
    } else {
      rep.violations.push_back(std::move(f));
    }
  }
  rep.notes = std::move(reader_notes);
  for (Note& n : sink.notes) rep.notes.push_back(std::move(n));
  auto by_loc = [&](const auto& a, const auto& b) { return before(a.at, b.at, order); };
  std::stable_sort(rep.violations.begin(), rep.violations.end(), by_loc);
  std::stable_sort(rep.suppressed.begin(), rep.suppressed.end(), by_loc);
  std::stable_sort(rep.notes.begin(), rep.notes.end(), by_loc);
  return rep;
}

Result<Report> check_files(const std::vector<std::string>& given, const std::vector<std::string>& command,
                           const Policy& policy) {
  std::vector<Input> inputs;
  std::vector<std::string> paths;
  for (const std::string& path : given) {
    if (is_folder(path)) {
      auto under = deployment_files_under(path);
      if (!under) return under.error();
      paths.insert(paths.end(), under->begin(), under->end());
    } else {
      paths.push_back(path);
    }
  }
  for (const std::string& path : paths) {
    Input in{path, ""};
    if (path == "-") {
      in.text = read_bounded(std::cin);
    } else {
      auto text = read_deployment_file(path, kMaxFileBytes);
      if (!text) return text.error();
      in.text = std::move(*text);
    }
    inputs.push_back(std::move(in));
  }
  return check_inputs(inputs, command, policy);
}

}  // namespace aimem::check
