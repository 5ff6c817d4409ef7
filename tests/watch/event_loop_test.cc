// The watch's event loop: the timer wakes it at its time and not before, a
// stop requested from another thread wakes it at once, a descriptor that
// becomes readable wakes it with its tag.
#include "watch/event_loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "support/test_support.h"

namespace aimem::watch {
namespace {

bool has(const std::vector<int>& tags, int tag) { return std::find(tags.begin(), tags.end(), tag) != tags.end(); }

TEST(EventLoop, TimerWakesAtItsTime) {
  EventLoop loop;
  ASSERT_TRUE(test::take(loop.ready()));
  const int64_t t0 = EventLoop::monotonic_us();
  loop.wake_at(t0 + 150000);
  std::vector<int> tags;
  while (tags.empty()) tags = loop.wait();
  const int64_t waited = EventLoop::monotonic_us() - t0;
  EXPECT_TRUE(has(tags, EventLoop::kTimer));
  EXPECT_GE(waited, 150000);
  EXPECT_LT(waited, 2000000);
  // A time already past wakes it at once.
  loop.wake_at(EventLoop::monotonic_us() - 1000);
  tags.clear();
  while (tags.empty()) tags = loop.wait();
  EXPECT_TRUE(has(tags, EventLoop::kTimer));
}

TEST(EventLoop, StopFromAnotherThreadWakesItAtOnce) {
  EventLoop loop;
  StopToken stop;
  ASSERT_GE(stop.fd(), 0);
  ASSERT_TRUE(test::take(loop.add(stop.fd(), 7)));
  loop.wake_at(EventLoop::monotonic_us() + 60LL * 1000000);  // a minute: the stop must not wait for it
  const int64_t t0 = EventLoop::monotonic_us();
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.request();
  });
  std::vector<int> tags;
  while (tags.empty()) tags = loop.wait();
  t.join();
  EXPECT_TRUE(has(tags, 7));
  EXPECT_FALSE(has(tags, EventLoop::kTimer));
  EXPECT_TRUE(stop.requested());
  EXPECT_LT(EventLoop::monotonic_us() - t0, 5000000);
}

TEST(EventLoop, ReadableDescriptorWakesItWithItsTag) {
  EventLoop loop;
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_TRUE(test::take(loop.add(p[0], 3)));
  ASSERT_EQ(write(p[1], "x", 1), 1);
  std::vector<int> tags;
  while (tags.empty()) tags = loop.wait();
  EXPECT_EQ(tags, std::vector<int>{3});
  EXPECT_FALSE(test::error_of(loop.add(-1, 4)).empty());
  close(p[0]);
  close(p[1]);
}

}  // namespace
}  // namespace aimem::watch
