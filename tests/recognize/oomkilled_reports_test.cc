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

}  // namespace
}  // namespace aimem
