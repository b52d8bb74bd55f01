// The doubles a Reconciler runs against in unit tests, with CloneSet ns/cs (uid-1, generation 1, version 100) in
// the cache and nothing observed for any object: the set-up the reconciler tests share.
#pragma once

#include <memory>
#include <string>

#include "absl/time/time.h"
#include "base/testing/fake_clock.h"
#include "executor/expectations.h"
#include "executor/reconciler.h"
#include "executor/testing/mocks.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kube/testing/mock_rest_client.h"

namespace cloneset::executor::testing {

inline constexpr char kKey[] = "ns/cs";

// A running pod of that CloneSet (controller owner uid-1) on node n1: label app=web, the InPlaceUpdateReady
// readiness gate, container main at img:v1.
inline pb::Pod GatedPod(const std::string& name, int rv) {
  pb::Pod p;
  auto* m = p.mutable_metadata();
  m->set_name(name);
  m->set_namespace_("ns");
  m->set_uid("u-" + name);
  m->set_resource_version(std::to_string(rv));
  (*m->mutable_labels())["app"] = "web";
  m->mutable_creation_timestamp()->set_seconds(1700000000);
  auto* o = m->add_owner_references();
  o->set_api_version("apps.kruise.io/v1alpha1");
  o->set_kind("CloneSet");
  o->set_name("cs");
  o->set_uid("uid-1");
  o->set_controller(true);
  p.set_node_name("n1");
  p.add_readiness_gates("InPlaceUpdateReady");
  auto* c = p.add_containers();
  c->set_name("main");
  c->set_image("img:v1");
  p.set_phase("Running");
  return p;
}

// The in-place update of one pod as the planner plans it: InPlaceUpdateReady=False, then the image.
inline void AddInPlaceUpdate(pb::PlanResponse& plan, const pb::Pod& pod) {
  pb::Action* sa = plan.add_actions();
  sa->set_stop_on_error(true);
  auto* st = sa->mutable_patch_pod_status();
  st->set_name(pod.metadata().name());
  st->set_uid(pod.metadata().uid());
  st->set_resource_version(pod.metadata().resource_version());
  auto* c = st->add_set_conditions();
  c->set_type("InPlaceUpdateReady");
  c->set_status("False");
  c->set_reason("StartInPlaceUpdate");
  pb::Action* pa = plan.add_actions();
  pa->set_stop_on_error(true);
  auto* pp = pa->mutable_patch_pod();
  pp->set_name(pod.metadata().name());
  pp->set_uid(pod.metadata().uid());
  pp->set_resource_version(pod.metadata().resource_version());
  (*pp->mutable_container_images())["main"] = "img:v2";
}

class ReconcilerFixture : public ::testing::Test {
 protected:
  ReconcilerFixture() : cs_(std::make_shared<pb::CloneSet>()) {
    cs_->set_api_version("apps.kruise.io/v1alpha1");
    cs_->mutable_metadata()->set_name("cs");
    cs_->mutable_metadata()->set_namespace_("ns");
    cs_->mutable_metadata()->set_uid("uid-1");
    cs_->mutable_metadata()->set_generation(1);
    cs_->mutable_metadata()->set_resource_version("100");
    ON_CALL(cache_, GetCloneSet(kKey)).WillByDefault(::testing::Return(cs_));
    ON_CALL(cache_, Lookup(::testing::_, ::testing::_, ::testing::_)).WillByDefault(::testing::Return(Observed{}));
  }

  // Deps wired to the doubles below; a test sets the options it exercises on top.
  ReconcilerDeps Deps() {
    return {.cache = &cache_, .planner = &planner_, .client = &client_, .events = &events_,
            .expectations = &expectations_, .clock = &clock_};
  }

  std::shared_ptr<pb::CloneSet> cs_;
  ::testing::NiceMock<MockClusterCache> cache_;
  ::testing::StrictMock<MockPlannerClient> planner_;
  ::testing::StrictMock<kube::testing::MockRestClient> client_;
  ::testing::NiceMock<MockEventSink> events_;
  base::testing::FakeClock clock_;
  Expectations expectations_{absl::Minutes(5)};
};

}  // namespace cloneset::executor::testing
