// One process under ROOT/proc, as `aimem probe` and `aimem run` ask about it.
#pragma once

#include <optional>
#include <string>

namespace aimem {

// The state letter of ROOT/proc/PID/stat ("PID (comm) S ...": the field after
// the last ')'); nullopt when the file cannot be read (no such process), ' '
// when it has no state field.
std::optional<char> process_state(const std::string& root, int pid);
// Z (zombie) and X (dead): the process is gone but for its entry.
inline bool is_dead_state(char state) { return state == 'Z' || state == 'X'; }

// The memory cgroup of ROOT/proc/PID/cgroup (memory_cgroup_of, live.h);
// nullopt when the file cannot be read.
std::optional<std::string> process_memory_cgroup(const std::string& root, int pid);

}  // namespace aimem
