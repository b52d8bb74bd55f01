#include <string>

#include "gtest/gtest.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

TEST(StatusToJson, EveryFieldCamelCaseWithRfc3339Times) {
  pb::CloneSetStatus st;
  st.set_observed_generation(4);
  st.set_replicas(5);
  st.set_ready_replicas(4);
  st.set_available_replicas(3);
  st.set_updated_replicas(2);
  st.set_updated_ready_replicas(2);
  st.set_updated_available_replicas(1);
  st.set_expected_updated_replicas(5);
  st.set_update_revision("cs-2");
  st.set_current_revision("cs-1");
  st.set_collision_count(1);
  st.set_label_selector("app=demo");
  pb::Condition* c = st.add_conditions();
  c->set_type("Progressing");
  c->set_status("True");
  c->set_reason("CloneSetUpdated");
  c->set_message("updating");
  c->mutable_last_update_time()->set_seconds(1800000000);
  c->mutable_last_update_time()->set_nanos(999);  // metav1.Time has seconds precision
  c->mutable_last_transition_time()->set_seconds(1800000000 - 61);
  EXPECT_EQ(StatusToJson(st),
            R"({"observedGeneration":4,"replicas":5,"readyReplicas":4,"availableReplicas":3,"updatedReplicas":2,)"
            R"("updatedReadyReplicas":2,"updatedAvailableReplicas":1,"expectedUpdatedReplicas":5,)"
            R"("updateRevision":"cs-2","currentRevision":"cs-1","collisionCount":1,"labelSelector":"app=demo",)"
            R"("conditions":[{"type":"Progressing","status":"True","lastUpdateTime":"2027-01-15T08:00:00Z",)"
            R"("lastTransitionTime":"2027-01-15T07:58:59Z","reason":"CloneSetUpdated","message":"updating"}]})");
}

TEST(StatusToJson, EmptyStatusKeepsZeroCounters) {
  EXPECT_EQ(StatusToJson(pb::CloneSetStatus()),
            R"({"observedGeneration":0,"replicas":0,"readyReplicas":0,"availableReplicas":0,"updatedReplicas":0,)"
            R"("updatedReadyReplicas":0,"updatedAvailableReplicas":0,"expectedUpdatedReplicas":0,)"
            R"("updateRevision":"","currentRevision":"","collisionCount":0,"labelSelector":"","conditions":[]})");
}

TEST(StatusToJson, RoundTripsThroughCloneSetFromJson) {
  pb::CloneSetStatus st;
  st.set_replicas(3);
  st.set_update_revision("cs-9");
  pb::Condition* c = st.add_conditions();
  c->set_type("FailedScale");
  c->set_status("True");
  c->mutable_last_transition_time()->set_seconds(1800000000);
  auto cs = CloneSetFromJson("{\"status\":" + StatusToJson(st) + "}");
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(cs->status().SerializeAsString(), st.SerializeAsString());
}

}  // namespace
}  // namespace cloneset::snapshot
