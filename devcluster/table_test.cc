#include "base/testing/fake_clock.h"
#include "devcluster/table.h"
#include "devcluster/table_cells.h"

#include <gtest/gtest.h>

namespace cloneset::devcluster {
namespace {

using nlohmann::json;
using std::chrono::seconds;

TEST(TableTest, HumanDuration) {
  const std::vector<std::pair<int64_t, std::string>> cases = {
      {0, "0s"},      {45, "45s"},     {119, "119s"},   {120, "2m"},     {182, "3m2s"},  {600, "10m"},
      {1500, "25m"},  {10800, "3h"},   {14700, "4h5m"}, {72000, "20h"},  {273600, "3d4h"}, {1036800, "12d"},
      {-5, "<invalid>"}};
  for (const auto& [s, want] : cases) EXPECT_EQ(HumanDuration(seconds(s)), want) << s;
}

TEST(TableTest, JsonPath) {
  json o = json::parse(R"({"spec":{"replicas":5,"template":{"spec":{"containers":[{"name":"a","image":"x:1"},{"name":"b","image":"y:2"}]}}}})");
  EXPECT_EQ(EvaluateJsonPath(o, ".spec.replicas"), 5);
  EXPECT_EQ(EvaluateJsonPath(o, ".spec.template.spec.containers[*].image"), "x:1,y:2");
  EXPECT_EQ(EvaluateJsonPath(o, ".spec.template.spec.containers[1].name"), "b");
  EXPECT_TRUE(EvaluateJsonPath(o, ".status.replicas").is_null());
}

TEST(TableTest, CrdPrinterColumns) {
  ResourceType t;
  t.group = "apps.kruise.io";
  t.version = "v1alpha1";
  t.resource = "clonesets";
  t.kind = "CloneSet";
  t.custom = true;
  t.printer_columns = {{"DESIRED", "integer", ".spec.replicas", 0, ""},
                       {"READY", "integer", ".status.readyReplicas", 0, ""},
                       {"AGE", "date", ".metadata.creationTimestamp", 0, ""}};
  json o = json::parse(R"({"metadata":{"name":"vt","creationTimestamp":"2026-01-01T00:00:00Z","labels":{"app":"vt"}},
                           "spec":{"replicas":5}})");
  auto now = absl::ToChronoTime(base::testing::FakeClock::k2026) + seconds(182);
  json table = BuildTable(t, {o}, now, "42", "", false);
  EXPECT_EQ(table["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(table["columnDefinitions"].size(), 4u);
  EXPECT_EQ(table["rows"][0]["cells"], json::parse(R"(["vt",5,null,"3m2s"])"));
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(table["rows"][0]["object"]["metadata"]["labels"]["app"], "vt");
}

TEST(TableTest, PodRow) {
  ResourceType t;
  t.version = "v1";
  t.resource = "pods";
  t.kind = "Pod";
  json pod = json::parse(R"({"metadata":{"name":"p","creationTimestamp":"2026-01-01T00:00:00Z"},
     "spec":{"nodeName":"n1","containers":[{"name":"a"},{"name":"b"}]},
     "status":{"phase":"Running","podIP":"10.0.0.5","containerStatuses":[
        {"name":"a","ready":true,"restartCount":2},{"name":"b","ready":false,"restartCount":1,"state":{"waiting":{"reason":"CrashLoopBackOff"}}}]}})");
  json row = TableRow(t, pod, absl::ToChronoTime(base::testing::FakeClock::k2026) + seconds(7), false);
  EXPECT_EQ(row["cells"], json::parse(R"(["p","1/2","CrashLoopBackOff",3,"7s","10.0.0.5","n1","<none>","<none>"])"));
  EXPECT_EQ(TableColumns(t).size(), 9u);
}

}  // namespace
}  // namespace cloneset::devcluster
