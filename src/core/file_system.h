// A read-only view of files and folders, handed by a caller to a pure reader
// (fit's model readers: a GGUF header, safetensors headers, config.json, the
// files of a model folder). The reader decides what to read and how much; the
// view only opens, lists and reads. sources/files.h has the machine's
// (local_files()); a test may hand in its own. Nothing in core touches the
// system: this header only names what a reader may ask for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"

namespace aimem {

enum class FileKind : uint8_t { missing, regular, directory, other };

// One opened file, read at offsets: a GGUF header is read through a small
// window, never the whole (multi-GB) file.
class RandomAccessFile {
 public:
  virtual ~RandomAccessFile() = default;
  virtual FileKind kind() const = 0;  // what was opened (a FIFO or a device is `other`)
  virtual uint64_t size() const = 0;  // bytes, as the file's status gave them when opened
  // Reads up to n bytes at offset `at` into dst: the count read (0 at the end
  // of the file or where it shrank), or minus the errno of the failure.
  virtual int64_t read_at(void* dst, uint64_t n, uint64_t at) = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // What is at path, following symbolic links; missing when it cannot be looked at.
  virtual FileKind kind(const std::string& path) const = 0;
  // The names in a folder in the order it lists them ("." and ".." left out);
  // empty when it cannot be listed.
  virtual std::vector<std::string> list(const std::string& dir) const = 0;
  // A whole file, `what` it is for the messages ("JSON file"): at most
  // max_bytes, else an error; with regular_only anything but a regular file is
  // refused at once. Errors name the path (sources/readfile.h read_user_file).
  virtual Result<std::string> read(const std::string& path, size_t max_bytes, const std::string& what,
                                   bool regular_only) const = 0;
  // An interface only: the implementation that touches the system is
  // sources/files.h; pure readers (fit) are handed it.
  // Opened for reading at offsets, without blocking on a FIFO. Errors:
  // "PATH: cannot open: WHY", "PATH: cannot stat: WHY". An interface only:
  // sources/files.h implements it with the system calls.
  virtual Result<std::unique_ptr<RandomAccessFile>> open(const std::string& path) const = 0;  // interface: sources/files.h implements it
};

}  // namespace aimem
