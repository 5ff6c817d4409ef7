// Schema (PRAGMA user_version = kSchemaVersion, application_id = kAppId):
//   samples(id INTEGER PRIMARY KEY, time_us, body)  index (time_us): body is the
//     compact JSON of sample_json.h; range reads and "delete the oldest" walk
//     the index, so every operation costs O(log n + rows touched).
//   events(id, time_us, kind, key, summary, body)   indexes (time_us), (kind, key, time_us)
//   meta(key PRIMARY KEY, value)
// The file is recognised by the application_id in its header (bytes 68..71),
// read before SQLite ever opens it, so a foreign file is never modified (SQLite
// would otherwise roll back a hot journal or replay a WAL when opening it). A
// new store is created in rollback-journal mode and only then switched to WAL,
// so its header, with the id, is in the main file from the first commit.
#include "watch/store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <fmt/format.h>

#include "core/doc_reader.h"
#include "sources/environment.h"
#include "watch/sample_json.h"

namespace aimem::watch {
namespace {

constexpr int32_t kAppId = 0x61696d6d;  // "aimm"
constexpr int kSchemaVersion = 1;
constexpr size_t kMaxEvents = 100000;
constexpr int kBusyMs = 5000;  // a writer's transactions are short; wait this long for one

// Migrations: kMigrations[v] takes a store from version v to v + 1.
constexpr const char* kMigrations[] = {
    "CREATE TABLE samples(id INTEGER PRIMARY KEY, time_us INTEGER NOT NULL, body TEXT NOT NULL);"
    "CREATE INDEX samples_time ON samples(time_us);"
    "CREATE TABLE events(id INTEGER PRIMARY KEY, time_us INTEGER NOT NULL, kind TEXT NOT NULL,"
    " key TEXT NOT NULL, summary TEXT NOT NULL, body TEXT NOT NULL);"
    "CREATE INDEX events_time ON events(time_us);"
    "CREATE INDEX events_kind ON events(kind, key, time_us);"
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

// A prepared statement that finalizes itself.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql) { sqlite3_prepare_v2(db, sql, -1, &st_, nullptr); }
  ~Stmt() { sqlite3_finalize(st_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  sqlite3_stmt* get() const { return st_; }
  explicit operator bool() const { return st_ != nullptr; }

 private:
  sqlite3_stmt* st_ = nullptr;
};

std::string column_text(sqlite3_stmt* st, int i) {
  const unsigned char* p = sqlite3_column_text(st, i);
  return p ? std::string(reinterpret_cast<const char*>(p), sqlite3_column_bytes(st, i)) : std::string();
}

// mkdir -p for the parents of `path`, creating only missing ones, with 0700.
Result<bool> make_parents(const std::string& path) {
  for (size_t pos = path.find('/', 1); pos != std::string::npos; pos = path.find('/', pos + 1)) {
    std::string dir = path.substr(0, pos);
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return make_error(fmt::format("{}: cannot create directory {}: {}", path, dir, std::strerror(errno)));
    }
  }
  return true;
}

// Checks the header of an existing file before SQLite sees it. `empty` is set
// for a 0-byte file (a new store, or one whose creation was interrupted).
Result<bool> check_header(const std::string& path, bool* empty) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return true;  // absent: created later
  if (S_ISDIR(st.st_mode)) {
    return make_error(fmt::format("{}: is a directory, not an aimem store", path));
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(fmt::format("{}: not a regular file, not an aimem store", path));
  }
  *empty = st.st_size == 0;
  if (*empty) return true;
  unsigned char h[100] = {};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return make_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  ssize_t n = pread(fd, h, sizeof h, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof h) || std::memcmp(h, "SQLite format 3", 16) != 0) {
    return make_error(fmt::format("{}: not an aimem store (not an SQLite database); refusing to use it, it was left as it is",
                         path));
  }
  int32_t id = static_cast<int32_t>(uint32_t(h[68]) << 24 | uint32_t(h[69]) << 16 | uint32_t(h[70]) << 8 | h[71]);
  if (id != kAppId) {
    return make_error(fmt::format(
        "{}: an SQLite database but not an aimem store (application_id {:#x}); refusing to use it, it was left as it is",
        path, static_cast<uint32_t>(id)));
  }
  return true;
}

}  // namespace

Result<std::unique_ptr<Store>> Store::open(const std::string& path, Retention retention) {
  if (path.empty()) {
    return make_error("store path is empty");
  }
  bool empty = true;
  if (auto header = check_header(path, &empty); !header) return header.error();
  if (access(path.c_str(), F_OK) != 0) {
    if (auto made = make_parents(path); !made) return made.error();
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      return make_error(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
    }
    if (fd >= 0) ::close(fd);
  }
  std::unique_ptr<Store> s(new Store());
  s->path_ = path;
  s->retention_ = retention;
  if (sqlite3_open_v2(path.c_str(), &s->db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    return make_error(fmt::format("{}: cannot open: {}", path, s->db_ ? sqlite3_errmsg(s->db_) : "out of memory"));
  }
  sqlite3_busy_timeout(s->db_, kBusyMs);
  auto fail = [&](const std::string& what) {
    return make_error(fmt::format("{}: {}: {}", path, what, sqlite3_errmsg(s->db_)));
  };
  if (empty && !s->exec("PRAGMA auto_vacuum=INCREMENTAL")) return fail("cannot set auto_vacuum");
  if (!s->exec("BEGIN IMMEDIATE")) return fail("cannot lock");
  auto version = s->query_int("PRAGMA user_version");
  auto app = s->query_int("PRAGMA application_id");
  if (!version || !app) return fail("cannot read the header");
  auto tables = s->query_int("SELECT count(*) FROM sqlite_master");
  if (*app != kAppId && (!empty || tables.value_or(1) > 0)) {  // changed since check_header
    s->exec("ROLLBACK");
    return make_error(fmt::format("{}: not an aimem store; refusing to use it", path));
  }
  if (*version > kSchemaVersion) {
    s->exec("ROLLBACK");
    return make_error(fmt::format("{}: written by a newer aimem (schema {}, this one reads up to {}); use that aimem or another file",
                         path, *version, kSchemaVersion));
  }
  if (*version < kSchemaVersion) {
    if (!s->exec(fmt::format("PRAGMA application_id={}", kAppId).c_str())) return fail("cannot initialise");
    for (int64_t v = *version; v < kSchemaVersion; ++v)
      if (!s->exec(kMigrations[v])) return fail(fmt::format("cannot migrate schema {} to {}", v, v + 1));
    if (!s->exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str())) return fail("cannot initialise");
  }
  if (!s->exec("COMMIT")) return fail("cannot initialise");
  // The WAL stays small: checkpointed every max_bytes/8 and truncated to that
  // size after each reset, so db + wal stays near the bound.
  int64_t wal_bytes = retention.max_bytes ? std::clamp<int64_t>(retention.max_bytes / 8, 64 << 10, 8 << 20) : 8 << 20;
  int64_t page = s->query_int("PRAGMA page_size").value_or(4096);
  if (page <= 0) return fail("bad page size");
  int64_t wal_pages = wal_bytes / page;
  auto mode = [&]() -> std::string {
    Stmt st(s->db_, "PRAGMA journal_mode=WAL");
    return st && sqlite3_step(st.get()) == SQLITE_ROW ? column_text(st.get(), 0) : "";
  }();
  if (mode != "wal") return fail("cannot switch to WAL mode");
  // SQLite's page cache defaults to 2 MiB a connection, which a store that
  // mostly appends fills within a minute at 10 Hz: a fifth of aimem watch's
  // RSS budget (issue #4: under 10 MiB). The appends touch the last pages of
  // two tables and their indexes; reads (the OOM window, report) are short
  // ranges; 256 KiB holds both.
  if (!s->exec("PRAGMA cache_size=-256") || !s->exec("PRAGMA synchronous=NORMAL") ||
      !s->exec(fmt::format("PRAGMA journal_size_limit={}", wal_bytes).c_str()) ||
      !s->exec(fmt::format("PRAGMA wal_autocheckpoint={}", std::max<int64_t>(wal_pages, 16)).c_str()))
    return fail("cannot configure");
  if (sqlite3_prepare_v2(s->db_, "INSERT INTO samples(time_us, body) VALUES(?1, ?2)", -1, &s->insert_sample_,
                         nullptr) != SQLITE_OK ||
      sqlite3_prepare_v2(s->db_,
                         "INSERT INTO events(time_us, kind, key, summary, body) VALUES(?1, ?2, ?3, ?4, ?5)", -1,
                         &s->insert_event_, nullptr) != SQLITE_OK)
    return fail("cannot prepare");
  return s;
}

Store::~Store() {
  sqlite3_finalize(insert_sample_);
  sqlite3_finalize(insert_event_);
  sqlite3_close_v2(db_);
}

bool Store::exec(const char* sql) {
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) error_ = fmt::format("{}: {}", path_, msg ? msg : sqlite3_errstr(rc));
  sqlite3_free(msg);
  return rc == SQLITE_OK;
}

std::optional<int64_t> Store::query_int(const char* sql) const {
  Stmt st(db_, sql);
  if (!st || sqlite3_step(st.get()) != SQLITE_ROW || sqlite3_column_type(st.get(), 0) == SQLITE_NULL)
    return std::nullopt;
  return sqlite3_column_int64(st.get(), 0);
}

std::string Store::last_error() const {
  std::lock_guard lock(mu_);
  return error_;
}

bool Store::insert(sqlite3_stmt* st, const std::string& what, int64_t time_us, size_t bytes) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  if (rc != SQLITE_DONE) {
    error_ = fmt::format("{}: cannot append {}: {}", path_, what, sqlite3_errmsg(db_));
    return false;
  }
  latest_us_ = std::max(latest_us_, time_us);
  appended_bytes_ += bytes;
  if (retention_.max_bytes && appended_bytes_ >= std::max<uint64_t>(retention_.max_bytes / 16, 16 << 10))
    enforce_locked(latest_us_);
  return true;
}

bool Store::append(const Sample& s) {
  std::string body = sample_body(s);
  std::lock_guard lock(mu_);
  sqlite3_bind_int64(insert_sample_, 1, s.time_us);
  sqlite3_bind_text(insert_sample_, 2, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
  return insert(insert_sample_, "a sample", s.time_us, body.size());
}

bool Store::append(const Event& e) {
  std::lock_guard lock(mu_);
  auto bind = [&](int i, const std::string& v) {
    sqlite3_bind_text(insert_event_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC);
  };
  sqlite3_bind_int64(insert_event_, 1, e.time_us);
  bind(2, e.kind);
  bind(3, e.key);
  bind(4, e.summary);
  bind(5, e.body);
  return insert(insert_event_, "an event", e.time_us, e.kind.size() + e.key.size() + e.summary.size() + e.body.size());
}

void Store::set_meta(const std::string& key, const std::string& value) {
  std::lock_guard lock(mu_);
  Stmt st(db_, "INSERT INTO meta(key, value) VALUES(?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
  if (!st) return;
  sqlite3_bind_text(st.get(), 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
  sqlite3_bind_text(st.get(), 2, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
  if (sqlite3_step(st.get()) != SQLITE_DONE) error_ = fmt::format("{}: cannot set {}: {}", path_, key, sqlite3_errmsg(db_));
}

std::optional<std::string> Store::meta(const std::string& key) const {
  std::lock_guard lock(mu_);
  Stmt st(db_, "SELECT value FROM meta WHERE key = ?1");
  if (!st) return std::nullopt;
  sqlite3_bind_text(st.get(), 1, key.data(), static_cast<int>(key.size()), SQLITE_STATIC);
  if (sqlite3_step(st.get()) != SQLITE_ROW) return std::nullopt;
  return column_text(st.get(), 0);
}

std::vector<std::pair<std::string, std::string>> Store::all_meta() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, std::string>> out;
  Stmt st(db_, "SELECT key, value FROM meta ORDER BY key LIMIT 1000");
  while (st && sqlite3_step(st.get()) == SQLITE_ROW) out.emplace_back(column_text(st.get(), 0), column_text(st.get(), 1));
  return out;
}

size_t Store::scan_samples(int64_t from_us, int64_t to_us, const std::function<bool(const Sample&)>& fn) const {
  std::lock_guard lock(mu_);
  Stmt st(db_, "SELECT time_us, body FROM samples WHERE time_us >= ?1 AND time_us <= ?2 ORDER BY time_us, id");
  if (!st) return 0;
  sqlite3_bind_int64(st.get(), 1, from_us);
  sqlite3_bind_int64(st.get(), 2, to_us);
  size_t n = 0;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    auto body = doc::parse_json_or_discarded(column_text(st.get(), 1));
    if (body.is_discarded()) continue;  // never written by aimem; skip rather than fail the whole read
    Sample s = sample_from_json(body);
    s.time_us = sqlite3_column_int64(st.get(), 0);
    ++n;
    if (!fn(s)) break;
  }
  return n;
}

std::vector<Sample> Store::samples(int64_t from_us, int64_t to_us, size_t max) const {
  std::vector<Sample> out;
  if (max == 0) return out;
  scan_samples(from_us, to_us, [&](const Sample& s) {
    out.push_back(s);
    return out.size() < max;
  });
  return out;
}

std::vector<Event> Store::events(int64_t from_us, int64_t to_us, const std::string& kind) const {
  std::lock_guard lock(mu_);
  Stmt st(db_, kind.empty() ? "SELECT time_us, kind, key, summary, body FROM events WHERE time_us >= ?1 AND "
                              "time_us <= ?2 ORDER BY time_us, id LIMIT ?3"
                            : "SELECT time_us, kind, key, summary, body FROM events WHERE time_us >= ?1 AND "
                              "time_us <= ?2 AND kind = ?4 ORDER BY time_us, id LIMIT ?3");
  std::vector<Event> out;
  if (!st) return out;
  sqlite3_bind_int64(st.get(), 1, from_us);
  sqlite3_bind_int64(st.get(), 2, to_us);
  sqlite3_bind_int64(st.get(), 3, static_cast<int64_t>(kMaxEvents));
  if (!kind.empty()) sqlite3_bind_text(st.get(), 4, kind.data(), static_cast<int>(kind.size()), SQLITE_STATIC);
  while (sqlite3_step(st.get()) == SQLITE_ROW)
    out.push_back({sqlite3_column_int64(st.get(), 0), column_text(st.get(), 1), column_text(st.get(), 2),
                   column_text(st.get(), 3), column_text(st.get(), 4)});
  return out;
}

size_t Store::sample_count() const {
  std::lock_guard lock(mu_);
  return static_cast<size_t>(query_int("SELECT count(*) FROM samples").value_or(0));
}

std::optional<int64_t> Store::first_time_us() const {
  std::lock_guard lock(mu_);
  return query_int("SELECT min(time_us) FROM samples");
}

std::optional<int64_t> Store::last_time_us() const {
  std::lock_guard lock(mu_);
  return query_int("SELECT max(time_us) FROM samples");
}

void Store::enforce_retention(int64_t now_us) {
  std::lock_guard lock(mu_);
  enforce_locked(now_us);
}

void Store::enforce_locked(int64_t now_us) {
  appended_bytes_ = 0;
  if (!exec("BEGIN IMMEDIATE")) return;
  if (retention_.max_age_us > 0 && now_us > INT64_MIN + retention_.max_age_us) {
    int64_t cutoff = now_us - retention_.max_age_us;
    for (const char* sql : {"DELETE FROM samples WHERE time_us < ?1", "DELETE FROM events WHERE time_us < ?1"}) {
      Stmt st(db_, sql);
      sqlite3_bind_int64(st.get(), 1, cutoff);
      sqlite3_step(st.get());
    }
  }
  int64_t page = query_int("PRAGMA page_size").value_or(4096);
  auto used = [&] { return (query_int("PRAGMA page_count").value_or(0) - query_int("PRAGMA freelist_count").value_or(0)) * page; };
  const int64_t high = static_cast<int64_t>(retention_.max_bytes / 100 * 75), target = static_cast<int64_t>(retention_.max_bytes / 100 * 65);
  bool shrunk = false;
  // A few rounds: the first estimate (rows in proportion to bytes) is close
  // unless sample sizes vary a lot along the timeline.
  for (int round = 0; retention_.max_bytes && round < 8; ++round) {
    int64_t u = used();
    if (u <= (shrunk ? target : high)) break;
    shrunk = true;
    int64_t n = query_int("SELECT count(*) FROM samples").value_or(0);
    const char* sql = "DELETE FROM samples WHERE id IN (SELECT id FROM samples ORDER BY time_us, id LIMIT ?1)";
    if (n == 0) {  // only events left
      n = query_int("SELECT count(*) FROM events").value_or(0);
      if (n == 0) break;
      sql = "DELETE FROM events WHERE id IN (SELECT id FROM events ORDER BY time_us, id LIMIT ?1)";
    }
    int64_t k = std::max<int64_t>(1, n - static_cast<int64_t>(static_cast<double>(n) * target / u));
    Stmt st(db_, sql);
    sqlite3_bind_int64(st.get(), 1, k);
    sqlite3_step(st.get());
    // Events before the oldest sample kept go with it: the timeline stays whole.
    if (auto oldest = query_int("SELECT min(time_us) FROM samples")) {
      Stmt ev(db_, "DELETE FROM events WHERE time_us < ?1");
      sqlite3_bind_int64(ev.get(), 1, *oldest);
      sqlite3_step(ev.get());
    }
  }
  if (!exec("COMMIT")) {
    exec("ROLLBACK");
    return;
  }
  if (query_int("PRAGMA freelist_count").value_or(0) > 0) exec("PRAGMA incremental_vacuum");
  // Copies the WAL into the file and truncates it. Without waiting: while a
  // reader (aimem report) holds an old snapshot it does what it can, like a
  // passive checkpoint, instead of stalling the sampler for busy_timeout.
  sqlite3_busy_timeout(db_, 0);
  sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
  sqlite3_busy_timeout(db_, kBusyMs);
}

std::string Store::integrity() const {
  std::lock_guard lock(mu_);
  Stmt st(db_, "PRAGMA integrity_check");
  if (!st) return sqlite3_errmsg(db_);
  std::string out;
  while (sqlite3_step(st.get()) == SQLITE_ROW) {
    if (!out.empty()) out += "\n";
    out += column_text(st.get(), 0);
  }
  return out.empty() ? std::string(sqlite3_errmsg(db_)) : out;
}

std::string default_store_path() {
  auto xdg = environment_variable("XDG_STATE_HOME");
  if (xdg && !xdg->empty() && (*xdg)[0] == '/') return *xdg + "/aimem/aimem.db";  // the spec ignores relative values
  return home_directory() + "/.local/state/aimem/aimem.db";
}

}  // namespace aimem::watch
