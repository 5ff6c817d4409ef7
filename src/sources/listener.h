// Which process serves a TCP port (for `aimem probe`): the listening socket's inode from
// /proc/net/tcp and tcp6, then the process holding that inode among its file
// descriptors. Read under a root directory so tests can use fixture trees.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aimem::probe {

// Inodes of sockets in state LISTEN on `port` in a /proc/net/tcp or tcp6 table.
std::vector<uint64_t> listening_inodes(std::string_view table, int port);

// The pid that owns a listening socket on `port` (the lowest pid when several
// share it, e.g. a pre-forked server: the parent). Bounded: at most 20000
// processes and 4096 descriptors each are looked at.
std::optional<int> find_listener_pid(const std::string& root, int port);

}  // namespace aimem::probe
