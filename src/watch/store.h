// The SQLite store of samples and events that `aimem watch` and `aimem run`
// write and `aimem report` reads. One file, WAL mode, so a reader never blocks
// the writer and a kill -9 at any moment loses at most the transaction in
// flight (each append is one transaction) and never corrupts the file.
// Retention bounds both age and size; append() enforces it by itself each time
// max_bytes/16 bytes were appended, and callers call enforce_retention(now)
// now and then (e.g. once a minute) so age applies on an idle store too.
// Thread-safe: one mutex serialises the connection.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sources/sample.h"
#include "core/result.h"

struct sqlite3;
struct sqlite3_stmt;

namespace aimem::watch {

// 0 for either bound means unbounded.
struct Retention {
  int64_t max_age_us = 7LL * 24 * 3600 * 1000000;
  uint64_t max_bytes = 256ull << 20;
};

class Store {
 public:
  // Opens or creates the file (parent directories created with 0700, the file
  // with 0600), WAL mode, synchronous=NORMAL, busy_timeout; refuses a file
  // that is not an aimem store (clear error naming the file; never touches
  // it). An empty (0-byte) file is taken as a new store.
  static Result<std::unique_ptr<Store>> open(const std::string& path, Retention retention);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  bool append(const Sample&);  // one transaction per call; false: see last_error()
  bool append(const Event&);
  void set_meta(const std::string& key, const std::string& value);  // "command", "memory_limit", "exit_status"
  std::optional<std::string> meta(const std::string& key) const;
  std::vector<std::pair<std::string, std::string>> all_meta() const;  // by key, at most 1000

  // In time order (ties in insertion order), at most `max`.
  std::vector<Sample> samples(int64_t from_us, int64_t to_us, size_t max = 100000) const;
  // The same, one at a time, without holding them all; fn returns false to
  // stop; fn must not call the store (its lock is held). Returns how many
  // were passed to fn.
  size_t scan_samples(int64_t from_us, int64_t to_us, const std::function<bool(const Sample&)>& fn) const;
  // In time order; kind "" for every kind; at most 100000.
  std::vector<Event> events(int64_t from_us, int64_t to_us, const std::string& kind = "") const;
  size_t sample_count() const;
  std::optional<int64_t> first_time_us() const;
  std::optional<int64_t> last_time_us() const;

  // Deletes rows older than now - max_age, then the oldest samples (and the
  // events before the oldest sample kept) until the data is under 65% of
  // max_bytes when it was over 75% (hysteresis, so it runs rarely: the WAL,
  // up to max_bytes/8, and the growth between passes fill the rest); frees the
  // pages (auto_vacuum=INCREMENTAL) and truncates the WAL.
  void enforce_retention(int64_t now_us);
  std::string integrity() const;  // "ok" or PRAGMA integrity_check's message
  const std::string& path() const { return path_; }
  std::string last_error() const;

 private:
  Store() = default;
  bool exec(const char* sql);
  std::optional<int64_t> query_int(const char* sql) const;
  void enforce_locked(int64_t now_us);
  bool insert(sqlite3_stmt* st, const std::string& what, int64_t time_us, size_t bytes);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* insert_sample_ = nullptr;
  sqlite3_stmt* insert_event_ = nullptr;
  std::string path_;
  Retention retention_;
  mutable std::mutex mu_;
  mutable std::string error_;
  uint64_t appended_bytes_ = 0;  // since the last enforce_retention
  int64_t latest_us_ = 0;        // newest time appended, the "now" of automatic retention
};

// $XDG_STATE_HOME/aimem/aimem.db, or ~/.local/state/aimem/aimem.db.
std::string default_store_path();

}  // namespace aimem::watch
