// Accumulates one plan: actions in order, events, the minimum positive requeue (semantics §7.5).
#pragma once

#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;

class PlanBuilder {
 public:
  // Builds its own response (moved out by Finish).
  PlanBuilder() : response_(&owned_) {}
  // Builds into `out`, which may live on a protobuf arena (the service's per-call arena, so ten thousand actions
  // cost no heap allocation and are freed at once); finish with FinishInPlace.
  explicit PlanBuilder(pb::PlanResponse* out) : response_(out) {}
  PlanBuilder(const PlanBuilder&) = delete;
  PlanBuilder& operator=(const PlanBuilder&) = delete;

  pb::Action* AddAction() { return response_->add_actions(); }
  void AddEvent(pb::EventType type, std::string_view reason, std::string_view message,
                std::string_view involved_pod = {});
  // Room for `actions` more actions and `events` more events: a stage about to write thousands saves the
  // repeated regrowth (and, off an arena, the large reallocations that make malloc consolidate).
  void Reserve(int actions, int events);
  // Keeps the smallest strictly positive duration; non-positive durations are ignored.
  void PushRequeue(absl::Duration after);
  absl::Duration requeue() const { return requeue_; }
  // The caller expands StartInPlaceUpdates (PlanRequest.accept_in_place_batches): stages may write runs of
  // in-place update starts as batches instead of per-pod actions.
  void set_in_place_batches(bool on) { in_place_batches_ = on; }
  bool in_place_batches() const { return in_place_batches_; }
  pb::PlanSummary* summary() { return response_->mutable_summary(); }
  pb::PlanResponse* response() { return response_; }

  // Fills in requeue_after.
  void FinishInPlace();
  // FinishInPlace, then moves the accumulated response out.
  pb::PlanResponse Finish() &&;

 private:
  pb::PlanResponse owned_;
  pb::PlanResponse* response_;
  absl::Duration requeue_ = absl::ZeroDuration();
  bool in_place_batches_ = false;
};

}  // namespace cloneset::planner
