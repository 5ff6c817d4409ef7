// Pasted evidence inside a framing that the program itself did not print:
// the collector, the terminal or the forum put it there.
//   - ANSI colour and cursor sequences (a coloured vLLM, uvicorn or pytest
//     log copied from a terminal or `kubectl logs` of a TTY pod);
//   - one JSON record per line with the line in a message field: Docker's
//     json-file ({"log":"...\n","stream":"stderr","time":"..."},
//     /var/lib/docker/containers/<id>/<id>-json.log), structured loggers
//     ("msg"/"message", with a stack trace or exception field after it),
//     Cloud Logging ("textPayload");
//   - the CRI log format of containerd and CRI-O under /var/log/pods
//     ("2024-05-01T12:00:00.123456789Z stderr F <line>");
//   - the RFC 3339 nanosecond stamp `kubectl logs --timestamps` and
//     `docker logs -t` put before every line;
//   - `kubectl logs --prefix` ("[pod/web-7d9c/app] <line>");
//   - `docker compose logs`'s service prefix ("weaviate-1  | <line>");
//   - a Markdown quote ("> <line>") from an issue or chat;
//   - characters a browser, chat or editor put for the program's ASCII:
//     no-break and other Unicode spaces, typographic quotes and dashes,
//     zero-width marks, and HTML entities where a page's source was copied
//     ("&lt;module&gt;"), made ASCII wherever they are;
//   - a whole paste on one line with its line breaks escaped (an API's JSON
//     error body, a task result's repr of an exception: three "\n" or more
//     a line could start after), cut into its lines, each numbered as it;
//   - a log console's stamp and fields: Grafana Loki's logcli label set,
//     `aws logs tail`'s stream, Datadog's " | " fields, `docker service
//     logs`' task@node, Papertrail's app process as a syslog ident;
//   - a logger's prefix before each line a supervisor or task runner
//     re-logs from its child (Python logging's "<time> - worker - INFO - ",
//     Airflow's "[<time>] {subprocess.py:93} INFO - ");
//   - newest line first (Kibana's Discover, Grafana's log panels,
//     `journalctl -r`): the lines' times run back, and the text is put in
//     the order the lines were written, a stamped line with the unstamped
//     ones under it kept together (first_line then runs back);
//   - a syslog or journalctl prefix on a service's own lines ("Dec  4
//     12:00:01 gpu-1 python3[4242]: "), not on the kernel's, systemd's or an
//     OOM killer's, whose recognizers read the ident.
// Recognizers read the program's own lines: a report that opens its line
// ("Killed", "Traceback", "[  123.4] Out of memory") is not seen behind a
// framing. The scanner strips the framing from a small input before reading
// it (scanner.cc, finish()), keeping each line's number and the framing's
// time. Indentation every line shares (a Markdown code block) comes off too.
//
// A framing is stripped only where most lines carry it (at least 3 in 5 of
// the non-blank ones): a log whose own lines open with a timestamp of that
// shape keeps it. Colour sequences are stripped wherever they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aimem {

struct Deframed {
  std::string text;                          // the lines, framing removed
  std::vector<uint64_t> first_line;          // for each line of text, the 1-based input line it came from
  std::vector<std::optional<int64_t>> time;  // per input line (0-based): the framing's wall-clock time, UTC µs
  std::vector<std::string> framings;         // what was removed, for tests
  std::vector<uint8_t> chain;                // the framings removed, outermost first (StreamDeframer)
  bool ansi = false;                         // colour sequences were removed
  bool typography = false;                   // Unicode spaces, quotes, dashes (or HTML entities) made ASCII
  bool entities = false;                     // HTML entities were decoded
  bool newest_first = false;                 // the input listed its latest line first: text is in the order written
  bool split = false;                        // lines were split out of one input line (escaped breaks): number them as read
  uint64_t input_lines = 0;
};

// Nothing when the input carries no framing. Pure; linear in the input. A
// record whose message holds several lines gives several lines, each mapped
// to the record's input line by first_line. `reference_us` gives the
// year to stamps without one (core/time.h, parse_line_time).
std::optional<Deframed> deframe(std::string_view input, int64_t reference_us);

// A log too large to hold (a container's json-file log, a node's
// /var/log/pods file) is read block by block: the framings its first lines
// carry are learnt once and taken off each line of every block, line for
// line (a record holding several lines gives one, its lines joined by
// spaces). The output is never longer than the block.
class StreamDeframer {
 public:
  // From a sample of whole lines at the input's start; false when it carries no framing.
  bool learn(std::string_view sample, int64_t reference_us);
  // `block` without its framing into `out` (cleared first), with the same
  // number of lines; `times` gets (0-based line of the block, UTC µs) for
  // lines whose framing carried a time, in order.
  void apply(std::string_view block, std::string& out, std::vector<std::pair<uint32_t, int64_t>>& times) const;

 private:
  std::vector<uint8_t> chain_;
  bool ansi_ = false;
  bool typography_ = false;
  bool entities_ = false;
  int64_t reference_us_ = 0;
};

}  // namespace aimem
