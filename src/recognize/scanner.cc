#include "recognize/scanner.h"
#include "recognize/unwrap.h"

#include "recognize/guards.h"

#include "core/doc_reader.h"

#include <hs/hs.h>

#include <atomic>
#include <thread>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/kmsg_record.h"
#include "core/text.h"
#include "core/units.h"
#include "recognize/gate.h"
#include "recognize/template_series.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace aimem {

#if defined(__x86_64__)
// 32 bytes at a time where the CPU has AVX2 (chosen at run time).
__attribute__((target("avx2"))) static uint64_t count_newlines_avx2(const char* data, size_t len) {
  uint64_t n = 0;
  size_t i = 0;
  const __m256i nl = _mm256_set1_epi8('\n');
  const __m256i zero = _mm256_setzero_si256();
  while (i + 32 <= len) {
    __m256i acc = zero;
    size_t rounds = std::min<size_t>(255, (len - i) / 32);
    for (size_t r = 0; r < rounds; ++r, i += 32)
      acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i)), nl));
    __m256i sums = _mm256_sad_epu8(acc, zero);
    n += static_cast<uint64_t>(_mm256_extract_epi64(sums, 0)) + static_cast<uint64_t>(_mm256_extract_epi64(sums, 1)) +
         static_cast<uint64_t>(_mm256_extract_epi64(sums, 2)) + static_cast<uint64_t>(_mm256_extract_epi64(sums, 3));
  }
  for (; i < len; ++i) n += data[i] == '\n';
  return n;
}
#endif

TextReaders line_scanners() {
  return [](const SourceContext& source, FactSink& sink) -> std::unique_ptr<TextReader> {
    return std::make_unique<LineScanner>(source, sink);
  };
}

uint64_t count_newlines(const char* data, size_t len) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return count_newlines_avx2(data, len);
#endif
  uint64_t n = 0;
  size_t i = 0;
#if defined(__SSE2__)
  // Compare 16 bytes at a time; each equal byte subtracts -1 from a byte
  // counter; every 255 rounds the counters are summed with psadbw.
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i zero = _mm_setzero_si128();
  while (i + 16 <= len) {
    __m128i acc = zero;
    size_t rounds = std::min<size_t>(255, (len - i) / 16);
    for (size_t r = 0; r < rounds; ++r, i += 16)
      acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i)), nl));
    __m128i sums = _mm_sad_epu8(acc, zero);
    n += static_cast<uint64_t>(_mm_cvtsi128_si32(sums)) + static_cast<uint64_t>(_mm_extract_epi16(sums, 4));
  }
#endif
  for (; i < len; ++i) n += data[i] == '\n';
  return n;
}

namespace {

std::string escape_literal(const char* s) {
  std::string out;
  for (const char* p = s; *p; ++p) {
    unsigned char c = static_cast<unsigned char>(*p);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == ' ' || c == '_') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

// Compiles a block-mode database; a pattern that does not compile is a
// programming error, reported with the pattern.
hs_database* compile(const std::vector<std::string>& exprs, const std::vector<unsigned>& flags, const std::vector<unsigned>& ids) {
  std::string error;
  hs_database* db = compile_database(exprs, flags, ids, &error);
  if (!db) throw std::logic_error("vectorscan: " + error);
  return db;
}

}  // namespace

// Debian 12's vectorscan (5.4.9) is a "fat" build: hs_scan picks AVX-512,
// AVX2 or SSE code when the program starts, by the CPU. Its AVX-512 code
// misses matches: the negated-vermicelli scan (the skip over a run of one
// byte, as in "^\S+\s+...") checks the wrong end of its last 64-byte vector
// (fixed upstream in VectorCamp/vectorscan#378, 2026), so whether a line is
// found depended on where the text lay in memory: the same paste diagnosed
// differently with --json or without. The AVX2 code does not have the fault,
// and the library exports it under its own name; where the CPU would get the
// AVX-512 code and the library has that entry, aimem scans through it. The
// databases are built without AVX-512 features so that code runs them as
// it was built to (the AVX2 entry with an AVX-512 database is not a
// combination the library promises). A library without the entry (another
// build, another CPU family) is called as it is.
extern "C" hs_error_t avx2_hs_scan(const hs_database_t* db, const char* data, unsigned length, unsigned flags, hs_scratch_t* scratch,
                                   match_event_handler on_event, void* context) __attribute__((weak));

namespace {

bool avoid_avx512() {
#if defined(__x86_64__)
  static const bool avoid = avx2_hs_scan != nullptr && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2");
  return avoid;
#else
  return false;
#endif
}

}  // namespace

int scan_database(const hs_database* db, const char* data, size_t len, hs_scratch* scratch, MatchHandler on_match, void* ctx) {
  const auto n = static_cast<unsigned>(std::min<size_t>(len, UINT_MAX));
  if (avoid_avx512()) return avx2_hs_scan(db, data, n, 0, scratch, on_match, ctx);
  return hs_scan(db, data, n, 0, scratch, on_match, ctx);
}

hs_database* compile_database(const std::vector<std::string>& exprs, const std::vector<unsigned>& flags,
                              const std::vector<unsigned>& ids, std::string* error) {
  std::vector<const char*> cexprs;
  for (auto& e : exprs) cexprs.push_back(e.c_str());
  hs_platform_info_t platform{};
  if (hs_populate_platform(&platform) != HS_SUCCESS) platform = hs_platform_info_t{};
  // Never AVX-512 (above); the same on every machine, so that a database built
  // on one (the one linked into the binary at build time) suits all.
  platform.cpu_features &= ~static_cast<unsigned long long>(HS_CPU_FEATURES_AVX512 | HS_CPU_FEATURES_AVX512VBMI);
  hs_database* db = nullptr;
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(cexprs.data(), flags.data(), ids.data(), static_cast<unsigned>(cexprs.size()), HS_MODE_BLOCK, &platform, &db,
                       &err) == HS_SUCCESS)
    return db;
  if (error) {
    *error = err ? err->message : "cannot compile the patterns";
    if (err && err->expression >= 0 && static_cast<size_t>(err->expression) < exprs.size())
      *error += " in pattern '" + exprs[static_cast<size_t>(err->expression)] + "'";
  }
  if (err) hs_free_compile_error(err);
  return nullptr;
}

namespace {
ScanSwitches g_switches;
}  // namespace

void set_scan_switches(const ScanSwitches& switches) { g_switches = switches; }
const ScanSwitches& scan_switches() { return g_switches; }

// A database compiled at build time (pattern_db_gen) and linked into the
// aimem binary saves compiling the patterns (~0.2 s) at every start. It is used
// only when its hash matches the patterns of this build and vectorscan accepts
// it on this CPU; otherwise the patterns are compiled here.
extern "C" {
extern const unsigned char aimem_pattern_db[] __attribute__((weak));
extern const unsigned long aimem_pattern_db_size __attribute__((weak));
extern const unsigned long long aimem_pattern_db_hash __attribute__((weak));
}

PatternSet::PatternSet() {
  auto entries = all_recognizers();
  recognizer_count_ = entries.size();
  if (recognizer_count_ > kMaxRecognizers) throw std::logic_error("more than 127 recognizers: widen the line mask");
  std::vector<std::string> exprs;
  std::vector<unsigned> flags, ids;
  for (size_t r = 0; r < entries.size(); ++r) {
    // The allocation-failure reader keeps off a line a family claimed; the
    // limit reader does not (a family's pattern that finds no report of its
    // own program leaves the line to it: "fatal: process exceeded memory
    // limit" matches Slurm's words without being Slurm's), and ShadowingSink
    // still drops its fact beside any family's failure.
    if (entries[r]->family == Family::generic && entries[r]->name != "generic_limit") generic_mask_ |= LineMask{1} << r;
    for (const Pattern& p : entries[r]->patterns) {
      exprs.push_back((p.flags & kRegex) ? std::string(p.expr) : escape_literal(p.expr));
      unsigned f = 0;
      if (p.flags & kCaseless) f |= HS_FLAG_CASELESS;
      if (p.flags & kRegex) f |= HS_FLAG_MULTILINE;
      flags.push_back(f);
      ids.push_back(static_cast<unsigned>(pattern_owner_.size()));
      pattern_owner_.push_back(static_cast<uint16_t>(r));
      pattern_claims_.push_back(!(p.flags & (kContext | kShared)) && entries[r]->family != Family::generic);
    }
  }
  // FNV-1a over expressions, flags and owners: what the database depends on.
  uint64_t h = 1469598103934665603ULL;
  auto mix = [&](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ULL;
  };
  for (size_t i = 0; i < exprs.size(); ++i) {
    mix(exprs[i].data(), exprs[i].size() + 1);
    mix(&flags[i], sizeof flags[i]);
    mix(&pattern_owner_[i], sizeof pattern_owner_[i]);
  }
  mix("platform: no AVX-512", 21);  // compile_database's platform (a database built before it is not used)
  hash_ = h;
  expressions_ = exprs;
  flags_ = flags;
  if (&aimem_pattern_db_size != nullptr && aimem_pattern_db && aimem_pattern_db_hash == hash_ && !g_switches.compile_patterns) {
    hs_database* db = nullptr;
    hs_scratch* probe = nullptr;
    if (hs_deserialize_database(reinterpret_cast<const char*>(aimem_pattern_db), aimem_pattern_db_size, &db) == HS_SUCCESS &&
        hs_alloc_scratch(db, &probe) == HS_SUCCESS) {
      hs_free_scratch(probe);
      db_ = db;
      embedded_ = true;
      return;
    }
    if (db) hs_free_database(db);
  }
  db_ = compile(exprs, flags, ids);
}

std::string PatternSet::serialize() const {
  char* bytes = nullptr;
  size_t length = 0;
  if (hs_serialize_database(db_, &bytes, &length) != HS_SUCCESS) return {};
  std::string out(bytes, length);
  std::free(bytes);
  return out;
}

GateSet::GateSet() {
  std::vector<std::string> exprs;
  std::vector<unsigned> flags, ids;
  for (auto w : gate_words()) {
    exprs.push_back(escape_literal(std::string(w).c_str()));
    flags.push_back(HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH);
    ids.push_back(static_cast<unsigned>(ids.size()));
  }
  db_ = compile(exprs, flags, ids);
}

GateSet::~GateSet() { hs_free_database(db_); }

const GateSet& GateSet::instance() {
  static GateSet set;
  return set;
}

PatternSet::~PatternSet() { hs_free_database(db_); }

const PatternSet& PatternSet::instance() {
  static PatternSet set;
  return set;
}

LineScanner::LineScanner(const SourceContext& source, FactSink& sink) : source_(source), sink_(sink) {
  const PatternSet& set = PatternSet::instance();
  if (hs_alloc_scratch(set.database(), &scratch_) != HS_SUCCESS) throw std::runtime_error("vectorscan: cannot allocate scratch");
  for (const auto* entry : all_recognizers()) recognizers_.push_back(entry->make());
  if (g_switches.stats) stats_ = std::make_unique<std::vector<uint64_t>>(PatternSet::instance().expressions().size());
}

LineScanner::~LineScanner() {
  hs_free_scratch(scratch_);
  if (stats_) {
    // AIMEM_SCAN_STATS=1: how often each pattern matched (for tuning patterns).
    const auto& names = PatternSet::instance().expressions();
    for (size_t i = 0; i < stats_->size(); ++i)
      if ((*stats_)[i]) std::fprintf(stderr, "%10llu  %s\n", static_cast<unsigned long long>((*stats_)[i]), names[i].c_str());
    std::fprintf(stderr, "%10llu  candidate lines of %llu\n", static_cast<unsigned long long>(candidates_), static_cast<unsigned long long>(line_no_));
  }
}

int LineScanner::on_match(unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
  auto* self = static_cast<LineScanner*>(ctx);
  if (self->stats_) ++(*self->stats_)[id];
  size_t end = static_cast<size_t>(to);
  const LineMask bit = PatternSet::instance().bits(id);
  if (self->have_cur_ && end <= self->cur_end_ && end > self->cur_start_) {
    self->cur_mask_ |= bit;
    return 0;
  }
  // A match that ends with the current line's own newline (a pattern ending
  // in "\s*$" matches once before the newline and again after it at the end
  // of the input) is the same line, not a new candidate: dispatched once.
  if (self->have_cur_ && end == self->cur_end_ + 1 && end <= self->blk_len_ && self->blk_[end - 1] == '\n') {
    self->cur_mask_ |= bit;
    return 0;
  }
  if (self->have_cur_ && end <= self->cur_start_) {
    self->late_.emplace_back(end, id);  // out of order: handled after the scan
    return 0;
  }
  // A new candidate line: dispatch the previous one first.
  if (self->have_cur_) {
    self->blk_line_ += count_newlines(self->blk_ + self->counted_to_, self->cur_start_ - self->counted_to_);
    self->counted_to_ = self->cur_start_;
    self->dispatch(std::string_view(self->blk_ + self->cur_start_, self->cur_end_ - self->cur_start_),
                   self->blk_line_ + 1, self->cur_mask_, nullptr);
  }
  size_t pos = end > 0 ? end - 1 : 0;
  const void* back = pos > 0 ? memrchr(self->blk_, '\n', pos) : nullptr;
  size_t start = back ? static_cast<size_t>(static_cast<const char*>(back) - self->blk_) + 1 : 0;
  if (end > 0 && self->blk_[end - 1] == '\n') {
    // A pattern that ends with the newline itself belongs to the line before it.
    const void* b2 = end >= 2 ? memrchr(self->blk_, '\n', end - 1) : nullptr;
    start = b2 ? static_cast<size_t>(static_cast<const char*>(b2) - self->blk_) + 1 : 0;
    end = end - 1;
  }
  const void* fwd = std::memchr(self->blk_ + end, '\n', self->blk_len_ - end);
  size_t line_end = fwd ? static_cast<size_t>(static_cast<const char*>(fwd) - self->blk_) : self->blk_len_;
  self->cur_start_ = start;
  self->cur_end_ = line_end;
  self->cur_mask_ = bit;
  self->have_cur_ = true;
  return 0;
}

void LineScanner::scan_block(const char* data, size_t len, bool /*final_piece*/) {
  if (!framing_checked_) {
    // The input's first lines decide whether it is framed (a container's
    // json-file log): a sample of whole lines.
    framing_checked_ = true;
    size_t n = std::min(len, kFramingSample);
    if (n < len)
      if (const void* nl = memrchr(data, '\n', n)) n = static_cast<size_t>(static_cast<const char*>(nl) - data) + 1;
    stream_framed_ = stream_deframer_.learn(std::string_view(data, n), source_.reference_us);
  }
  block_times_.clear();
  block_first_line_ = line_no_;
  if (stream_framed_) {
    stream_deframer_.apply(std::string_view(data, len), framed_block_, block_times_);
    data = framed_block_.data();
    len = framed_block_.size();
  }
  blk_ = data;
  blk_len_ = len;
  counted_to_ = 0;
  blk_line_ = line_no_;
  have_cur_ = false;
  late_.clear();
  full_bytes_ += len;
  scan_database(PatternSet::instance().database(), data, len, scratch_, &LineScanner::on_match, this);
  if (have_cur_) {
    blk_line_ += count_newlines(blk_ + counted_to_, cur_start_ - counted_to_);
    counted_to_ = cur_start_;
    dispatch(std::string_view(blk_ + cur_start_, cur_end_ - cur_start_), blk_line_ + 1, cur_mask_, nullptr);
    have_cur_ = false;
  }
  if (!late_.empty()) {
    // Rare: vectorscan reported a match behind the current line. Re-dispatch
    // those lines on their own (their recognizers see them late but once).
    std::sort(late_.begin(), late_.end());
    size_t last_start = SIZE_MAX;
    LineMask mask = 0;
    size_t ls = 0, le = 0;
    auto flush = [&] {
      if (last_start == SIZE_MAX) return;
      uint64_t line = line_no_ + count_newlines(blk_, ls) + 1;
      dispatch(std::string_view(blk_ + ls, le - ls), line, mask, nullptr);
    };
    for (auto [end, id] : late_) {
      size_t pos = end > 0 ? end - 1 : 0;
      const void* back = pos > 0 ? memrchr(blk_, '\n', pos) : nullptr;
      size_t start = back ? static_cast<size_t>(static_cast<const char*>(back) - blk_) + 1 : 0;
      if (start != last_start) {
        flush();
        const void* fwd = std::memchr(blk_ + end, '\n', blk_len_ - end);
        ls = start;
        le = fwd ? static_cast<size_t>(static_cast<const char*>(fwd) - blk_) : blk_len_;
        last_start = start;
        mask = 0;
      }
      mask |= PatternSet::instance().bits(id);
    }
    flush();
    late_.clear();
  }
  line_no_ += count_newlines(data, len);
  // A final piece without newline still counts as a line.
  if (len > 0 && data[len - 1] != '\n') ++line_no_;
}

void LineScanner::dispatch(std::string_view line, uint64_t line_no, LineMask mask, const timeutil::LineTime* known_time) {
  ++candidates_;
  const uint64_t block_line = line_no;  // before the map: a line of the scanned block's numbering
  if (line_map_ && line_no >= 1 && line_no - 1 < line_map_->size()) line_no = (*line_map_)[line_no - 1];
  // A newest-first paste, or one whose hard-wrapped lines were rejoined:
  // numbered by its lines as read (in the order written, each logical line
  // one), so that "near" and "before" mean the same as in the plain log; the
  // input's own line is what the evidence shows.
  uint64_t shown = 0;
  if (reading_order_ || unwrapped_) {
    shown = line_no;
    line_no = block_line;
  }
  const uint64_t input_line = shown ? shown : line_no;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  timeutil::LineTime time;
  if (known_time) time = *known_time;

  // Framings that wrap the real text: a journalctl -o json record, a raw
  // /dev/kmsg record ("6,1234,518050606,-;text").
  std::string_view t = text::trim_left(line);
  if (!known_time && t.size() > 2 && t[0] == '{' && t.find("\"MESSAGE\"") != std::string_view::npos) {
    // Bounded: a record nested 990,000 deep is discarded, not built (core/doc_reader.h).
    auto j = doc::parse_json_or_discarded(t);
    if (j.is_object() && j.contains("MESSAGE") && j["MESSAGE"].is_string()) {
      scratch_line_.clear();
      if (j.contains("SYSLOG_IDENTIFIER") && j["SYSLOG_IDENTIFIER"].is_string())
        scratch_line_ += j["SYSLOG_IDENTIFIER"].get<std::string>() + ": ";
      scratch_line_ += j["MESSAGE"].get<std::string>();
      if (j.contains("__REALTIME_TIMESTAMP") && j["__REALTIME_TIMESTAMP"].is_string()) {
        if (auto us = text::parse_u64(j["__REALTIME_TIMESTAMP"].get<std::string>()))
          time.unix_us = static_cast<int64_t>(*us);
      }
      line = scratch_line_;
      known_time = &time;
    }
  } else if (!known_time && !t.empty() && t[0] >= '0' && t[0] <= '9') {
    if (auto rec = parse_kmsg_record(t)) {
      time.uptime_s = static_cast<double>(rec->uptime_us) / 1e6;
      line = rec->text;
      known_time = &time;
    }
  }
  if (!known_time) time = timeutil::parse_line_time(line, source_.reference_us);
  // The stamp a framing carried (a `kubectl logs --timestamps` prefix, a
  // Docker record's "time") where the line itself has none.
  if (deframed_ && !time.unix_us && !time.uptime_s && input_line >= 1 && input_line - 1 < deframed_->time.size())
    if (auto t = deframed_->time[input_line - 1]) time.unix_us = *t;
  if (!block_times_.empty() && !time.unix_us && !time.uptime_s && block_line > block_first_line_) {
    const uint64_t i = block_line - block_first_line_ - 1;
    auto it = std::lower_bound(block_times_.begin(), block_times_.end(), std::make_pair(static_cast<uint32_t>(i), INT64_MIN));
    if (it != block_times_.end() && it->first == i) time.unix_us = it->second;
  }

  Line l{line, line_no, time, &source_, shown};
  if (mask & PatternSet::kClaimBit) {
    mask &= ~PatternSet::kClaimBit;
    mask &= ~PatternSet::instance().generic_mask();
  }
  while (mask) {
    int r = lowest_bit(mask);
    mask &= mask - 1;
    recognizers_[static_cast<size_t>(r)]->on_line(l, sink_);
  }
}

void LineScanner::grow_buffer() {
  size_t cap = buf_cap_ ? std::min(kBufSize, buf_cap_ * 4) : kFirstBuf;
  auto bigger = std::make_unique_for_overwrite<char[]>(cap);
  if (buf_len_) std::memcpy(bigger.get(), buf_.get(), buf_len_);
  buf_ = std::move(bigger);
  buf_cap_ = cap;
}

void LineScanner::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    if (buf_len_ == buf_cap_) grow_buffer();
    size_t room = buf_cap_ - buf_len_;
    size_t take = std::min(room, bytes.size());
    std::memcpy(buf_.get() + buf_len_, bytes.data(), take);
    buf_len_ += take;
    bytes_ += take;
    bytes.remove_prefix(take);
    if (buf_len_ >= kBlock) {
      const void* last = memrchr(buf_.get(), '\n', buf_len_);
      // Up to the last newline; a block without one is an over-long line, cut.
      size_t cut = last ? static_cast<size_t>(static_cast<const char*>(last) - buf_.get()) + 1 : buf_len_;
      scan_block(buf_.get(), cut, false);
      std::memmove(buf_.get(), buf_.get() + cut, buf_len_ - cut);
      buf_len_ -= cut;
    }
  }
}

char* LineScanner::stream_space(size_t& room) {
  if (buf_len_ == buf_cap_) grow_buffer();
  room = std::min(kBlock, buf_cap_ - buf_len_);
  return buf_.get() + buf_len_;
}

void LineScanner::stream_commit(size_t n) {
  buf_len_ += n;
  bytes_ += n;
  if (buf_len_ >= kBlock || buf_len_ == kBufSize) {
    const void* last = memrchr(buf_.get(), '\n', buf_len_);
    size_t cut = 0;
    if (last) cut = static_cast<size_t>(static_cast<const char*>(last) - buf_.get()) + 1;
    else if (buf_len_ >= kMaxLine) cut = buf_len_;
    if (cut) {
      scan_block(buf_.get(), cut, false);
      std::memmove(buf_.get(), buf_.get() + cut, buf_len_ - cut);
      buf_len_ -= cut;
    }
  }
}

bool LineScanner::wants_whole(uint64_t size) const {
  return buf_len_ == 0 && bytes_ == 0 && size >= kLargeInput && !g_switches.no_gate;
}

// A large input whole in memory: gated on two threads, then scanned with the
// full patterns where it matters. Memory stays bounded when it is a mapping:
// the owner drops pages (release) as soon as they are read.
//
// The head is always scanned with the full patterns, and nothing there waits
// for the gate: the calling thread scans it first while the helper gates,
// then both take the rest of the gate's blocks from one counter, kChunk at a
// time, so the two finish together whatever the head cost.
namespace {

bool gate_hit(const hs_database* gate, const char* p, uint64_t n, hs_scratch* scratch) {
  return scan_database(gate, p, n, scratch, [](unsigned, unsigned long long, unsigned long long, unsigned, void*) -> int { return 1; },
                       nullptr) == HS_SCAN_TERMINATED;
}

// A block is hot when a gate word starts in it or within the next block's
// first kSeam bytes. Inside a chunk the gate reads those bytes in place;
// across chunks it must not: the next chunk belongs to the other thread, which
// may have released it already, and one byte read there maps its page again
// (with the page cache's large folios, up to 2 MiB at a time) for the rest of
// the run. Each chunk keeps copies of its edges instead, and the seams are
// gated from the copies once both threads are done.
class ChunkSeams {
 public:
  static constexpr uint64_t kSeam = 64;
  explicit ChunkSeams(size_t chunks) : heads_(chunks * kSeam), tails_(chunks * kSeam) {}
  // Chunk c's first and last kSeam bytes (a short chunk: what it has).
  void keep(size_t c, const char* chunk, uint64_t len) {
    const uint64_t n = std::min(kSeam, len);
    std::memcpy(&heads_[c * kSeam], chunk, n);
    std::memcpy(&tails_[c * kSeam + (kSeam - n)], chunk + len - n, n);
  }
  // Each chunk's last block is hot when a gate word crosses into the next chunk.
  void mark(std::vector<uint8_t>& hot, size_t blocks_per_chunk, const hs_database* gate, hs_scratch* scratch) const {
    for (size_t c = 0; c + 1 < heads_.size() / kSeam; ++c) {
      char seam[2 * kSeam];
      std::memcpy(seam, &tails_[c * kSeam], kSeam);
      std::memcpy(seam + kSeam, &heads_[(c + 1) * kSeam], kSeam);
      uint8_t& last = hot[(c + 1) * blocks_per_chunk - 1];
      if (!last) last = gate_hit(gate, seam, sizeof seam, scratch);
    }
  }

 private:
  std::vector<char> heads_, tails_;
};

}  // namespace

bool LineScanner::scan_whole(const WholeInput& input, void (*progress)(uint64_t, void*), void* arg) {
  const char* base = input.data;
  const uint64_t size = input.size;
  const uint64_t B = kBlock;
  const size_t nblocks = static_cast<size_t>((size + B - 1) / B);
  std::vector<uint8_t> hot(nblocks, 0);
  std::vector<uint64_t> newlines(nblocks, 0);
  const hs_database* gate = GateSet::instance().database();
  hs_scratch* proto = nullptr;
  if (hs_alloc_scratch(gate, &proto) != HS_SUCCESS) return false;
  auto drop = [&](uint64_t from, uint64_t to) { input.release(from, to); };
  constexpr size_t kChunk = 8;  // blocks taken at once: one prefetch, one release
  ChunkSeams seams((nblocks + kChunk - 1) / kChunk);
  std::atomic<size_t> next{0};
  auto gate_blocks = [&](hs_scratch* scratch, bool report) {
    for (size_t b0; (b0 = next.fetch_add(kChunk)) < nblocks;) {
      const size_t b1 = std::min(nblocks, b0 + kChunk);
      const uint64_t from = b0 * B, to = std::min<uint64_t>(b1 * B, size);
      // The chunk's pages in one call rather than a fault per page.
      input.prefetch(from, to - from);
      seams.keep(b0 / kChunk, base + from, to - from);
      for (size_t b = b0; b < b1; ++b) {
        uint64_t start = b * B, len = std::min<uint64_t>(B, size - start);
        uint64_t ext = b + 1 < b1 ? std::min<uint64_t>(len + ChunkSeams::kSeam, size - start) : len;
        hot[b] = gate_hit(gate, base + start, ext, scratch);
        newlines[b] = count_newlines(base + start, len);
      }
      // The head's pages stay until its full scan is done (below).
      if (to > kHead) drop(std::max(from, kHead), to);
      if (report && progress) progress(std::min<uint64_t>(size, next.load() * B), arg);
    }
  };
  hs_scratch* second = nullptr;
  hs_clone_scratch(proto, &second);
  std::thread helper([&] { gate_blocks(second, false); });
  // The head with the full patterns, up to its last whole line.
  uint64_t head_end = std::min(size, kHead);
  if (head_end < size) {
    const void* p = memrchr(base, '\n', head_end);
    head_end = p ? static_cast<uint64_t>(static_cast<const char*>(p) - base) + 1 : 0;
  }
  // [from, to) with the full patterns, a block at a time cut at a line end;
  // pages dropped as they are done unless the gate may still read them.
  auto scan_range = [&](uint64_t from, uint64_t to, bool release) {
    for (uint64_t pos = from; pos < to;) {
      uint64_t cut = std::min(to, pos + kBlock);
      if (cut < to) {
        const void* p = memrchr(base + pos, '\n', cut - pos);
        if (p) cut = static_cast<uint64_t>(static_cast<const char*>(p) - base) + 1;
      }
      scan_block(base + pos, cut - pos, cut == size);
      if (release) drop(pos, cut);
      pos = cut;
    }
  };
  scan_range(0, head_end, false);
  gate_blocks(proto, true);
  helper.join();
  seams.mark(hot, kChunk, gate, proto);
  drop(0, std::min(size, kHead));
  hs_free_scratch(second);
  hs_free_scratch(proto);

  // Regions for the full patterns: each hot block with its neighbours (the
  // rest of a report, the settings just before a failure), after the head.
  std::vector<std::pair<uint64_t, uint64_t>> regions;
  regions.emplace_back(0, head_end);
  for (size_t b = 0; b < nblocks; ++b) {
    if (!hot[b]) continue;
    uint64_t a = b == 0 ? 0 : (b - 1) * B, e = std::min<uint64_t>(size, (b + 2) * B);
    if (a <= regions.back().second) regions.back().second = std::max(regions.back().second, e);
    else regions.emplace_back(a, e);
  }
  std::vector<uint64_t> before(nblocks + 1, 0);  // newlines before block b
  for (size_t b = 0; b < nblocks; ++b) before[b + 1] = before[b] + newlines[b];

  uint64_t done_to = head_end;
  for (auto [a, e] : regions) {
    if (a < done_to) a = done_to;
    if (a > 0) {  // start at a line start
      uint64_t lo = a > kMaxLine ? a - kMaxLine : 0;
      const void* p = memrchr(base + lo, '\n', a - lo);
      if (p) a = static_cast<uint64_t>(static_cast<const char*>(p) - base) + 1;
      if (a < done_to) a = done_to;
    }
    if (e < size) {  // end after a newline
      const void* p = std::memchr(base + e, '\n', std::min<uint64_t>(kMaxLine, size - e));
      e = p ? static_cast<uint64_t>(static_cast<const char*>(p) - base) + 1 : std::min<uint64_t>(size, e + kMaxLine);
    }
    if (e <= a) continue;
    const size_t ab = static_cast<size_t>(a / B);
    line_no_ = before[ab] + count_newlines(base + ab * B, a - ab * B);
    scan_range(a, e, true);
    done_to = e;
  }
  line_no_ = before[nblocks] + (size > 0 && base[size - 1] != '\n' ? 1 : 0);
  bytes_ = size;
  if (stats_) {
    size_t n = 0;
    for (auto h : hot) n += h;
    std::fprintf(stderr, "gate: %zu of %zu blocks hot, %llu bytes scanned fully\n", n, nblocks, static_cast<unsigned long long>(full_bytes_));
  }
  if (progress) progress(size, arg);
  return true;
}

void LineScanner::feed_record(std::string_view text, const timeutil::LineTime& time) {
  // Scan this one record on its own: flush buffered text first to keep order.
  if (buf_len_) {
    scan_block(buf_.get(), buf_len_, true);
    buf_len_ = 0;
  }
  if (text.size() > kMaxLine) text = text.substr(0, kMaxLine);
  bytes_ += text.size();
  struct Ctx {
    LineMask mask = 0;
  } ctx;
  scan_database(PatternSet::instance().database(), text.data(), text.size(), scratch_,
          [](unsigned id, unsigned long long, unsigned long long, unsigned, void* c) -> int {
            static_cast<Ctx*>(c)->mask |= PatternSet::instance().bits(id);
            return 0;
          },
          &ctx);
  ++line_no_;
  // A multi-line record (journal MESSAGE with newlines) is dispatched whole.
  if (ctx.mask) dispatch(text, line_no_, ctx.mask, &time);
}

namespace {

// An allocator that prints what is free and its largest free piece: XLA's
// "Attempting to allocate 392.25M. ... There are 1.31G free. Due to
// fragmentation, the largest contiguous region of free memory is 256.00M",
// Tenstorrent's bank manager's "free: 201326592 B, largest free block:
// 2883584 B" (the request being each bank's share, "each bank needs to store
// N B"; Vulkan and Metal heaps print the same pair). The request was no more
// than what was free but more than the largest piece: fragmentation. The
// sizes are read from the line; nothing is assumed.
void fragmented_by_its_figures(Fact& f) {
  std::string_view s = f.text;
  size_t at = text::ifind(s, "largest contiguous");
  if (at == std::string_view::npos) at = text::ifind(s, "largest free block");
  if (at == std::string_view::npos) return;
  auto size_after = [](std::string_view from) -> std::optional<uint64_t> {
    for (size_t i = 0; i < from.size() && i < 80; ++i)
      if (from[i] >= '0' && from[i] <= '9' && (i == 0 || from[i - 1] == ' ' || from[i - 1] == ':'))
        if (auto v = units::parse_log_size(from.substr(i))) return v;
    return std::nullopt;
  };
  auto after = [&](std::string_view lead) -> std::optional<uint64_t> {
    size_t p = text::ifind(s, lead);
    return p == std::string_view::npos ? std::nullopt : size_after(s.substr(p + lead.size()));
  };
  auto largest = size_after(s.substr(at));
  std::optional<uint64_t> need = after("needs to store ");
  if (!need) need = f.requested;
  if (!need) need = after("allocate ");
  if (!f.free) f.free = after("free: ");
  if (!f.free) f.free = after("There are ");
  if (!largest || !need || !f.free || *need == 0 || !(*largest < *need && *need <= *f.free)) return;
  f.cause = Cause::fragmentation;
  f.detail += (f.detail.empty() ? "" : ", ") + std::string("fragmented: ") + units::format_bytes(*need) + " asked, " +
              units::format_bytes(*f.free) + " free, largest block " + units::format_bytes(*largest);
}

}  // namespace

bool ShadowingSink::read_memory_on(uint64_t line) const {
  return memory_lines_.count(line) > 0;
}

void ShadowingSink::add(Fact fact) {
  if (fact.kind == FactKind::memory_usage && memory_lines_.size() < kMaxMemoryLines) memory_lines_.insert(fact.where.line);
  if (is_series(fact)) saw_series_ = true;
  // A command as pasted with its prompt ("$ dmesg | grep -i 'out of memory'")
  // names what it looks for; its output says what happened.
  if (is_failure(fact.kind) && guards::is_command_line(fact.text)) return;
  // A device allocation failure whose own line names pinned (page-locked)
  // host memory is host RAM, whichever family read the CUDA error in it.
  if (fact.kind == FactKind::gpu_oom && guards::names_pinned_host_memory(fact.text)) {
    fact.kind = FactKind::host_alloc_failure;
    fact.layer = Layer::host_ram;
    fact.detail = "pinned (page-locked) host memory for the GPU" + (fact.detail.empty() ? std::string() : " (" + fact.detail + ")");
  }
  // A host-side exception whose own line names the device's memory (Theano's
  // "MemoryError: Error allocating N bytes of device memory") is the device's.
  if (fact.kind == FactKind::host_alloc_failure && guards::names_device_memory(fact.text)) {
    fact.kind = FactKind::gpu_oom;
    fact.layer = Layer::gpu_vram;
    fact.detail = "device memory" + (fact.detail.empty() ? std::string() : " (" + fact.detail + ")");
  }
  // Free in total, not in one piece, by the allocator's own figures, whichever
  // family read the line (XLA's "There are 1.31G free. Due to fragmentation,
  // the largest contiguous region of free memory is 256.00M").
  if (is_failure(fact.kind) && fact.cause == Cause::unknown) fragmented_by_its_figures(fact);
  if (fact.family == Family::generic) {
    if (held_.size() < kMaxHeld) held_.push_back(std::move(fact));
    return;
  }
  // (A snapshot of the host used up is no report of a failure on a line: it
  // shadows nothing.)
  if (is_failure(fact.kind) && fact.kind != FactKind::exit_status && fact.kind != FactKind::process_killed &&
      fact.kind != FactKind::host_exhausted && anchors_.size() < kMaxAnchors)
    anchors_.push_back(fact.where.line);
  out_.add(std::move(fact));
}

void ShadowingSink::finish() {
  for (Fact& f : held_) {
    // A request no machine holds says what the family's report beside it
    // does not (Paddle's "Cannot allocate 1048575.999023PB" under its
    // MemoryError): a size computed wrong. It is never shadowed.
    const bool impossible = f.requested && *f.requested >= kImpossibleRequest;
    bool shadowed = !impossible && std::any_of(anchors_.begin(), anchors_.end(), [&](uint64_t a) {
      return (a > f.where.line ? a - f.where.line : f.where.line - a) <= kShadowLines;
    });
    if (!shadowed) out_.add(std::move(f));
  }
  held_.clear();
}

void LineScanner::finish() {
  if (finished_) return;
  finished_ = true;
  const bool paste = buf_len_ && line_no_ == 0 && full_bytes_ == 0;  // the whole input in one block
  if (paste) {
    framing_checked_ = true;  // read whole below: a paste's framing comes off with deframe()
    // The whole input is still in the buffer (at most kBlock: a paste, not a
    // log file): remove a collector's framing (deframe.h), then rejoin lines
    // a terminal hard-wrapped (unwrap.h) before reading it. Deframing keeps
    // every line where it was; facts keep the input's own line numbers
    // through line_map_.
    std::string_view whole(buf_.get(), buf_len_);
    if (auto d = deframe(whole, source_.reference_us)) {
      deframed_ = std::make_unique<Deframed>(std::move(*d));
      whole = deframed_->text;
    }
    reading_order_ = deframed_ && (deframed_->newest_first || deframed_->split);
    if (auto u = unwrap_hard_wrapped(whole)) {
      unwrapped_ = std::make_unique<Unwrapped>(std::move(*u));
      if (deframed_) {  // through both maps: an unwrapped line, its deframed line, its input line
        for (uint64_t& l : unwrapped_->first_line)
          if (l >= 1 && l - 1 < deframed_->first_line.size()) l = deframed_->first_line[l - 1];
        unwrapped_->input_lines = deframed_->input_lines;
      }
      line_map_ = &unwrapped_->first_line;
      scan_block(unwrapped_->text.data(), unwrapped_->text.size(), true);
      line_map_ = nullptr;
      line_no_ = unwrapped_->input_lines;
      buf_len_ = 0;
    } else if (deframed_) {
      line_map_ = &deframed_->first_line;
      scan_block(deframed_->text.data(), deframed_->text.size(), true);
      line_map_ = nullptr;
      line_no_ = deframed_->input_lines;
      buf_len_ = 0;
    }
  }
  std::string_view pasted;  // a paste's text as scanned, for shape_series()
  if (paste)
    pasted = unwrapped_ ? std::string_view(unwrapped_->text)
             : deframed_ ? std::string_view(deframed_->text)
                         : std::string_view(buf_.get(), buf_len_);
  if (buf_len_) {
    scan_block(buf_.get(), buf_len_, true);
    buf_len_ = 0;
  }
  for (auto& r : recognizers_) r->finish(sink_);
  if (!pasted.empty() && !sink_.saw_series()) shape_series(pasted);
  sink_.finish();
}

void LineScanner::shape_series(std::string_view whole) {
  // Numbered as dispatch() numbers the same line.
  const std::vector<uint64_t>* map = unwrapped_ ? &unwrapped_->first_line : deframed_ ? &deframed_->first_line : nullptr;
  auto input_line = [&](uint64_t l) { return map && l >= 1 && l - 1 < map->size() ? (*map)[l - 1] : l; };
  const bool reordered = reading_order_ || unwrapped_;
  // Lines a recognizer already read as memory figures (a `docker stats` row
  // whose memory stayed flat) are its to judge: another figure of them (the
  // row's network I/O, a counter) is not read in their place.
  auto recognized = [&](uint64_t block_line) { return sink_.read_memory_on(reordered ? block_line : input_line(block_line)); };
  for (const TemplateSeries& t : template_series(whole, recognized)) {
    Line last{t.last_text, reordered ? t.last_line : input_line(t.last_line), {}, &source_, reordered ? input_line(t.last_line) : 0};
    Fact f = make_fact(last, FactKind::memory_usage, Family::runtime);
    // Weaker than a series the program named, or one a recognizer read
    // from a line's shape (memory_series.cc, 0.55): nothing names memory here
    // but a size that climbed.
    f.strength = 0.5f;
    f.detail = fmt::format("growing figure of the lines \"{}\" from {} to {} over {} samples", text::quote_line(t.key, 80),
                           units::format_bytes(t.first), units::format_bytes(t.last), t.samples);
    f.usage = t.last;
    f.count = t.samples;
    f.from_line = reordered ? t.first_line : input_line(t.first_line);
    sink_.add(std::move(f));
  }
}

}  // namespace aimem
