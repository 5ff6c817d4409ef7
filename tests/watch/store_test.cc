// The SQLite store: round trips, refusing foreign files without touching them,
// retention by age and by size (db + WAL on disk), and kill -9 in the middle
// of writes at random moments (reopen, integrity ok, whole samples in order).
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <thread>

#include "support/test_support.h"
#include "watch/sample_json.h"
#include "watch/store.h"

namespace aimem::watch {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kT0 = 1764428400000000;  // 2025-11-29 15:00 UTC
constexpr int64_t kSecond = 1000000;

// A sample whose every field follows from i, so a reader can check that a row
// came back whole. `pad` processes make the body larger.
Sample make_sample(int64_t i, int pad = 2) {
  Sample s;
  s.time_us = kT0 + i * kSecond;
  s.host.mem_total = 16ull << 30;
  s.host.mem_available = (8ull << 30) - static_cast<uint64_t>(i) * 4096;
  CgroupSample c;
  c.path = "/aimem/run-" + std::to_string(i % 3);
  c.version = 1;
  c.usage = static_cast<uint64_t>(i) * 1000;
  c.limit = 48ull << 20;
  s.cgroups.push_back(c);
  for (int k = 0; k < pad; ++k) {
    ProcessSample p;
    p.pid = 1000 + k;
    p.ppid = 1;
    p.comm = "worker-" + std::to_string(k);
    p.rss = static_cast<uint64_t>(i + k);
    s.processes.push_back(p);
  }
  return s;
}

bool same(const Sample& a, const Sample& b) { return dump_compact(to_json(a)) == dump_compact(to_json(b)); }

uint64_t file_size(const std::string& p) {
  struct stat st {};
  return stat(p.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

std::unique_ptr<Store> open_ok(const std::string& path, Retention r = {}) {
  return test::take(Store::open(path, r));
}

// The message of a refused open; the test fails when the store opened.
std::string refusal(const Result<std::unique_ptr<Store>>& r) {
  EXPECT_FALSE(r);
  return r ? std::string() : r.error().message;
}

TEST(Store, RoundTripsSamplesEventsAndMeta) {
  std::string dir = test::temp_dir("store-rt");
  std::string path = dir + "/a/b/aimem.db";  // parents created
  {
    auto s = open_ok(path);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->path(), path);
    EXPECT_EQ(s->sample_count(), 0u);
    EXPECT_FALSE(s->first_time_us());
    // Appended out of order: read back in time order.
    for (int64_t i : {3, 1, 2, 0, 4}) ASSERT_TRUE(s->append(make_sample(i))) << s->last_error();
    ASSERT_TRUE(s->append(Event{kT0 + 2 * kSecond, "oom_kill", "/aimem/run-2", "python3 killed", R"({"layer":"container_limit"})"}));
    ASSERT_TRUE(s->append(Event{kT0 + 3 * kSecond, "alert", "/aimem/run-0", "5s to exhaustion", "{}"}));
    s->set_meta("command", "python3 alloc.py");
    s->set_meta("exit_status", "1");
    s->set_meta("exit_status", "137");  // replaced
  }
  auto s = open_ok(path);
  ASSERT_TRUE(s);
  EXPECT_EQ((fs::status(dir + "/a").permissions() & fs::perms::all), fs::perms::owner_all);
  EXPECT_EQ((fs::status(path).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_EQ(s->sample_count(), 5u);
  EXPECT_EQ(s->first_time_us(), kT0);
  EXPECT_EQ(s->last_time_us(), kT0 + 4 * kSecond);
  auto all = s->samples(INT64_MIN, INT64_MAX);
  ASSERT_EQ(all.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(same(all[i], make_sample(i))) << i;
  auto mid = s->samples(kT0 + kSecond, kT0 + 3 * kSecond);
  ASSERT_EQ(mid.size(), 3u);
  EXPECT_EQ(mid.front().time_us, kT0 + kSecond);
  EXPECT_EQ(s->samples(INT64_MIN, INT64_MAX, 2).size(), 2u);
  auto ev = s->events(INT64_MIN, INT64_MAX);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].kind, "oom_kill");
  EXPECT_EQ(ev[0].key, "/aimem/run-2");
  EXPECT_EQ(ev[0].summary, "python3 killed");
  EXPECT_EQ(ev[0].body, R"({"layer":"container_limit"})");
  EXPECT_EQ(s->events(INT64_MIN, INT64_MAX, "alert").size(), 1u);
  EXPECT_EQ(s->events(INT64_MIN, kT0 + 2 * kSecond).size(), 1u);
  EXPECT_EQ(s->meta("command"), "python3 alloc.py");
  EXPECT_EQ(s->meta("exit_status"), "137");
  EXPECT_FALSE(s->meta("nothing"));
  EXPECT_EQ(s->integrity(), "ok");
  fs::remove_all(dir);
}

// The bytes of the file and whether SQLite left a -wal/-shm/-journal beside it.
std::string snapshot(const std::string& path) {
  std::string out = test::read_file(path);
  for (const char* suffix : {"-wal", "-shm", "-journal"})
    if (fs::exists(path + suffix)) out += std::string("|") + suffix;
  return out;
}

TEST(Store, RefusesATextFileWithoutTouchingIt) {
  std::string dir = test::temp_dir("store-text");
  std::string path = dir + "/notes.db";
  test::write_file(path, "my notes, not a database\n");
  std::string before = snapshot(path), err;
  err = refusal(Store::open(path, {}));
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("not an aimem store"), std::string::npos) << err;
  EXPECT_EQ(snapshot(path), before);
  // A directory and a short binary file are refused too.
  err = refusal(Store::open(dir, {}));
  EXPECT_NE(err.find("directory"), std::string::npos) << err;
  test::write_file(path, std::string("SQLite format 3\0", 16));
  err = refusal(Store::open(path, {}));
  fs::remove_all(dir);
}

TEST(Store, RefusesAForeignSqliteDatabaseWithoutTouchingIt) {
  std::string dir = test::temp_dir("store-foreign");
  std::string path = dir + "/places.sqlite";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE samples(x); INSERT INTO samples VALUES(1);", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  std::string before = snapshot(path), err;
  err = refusal(Store::open(path, {}));
  EXPECT_NE(err.find(path), std::string::npos) << err;
  EXPECT_NE(err.find("not an aimem store"), std::string::npos) << err;
  EXPECT_EQ(snapshot(path), before);
  fs::remove_all(dir);
}

TEST(Store, RefusesAStoreFromANewerSchema) {
  std::string dir = test::temp_dir("store-newer");
  std::string path = dir + "/aimem.db";
  open_ok(path).reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "PRAGMA user_version=99", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  std::string err;
  err = refusal(Store::open(path, {}));
  EXPECT_NE(err.find("newer aimem"), std::string::npos) << err;
  fs::remove_all(dir);
}

TEST(Store, DefaultPathFollowsXdgStateHome) {
  const char* old = std::getenv("XDG_STATE_HOME");
  std::string saved = old ? old : "";
  setenv("XDG_STATE_HOME", "/srv/state", 1);
  EXPECT_EQ(default_store_path(), "/srv/state/aimem/aimem.db");
  setenv("XDG_STATE_HOME", "relative", 1);  // not absolute: ignored, as the XDG spec says
  EXPECT_EQ(default_store_path(), std::string(std::getenv("HOME")) + "/.local/state/aimem/aimem.db");
  if (old) setenv("XDG_STATE_HOME", saved.c_str(), 1);
  else unsetenv("XDG_STATE_HOME");
}

TEST(Store, RetentionByAgeDropsOldSamplesAndEvents) {
  std::string dir = test::temp_dir("store-age");
  Retention r;
  r.max_age_us = 7LL * 24 * 3600 * kSecond;
  auto s = open_ok(dir + "/aimem.db", r);
  ASSERT_TRUE(s);
  const int64_t hour = 3600 * kSecond;
  for (int h = 0; h <= 240; ++h) {  // ten days, one sample an hour
    Sample x = make_sample(0);
    x.time_us = kT0 + h * hour;
    ASSERT_TRUE(s->append(x));
    if (h % 24 == 0) {
      ASSERT_TRUE(s->append(Event{x.time_us, "note", "", "day " + std::to_string(h / 24), ""}));
    }
  }
  int64_t now = kT0 + 240 * hour;
  s->enforce_retention(now);
  EXPECT_EQ(s->first_time_us(), now - 7 * 24 * hour);
  EXPECT_EQ(s->last_time_us(), now);
  EXPECT_EQ(s->sample_count(), 7u * 24 + 1);
  auto ev = s->events(INT64_MIN, INT64_MAX);
  ASSERT_EQ(ev.size(), 8u);  // days 3..10
  EXPECT_EQ(ev.front().summary, "day 3");
  EXPECT_EQ(s->integrity(), "ok");
  fs::remove_all(dir);
}

TEST(Store, RetentionBySizeBoundsDbPlusWal) {
  std::string dir = test::temp_dir("store-size");
  std::string path = dir + "/aimem.db";
  Retention r;
  r.max_bytes = 1 << 20;
  auto s = open_ok(path, r);
  ASSERT_TRUE(s);
  const uint64_t body = dump_compact(to_json(make_sample(0, 12))).size();
  const int n = static_cast<int>((3ull << 20) / body) + 1;  // 3 MiB of bodies
  uint64_t worst = 0;
  for (int i = 0; i < n; ++i) {
    ASSERT_TRUE(s->append(make_sample(i, 12))) << s->last_error();
    // No explicit enforce_retention: append() keeps the bound by itself.
    worst = std::max(worst, file_size(path) + file_size(path + "-wal"));
  }
  std::printf("size retention: %d samples of %llu bytes (%.2f MiB), worst db+wal %.3f MiB, kept %zu\n", n,
              static_cast<unsigned long long>(body), n * body / 1048576.0, worst / 1048576.0, s->sample_count());
  EXPECT_LE(worst, r.max_bytes * 5 / 4);
  // The newest survive, in order, whole; the oldest went.
  EXPECT_EQ(s->last_time_us(), make_sample(n - 1).time_us);
  EXPECT_GT(*s->first_time_us(), make_sample(n / 2).time_us);
  auto kept = s->samples(INT64_MIN, INT64_MAX);
  ASSERT_GT(kept.size(), 100u);
  EXPECT_TRUE(same(kept.back(), make_sample(n - 1, 12)));
  for (size_t i = 1; i < kept.size(); ++i) ASSERT_EQ(kept[i].time_us, kept[i - 1].time_us + kSecond);
  EXPECT_EQ(s->integrity(), "ok");
  fs::remove_all(dir);
}

// aimem report reading a live store holds a snapshot for the whole scan; the
// writer's retention must not wait for it (the sampler would stall for the
// busy timeout, 5 s, at every retention pass).
TEST(Store, AReaderDoesNotStallTheWriter) {
  std::string dir = test::temp_dir("store-reader");
  std::string path = dir + "/aimem.db";
  Retention r;
  r.max_bytes = 1 << 20;
  auto writer = open_ok(path, r);
  ASSERT_TRUE(writer);
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(writer->append(make_sample(i)));
  auto reader = open_ok(path);
  ASSERT_TRUE(reader);
  double seconds = -1;
  size_t seen = reader->scan_samples(INT64_MIN, INT64_MAX, [&](const Sample&) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 10; i < 400; ++i)  // ~250 KiB: several retention passes
      if (!writer->append(make_sample(i, 12))) return false;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return false;
  });
  EXPECT_EQ(seen, 1u);
  EXPECT_GE(seconds, 0);
  EXPECT_LT(seconds, 2.0);
  EXPECT_EQ(writer->sample_count(), 400u);
  EXPECT_EQ(reader->sample_count(), 400u);  // a new read sees the rows
  fs::remove_all(dir);
}

// A child appends as fast as it can until SIGKILL; the parent reopens and
// checks. Five rounds on the same file at random moments, each after the
// child said (through a pipe) that its first sample of the round is in: on
// a loaded machine a fixed sleep could end before the child wrote any.
TEST(Store, SurvivesKill9DuringWrites) {
  std::string dir = test::temp_dir("store-kill");
  std::string path = dir + "/aimem.db";
  std::mt19937 rng(std::random_device{}());
  size_t last_count = 0;
  for (int round = 0; round < 5; ++round) {
    int64_t start = 0;
    if (round > 0) start = (*open_ok(path)->last_time_us() - kT0) / kSecond + 1;
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(ready[0]);
      auto opened = Store::open(path, {});
      if (!opened) _exit(3);
      auto& s = *opened;
      for (int64_t i = start;; ++i) {
        if (!s->append(make_sample(i, 8 + static_cast<int>(i % 7)))) _exit(4);
        if (i == start) {
          const char one = 1;
          if (write(ready[1], &one, 1) != 1) _exit(5);
          close(ready[1]);
        }
      }
    }
    close(ready[1]);
    struct pollfd pfd = {ready[0], POLLIN, 0};
    ASSERT_EQ(poll(&pfd, 1, 60000), 1) << "round " << round << ": the child wrote nothing in 60 s";
    close(ready[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 250));
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited early with status " << WEXITSTATUS(status);
    auto s = open_ok(path);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->integrity(), "ok");
    auto all = s->samples(INT64_MIN, INT64_MAX, 10000000);
    ASSERT_GT(all.size(), last_count) << "round " << round;
    for (size_t i = 0; i < all.size(); ++i) {
      int64_t k = (all[i].time_us - kT0) / kSecond;
      ASSERT_EQ(k, static_cast<int64_t>(i)) << "missing or out of order at " << i;
      ASSERT_TRUE(same(all[i], make_sample(k, 8 + static_cast<int>(k % 7)))) << "sample " << k << " incomplete";
    }
    std::printf("kill -9 round %d: %zu samples whole after reopen\n", round, all.size());
    last_count = all.size();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace aimem::watch
