// Plan() on a request as given and with its pods sent as a pod table (PlanRequest.pod_table): the two must give
// byte-identical responses, or fail with the same status code. The same holds for the plans made with
// PlanRequest.accept_in_place_batches, once ExpandInPlaceBatches has spelled their batches out. Tests that plan
// through this check the table path and the batched form on every scenario they cover.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "gtest/gtest.h"
#include "planapi/in_place_batches.h"
#include "planner/plan.h"
#include "planapi/pod_table.h"
#include "planner/testing/deterministic_bytes.h"

namespace cloneset::planner::testing {

// The request with `pods` replaced by the equivalent pod table.
inline v1::PlanRequest WithPodTable(const v1::PlanRequest& request) {
  v1::PlanRequest out = request;
  absl::StatusOr<v1::PodTable> table = planapi::EncodePodTable(request.pods());
  EXPECT_TRUE(table.ok()) << table.status();
  if (!table.ok()) return out;
  out.clear_pods();
  *out.mutable_pod_table() = *std::move(table);
  return out;
}

// The request with PlanRequest.accept_in_place_batches set to `on`.
inline v1::PlanRequest WithInPlaceBatches(const v1::PlanRequest& request, bool on) {
  v1::PlanRequest out = request;
  out.set_accept_in_place_batches(on);
  return out;
}

// Plan(request) with its batches expanded (none without accept_in_place_batches).
inline absl::StatusOr<v1::PlanResponse> PlanExpanded(const v1::PlanRequest& request) {
  absl::StatusOr<v1::PlanResponse> plan = Plan(request);
  if (plan.ok()) planapi::ExpandInPlaceBatches(&*plan);
  return plan;
}

// Plan(request), checked against Plan(WithPodTable(request)), and the plans of both with and without
// accept_in_place_batches (expanded) against each other.
inline absl::StatusOr<v1::PlanResponse> PlanBothEncodings(const v1::PlanRequest& request) {
  absl::StatusOr<v1::PlanResponse> objects = Plan(request);
  const v1::PlanRequest table_request = WithPodTable(request);
  absl::StatusOr<v1::PlanResponse> table = Plan(table_request);
  EXPECT_EQ(objects.status().code(), table.status().code())
      << "pods: " << objects.status() << "\npod_table: " << table.status();
  if (objects.ok() && table.ok()) {
    EXPECT_EQ(DeterministicBytes(*objects), DeterministicBytes(*table))
        << "pods:\n" << objects->DebugString() << "\npod_table:\n" << table->DebugString();
  }
  // `objects` already is the per-pod plan unless the request asked for batches.
  absl::StatusOr<v1::PlanResponse> per_pod =
      request.accept_in_place_batches() ? Plan(WithInPlaceBatches(request, false)) : objects;
  if (per_pod.ok()) {
    for (const v1::Action& action : per_pod->actions()) {
      EXPECT_FALSE(action.has_start_in_place_updates()) << "a batch in a plan for a caller that did not accept it";
    }
  }
  for (const v1::PlanRequest& batched : {WithInPlaceBatches(request, true), WithInPlaceBatches(table_request, true)}) {
    absl::StatusOr<v1::PlanResponse> expanded = PlanExpanded(batched);
    EXPECT_EQ(per_pod.status().code(), expanded.status().code())
        << "per pod: " << per_pod.status() << "\nbatched: " << expanded.status();
    if (per_pod.ok() && expanded.ok()) {
      EXPECT_EQ(DeterministicBytes(*per_pod), DeterministicBytes(*expanded))
          << "per pod:\n" << per_pod->DebugString() << "\nbatched, expanded:\n" << expanded->DebugString();
    }
  }
  return objects;
}

}  // namespace cloneset::planner::testing
