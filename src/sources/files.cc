#include "sources/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sources/readfile.h"

namespace aimem {
namespace {

FileKind kind_of(mode_t m) {
  if (S_ISREG(m)) return FileKind::regular;
  if (S_ISDIR(m)) return FileKind::directory;
  return FileKind::other;
}

class LocalFile final : public RandomAccessFile {
 public:
  LocalFile(int fd, FileKind kind, uint64_t size) : fd_(fd), kind_(kind), size_(size) {}
  ~LocalFile() override { ::close(fd_); }
  LocalFile(const LocalFile&) = delete;
  LocalFile& operator=(const LocalFile&) = delete;

  FileKind kind() const override { return kind_; }
  uint64_t size() const override { return size_; }
  int64_t read_at(void* dst, uint64_t n, uint64_t at) override {
    for (;;) {
      ssize_t got = ::pread(fd_, dst, n, static_cast<off_t>(at));
      if (got < 0 && errno == EINTR) continue;
      return got < 0 ? -int64_t(errno) : int64_t(got);
    }
  }

 private:
  int fd_;
  FileKind kind_;
  uint64_t size_;
};

class LocalFiles final : public FileSystem {
 public:
  FileKind kind(const std::string& path) const override {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? kind_of(st.st_mode) : FileKind::missing;
  }

  std::vector<std::string> list(const std::string& dir) const override {
    std::vector<std::string> names;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return names;
    while (dirent* e = ::readdir(d)) {
      std::string_view n = e->d_name;
      if (n != "." && n != "..") names.emplace_back(n);
    }
    ::closedir(d);
    return names;
  }

  Result<std::string> read(const std::string& path, size_t max_bytes, const std::string& what,
                           bool regular_only) const override {
    return read_user_file(path, max_bytes, what, regular_only);
  }

  Result<std::unique_ptr<RandomAccessFile>> open(const std::string& path) const override {
    // O_NONBLOCK: a FIFO would block the open (the reader refuses it after).
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return make_error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      int e = errno;
      ::close(fd);
      return make_error(path + ": cannot stat: " + std::strerror(e));
    }
    return std::unique_ptr<RandomAccessFile>(
        new LocalFile(fd, kind_of(st.st_mode), static_cast<uint64_t>(st.st_size)));
  }
};

}  // namespace

const FileSystem& local_files() {
  static const LocalFiles files;
  return files;
}

}  // namespace aimem
