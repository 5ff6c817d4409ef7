// Evidence the user hands over: files, folders (walked, bounded) and stdin,
// any mix. Each input is streamed into a reader the caller opens for it
// (evidence/text_reader.h; the commands hand the line scanner); its kind is
// told from its content (binary, compressed, JSON, text), never from its name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "evidence/sink.h"
#include "evidence/text_reader.h"

namespace aimem {

struct InputOptions {
  bool progress = false;        // progress bar on stderr for inputs over 100 MB
  size_t max_files = 20000;     // files read from folders, all together
  int max_depth = 12;           // folder depth
};

struct InputReport {
  std::string name;
  bool usable = true;       // read and scanned
  std::string problem;      // why not usable, or a warning
  uint64_t bytes = 0;
  uint64_t lines = 0;
};

// Reads every argument ("-" is stdin). Never throws for bad input; each
// problem is in the reports.
std::vector<InputReport> read_inputs(const std::vector<std::string>& args, FactSink& sink,
                                     const InputOptions& options, const TextReaders& readers);

// One in-memory text (tests, pasted snippets).
InputReport read_text(std::string_view name, std::string_view content, FactSink& sink, const TextReaders& readers,
                      uint32_t index = 0);

}  // namespace aimem
