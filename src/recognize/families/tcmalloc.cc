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
#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"tcmalloc: large alloc [0-9]+ bytes == \\(nil\\)", kRegex | kCompanion},
};

class Tcmalloc final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (said_) return;
    auto v = text::after(line.text, "tcmalloc: large alloc ");
    if (!v || !text::contains(line.text, "== (nil)")) return;
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
  bool said_ = false;
};

}  // namespace

const RecognizerEntry kTcmallocEntry{"tcmalloc", Family::runtime, kPatterns, [] { return std::unique_ptr<Recognizer>(new Tcmalloc); }};

}  // namespace aimem
