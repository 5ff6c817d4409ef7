// Kubernetes' OOMKilled reason as monitoring and scripts report it, outside
// the kubectl shapes kubernetes.cc reads: an alert's words, a check script's
// summary, a jsonpath with more than the reason on its line, a metric's label.
//
//   *Alert:* Container grafana in pod monitoring/grafana-7f9d8c6b54-qx2lm was OOMKilled      (Alertmanager to Slack)
//   *Description:* Container monitoring/grafana-... has been OOMKilled 4 times in the last hour.
//   dcgm-exporter-k7p2d  node=ip-10-4-71-19  restarts=5  last=OOMKilled(137)  limit=512Mi      (a check script)
//   OOMKilled/137 limit=1Gi                          (-o jsonpath='{...reason}/{...exitCode} limit={...}')
//   kube_pod_container_status_last_terminated_reason{container="api", namespace="x", reason="OOMKilled"}   1
//   [FIRING:1] KubeContainerOOMKilled ...            (kube-prometheus' alert; Azure Monitor's
//   "alertRule": "KubeContainerOOMKilledCount" ... "monitorCondition": "Fired"       KubeContainerOOMKilledCount,
//   Metric name:  oomKilledContainerCount  ...  Metric value:  1                     Container Insights' metric)
//   # Alert NodeProblemOOMKilling firing ... | reason | OOMKilling |      (node-problem-detector: a kill on the node,
//   [FIRING:1] OOMKillHappened ... increase(node_vmstat_oom_kill[5m]) > 0   node_exporter's counter: pool not named)
//
// An alert's name counts only where the paste shows it fired (FIRING, Fired,
// a metric value above 0): a rule's definition names it too. The reason's
// word counts as a word of its own ("OOMKilled", not "OOMKilledCount"), not
// as false ("OOMKilled": false is docker's, read there), not in a command
// line or a rule's expression. One k8s_oomkilled fact per input. The reader
// sees the lines kubernetes.cc claims (its entry is Kubernetes'); its fact's
// family is generic, so any family's failure on or near the same lines (the
// kubectl shapes kubernetes.cc reads) shadows it.
#include <optional>
#include <string>

#include "core/text.h"
#include "recognize/families/families.h"
#include "recognize/families/platform_util.h"
#include "recognize/guards.h"

namespace aimem {
namespace {

constexpr Pattern kPatterns[] = {
    {"OOMKilled", kContext},
    {"oomKilledContainerCount", kContext},
    {"(FIRING|Fired|firing)", kRegex | kContext},
    {"Metric value: +[0-9]", kRegex | kContext},
    {"(NodeProblemOOMKilling|OOMKillHappened|node_vmstat_oom_kill|\\| *OOMKilling *\\|)", kRegex | kContext},
};

bool word_char(char c) { return platform::is_alnum(c) || c == '_'; }

// The reason as a value: opening the line, or after "=", ":", a quote, a
// backtick or a parenthesis (last=OOMKilled(137), reason="OOMKilled",
// `OOMKilled`, "OOMKilled/137" as a jsonpath prints it, a tab-separated
// column of a jsonpath's range). Prose ("we were
// getting OOMKilled pods") is none of these.
bool reported_as_value(std::string_view s, size_t p) {
  // A column of a jsonpath's tab-separated row ("telegraf\t41\tOOMKilled").
  if (p > 0 && s[p - 1] == '\t') return true;
  size_t i = p;
  while (i > 0 && s[i - 1] == ' ') --i;
  if (i == 0) return true;
  const char c = s[i - 1];
  return c == '=' || c == ':' || c == '"' || c == '\'' || c == '`' || c == '(' || c == '|' || c == '>';
}

// An alert's templated sentence about a container ("Container api in pod
// shop/api-0 was OOMKilled", "... has been OOMKilled 4 times in the last hour").
bool alert_sentence(std::string_view s, size_t p) {
  std::string_view before = s.substr(0, p);
  const bool said = text::ends_with(before, "was ") || text::ends_with(before, "has been ") || text::ends_with(before, "been ");
  return said && text::icontains(s, "container") && text::contains(s, "pod");
}

class OomKilledReports final : public Recognizer {
 public:
  void on_line(const Line& line, FactSink& out) override {
    std::string_view s = line.text;
    if (text::contains(s, "FIRING") || text::contains(s, "Fired") || text::contains(s, "firing")) fired_ = true;
    if (auto v = text::after(s, "Metric value:")) {
      auto n = text::parse_u64(text::trim_left(*v));
      if (n && *n > 0) fired_ = true;
    }
    if (said_ || guards::is_command_line(s) || guards::is_advice_line(s) || text::contains(s, "expr:") ||
        text::contains(s, "\"expression\""))
      return;
    // A node's kernel OOM killer as monitors report it: node-problem-detector's
    // OOMKilling problem ("NodeProblemOOMKilling", reason OOMKilling), node_exporter's
    // oom_kill counter rising ("OOMKillHappened", increase(node_vmstat_oom_kill[5m]) > 0).
    // A process was killed; whether a cgroup's limit or the whole node ran
    // out, and which process, the alert does not say.
    if (!node_alert_ && (text::contains(s, "NodeProblemOOMKilling") || text::contains(s, "OOMKillHappened") ||
                         text::contains(s, "node_vmstat_oom_kill") || text::contains(s, "| OOMKilling"))) {
      node_alert_ = make_fact(line, FactKind::kernel_oom_kill, Family::generic);
      return;
    }
    if (text::contains(s, "KubeContainerOOMKilled") || text::contains(s, "oomKilledContainerCount")) {
      if (!alert_) alert_ = make_fact(line, FactKind::k8s_oomkilled, Family::generic);
      return;
    }
    for (size_t p = s.find("OOMKilled"); p != std::string_view::npos; p = s.find("OOMKilled", p + 9)) {
      const bool alone = (p == 0 || !word_char(s[p - 1])) && (p + 9 == s.size() || !platform::is_alnum(s[p + 9]) || platform::is_digit(s[p + 9]));
      // A field's name in a template or a path (docker inspect -f '{{.State.OOMKilled}}'), not its value.
      if (!alone || (p > 0 && s[p - 1] == '.') || guards::is_mention(s, p, 9)) continue;
      if (!reported_as_value(s, p) && !alert_sentence(s, p)) continue;
      std::string_view after = text::trim_left(s.substr(p + 9));
      while (!after.empty() && (after[0] == '"' || after[0] == '\'' || after[0] == ':' || after[0] == '=' || after[0] == ' '))
        after.remove_prefix(1);
      // false (docker's own field), a count of none, or a template's placeholder ("OOMKilled={{.State.OOMKilled}}").
      if (text::istarts_with(after, "false") || text::starts_with(after, "0 ") || text::starts_with(after, "{{")) continue;
      // A metric's series with its value: only a value above 0 reports a kill.
      if (s.find('{') < p && s.find('}', p) != std::string_view::npos) {
        std::string_view value = text::trim(s.substr(s.rfind('}') + 1));
        auto n = text::parse_double(value);
        if (n && *n <= 0) continue;
      }
      said_ = true;
      Fact f = make_fact(line, FactKind::k8s_oomkilled, Family::generic);
      f.layer = Layer::k8s_pod_limit;
      f.strength = 0.75f;
      f.detail = "Kubernetes reports the container OOMKilled (as a monitor or a script printed it)";
      out.add(std::move(f));
      return;
    }
  }

  void finish(FactSink& out) override {
    if (!said_ && !alert_ && node_alert_ && fired_) {
      node_alert_->layer = Layer::unknown;
      node_alert_->strength = 0.6f;
      node_alert_->detail = "a monitor's alert that the kernel OOM killer killed a process on the node (which process, and whether a "
                            "cgroup's limit or the whole node ran out, it does not say)";
      out.add(std::move(*node_alert_));
    }
    if (said_ || !alert_ || !fired_) return;
    alert_->layer = Layer::k8s_pod_limit;
    alert_->strength = 0.7f;
    alert_->detail = "an alert on OOMKilled containers fired";
    out.add(std::move(*alert_));
    alert_.reset();
  }

 private:
  bool said_ = false, fired_ = false;
  std::optional<Fact> alert_, node_alert_;
};

}  // namespace

const RecognizerEntry kOomKilledReportsEntry{"oomkilled_reports", Family::kubernetes, kPatterns,
                                              [] { return std::unique_ptr<Recognizer>(new OomKilledReports); }};

}  // namespace aimem
