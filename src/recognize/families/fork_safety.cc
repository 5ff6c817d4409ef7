// macOS's Objective-C runtime ending a forked child on purpose: since macOS
// 10.13 a child that touches a class whose initialisation another thread of
// the parent had begun is crashed by the runtime, not allowed to deadlock.
// Process managers that fork (gunicorn, Celery, Dagster, multiprocessing on
// macOS) then report the child's death in their own words, often as a kill
// that "perhaps" was out of memory:
//
//   objc[52125]: +[__NSCFConstantString initialize] may have been in progress in another thread when fork() was called.
//   objc[52125]: ... We cannot safely call it or ignore it in the fork() child process. Crashing instead. Set a breakpoint
//       on objc_initializeAfterForkError to debug.
//   [2024-05-30 17:12:19 +0800] [52118] [ERROR] Worker (pid:52125) was sent SIGKILL! Perhaps out of memory?
//
// A not_memory_failure (family runtime, so it stands beside the kill it
// explains): the fix is OBJC_DISABLE_INITIALIZE_FORK_SAFETY=YES or the spawn
// start method, never more memory.
#include "core/text.h"
#include "recognize/families/families.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"when fork() was called", kCompanion},
    {"objc_initializeAfterForkError", kCompanion},
};

class ForkSafety final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (said_ || !text::contains(s, "objc[")) return;
    said_ = true;
    Fact f = make_fact(line, FactKind::not_memory_failure, Family::runtime);
    f.layer = Layer::not_memory;
    f.strength = 0.8f;
    f.detail =
        "macOS's Objective-C runtime crashed a forked child on purpose (fork safety: a class's initialisation was under way in "
        "another thread when fork() was called), not memory";
    out.add(std::move(f));
  }

 private:
  bool said_ = false;
};

}  // namespace

const RecognizerEntry kForkSafetyEntry{"fork_safety", Family::runtime, kPatterns,
                                       [] { return std::unique_ptr<Recognizer>(new ForkSafety); }};

}  // namespace aimem
