#include "recognize/scanner.h"

#include <hs/hs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "core/text.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace aimem {

uint64_t count_newlines(const char* data, size_t len) {
  uint64_t n = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i nl = _mm_set1_epi8('\n');
  for (; i + 16 <= len; i += 16) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
    n += static_cast<uint64_t>(__builtin_popcount(static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl)))));
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

}  // namespace

PatternSet::PatternSet() {
  auto entries = all_recognizers();
  recognizer_count_ = entries.size();
  if (recognizer_count_ > 64) throw std::logic_error("more than 64 recognizers: widen the line mask");
  std::vector<std::string> exprs;
  std::vector<unsigned> flags, ids;
  for (size_t r = 0; r < entries.size(); ++r) {
    for (const Pattern& p : entries[r]->patterns) {
      if (std::getenv("AIMEM_XP_NOREGEX") && (p.flags & kRegex)) continue;
      exprs.push_back((p.flags & kRegex) ? std::string(p.expr) : escape_literal(p.expr));
      unsigned f = HS_FLAG_ALLOWEMPTY * 0;
      if (p.flags & kCaseless) f |= HS_FLAG_CASELESS;
      if (p.flags & kRegex) f |= HS_FLAG_MULTILINE;
      flags.push_back(f);
      ids.push_back(static_cast<unsigned>(pattern_owner_.size()));
      pattern_owner_.push_back(static_cast<uint16_t>(r));
    }
  }
  expressions_ = exprs;
  std::vector<const char*> cexprs;
  for (auto& e : exprs) cexprs.push_back(e.c_str());
  hs_compile_error_t* err = nullptr;
  if (hs_compile_multi(cexprs.data(), flags.data(), ids.data(), static_cast<unsigned>(cexprs.size()), HS_MODE_BLOCK,
                       nullptr, &db_, &err) != HS_SUCCESS) {
    std::string msg = "vectorscan: ";
    if (err) {
      msg += err->message;
      if (err->expression >= 0 && static_cast<size_t>(err->expression) < exprs.size())
        msg += " in pattern '" + exprs[static_cast<size_t>(err->expression)] + "'";
      hs_free_compile_error(err);
    }
    throw std::logic_error(msg);
  }
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
  buf_.resize(kBlock + kMaxLine);
  if (std::getenv("AIMEM_SCAN_STATS")) stats_ = std::make_unique<std::vector<uint64_t>>(PatternSet::instance().expressions().size());
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
  const uint64_t bit = 1ULL << PatternSet::instance().recognizer_of(id);
  if (self->have_cur_ && end <= self->cur_end_ && end > self->cur_start_) {
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
  blk_ = data;
  blk_len_ = len;
  counted_to_ = 0;
  blk_line_ = line_no_;
  have_cur_ = false;
  late_.clear();
  hs_scan(PatternSet::instance().database(), data, static_cast<unsigned>(len), 0, scratch_, &LineScanner::on_match, this);
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
    uint64_t mask = 0;
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
      mask |= 1ULL << PatternSet::instance().recognizer_of(id);
    }
    flush();
    late_.clear();
  }
  line_no_ += count_newlines(data, len);
  // A final piece without newline still counts as a line.
  if (len > 0 && data[len - 1] != '\n') ++line_no_;
}

void LineScanner::dispatch(std::string_view line, uint64_t line_no, uint64_t mask, const timeutil::LineTime* known_time) {
  ++candidates_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  timeutil::LineTime time;
  if (known_time) time = *known_time;

  // Framings that wrap the real text: a journalctl -o json record, a raw
  // /dev/kmsg record ("6,1234,518050606,-;text").
  std::string_view t = text::trim_left(line);
  if (!known_time && t.size() > 2 && t[0] == '{' && t.find("\"MESSAGE\"") != std::string_view::npos) {
    auto j = nlohmann::json::parse(t, nullptr, false);
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
    std::string_view rest;
    auto prio = text::parse_u64(t, &rest);
    if (prio && rest.size() > 4 && rest[0] == ',') {
      auto seq = text::parse_u64(rest.substr(1), &rest);
      if (seq && rest.size() > 2 && rest[0] == ',') {
        auto usec = text::parse_u64(rest.substr(1), &rest);
        size_t semi = rest.find(';');
        if (usec && !rest.empty() && rest[0] == ',' && semi != std::string_view::npos && semi < 16) {
          time.uptime_s = static_cast<double>(*usec) / 1e6;
          line = rest.substr(semi + 1);
          known_time = &time;
        }
      }
    }
  }
  if (!known_time) time = timeutil::parse_line_time(line, source_.reference_us);

  Line l{line, line_no, time, &source_};
  while (mask) {
    int r = __builtin_ctzll(mask);
    mask &= mask - 1;
    recognizers_[static_cast<size_t>(r)]->on_line(l, sink_);
  }
}

void LineScanner::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    size_t room = buf_.size() - buf_len_;
    size_t take = std::min(room, bytes.size());
    std::memcpy(buf_.data() + buf_len_, bytes.data(), take);
    buf_len_ += take;
    bytes_ += take;
    bytes.remove_prefix(take);
    if (buf_len_ >= kBlock) {
      const void* last = memrchr(buf_.data(), '\n', buf_len_);
      size_t cut;
      if (last) cut = static_cast<size_t>(static_cast<const char*>(last) - buf_.data()) + 1;
      else if (buf_len_ >= kMaxLine) cut = buf_len_;  // an over-long line: cut it
      else continue;
      scan_block(buf_.data(), cut, false);
      std::memmove(buf_.data(), buf_.data() + cut, buf_len_ - cut);
      buf_len_ -= cut;
    }
  }
}

bool LineScanner::feed_fd(int fd, void (*progress)(uint64_t, void*), void* arg) {
  for (;;) {
    size_t room = std::min(kBlock, buf_.size() - buf_len_);
    ssize_t n = ::read(fd, buf_.data() + buf_len_, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    buf_len_ += static_cast<size_t>(n);
    bytes_ += static_cast<uint64_t>(n);
    if (buf_len_ >= kBlock || buf_len_ == buf_.size()) {
      const void* last = memrchr(buf_.data(), '\n', buf_len_);
      size_t cut = 0;
      if (last) cut = static_cast<size_t>(static_cast<const char*>(last) - buf_.data()) + 1;
      else if (buf_len_ >= kMaxLine) cut = buf_len_;
      if (cut) {
        scan_block(buf_.data(), cut, false);
        std::memmove(buf_.data(), buf_.data() + cut, buf_len_ - cut);
        buf_len_ -= cut;
      }
    }
    if (progress) progress(bytes_, arg);
  }
}

void LineScanner::feed_record(std::string_view text, const timeutil::LineTime& time) {
  // Scan this one record on its own: flush buffered text first to keep order.
  if (buf_len_) {
    scan_block(buf_.data(), buf_len_, true);
    buf_len_ = 0;
  }
  if (text.size() > kMaxLine) text = text.substr(0, kMaxLine);
  bytes_ += text.size();
  struct Ctx {
    uint64_t mask = 0;
  } ctx;
  hs_scan(PatternSet::instance().database(), text.data(), static_cast<unsigned>(text.size()), 0, scratch_,
          [](unsigned id, unsigned long long, unsigned long long, unsigned, void* c) -> int {
            static_cast<Ctx*>(c)->mask |= 1ULL << PatternSet::instance().recognizer_of(id);
            return 0;
          },
          &ctx);
  ++line_no_;
  // A multi-line record (journal MESSAGE with newlines) is dispatched whole.
  if (ctx.mask) dispatch(text, line_no_, ctx.mask, &time);
}

void LineScanner::finish() {
  if (finished_) return;
  finished_ = true;
  if (buf_len_) {
    scan_block(buf_.data(), buf_len_, true);
    buf_len_ = 0;
  }
  for (auto& r : recognizers_) r->finish(sink_);
}

}  // namespace aimem
