// Kubernetes' OOMKilled reason as monitors and scripts report it
// (src/recognize/families/oomkilled_reports.cc), in their formats with our
// own names: Alertmanager's Slack message (modelled on
// prometheus-operator/kube-prometheus' KubeContainerOOMKilled alerts), a
// check script's summary row, a jsonpath with the exit code and the limit, a
// kube-state-metrics series, Azure Monitor's fired alert on Container
// Insights' oomKilledContainerCount. A rule that only defines the alert,
// docker's "OOMKilled": false and a template's placeholder are not kills.
#include <gtest/gtest.h>

#include <string>

#include "support/test_support.h"

namespace aimem {
namespace {

TEST(OomKilledReports, MonitorsAndScriptsReportsOfOomKilledAreThePodsLimit) {
  const char* reports[] = {
      "[FIRING:1] KubeContainerOOMKilled monitoring (api api-7f9d8c6b54-qx2lm critical)\n"
      "*Alert:* Container api in pod shop/api-7f9d8c6b54-qx2lm was OOMKilled\n",
      "*Description:* Container api in pod shop/api-7f9d8c6b54-qx2lm has been OOMKilled 3 times in the last 10 minutes.\n",
      "[check] exporter-k7p2d  node=ip-10-4-71-19  gpus=8  restarts=5  last=OOMKilled(137)  limit=512Mi  working_set=503Mi\n",
      "OOMKilled/137 limit=1Gi\n",
      "kube_pod_container_status_last_terminated_reason{container=\"api\", namespace=\"shop\", pod=\"api-0\", reason=\"OOMKilled\"}   1\n",
      "Azure Monitor alert 'OOM killed containers' was activated\nMonitor condition: Fired\nMetric name:       oomKilledContainerCount\n"
      "Metric value:      2\n",
  };
  for (const char* r : reports) {
    Diagnosis d = test::diagnose_text(r);
    EXPECT_EQ(d.layer, Layer::k8s_pod_limit) << r << test::reason_text(d);
  }
}

TEST(OomKilledReports, DefinitionsFalsesAndPlaceholdersAreNotKills) {
  const char* quiet[] = {
      "- alert: KubeContainerOOMKilled\n  expr: kube_pod_container_status_last_terminated_reason{reason=\"OOMKilled\"} == 1\n  for: 5m\n",
      "            \"OOMKilled\": false,\n",
      "$ docker inspect -f '{{.State.OOMKilled}} {{.State.ExitCode}}' web\nfalse 0\n",
      "kube_pod_container_status_last_terminated_reason{container=\"api\", namespace=\"shop\", reason=\"OOMKilled\"}   0\n",
  };
  for (const char* q : quiet) EXPECT_EQ(test::diagnose_text(q).layer, Layer::none) << q;
}

// A jsonpath range over containerStatuses prints one tab-separated row per
// container: the reason is a column of its own (modelled on istio sidecar
// OOM loops; our names and counts). The column of another reason is not.
TEST(OomKilledReports, AJsonpathRowsReasonColumnIsTheReport) {
  auto rows = [](const char* reason) {
    return std::string("checkout\t0\t\nistio-proxy\t0\t\ntelegraf-istio\t41\t") + reason + "\n";
  };
  Diagnosis d = test::diagnose_text(rows("OOMKilled"));
  EXPECT_EQ(d.layer, Layer::k8s_pod_limit) << test::reason_text(d);
  EXPECT_NE(test::diagnose_text(rows("Completed")).layer, Layer::k8s_pod_limit);
}

// A node's kernel OOM killer as monitors report it: node-problem-detector's
// OOMKilling problem and node_exporter's oom_kill counter rising (modelled on
// kube-prometheus alert issues; our cluster and node names). A kill happened;
// which pool ran out the alert does not say. A rule's definition is no kill.
TEST(OomKilledReports, ANodesOomKillAlertIsAKillOfAnUnnamedPool) {
  Diagnosis npd = test::diagnose_text(
      "# Alert NodeProblemOOMKilling firing in node-problem-detector namespace\n"
      "| alertname   | NodeProblemOOMKilling |\n| node        | worker07 |\n| reason      | OOMKilling |\n"
      "| description | Process Out-Of-Memory Killed in node worker07 |\n");
  EXPECT_EQ(npd.layer, Layer::unknown) << test::reason_text(npd);
  EXPECT_NE(test::reason_text(npd).find("kernel OOM killer"), std::string::npos) << test::reason_text(npd);
  Diagnosis counter = test::diagnose_text(
      "[FIRING:1] OOMKillHappened (10.2.0.9:9100 node_exporter warning)\n - description = OOM kill happened on 10.2.0.9:9100\n"
      "node_vmstat_oom_kill{instance=\"10.2.0.9:9100\"}   2\n");
  EXPECT_EQ(counter.layer, Layer::unknown) << test::reason_text(counter);
  Diagnosis rule = test::diagnose_text(
      "- alert: OOMKillHappened\n  expr: increase(node_vmstat_oom_kill[5m]) > 0\n  labels:\n    severity: warning\n");
  EXPECT_EQ(rule.layer, Layer::none) << test::reason_text(rule);
}

}  // namespace
}  // namespace aimem
