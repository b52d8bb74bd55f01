#include "planner/plan_builder.h"

namespace cloneset::planner {

void PlanBuilder::AddEvent(pb::EventType type, std::string_view reason, std::string_view message,
                           std::string_view involved_pod) {
  pb::Event* event = response_->add_events();
  event->set_type(type);
  // As std::string rvalues: set_x(const char*, size_t) would copy a temporary (an extra allocation and free).
  event->set_reason(std::string(reason));
  event->set_message(std::string(message));
  event->set_involved_pod(std::string(involved_pod));
}

void PlanBuilder::Reserve(int actions, int events) {
  if (actions > 0) response_->mutable_actions()->Reserve(response_->actions_size() + actions);
  if (events > 0) response_->mutable_events()->Reserve(response_->events_size() + events);
}

void PlanBuilder::PushRequeue(absl::Duration after) {
  if (after <= absl::ZeroDuration()) return;
  if (requeue_ == absl::ZeroDuration() || after < requeue_) requeue_ = after;
}

void PlanBuilder::FinishInPlace() {
  if (requeue_ > absl::ZeroDuration()) {
    const int64_t nanos = absl::ToInt64Nanoseconds(requeue_);
    response_->mutable_requeue_after()->set_seconds(nanos / 1000000000);
    response_->mutable_requeue_after()->set_nanos(static_cast<int32_t>(nanos % 1000000000));
  }
}

pb::PlanResponse PlanBuilder::Finish() && {
  FinishInPlace();
  return std::move(*response_);
}

}  // namespace cloneset::planner
