// The readers of deployment files: each turns one format into workloads
// (check/workload.h), keeping where every field was written. Pure: text or
// parsed YAML in, structs out. Things a reader skips (a Service, a kind it
// does not know, an unreadable quantity) come back as notes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "check/workload.h"
#include "core/result.h"

namespace aimem::check {

struct ReadNote {
  Loc at;
  std::string message;
};

struct ReadResult {
  std::vector<Workload> workloads;
  std::vector<ReadNote> notes;
};

// One Kubernetes document (a workload, a `kind: List`, or anything else).
void read_kubernetes(const YAML::Node& doc, const std::string& file, int document, ReadResult& out);

// A Compose file's root (with `services:`).
void read_compose(const YAML::Node& root, const std::string& file, ReadResult& out);
bool looks_like_compose(const YAML::Node& root);

// A systemd unit file. Errors (a line that is neither a section, a key nor a
// comment) name the line.
Result<ReadResult> read_systemd(const std::string& text, const std::string& file);
bool looks_like_systemd(const std::string& text, const std::string& file);

// A command line given after `--`: one workload, words located by their
// column in the line as printed.
Workload read_command_line(const std::vector<std::string>& argv);

// Sizes and durations in the dialects these formats use.
std::optional<uint64_t> parse_docker_size(std::string_view s);     // 512m, 16g, 1gb, 1073741824
std::optional<uint64_t> parse_systemd_size(std::string_view s);    // 16G, 512M, 1073741824 (binary)
std::optional<double> parse_duration_s(std::string_view s);        // 30, 30s, 1m30s, 1min 30s, 2h

}  // namespace aimem::check
