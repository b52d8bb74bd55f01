// Plan() on a request as given and with its pods sent as a pod table (PlanRequest.pod_table): the two must give
// byte-identical responses, or fail with the same status code. Tests that plan through this check the table path
// on every scenario they cover.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "gtest/gtest.h"
#include "planner/plan.h"
#include "planner/pod_table.h"
#include "planner/testing/deterministic_bytes.h"

namespace cloneset::planner::testing {

// The request with `pods` replaced by the equivalent pod table.
inline v1::PlanRequest WithPodTable(const v1::PlanRequest& request) {
  v1::PlanRequest out = request;
  absl::StatusOr<v1::PodTable> table = EncodePodTable(request.pods());
  EXPECT_TRUE(table.ok()) << table.status();
  if (!table.ok()) return out;
  out.clear_pods();
  *out.mutable_pod_table() = *std::move(table);
  return out;
}

// Plan(request), checked against Plan(WithPodTable(request)).
inline absl::StatusOr<v1::PlanResponse> PlanBothEncodings(const v1::PlanRequest& request) {
  absl::StatusOr<v1::PlanResponse> objects = Plan(request);
  absl::StatusOr<v1::PlanResponse> table = Plan(WithPodTable(request));
  EXPECT_EQ(objects.status().code(), table.status().code())
      << "pods: " << objects.status() << "\npod_table: " << table.status();
  if (objects.ok() && table.ok()) {
    EXPECT_EQ(DeterministicBytes(*objects), DeterministicBytes(*table))
        << "pods:\n" << objects->DebugString() << "\npod_table:\n" << table->DebugString();
  }
  return objects;
}

}  // namespace cloneset::planner::testing
