// A real allocator for the `aimem run` / `aimem watch` tests: touches
// STEP MiB every EVERY ms until MAX MiB, then holds HOLD ms and exits 0
// (or is OOM-killed first when a limit is lower).
//   aimem_test_alloc STEP_MIB EVERY_MS MAX_MIB [HOLD_MS]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include <vector>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s STEP_MIB EVERY_MS MAX_MIB [HOLD_MS]\n", argv[0]);
    return 2;
  }
  const long step = std::atol(argv[1]), every = std::atol(argv[2]), max = std::atol(argv[3]);
  const long hold = argc > 4 ? std::atol(argv[4]) : 0;
  if (step <= 0 || max <= 0 || max > 4096) return 2;
  std::vector<char*> held;  // freed at the end: a leak checker must not fail a clean exit
  for (long done = 0; done < max; done += step) {
    char* p = static_cast<char*>(std::malloc(static_cast<size_t>(step) << 20));
    if (!p) return 3;
    std::memset(p, 1, static_cast<size_t>(step) << 20);
    held.push_back(p);
    if (every > 0) usleep(static_cast<useconds_t>(every) * 1000);
  }
  if (hold > 0) usleep(static_cast<useconds_t>(hold) * 1000);
  for (char* p : held) std::free(p);
  return 0;
}
