// A process manager replacing its workers while the old ones still run: a
// graceful reload starts the new generation before the old one has drained,
// so for a while both hold their memory (each worker its own copy of the
// application and its model). The same shape as a rolling update
// (rollout.cc), on one host instead of a node pool: one context fact,
// runtime_setting with cause deployment_overlap, read by the diagnosis for
// the pool the generations share.
//
//   [2017-11-13 16:02:11 +0000] [1187] [INFO] Handling signal: hup            gunicorn's reload (kill -HUP)
//   [2021-03-11 04:12:55 +0000] [23] [INFO] Autorestarting worker after current request.
//                                   gunicorn --max-requests: the replacement is forked before this one exits
//   ...gracefully (RE)spawned uWSGI master process / ...gracefully reloading uWSGI...   uWSGI's graceful reload
//   - Starting phased worker restart, phase: 1                                          Puma's phased restart
//   aerospike.service: Found left-over process 3126 (asd) in control group while starting unit. Ignoring.
//                                   systemd starting a unit whose previous run's process survived its stop
//   │ feedapi  │ _old_0 │ cluster │ 21877 │ online │ ...      PM2's reload: the previous generation, renamed _old_N,
//   Stopping app:feedapi id:_old_0                              still listed (pm2 list) or being stopped (pm2.log)
// One fact for the first reload; a reload after the failure says nothing of it
// and the diagnosis weighs the fact where it was printed (classify.cc).
#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"Handling signal: hup", kContext},
    {"Autorestarting worker after current request", kContext},
    {"gracefully (RE)spawned uWSGI", kContext},
    {"gracefully reloading uWSGI", kContext},
    {"phased worker restart", kContext},
    {"Found left-over process ", kContext},
    // PM2's reload names the previous generation "_old_N" while it drains: in
    // `pm2 list` ("│ feedapi │ _old_0 │ cluster │ ...") and pm2.log ("Stopping app:feedapi id:_old_0").
    {"(id:|│ *)_old_[0-9]+", kRegex | kContext},
};

class GracefulReload final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    if (seen_ || guards::is_advice_line(line.text)) return;
    std::string_view s = line.text;
    std::string_view what = text::contains(s, "signal: hup")         ? "gunicorn reloading its workers (HUP)"
                            : text::contains(s, "Autorestarting")     ? "gunicorn replacing a recycled worker (--max-requests)"
                            : text::contains(s, "phased worker")      ? "Puma's phased restart of its workers"
                            : text::contains(s, "left-over process")  ? "systemd started the unit while a process of its previous run was left over"
                            : text::contains(s, "_old_")              ? "PM2 reloading the app (its previous processes, _old_N, still listed)"
                                                                      : "uWSGI's graceful reload of its workers";
    seen_ = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::runtime);
    f.cause = Cause::deployment_overlap;
    f.detail = std::string(what) + ": the new workers start while the old ones still run";
    out.add(std::move(f));
  }

 private:
  bool seen_ = false;
};

}  // namespace

const RecognizerEntry kGracefulReloadEntry{"graceful_reload", Family::runtime, kPatterns,
                                           [] { return std::unique_ptr<Recognizer>(new GracefulReload); }};

}  // namespace aimem
