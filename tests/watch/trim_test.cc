// trim_startup_pages (src/watch/trim.h) on this process's real mappings, in a
// forked child so the test binary's own pages are not the ones given back
// under the other tests: the file pages in the resident set fall, the code
// runs on (it faults back in), and a private file mapping someone wrote to,
// then made read-only (as RELRO is), keeps what was written.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "support/test_support.h"
#include "watch/trim.h"

namespace aimem::watch {
namespace {

long status_kb(const char* key) {
  std::string s = test::read_file("/proc/self/status");
  size_t at = s.find(key);
  return at == std::string::npos ? -1 : std::atol(s.c_str() + at + std::strlen(key));
}

TEST(Trim, GivesBackCleanFilePagesAndKeepsWrittenOnes) {
  std::string dir = test::temp_dir("trim");
  std::string path = dir + "/data";
  test::write_file(path, std::string(8192, 'a'));
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) _exit(10);
    auto* p = static_cast<char*>(::mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
    if (p == MAP_FAILED) _exit(11);
    p[0] = 'z';                                  // a private copy of the first page
    if (::mprotect(p, 8192, PROT_READ) != 0) _exit(12);  // now r--p, as RELRO
    volatile char second = p[4096];              // the second page: clean, from the file
    (void)second;
    long before = status_kb("RssFile:");
    TrimResult r = trim_startup_pages();
    long after = status_kb("RssFile:");
    if (r.mappings == 0 || r.bytes == 0) _exit(20);
    if (before <= 0 || after >= before) _exit(21);
    if (p[0] != 'z' || p[4096] != 'a') _exit(22);  // the write survived; the clean page reads back
    // Code and read-only data fault back in.
    std::vector<int> v{3, 1, 2};
    std::sort(v.begin(), v.end());
    if (fmt::format("{}{}{}", v[0], v[1], v[2]) != "123") _exit(23);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "20: nothing trimmed, 21: file pages did not fall, 22: a written page was lost, 23: code did not run";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace aimem::watch
