// TextReader: what a source hands the text it reads to. Sources (sources/)
// open files, stdin, /dev/kmsg and the journal and frame what they read;
// they do not know what reads it. Whoever wires the pipeline hands them a
// TextReaders, which opens one reader per input: the command line and
// `aimem run` hand the line scanner (recognize/scanner.h, `line_scanners()`),
// so that sources stay below recognize (docs/ARCHITECTURE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

#include "core/time.h"
#include "evidence/line.h"
#include "evidence/sink.h"

namespace aimem {

class TextReader {
 public:
  virtual ~TextReader() = default;

  // Streaming text input in any chunking.
  virtual void feed(std::string_view bytes) = 0;
  // Streaming without a copy: a source puts up to `room` bytes at
  // stream_space() and commits how many.
  virtual char* stream_space(size_t& room) = 0;
  virtual void stream_commit(size_t n) = 0;

  // A large input whole in memory (a mapped file). The reader tells its
  // owner which ranges it is about to read and which it is done with, so
  // that a mapping's pages can be read ahead and dropped.
  struct WholeInput {
    const char* data = nullptr;
    uint64_t size = 0;
    virtual ~WholeInput() = default;
    virtual void prefetch(uint64_t from, uint64_t len) const = 0;  // may be called from two threads
    virtual void release(uint64_t from, uint64_t to) const = 0;    // likewise
  };
  // Whether an input of `size` bytes is better handed over whole.
  virtual bool wants_whole(uint64_t size) const = 0;
  // False when it could not be read this way (the source streams it instead).
  virtual bool scan_whole(const WholeInput& input, void (*progress)(uint64_t bytes, void* arg), void* arg) = 0;

  // One record whose time is known from its framing (kmsg, journal).
  virtual void feed_record(std::string_view text, const timeutil::LineTime& time) = 0;
  // The end of the input: a final unterminated line is read.
  virtual void finish() = 0;

  virtual uint64_t lines() const = 0;
  virtual uint64_t bytes() const = 0;
};

// Opens the reader of one input. `source` and `sink` outlive the reader.
using TextReaders = std::function<std::unique_ptr<TextReader>(const SourceContext& source, FactSink& sink)>;

}  // namespace aimem
