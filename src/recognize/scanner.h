// The one pass over an input: a vectorscan database built from every
// recognizer's patterns finds candidate lines in large blocks of text, and only
// candidate lines are cut out, time-stamped and handed to the recognizers whose
// patterns matched them. Memory is bounded by the block size whatever the input
// size; a line longer than kMaxLine is cut into pieces.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "evidence/text_reader.h"
#include "recognize/recognizer.h"
#include "recognize/deframe.h"
#include "recognize/unwrap.h"

struct hs_database;
struct hs_scratch;

namespace aimem {

// Switches for people tuning the scanner (README, "Benchmark"). The command
// line reads them from the environment (AIMEM_COMPILE_PATTERNS,
// AIMEM_SCAN_STATS, AIMEM_NO_GATE) and sets them before the first scan; the
// scanner reads no environment itself.
struct ScanSwitches {
  bool compile_patterns = false;  // compile the patterns even when the binary carries them compiled
  bool stats = false;             // print how often each pattern matched, when a scanner ends
  bool no_gate = false;           // scan large inputs in full, without the gate
};
void set_scan_switches(const ScanSwitches& switches);
const ScanSwitches& scan_switches();

// vectorscan's hs_scan and hs_compile_multi as aimem calls them: through the
// code path that finds every match on this CPU, with a database built for it
// (scanner.cc says why). Tests that build their own databases use these too.
using MatchHandler = int (*)(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void* ctx);
int scan_database(const hs_database* db, const char* data, size_t len, hs_scratch* scratch, MatchHandler on_match, void* ctx);
// A block-mode database of the expressions, nullptr with the error in *error.
hs_database* compile_database(const std::vector<std::string>& exprs, const std::vector<unsigned>& flags,
                              const std::vector<unsigned>& ids, std::string* error);

// A line's mask: one bit per recognizer (at most 127) and the claim bit.
// A GCC/Clang extension type: 128 bits in two registers, the ctz loop below
// as fast as with 64.
__extension__ typedef unsigned __int128 LineMask;

// The index of the lowest set bit of a non-zero mask.
inline int lowest_bit(LineMask m) {
  const auto lo = static_cast<uint64_t>(m);
  return lo ? __builtin_ctzll(lo) : 64 + __builtin_ctzll(static_cast<uint64_t>(m >> 64));
}

// The compiled patterns of the whole registry (built once per process).
class PatternSet {
 public:
  static const PatternSet& instance();
  ~PatternSet();

  const hs_database* database() const { return db_; }
  size_t recognizer_of(unsigned pattern_id) const { return pattern_owner_[pattern_id]; }
  // The line-mask bits a match of this pattern sets: its recognizer's, and
  // kClaimBit when it is a family's failure pattern (not context, not the
  // generic reader's): a line a family claims is that family's to judge, and
  // the generic reader does not read it (see ShadowingSink).
  static constexpr LineMask kClaimBit = LineMask{1} << 127;
  static constexpr size_t kMaxRecognizers = 127;
  LineMask bits(unsigned pattern_id) const {
    return (LineMask{1} << pattern_owner_[pattern_id]) | (pattern_claims_[pattern_id] ? kClaimBit : 0);
  }
  LineMask generic_mask() const { return generic_mask_; }  // the generic readers' bits
  size_t recognizer_count() const { return recognizer_count_; }
  const std::vector<std::string>& expressions() const { return expressions_; }
  const std::vector<unsigned>& flags() const { return flags_; }  // vectorscan's flags, per expression
  uint64_t hash() const { return hash_; }
  bool embedded() const { return embedded_; }  // loaded from the build-time database
  std::string serialize() const;

 private:
  PatternSet();
  hs_database* db_ = nullptr;
  std::vector<uint16_t> pattern_owner_;
  std::vector<bool> pattern_claims_;
  LineMask generic_mask_ = 0;
  std::vector<std::string> expressions_;
  std::vector<unsigned> flags_;
  size_t recognizer_count_ = 0;
  uint64_t hash_ = 0;
  bool embedded_ = false;
};

// The gate words (gate.h) as one small literal database.
class GateSet {
 public:
  static const GateSet& instance();
  ~GateSet();
  const hs_database* database() const { return db_; }

 private:
  GateSet();
  hs_database* db_ = nullptr;
};

// The generic allocation-failure reader (families/generic_alloc.cc) speaks
// only where no family did: its facts are held until the input ends and
// dropped when a family's failure fact stands within kShadowLines lines. A
// bare exit status or SIGKILL does not count: the generic fact names the pool
// they leave open. Every fact of the scan passes here, so the judgements that
// hold whatever family read a line live here too: a pasted command is no
// failure, and a device allocation failure in pinned host memory is host RAM.
class ShadowingSink final : public FactSink {
 public:
  static constexpr uint64_t kShadowLines = 40;
  static constexpr size_t kMaxHeld = 256;
  static constexpr size_t kMaxAnchors = 4096;
  explicit ShadowingSink(FactSink& out) : out_(out) {}
  void add(Fact fact) override;
  void finish();
  // Whether a recognizer reported a memory series (growing, rising, jumped or level).
  bool saw_series() const { return saw_series_; }
  // Whether a recognizer read `line` (as facts number it) as a memory figure.
  bool read_memory_on(uint64_t line) const;

 private:
  static constexpr size_t kMaxMemoryLines = 4096;
  FactSink& out_;
  bool saw_series_ = false;
  std::unordered_set<uint64_t> memory_lines_;  // lines of memory_usage facts, at most kMaxMemoryLines
  std::vector<Fact> held_;
  std::vector<uint64_t> anchors_;  // lines of family failure facts
};

class LineScanner final : public TextReader {
 public:
  static constexpr size_t kBlock = 1 << 20;    // bytes scanned per vectorscan call
  static constexpr size_t kMaxLine = 1 << 20;  // longer lines are cut
  // Regular files at least this large are read through the gate (gate.h):
  // the full patterns run over the first kHead bytes and around every block
  // where a gate word occurs; the gate scan runs on two threads.
  static constexpr uint64_t kLargeInput = 64ULL << 20;
  static constexpr uint64_t kHead = 8ULL << 20;
  // The first bytes whose lines decide whether a log read in blocks is framed.
  static constexpr size_t kFramingSample = 64 << 10;

  LineScanner(const SourceContext& source, FactSink& sink);
  ~LineScanner() override;
  LineScanner(const LineScanner&) = delete;
  LineScanner& operator=(const LineScanner&) = delete;

  // Streaming text input in any chunking.
  void feed(std::string_view bytes) override;
  // Streaming without a copy (sources/inputs.cc reads a file this way): a
  // reader puts up to `room` bytes at stream_space() and commits how many.
  char* stream_space(size_t& room) override;
  void stream_commit(size_t n) override;

  // A large input whole in memory (a mapped file, TextReader::WholeInput),
  // read through the gate.
  // Whether an input of `size` bytes is better handed over whole (nothing fed
  // yet, at least kLargeInput, the gate not switched off).
  bool wants_whole(uint64_t size) const override;
  // False when it could not be scanned this way (the caller streams it instead).
  bool scan_whole(const WholeInput& input, void (*progress)(uint64_t bytes, void* arg), void* arg) override;
  // One record whose time is known from its framing (kmsg, journal).
  void feed_record(std::string_view text, const timeutil::LineTime& time) override;
  // Flushes a final unterminated line and lets every recognizer finish.
  void finish() override;

  uint64_t lines() const override { return line_no_; }
  uint64_t bytes() const override { return bytes_; }
  uint64_t candidate_lines() const { return candidates_; }
  // Bytes the full patterns ran over (all of them unless the gate skipped blocks).
  uint64_t bytes_scanned_fully() const { return full_bytes_; }

 private:
  void scan_block(const char* data, size_t len, bool final_piece);
  void dispatch(std::string_view line, uint64_t line_no, LineMask mask, const timeutil::LineTime* known_time);
  // A paste's figures that climb across lines of one shape (template_series.h),
  // reported when no recognizer found a series; `whole` is the text scanned.
  void shape_series(std::string_view whole);
  static int on_match(unsigned id, unsigned long long from, unsigned long long to, unsigned flags, void* ctx);

  const SourceContext& source_;
  ShadowingSink sink_;
  hs_scratch* scratch_ = nullptr;
  std::vector<std::unique_ptr<Recognizer>> recognizers_;
  // Grown as the input needs it, up to kBufSize, and never zeroed: a folder of
  // thousands of small files makes one scanner each (2 MiB apiece, zeroed, cost
  // the sanitizer build 28 s on 3,000 files).
  void grow_buffer();
  static constexpr size_t kBufSize = kBlock + kMaxLine;
  static constexpr size_t kFirstBuf = 64 << 10;
  std::unique_ptr<char[]> buf_;
  size_t buf_cap_ = 0;
  size_t buf_len_ = 0;
  uint64_t line_no_ = 0;    // lines fully consumed before the current block
  uint64_t bytes_ = 0;
  uint64_t candidates_ = 0;
  uint64_t full_bytes_ = 0;
  std::string scratch_line_;  // decoded JSON / kmsg records
  bool finished_ = false;
  std::unique_ptr<std::vector<uint64_t>> stats_;
  std::unique_ptr<Unwrapped> unwrapped_;               // a hard-wrapped paste, rejoined (finish())
  const std::vector<uint64_t>* line_map_ = nullptr;  // its lines' numbers in the input
  std::unique_ptr<Deframed> deframed_;                 // a paste with its framing removed (finish())
  // A newest-first paste read in the order written, or one whose escaped
  // line breaks made many lines of one (deframe.h): lines are numbered as
  // read, each keeping its input line to show.
  bool reading_order_ = false;
  // A log read in blocks whose first lines carry a framing (deframe.h):
  // each block is scanned without it; the framing's times by block line.
  StreamDeframer stream_deframer_;
  bool framing_checked_ = false, stream_framed_ = false;
  std::string framed_block_;
  std::vector<std::pair<uint32_t, int64_t>> block_times_;
  uint64_t block_first_line_ = 0;

  // State of the block being scanned (used by on_match).
  const char* blk_ = nullptr;
  size_t blk_len_ = 0;
  size_t counted_to_ = 0;     // newlines counted up to this offset of the block
  uint64_t blk_line_ = 0;     // line number at counted_to_
  size_t cur_start_ = 0, cur_end_ = 0;
  LineMask cur_mask_ = 0;
  bool have_cur_ = false;
  std::vector<std::pair<size_t, unsigned>> late_;  // out-of-order matches
};

// The scanner as the reader sources hand their text to (evidence/text_reader.h).
TextReaders line_scanners();

// Counts '\n' bytes (SSE2 where available).
uint64_t count_newlines(const char* data, size_t len);

}  // namespace aimem
