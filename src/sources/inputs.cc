#include "sources/inputs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "core/text.h"
#include "core/time.h"
#include "core/units.h"
#include "sources/documents.h"

namespace aimem {
namespace {

constexpr size_t kSniff = 64 * 1024;
constexpr uint64_t kProgressThreshold = 100ULL * 1000 * 1000;

enum class Sniff { text, empty, binary, gzip, zstd, xz };

Sniff sniff(std::string_view head) {
  if (head.empty()) return Sniff::empty;
  auto u = [&](size_t i) { return static_cast<unsigned char>(head[i]); };
  if (head.size() >= 2 && u(0) == 0x1f && u(1) == 0x8b) return Sniff::gzip;
  if (head.size() >= 4 && u(0) == 0x28 && u(1) == 0xb5 && u(2) == 0x2f && u(3) == 0xfd) return Sniff::zstd;
  if (head.size() >= 6 && u(0) == 0xfd && head.substr(1, 4) == "7zXZ") return Sniff::xz;
  size_t odd = 0;
  for (unsigned char c : head)
    if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b)) ++odd;
  if (odd * 20 > head.size()) return Sniff::binary;
  return Sniff::text;
}

std::string sniff_problem(Sniff s, const std::string& name) {
  switch (s) {
    case Sniff::empty: return fmt::format("{}: empty input, nothing to read", name);
    case Sniff::binary: return fmt::format("{}: binary data, not a log or text output (skipped)", name);
    case Sniff::gzip: return fmt::format("{}: gzip-compressed; decompress it first: zcat {} | aimem diagnose -", name, name);
    case Sniff::zstd: return fmt::format("{}: zstd-compressed; decompress it first: zstdcat {} | aimem diagnose -", name, name);
    case Sniff::xz: return fmt::format("{}: xz-compressed; decompress it first: xzcat {} | aimem diagnose -", name, name);
    case Sniff::text: return {};
  }
  return {};
}

struct Progress {
  uint64_t total = 0;
  int last_percent = -1;
  std::string name;
};

void show_progress(uint64_t bytes, void* arg) {
  auto* p = static_cast<Progress*>(arg);
  if (!p->total) return;
  int percent = static_cast<int>(std::min<uint64_t>(100, bytes * 100 / p->total));
  if (percent == p->last_percent) return;
  p->last_percent = percent;
  int bar = percent / 4;
  fmt::print(stderr, "\r{} [{:<25}] {:3}% {} of {}", p->name, std::string(static_cast<size_t>(bar), '#'), percent,
             units::format_bytes(bytes), units::format_bytes(p->total));
  if (percent == 100) fmt::print(stderr, "\r{:<80}\r", "");
  std::fflush(stderr);
}

// A regular file mapped whole for a reader that wants it so (the scanner's gate):
// read ahead a window at a time, and its pages dropped from this process
// (MADV_DONTNEED) as soon as they are read, so memory stays bounded.
class MappedInput final : public TextReader::WholeInput {
 public:
  MappedInput(int fd, uint64_t length) {
    void* map = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) return;
    ::madvise(map, length, MADV_SEQUENTIAL);
    data = static_cast<const char*>(map);
    size = length;
  }
  ~MappedInput() override {
    if (data) ::munmap(const_cast<char*>(data), size);
  }
  MappedInput(const MappedInput&) = delete;
  MappedInput& operator=(const MappedInput&) = delete;
  void prefetch(uint64_t from, uint64_t len) const override {
#ifdef MADV_POPULATE_READ
    ::madvise(const_cast<char*>(data) + from, len, MADV_POPULATE_READ);
#else
    (void)from, (void)len;
#endif
  }
  void release(uint64_t from, uint64_t to) const override {
    const uint64_t page = 4096;
    from = from / page * page;
    if (to > from) ::madvise(const_cast<char*>(data) + from, to - from, MADV_DONTNEED);
  }
};

// Reads a descriptor to its end into the reader: a large regular file at its
// start whole through a mapping, anything else streamed into the reader's
// buffer. False (errno set) on a read error. `progress` (may be null) is
// called after each block with the bytes read so far.
bool scan_fd(TextReader& scanner, int fd, void (*progress)(uint64_t, void*), void* arg) {
  struct stat st{};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && scanner.wants_whole(static_cast<uint64_t>(st.st_size)) &&
      ::lseek(fd, 0, SEEK_CUR) == 0) {
    MappedInput mapped(fd, static_cast<uint64_t>(st.st_size));
    if (mapped.data && scanner.scan_whole(mapped, progress, arg)) return true;
  }
  for (;;) {
    size_t room = 0;
    char* space = scanner.stream_space(room);
    ssize_t n = ::read(fd, space, room);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) return true;
    scanner.stream_commit(static_cast<size_t>(n));
    if (progress) progress(scanner.bytes(), arg);
  }
}

// Reads one open descriptor: sniff the head, then stream the rest.
InputReport read_fd(int fd, const std::string& name, uint32_t index, int64_t reference_us, uint64_t size_hint,
                    bool regular, FactSink& sink, const InputOptions& options,
                    const TextReaders& readers) {
  InputReport report;
  report.name = name;
  std::string head(kSniff, '\0');
  size_t got = 0;
  while (got < head.size()) {
    // A regular file is sniffed with pread so that it can still be read from
    // its start as a whole (large files are mapped, see LineScanner).
    ssize_t n = regular ? ::pread(fd, head.data() + got, head.size() - got, static_cast<off_t>(got))
                        : ::read(fd, head.data() + got, head.size() - got);
    if (n < 0) {
      if (errno == EINTR) continue;
      report.usable = false;
      report.problem = fmt::format("{}: cannot read: {}", name, std::strerror(errno));
      return report;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  head.resize(got);
  Sniff kind = sniff(head);
  if (kind != Sniff::text) {
    report.usable = false;
    report.problem = sniff_problem(kind, name);
    return report;
  }

  SourceContext ctx;
  ctx.name = name;
  ctx.index = index;
  ctx.reference_us = reference_us;

  // A small input that is one structured document (docker inspect, kubectl
  // -o json/yaml, nvidia-smi -q -x, a bare number) is read as that document
  // as well as line by line.
  const bool whole = got < kSniff;
  std::string document_problem;
  if (whole) {
    DocumentResult doc = read_document(head, ctx, sink);
    if (!doc.problem.empty()) document_problem = doc.problem;
  }

  std::unique_ptr<TextReader> reader = readers(ctx, sink);
  TextReader& scanner = *reader;
  if (!regular || whole) scanner.feed(head);
  bool ok = true;
  if (!whole) {
    Progress progress{size_hint, -1, name};
    const bool show = options.progress && regular && size_hint > kProgressThreshold && isatty(2);
    ok = scan_fd(scanner, fd, show ? &show_progress : nullptr, &progress);
  }
  int read_errno = errno;
  scanner.finish();
  report.bytes = scanner.bytes();
  report.lines = scanner.lines();
  if (!ok) report.problem = fmt::format("{}: read error after {} bytes: {}", name, report.bytes, std::strerror(read_errno));
  else if (!document_problem.empty()) report.problem = document_problem;
  return report;
}

void read_path(const std::filesystem::path& path, uint32_t& index, size_t& files, int depth,
               std::vector<InputReport>& reports, FactSink& sink, const InputOptions& options,
               const TextReaders& readers) {
  const std::string name = path.string();
  struct stat st{};
  if (::stat(name.c_str(), &st) != 0) {
    reports.push_back({name, false, fmt::format("{}: {}", name, std::strerror(errno)), 0, 0});
    return;
  }
  if (S_ISDIR(st.st_mode)) {
    if (depth >= options.max_depth) {
      reports.push_back({name, false, fmt::format("{}: deeper than {} folders, not read", name, options.max_depth), 0, 0});
      return;
    }
    std::vector<std::filesystem::path> entries;
    std::error_code ec;
    // No skip_permission_denied: a folder that cannot be listed is named, with why.
    for (std::filesystem::directory_iterator it(path, ec), end;
         !ec && it != end; it.increment(ec)) {
      if (it->is_symlink(ec)) continue;  // no loops, nothing outside what was named
      entries.push_back(it->path());
      if (entries.size() > options.max_files * 2) break;
    }
    if (ec) reports.push_back({name, false, fmt::format("{}: cannot read this folder: {}", name, ec.message()), 0, 0});
    std::sort(entries.begin(), entries.end());
    for (const auto& e : entries) {
      if (files >= options.max_files) {
        reports.push_back({name, false, fmt::format("{}: more than {} files; the rest were not read", name, options.max_files), 0, 0});
        return;
      }
      read_path(e, index, files, depth + 1, reports, sink, options, readers);
    }
    return;
  }
  if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode)) {
    reports.push_back({name, false, fmt::format("{}: not a regular file (skipped)", name), 0, 0});
    return;
  }
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    reports.push_back({name, false, fmt::format("{}: {}", name, std::strerror(errno)), 0, 0});
    return;
  }
  // Blocking reads from here on (O_NONBLOCK only kept open() from hanging on a FIFO).
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  ++files;
  int64_t mtime_us = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000 + st.st_mtim.tv_nsec / 1000;
  reports.push_back(read_fd(fd, name, index++, mtime_us, static_cast<uint64_t>(st.st_size), S_ISREG(st.st_mode), sink, options, readers));
  ::close(fd);
}

}  // namespace

std::vector<InputReport> read_inputs(const std::vector<std::string>& args, FactSink& sink, const InputOptions& options,
                                     const TextReaders& readers) {
  std::vector<InputReport> reports;
  uint32_t index = 0;
  size_t files = 0;
  for (const auto& arg : args) {
    if (arg == "-") {
      reports.push_back(read_fd(0, "stdin", index++, timeutil::now_us(), 0, false, sink, options, readers));
      continue;
    }
    read_path(arg, index, files, 0, reports, sink, options, readers);
  }
  return reports;
}

InputReport read_text(std::string_view name, std::string_view content, FactSink& sink, const TextReaders& readers,
                      uint32_t index) {
  InputReport report;
  report.name = std::string(name);
  Sniff kind = sniff(content.substr(0, kSniff));
  if (kind != Sniff::text) {
    report.usable = false;
    report.problem = sniff_problem(kind, report.name);
    return report;
  }
  SourceContext ctx;
  ctx.name = report.name;
  ctx.index = index;
  ctx.reference_us = timeutil::now_us();
  if (content.size() < kSniff) {
    DocumentResult doc = read_document(content, ctx, sink);
    report.problem = doc.problem;
  }
  std::unique_ptr<TextReader> reader = readers(ctx, sink);
  TextReader& scanner = *reader;
  scanner.feed(content);
  scanner.finish();
  report.bytes = scanner.bytes();
  report.lines = scanner.lines();
  return report;
}

}  // namespace aimem
