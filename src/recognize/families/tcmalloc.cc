// gperftools' tcmalloc reporting a large allocation, as Colab's and many
// Python builds' preloaded allocator prints it:
//
//   tcmalloc: large alloc 3849297920 bytes == 0x1d7c04000 @  0x7f31a64c21e7 0x7f319e4e8d51 ...   (it succeeded)
//   tcmalloc: large alloc 140423497228288 bytes == (nil) @  0x7f8b1a3e2887 ...                    (it failed)
//
// Only the failed one is read here: a host allocation that failed, with its
// size (host_alloc_failure, requested). A size no machine holds is then a
// size computed wrong (diagnose/classify.cc). The successful ones are a
// warning whose threshold tcmalloc raises each time it prints, so a rising
// run of them is partly its own doing: not read as a series.
//
// Colab (and notebooks run the same way) ends a `!python ...` process that
// ran the VM out of RAM with an interrupt: the cell's output stops at a bare
// "^C" line. After tcmalloc's large allocations (Colab preloads it) that
// "^C" is the host's memory running out: process_killed, layer host_ram,
// strength 0.5, as for the shell's bare "Killed". On the training split all
// four such cases were labelled host RAM (2026-12-07); a "^C" with no large
// allocation before it is a person's interrupt, not read.
#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"tcmalloc: large alloc [0-9]+ bytes == \\(nil\\)", kRegex | kCompanion},
    {"tcmalloc: large alloc [0-9]+ bytes == 0x", kRegex | kContext},
    {"^[ \t]*\\^C[ \t]*$", kRegex | kContext},
};
constexpr uint64_t kInterruptLines = 40;  // a "^C" this close after a large allocation

class Tcmalloc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (text::trim(line.text) == "^C") {
      if (!stopped_ && large_line_ && line.number - large_line_ <= kInterruptLines) {
        stopped_ = true;
        Fact k = make_fact(line, FactKind::process_killed, Family::runtime);
        k.layer = Layer::host_ram;
        k.strength = 0.5f;
        k.detail = std::string(kStoppedAfterLargeAllocs);
        out.add(std::move(k));
      }
      return;
    }
    if (said_) return;
    auto v = text::after(line.text, "tcmalloc: large alloc ");
    if (!v) return;
    if (!text::contains(line.text, "== (nil)")) {
      large_line_ = line.number;
      return;
    }
    auto n = text::parse_u64(*v);
    if (!n || *n == 0) return;
    said_ = true;
    Fact f = make_fact(line, FactKind::host_alloc_failure, Family::runtime);
    f.layer = Layer::host_ram;
    f.strength = 0.8f;
    f.requested = n;
    f.detail = "tcmalloc could not map a large allocation";
    out.add(std::move(f));
  }

 private:
  bool said_ = false, stopped_ = false;
  uint64_t large_line_ = 0;  // the last large allocation that succeeded
};

}  // namespace

const RecognizerEntry kTcmallocEntry{"tcmalloc", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Tcmalloc); }};

}  // namespace aimem
