// Shared judgement for recognizers: is a matched phrase a real report, or a
// mention of one? Healthy logs quote OOM messages in help text and advice
// ("exits cleanly instead of failing with 'JavaScript heap out of memory'",
// "If you are running out of memory, consider decreasing ..."). A false alarm
// is as wrong as a miss, so recognizers ask here before emitting a failure.
#pragma once

#include <string_view>

namespace aimem::guards {

// True when the phrase at [pos, pos+len) of `line` sits inside quotes or
// backticks in a sentence that gives advice or describes a condition (if,
// instead of, when, e.g., such as, consider, hint, means, avoid, ...), or the
// line is a command-line flag / documentation of a flag.
bool is_mention(std::string_view line, size_t pos, size_t len);

// mlock refused by RLIMIT_MEMLOCK ("warning: failed to mlock 1048576-byte
// buffer ...: Cannot allocate memory", llama.cpp's llama_mlock): ENOMEM's
// words, but the pages stay in memory, only unpinned; nothing ran out.
bool is_mlock_refusal(std::string_view line);

// A refusal a program expects and does without: mlock's (above), a huge-page
// mapping tried first ("mmap(17641046016) with MAP_HUGETLB failed, huge pages
// disabled: Cannot allocate memory", Postgres with huge_pages=try), or any
// line logged at DEBUG or TRACE level. Nothing ran out.
bool is_optional_refusal(std::string_view line);

// True for lines that are advice or documentation as a whole ("Hint: ...",
// "Tip: ...", "consider ...", "If you see ...").
bool is_advice_line(std::string_view line);

// True for a shell command as pasted with its prompt: "$ journalctl | grep
// 'Out of memory'", "user@host:~/x$ dmesg | grep -i oom", "(venv) u@h:~$ ...",
// "root@vps:~# ...", "PS C:\> ...". What a command searches for is not what
// happened; its output, on the lines after it, is.
bool is_command_line(std::string_view line);

// True when the line names pinned (page-locked) host memory: "pinned host
// memory", cudaHostAlloc, cudaMallocHost, hipHostMalloc. Such an allocation
// fails with the accelerator's own error (cudaErrorMemoryAllocation, "CUDA
// error: out of memory"), yet what ran out is host RAM the driver could lock
// for the device, not the device's memory: the CUDA word in the line does not
// make it a device allocation.
bool names_pinned_host_memory(std::string_view line);

// True when the line names the accelerator's own memory as what could not be
// had: "Error allocating 554696704 bytes of device memory (out of memory)"
// (Theano's MemoryError), "GPU memory", "VRAM". A host-side exception type
// (Python's MemoryError) around it does not make it host RAM.
bool names_device_memory(std::string_view line);

}  // namespace aimem::guards
