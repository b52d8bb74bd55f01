#include "planner/predicates.h"

#include <string>

#include "base/time_format.h"
#include "gtest/gtest.h"

namespace cloneset::planner {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

struct PodSpec {
  std::string phase = "Running";
  std::string ready = "True";          // "" = no Ready condition
  int ready_age_seconds = 100;         // Ready.lastTransitionTime = now - age; <0 = unset
  std::string in_place_ready = "";     // "" = absent
  std::string lifecycle = "";          // "" = no label
  bool terminating = false;
};

pb::Pod MakePod(const PodSpec& s) {
  pb::Pod pod;
  pod.mutable_metadata()->set_name("web-abcde");
  pod.set_phase(s.phase);
  if (!s.ready.empty()) {
    pb::Condition* c = pod.add_conditions();
    c->set_type("Ready");
    c->set_status(s.ready);
    if (s.ready_age_seconds >= 0) {
      SetTimestamp(kNow - absl::Seconds(s.ready_age_seconds), c->mutable_last_transition_time());
    }
  }
  if (!s.in_place_ready.empty()) {
    pb::Condition* c = pod.add_conditions();
    c->set_type(kInPlaceUpdateReadyCondition);
    c->set_status(s.in_place_ready);
  }
  if (!s.lifecycle.empty()) (*pod.mutable_metadata()->mutable_labels())[kLifecycleStateLabel] = s.lifecycle;
  if (s.terminating) SetTimestamp(kNow, pod.mutable_metadata()->mutable_deletion_timestamp());
  return pod;
}

struct AvailabilityCase {
  std::string name;
  PodSpec pod;
  int32_t min_ready;
  bool running_available;
  bool update_ready;
  bool available;
};

class AvailabilityTest : public ::testing::TestWithParam<AvailabilityCase> {};

TEST_P(AvailabilityTest, Predicates) {
  const AvailabilityCase& c = GetParam();
  const pb::Pod pod = MakePod(c.pod);
  EXPECT_EQ(IsRunningAvailable(pod, c.min_ready, kNow), c.running_available);
  EXPECT_EQ(IsUpdateReady(pod, c.min_ready, kNow), c.update_ready);
  EXPECT_EQ(IsAvailable(pod, c.min_ready, kNow), c.available);
}

INSTANTIATE_TEST_SUITE_P(
    Semantics03, AvailabilityTest,
    ::testing::Values(
        AvailabilityCase{"ready_running", {}, 0, true, true, true},
        AvailabilityCase{"pending", {.phase = "Pending"}, 0, false, false, false},
        AvailabilityCase{"not_ready", {.ready = "False"}, 0, false, false, false},
        AvailabilityCase{"no_ready_condition", {.ready = ""}, 0, false, false, false},
        AvailabilityCase{"min_ready_elapsed", {.ready_age_seconds = 100}, 30, true, true, true},
        // lastTransitionTime + m must be strictly before now.
        AvailabilityCase{"min_ready_exactly_now", {.ready_age_seconds = 30}, 30, false, false, false},
        AvailabilityCase{"min_ready_one_second_past", {.ready_age_seconds = 31}, 30, true, true, true},
        AvailabilityCase{"min_ready_not_yet", {.ready_age_seconds = 10}, 30, false, false, false},
        AvailabilityCase{"min_ready_no_transition_time", {.ready_age_seconds = -1}, 30, false, false, false},
        AvailabilityCase{"no_transition_time_m0", {.ready_age_seconds = -1}, 0, true, true, true},
        AvailabilityCase{"in_place_ready_false", {.in_place_ready = "False"}, 0, true, false, false},
        AvailabilityCase{"in_place_ready_true", {.in_place_ready = "True"}, 0, true, true, true},
        AvailabilityCase{"lifecycle_normal", {.lifecycle = "Normal"}, 0, true, true, true},
        AvailabilityCase{"lifecycle_preparing_normal", {.lifecycle = "PreparingNormal"}, 0, true, true, false},
        AvailabilityCase{"lifecycle_updated", {.lifecycle = "Updated"}, 0, true, true, false},
        AvailabilityCase{"lifecycle_preparing_delete", {.lifecycle = "PreparingDelete"}, 0, true, true, false}),
    [](const auto& info) { return info.param.name; });

TEST(ActiveTest, PhasesAndDeletion) {
  EXPECT_TRUE(IsActive(MakePod({})));
  EXPECT_TRUE(IsActive(MakePod({.phase = "Pending"})));
  EXPECT_FALSE(IsActive(MakePod({.phase = "Succeeded"})));
  EXPECT_FALSE(IsActive(MakePod({.phase = "Failed"})));
  EXPECT_FALSE(IsActive(MakePod({.terminating = true})));
}

TEST(ControllerReadyTest, IgnoresMinReadySeconds) {
  EXPECT_TRUE(IsControllerReady(MakePod({.ready_age_seconds = 1}), kNow));
  EXPECT_FALSE(IsControllerReady(MakePod({.lifecycle = "PreparingUpdate"}), kNow));
}

TEST(SpecifiedDeleteTest, LabelOrPodsToDelete) {
  ResolvedSpec spec;
  pb::Pod pod = MakePod({});
  EXPECT_FALSE(IsSpecifiedDelete(pod, spec));
  spec.pods_to_delete = {"other", "web-abcde"};
  EXPECT_TRUE(IsSpecifiedDelete(pod, spec));
  spec.pods_to_delete.clear();
  (*pod.mutable_metadata()->mutable_labels())[kSpecifiedDeleteLabel] = "";  // presence is enough
  EXPECT_TRUE(IsSpecifiedDelete(pod, spec));
}

struct HashCase {
  std::string label;  // "<none>" = absent
  std::string revision;
  bool matches;
};

class RevisionMatchTest : public ::testing::TestWithParam<HashCase> {};

TEST_P(RevisionMatchTest, FullOrShortHash) {
  pb::Pod pod = MakePod({});
  if (GetParam().label != "<none>") (*pod.mutable_metadata()->mutable_labels())[kRevisionLabel] = GetParam().label;
  EXPECT_EQ(RevisionMatches(pod, GetParam().revision), GetParam().matches);
}

INSTANTIATE_TEST_SUITE_P(Semantics03, RevisionMatchTest,
                         ::testing::Values(HashCase{"web-7d9f8c", "web-7d9f8c", true},
                                           HashCase{"7d9f8c", "web-7d9f8c", true},  // CloneSetShortHash pods
                                           HashCase{"web-7d9f8c", "7d9f8c", true},
                                           HashCase{"web-7d9f8c", "web-5b6c7d", false},
                                           HashCase{"other-7d9f8c", "web-7d9f8c", true},
                                           HashCase{"<none>", "web-7d9f8c", false}));

TEST(ShortHashTest, AfterLastDash) {
  EXPECT_EQ(ShortHash("my-web-7d9f8c"), "7d9f8c");
  EXPECT_EQ(ShortHash("7d9f8c"), "7d9f8c");
  EXPECT_EQ(ShortHash("web-"), "");
  EXPECT_EQ(ShortHash(""), "");
}

TEST(TimeTest, RoundTripAndFormat) {
  google::protobuf::Timestamp ts;
  EXPECT_FALSE(IsSet(ts));
  EXPECT_EQ(ToTime(ts), absl::InfinitePast());
  const absl::Time t = absl::FromUnixSeconds(1795778700) + absl::Milliseconds(250);
  SetTimestamp(t, &ts);
  EXPECT_EQ(ts.seconds(), 1795778700);
  EXPECT_EQ(ts.nanos(), 250000000);
  EXPECT_EQ(ToTime(ts), t);
  EXPECT_EQ(base::FormatTime(absl::FromUnixSeconds(1795778700)), "2026-11-27T11:25:00Z");
  SetTimestamp(absl::FromUnixSeconds(-1) + absl::Milliseconds(500), &ts);
  EXPECT_EQ(ts.seconds(), -1);
  EXPECT_EQ(ts.nanos(), 500000000);
  SetTimestamp(absl::InfinitePast(), &ts);
  EXPECT_FALSE(IsSet(ts));
}

TEST(MetaTest, LabelsAnnotationsInstanceIdsGates) {
  pb::Pod pod = MakePod({});
  (*pod.mutable_metadata()->mutable_labels())[kInstanceIdLabel] = "abcde";
  (*pod.mutable_metadata()->mutable_annotations())[kDeletionCostAnnotation] = "5";
  pod.add_readiness_gates(kInPlaceUpdateReadyCondition);
  EXPECT_EQ(InstanceId(pod), "abcde");
  EXPECT_EQ(Label(pod.metadata(), "missing"), "");
  EXPECT_EQ(Annotation(pod.metadata(), kDeletionCostAnnotation), "5");
  EXPECT_TRUE(HasReadinessGate(pod, kInPlaceUpdateReadyCondition));
  EXPECT_FALSE(HasReadinessGate(pod, kKruisePodReadyCondition));
  pb::PersistentVolumeClaim pvc;
  (*pvc.mutable_metadata()->mutable_labels())[kInstanceIdLabel] = "xyz12";
  EXPECT_EQ(InstanceId(pvc), "xyz12");
  EXPECT_EQ(FindCondition(pod, "Nope"), nullptr);
  ASSERT_NE(FindCondition(pod, "Ready"), nullptr);
}

}  // namespace
}  // namespace cloneset::planner
