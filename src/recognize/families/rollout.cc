// Two generations of one Kubernetes workload at once: a rolling update (or a
// new revision of a KServe / Knative service) that runs the old and the new
// copies side by side, each holding its own copy of the model, on a node
// sized for one. Read from the pod and ReplicaSet names wherever they are
// printed, not from any one command's layout:
//
//   mixer-7d4b9c6f5-2kx8q   1/1   Running   0   6d         kubectl get pods (a Deployment's pod:
//   mixer-5f8c7b9d6-h2m9w   0/1   Running   2   4m           <deployment>-<pod-template-hash>-<suffix>)
//   apiserver-6c4d9f7b8d   2   2   2   41d                  kubectl get rs (<deployment>-<hash>)
//   ... pods ranked for eviction: api-7b9f5c6d44-4mw9t_ns(..), api-6c4d9f7b8d-hq2lx_ns(..)   kubelet
//   Evicted   pod/mixer-5f8c7b9d6-q7r1v   The node was low on resource: memory.   events
//   qwen-predictor-00003-deployment-6d9f8c7b5d-fk2lm              KServe / Knative: the revision
//   qwen-predictor-00004-deployment-84b6c9d7f8-x7q2n              number is a generation too
//
// The hash and the suffix are drawn from the alphabet Kubernetes encodes them
// in (k8s.io/apimachinery pkg/util/rand SafeEncodeString:
// "bcdfghjklmnpqrstvwxz2456789"), so ordinary hyphenated words rarely pass
// for them. Two hashes (or revisions) of one name, each seen alive (not only
// as an Evicted, Completed or failed pod left over from before), make one
// context fact: runtime_setting, cause deployment_overlap, read by the
// diagnosis for pools the copies share (the node's RAM, its eviction). So
// does the client's own report of a rollout in progress:
//   Scaling up frontend-v2 from 0 to 3, scaling down frontend-v1 from 3 to 0 (keep 3 pods available, ...)   rolling-update
//   Waiting for deployment "api" rollout to finish: 1 old replicas are pending termination...   rollout status
//   [deploy] api: scaling to 2 for blue/green (docker compose up -d --scale api=2 api)   a deploy script
//   {"Parallelism":1,...,"Order":"start-first"}   docker service inspect's UpdateConfig (also
//       --update-order start-first, a stack file's order: start-first): Swarm starts each new task
//       before its old one stops
#include <fmt/format.h>
#include <string>
#include <vector>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    // A pod of a ReplicaSet: -<hash>-<suffix> ending the name.
    {"-[bcdfghjklmnpqrstvwxz2456789]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}([^a-z0-9-]|$)", kRegex | kContext},
    // A ReplicaSet row of `kubectl get rs`: the name, then DESIRED CURRENT READY.
    {"^[a-z0-9][a-z0-9.-]*-[bcdfghjklmnpqrstvwxz2456789]{6,10}\\s+[0-9]+\\s+[0-9]+\\s+[0-9]+", kRegex | kContext},
    // A rollout in progress as the client reports it: kubectl rolling-update's
    // "Scaling up web-v2 from 0 to 3, scaling down web-v1 from 3 to 0 (...)",
    // and rollout status's "... N old replicas are pending termination...".
    {"Scaling up [^ ]+ from [0-9]+ to [0-9]+, scaling down ", kRegex | kContext},
    {"old replicas are pending termination", kContext},
    // A deploy script's own word that it runs the new copy beside the old
    // ("scaling to 2 for blue/green", "blue-green deploy: starting green").
    {"blue[/-]green", kRegex | kCaseless | kContext},
    // Docker Swarm's update order that starts the new task first.
    {"start-first", kContext},
};

constexpr size_t kWorkloads = 32;  // names followed at once
constexpr size_t kNameChars = 128;

bool safe_char(char c) { return std::string_view("bcdfghjklmnpqrstvwxz2456789").find(c) != std::string_view::npos; }

bool all_safe(std::string_view s) {
  for (char c : s)
    if (!safe_char(c)) return false;
  return true;
}

bool name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'; }

// A workload's name with a revision number ("-00004-") made generic, and the
// generation: the revision when there is one, else the pod-template hash.
struct Generation {
  std::string workload, generation;
};

std::optional<Generation> generation_of(std::string_view name, bool pod) {
  // pod: <workload>-<hash>-<suffix>; ReplicaSet: <workload>-<hash>.
  if (pod) {
    size_t dash = name.rfind('-');
    if (dash == std::string_view::npos || name.size() - dash - 1 != 5 || !all_safe(name.substr(dash + 1))) return std::nullopt;
    name = name.substr(0, dash);
  }
  size_t dash = name.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  std::string_view hash = name.substr(dash + 1);
  if (hash.size() < 6 || hash.size() > 10 || !all_safe(hash)) return std::nullopt;
  // A hash has digits and letters both, as the encoding of a 32-bit hash nearly always does.
  bool digit = false, letter = false;
  for (char c : hash) (c >= '0' && c <= '9' ? digit : letter) = true;
  if (!digit || !letter) return std::nullopt;
  std::string workload(name.substr(0, dash));
  Generation g{workload, std::string(hash)};
  // A Knative / KServe revision: "-00004-" inside the name.
  for (size_t i = 0; i + 7 <= workload.size(); ++i) {
    if (workload[i] != '-') continue;
    size_t j = i + 1;
    while (j < workload.size() && workload[j] >= '0' && workload[j] <= '9') ++j;
    if (j - i - 1 == 5 && (j == workload.size() || workload[j] == '-')) {
      g.generation = workload.substr(i + 1, 5);
      g.workload = workload.substr(0, i) + "-*" + workload.substr(j);
      break;
    }
  }
  return g;
}

// A pod listed only as something left over: not holding memory now.
bool left_over(std::string_view line) {
  for (std::string_view status : {" Evicted ", " Completed ", " Error ", " OOMKilled ", " ContainerStatusUnknown "})
    if (text::contains(line, status)) return true;
  return false;
}

class Rollout final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (in_progress(line, out)) return;
    const bool rs_row = !s.empty() && name_char(s[0]) && !text::contains(s.substr(0, std::min<size_t>(s.size(), 80)), "/");
    const bool alive = !left_over(s);
    // Every name-like token that ends in -<hash>-<suffix>, and a ReplicaSet row's first token.
    size_t i = 0;
    bool first = true;
    while (i < s.size()) {
      while (i < s.size() && !name_char(s[i])) ++i;
      size_t j = i;
      while (j < s.size() && name_char(s[j])) ++j;
      if (j > i && j - i <= kNameChars) {
        std::string_view tok = s.substr(i, j - i);
        while (!tok.empty() && (tok.back() == '.' || tok.back() == '-')) tok.remove_suffix(1);
        auto g = generation_of(tok, true);
        if (!g && first && rs_row && i == 0) g = generation_of(tok, false);
        if (g) seen(line, *g, alive, out);
      }
      first = false;
      i = j;
    }
  }

 private:
  struct Workload {
    std::string name;
    std::vector<std::string> generations;  // alive ones, up to 2
    bool reported = false;
  };

  void seen(const Line& line, const Generation& g, bool alive, FactSink& out) {
    if (!alive) return;
    Workload* w = nullptr;
    for (auto& x : workloads_)
      if (x.name == g.workload) w = &x;
    if (!w) {
      if (workloads_.size() >= kWorkloads) return;
      workloads_.push_back({g.workload, {}, false});
      w = &workloads_.back();
    }
    for (const auto& h : w->generations)
      if (h == g.generation) return;
    w->generations.push_back(g.generation);
    if (w->generations.size() < 2 || w->reported) return;
    w->reported = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::kubernetes);
    f.cause = Cause::deployment_overlap;
    f.count = 2;
    f.process = w->name.substr(0, 96);
    f.detail = fmt::format("two generations of {} running at once ({} and {})", f.process, w->generations[0],
                           w->generations[1]);
    out.add(std::move(f));
  }

  std::vector<Workload> workloads_;
  bool progress_reported_ = false;

  // The client's own report of a rollout in progress: both generations are
  // alive by its words.
  bool in_progress(const Line& line, FactSink& out) {
    std::string_view s = line.text;
    std::string detail;
    if (auto up = text::after(s, "Scaling up "); up && text::contains(s, ", scaling down ")) {
      std::string_view next = text::take_until(*up, " ");
      auto down = text::after(s, ", scaling down ");
      std::string_view old = down ? text::take_until(*down, " ") : std::string_view();
      detail = fmt::format("a rolling update running {} beside {}", next.substr(0, 64), old.substr(0, 64));
    } else if (text::contains(s, "old replicas are pending termination")) {
      detail = "a rollout with old replicas still running beside the new ones";
    } else if (text::icontains(s, "blue/green") || text::icontains(s, "blue-green")) {
      detail = "a blue/green deployment running the new copy beside the old";
    } else if (text::contains(s, "start-first")) {
      detail = "a Swarm service update that starts each new task before its old one stops (start-first)";
    } else {
      return false;
    }
    if (progress_reported_ || guards::is_advice_line(s)) return true;
    progress_reported_ = true;
    Fact f = make_fact(line, FactKind::runtime_setting, Family::kubernetes);
    f.cause = Cause::deployment_overlap;
    f.count = 2;
    f.detail = detail;
    out.add(std::move(f));
    return true;
  }
};

}  // namespace

const RecognizerEntry kRolloutEntry{"rollout", Family::kubernetes, kPatterns,
                                    [] { return std::unique_ptr<Recognizer>(new Rollout); }};

}  // namespace aimem
