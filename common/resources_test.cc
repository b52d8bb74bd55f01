#include "common/resources.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cloneset::common {
namespace {

using Json = nlohmann::json;
namespace pb = ::cloneset::planner::v1;

constexpr __int128 kGiga = 1000000000;

TEST(QuantityNanosTest, Table) {
  struct Case {
    std::string text;
    __int128 nanos;
  };
  for (const Case& c : std::vector<Case>{
           {"1", kGiga},
           {"500m", 500000000},
           {"0.5", 500000000},
           {".5", 500000000},
           {"5.", 5 * kGiga},
           {"1Ki", 1024 * kGiga},
           {"1Gi", static_cast<__int128>(1073741824) * kGiga},
           {"1.5Gi", static_cast<__int128>(1610612736) * kGiga},
           {"1G", kGiga * kGiga},
           {"2e3", 2000 * kGiga},
           {"2E-3", 2000000},
           {"1n", 1},
           {"1u", 1000},
           {"0.1n", 1},  // below 1n rounds up, as resource.ParseQuantity
           {"+3", 3 * kGiga},
           {"-3m", -3000000},
           {"0", 0},
       }) {
    SCOPED_TRACE(c.text);
    const absl::StatusOr<__int128> v = QuantityNanos(c.text);
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_TRUE(*v == c.nanos);
  }
}

TEST(QuantityNanosTest, RefusesWhatIsNoQuantity) {
  for (const char* bad : {"", "m", ".", "1Qi", "1 Gi", "abc", "1e", "1.2.3", "1e1000", "1000000000000000000000000000000Ei"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(QuantityNanos(std::string_view(bad)).ok());
  }
  EXPECT_FALSE(JsonQuantityNanos(Json(true)).ok());
  EXPECT_TRUE(JsonQuantityNanos(Json(2)).ok());
}

TEST(SameQuantityTest, ComparesValues) {
  EXPECT_TRUE(SameQuantity("1", "1000m"));
  EXPECT_TRUE(SameQuantity("1Gi", "1073741824"));
  EXPECT_TRUE(SameQuantity("0.5", "500m"));
  EXPECT_FALSE(SameQuantity("1", "1001m"));
  EXPECT_FALSE(SameQuantity("1Gi", "1G"));
  EXPECT_TRUE(SameQuantity("bogus", "bogus"));
  EXPECT_FALSE(SameQuantity("bogus", "1"));
}

Json Spec(std::vector<Json> containers, std::vector<Json> init = {}) {
  Json spec = {{"containers", containers}};
  if (!init.empty()) spec["initContainers"] = init;
  return spec;
}

Json Container(Json requests, Json limits) {
  Json c = {{"name", "c"}, {"image", "i"}};
  Json resources = Json::object();
  if (!requests.is_null()) resources["requests"] = requests;
  if (!limits.is_null()) resources["limits"] = limits;
  c["resources"] = resources;
  return c;
}

TEST(PodQosClassTest, Table) {
  struct Case {
    std::string name;
    Json spec;
    QosClass want;
  };
  const Json cpu_mem = {{"cpu", "1"}, {"memory", "1Gi"}};
  for (const Case& c : std::vector<Case>{
           {"no resources", Spec({Container(nullptr, nullptr)}), QosClass::kBestEffort},
           {"only other resources", Spec({Container({{"ephemeral-storage", "1Gi"}}, nullptr)}), QosClass::kBestEffort},
           {"zero requests count as none", Spec({Container({{"cpu", "0"}}, nullptr)}), QosClass::kBestEffort},
           {"requests only", Spec({Container({{"cpu", "100m"}}, nullptr)}), QosClass::kBurstable},
           {"equal requests and limits", Spec({Container(cpu_mem, cpu_mem)}), QosClass::kGuaranteed},
           {"equal values spelled differently", Spec({Container({{"cpu", "1000m"}, {"memory", "1024Mi"}}, cpu_mem)}),
            QosClass::kGuaranteed},
           {"limits only: requests are not defaulted on templates", Spec({Container(nullptr, cpu_mem)}),
            QosClass::kBurstable},
           {"limits without memory", Spec({Container({{"cpu", "1"}}, {{"cpu", "1"}})}), QosClass::kBurstable},
           {"requests below limits", Spec({Container({{"cpu", "500m"}, {"memory", "1Gi"}}, cpu_mem)}),
            QosClass::kBurstable},
           {"one guaranteed and one best-effort container",
            Spec({Container(cpu_mem, cpu_mem), Container(nullptr, nullptr)}), QosClass::kBurstable},
           {"two guaranteed containers", Spec({Container(cpu_mem, cpu_mem), Container(cpu_mem, cpu_mem)}),
            QosClass::kGuaranteed},
           {"an init container counts", Spec({Container(cpu_mem, cpu_mem)}, {Container({{"cpu", "1"}}, nullptr)}),
            QosClass::kBurstable},
       }) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(PodQosClass(c.spec), c.want);
  }
  EXPECT_STREQ(QosClassName(QosClass::kGuaranteed), "Guaranteed");
  EXPECT_EQ(PodQosClass(Json()), QosClass::kBestEffort);
}

pb::Pod ResizedPod(const std::string& status_cpu) {
  pb::Pod pod;
  pb::Container* c = pod.add_containers();
  c->set_name("app");
  (*c->mutable_resource_requests())["cpu"] = "500m";
  (*c->mutable_resource_limits())["memory"] = "1Gi";
  pb::ContainerStatus* s = pod.add_container_statuses();
  s->set_name("app");
  (*s->mutable_resource_requests())["cpu"] = status_cpu;
  (*s->mutable_resource_limits())["memory"] = "1073741824";
  return pod;
}

TEST(PodResizeProgressTest, StatusAgainstSpec) {
  EXPECT_EQ(PodResizeProgress(ResizedPod("0.5")).state, ResizeState::kDone);
  const ResizeProgress old = PodResizeProgress(ResizedPod("250m"));
  EXPECT_EQ(old.state, ResizeState::kNotApplied);
  EXPECT_EQ(old.container, "app");
  EXPECT_EQ(DescribeResize(old), "container app does not report its new resources yet");

  pb::Pod no_status = ResizedPod("500m");
  no_status.clear_container_statuses();
  EXPECT_EQ(PodResizeProgress(no_status).state, ResizeState::kNoStatus);

  pb::Pod unreported = ResizedPod("500m");
  unreported.mutable_container_statuses(0)->clear_resource_limits();
  EXPECT_EQ(PodResizeProgress(unreported).state, ResizeState::kNotApplied);
}

TEST(PodResizeProgressTest, ConditionsComeFirst) {
  pb::Pod pod = ResizedPod("500m");
  pb::Condition* pending = pod.add_conditions();
  pending->set_type(kPodResizePending);
  pending->set_status("True");
  pending->set_reason(kResizeInfeasible);
  pending->set_message("Node didn't have enough capacity: cpu, requested: 64000, capacity: 2000");
  ResizeProgress p = PodResizeProgress(pod);
  EXPECT_EQ(p.state, ResizeState::kPending);
  EXPECT_EQ(p.reason, "Infeasible");
  EXPECT_EQ(DescribeResize(p), "resize Infeasible: Node didn't have enough capacity: cpu, requested: 64000, capacity: 2000");

  pending->set_status("False");  // a condition that is not True is no pending resize
  EXPECT_EQ(PodResizeProgress(pod).state, ResizeState::kDone);

  pb::Condition* progress = pod.add_conditions();
  progress->set_type(kPodResizeInProgress);
  progress->set_status("True");
  EXPECT_EQ(PodResizeProgress(pod).state, ResizeState::kInProgress);
  EXPECT_EQ(DescribeResize(PodResizeProgress(pod)), "resize in progress");
}

}  // namespace
}  // namespace cloneset::common
