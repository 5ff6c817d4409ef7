#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sources/listener.h"
#include "support/test_support.h"

namespace aimem::probe {
namespace {

TEST(ProbeListener, ReadsListeningInodesFromAProcNetTable) {
  const std::string table =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 4242 1 0000000000000000 100 0 0 10 0\n"
      "   1: 0100007F:1F90 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 4343 1 0000000000000000 20 4 30 10 -1\n"
      "   2: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 99 1 0000000000000000 100 0 0 10 0\n"
      "   3: garbage\n";
  auto inodes = listening_inodes(table, 8080);
  ASSERT_EQ(inodes.size(), 1u);  // the established connection (st 01) is not a listener
  EXPECT_EQ(inodes[0], 4242u);
  EXPECT_EQ(listening_inodes(table, 22).size(), 1u);
  EXPECT_TRUE(listening_inodes(table, 9999).empty());
}

TEST(ProbeListener, FindsThisProcessListeningOnARealLoopbackPort) {
  int port = 0;
  int fd = test::bound_loopback_socket(&port);
  ASSERT_GE(fd, 0);
  // Bound but not listening yet: nobody serves the port.
  EXPECT_FALSE(find_listener_pid("/", port));
  ASSERT_EQ(listen(fd, 4), 0);
  auto pid = find_listener_pid("/", port);
  ASSERT_TRUE(pid);
  EXPECT_EQ(*pid, getpid());
  close(fd);
  EXPECT_FALSE(find_listener_pid("/", port));
}

}  // namespace
}  // namespace aimem::probe
