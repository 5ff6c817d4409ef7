// A call stack that overflowed: a look-alike (not_memory_failure). The
// process dies or throws with memory to spare; the stack's own limit (a few
// MiB per thread, V8's frame and argument limits) ran out, usually to deep or
// unbounded recursion or a huge argument list, and more RAM, a larger
// container or a larger heap changes nothing.
//
//   RangeError: Maximum call stack size exceeded                       (V8: Node, Chrome, Electron)
//   Exception in thread "main" java.lang.StackOverflowError            (JVM)
//   thread 'main' has overflowed its stack / fatal runtime error: stack overflow   (Rust)
//   runtime: goroutine stack exceeds 1000000000-byte limit / fatal error: stack overflow   (Go)
//   RecursionError: maximum recursion depth exceeded while calling a Python object   (Python)
//   Stack overflow. / Process is terminated due to StackOverflowException.   (.NET)
// One fact for the first report; the repeats of one overflow (Go prints the
// limit and then the fatal error, browsers repeat the RangeError) add nothing.
#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

// Companions (gate.h): a large log is read where a gate word ("abort",
// "exit", "terminated") made the block hot; a pasted excerpt is read whole.
constexpr Pattern kPatterns[] = {
    {"Maximum call stack size exceeded", kCompanion},
    {"StackOverflowError", kCompanion},
    {"has overflowed its stack", kCompanion},
    {"fatal runtime error: stack overflow", kCompanion},
    {"goroutine stack exceeds", kCompanion},
    {"fatal error: stack overflow", kCompanion},
    {"maximum recursion depth exceeded", kCompanion},
    {"StackOverflowException", kCompanion},
};

class StackLimits final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (seen_) return;
    std::string_view s = line.text;
    if (guards::is_advice_line(s)) return;
    seen_ = true;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
    f.detail = "a stack overflow (the call stack's limit, not the heap or RAM)";
    f.strength = 0.75f;
    out.add(std::move(f));
  }

 private:
  bool seen_ = false;
};

}  // namespace

const RecognizerEntry kStackLimitsEntry{"stack_limits", Family::runtime, kPatterns,
                                        [] { return std::unique_ptr<Recognizer>(new StackLimits); }};

}  // namespace aimem
