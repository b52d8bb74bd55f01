// The queued event sink (event_queue.h): events are written by its own thread in the order raised, the caller does
// not wait for the write, nothing is dropped, Stop writes what is queued.
#include "executor/event_queue.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;

// Records "<ns>/<name> <uid> <rv> <type> <reason>: <message>"; each write waits for `gate` when one is set.
class RecordingSink final : public EventSink {
 public:
  void Event(const pb::CloneSet& cs, std::string_view type, std::string_view reason,
             std::string_view message) override {
    if (gate != nullptr) gate->WaitForNotification();
    absl::MutexLock l(&mu);
    written.push_back(absl::StrCat(cs.metadata().namespace_(), "/", cs.metadata().name(), " ", cs.metadata().uid(),
                                   " ", cs.metadata().resource_version(), " ", cs.api_version(), " ", std::string(type),
                                   " ", std::string(reason), ": ", std::string(message)));
  }
  std::vector<std::string> Written() {
    absl::MutexLock l(&mu);
    return written;
  }
  absl::Notification* gate = nullptr;
  absl::Mutex mu;
  std::vector<std::string> written ABSL_GUARDED_BY(mu);
};

pb::CloneSet CloneSet(const std::string& name) {
  pb::CloneSet cs;
  cs.set_api_version("apps.kruise.io/v1alpha1");
  cs.mutable_metadata()->set_namespace_("ns");
  cs.mutable_metadata()->set_name(name);
  cs.mutable_metadata()->set_uid("uid-" + name);
  cs.mutable_metadata()->set_resource_version("7");
  cs.mutable_spec()->set_replicas(3);  // not part of what an event names
  return cs;
}

std::string Line(const std::string& name, int i) {
  return absl::StrCat("ns/", name, " uid-", name, " 7 apps.kruise.io/v1alpha1 Normal Reason", i, ": message ", i);
}

struct OrderCase {
  std::string name;
  size_t capacity;
  int events;
};

class QueuedEventSinkOrder : public ::testing::TestWithParam<OrderCase> {};

TEST_P(QueuedEventSinkOrder, WritesEveryEventInTheOrderRaised) {
  RecordingSink inner;
  QueuedEventSink sink(inner, GetParam().capacity);
  std::vector<std::string> want;
  for (int i = 0; i < GetParam().events; ++i) {
    // A temporary CloneSet: the queue keeps what the event names, not a reference to the caller's object.
    sink.Event(CloneSet("cs"), "Normal", absl::StrCat("Reason", i), absl::StrCat("message ", i));
    want.push_back(Line("cs", i));
  }
  sink.Flush();
  EXPECT_THAT(inner.Written(), ElementsAreArray(want));
  sink.Stop();
  EXPECT_THAT(inner.Written(), ElementsAreArray(want));
}

INSTANTIATE_TEST_SUITE_P(Cases, QueuedEventSinkOrder,
                         ::testing::Values(OrderCase{"none", 4, 0}, OrderCase{"one", 4, 1},
                                           OrderCase{"capacity", 4, 4}, OrderCase{"over_capacity", 4, 25},
                                           OrderCase{"capacity_one", 1, 10}, OrderCase{"a_plan", 10000, 1000}),
                         [](const auto& info) { return info.param.name; });

// The point of the queue: raising an event does not wait for its write. With the write held, Event still returns.
// (Written by the caller, as before the queue, this waits for the gate and fails on the bound.)
TEST(QueuedEventSink, EventReturnsWhileTheWriteIsHeld) {
  RecordingSink inner;
  absl::Notification gate;
  inner.gate = &gate;
  QueuedEventSink sink(inner, 16);
  absl::Notification returned;
  std::thread raiser([&] {
    for (int i = 0; i < 3; ++i) sink.Event(CloneSet("a"), "Normal", absl::StrCat("Reason", i), absl::StrCat("message ", i));
    returned.Notify();
  });
  // A bound that only a caller blocked on the held write misses.
  const bool did_return = returned.WaitForNotificationWithTimeout(absl::Seconds(30));
  EXPECT_TRUE(did_return) << "Event waited for the held write";
  EXPECT_TRUE(inner.Written().empty());
  gate.Notify();
  raiser.join();
  sink.Flush();
  EXPECT_THAT(inner.Written(), ElementsAre(Line("a", 0), Line("a", 1), Line("a", 2)));
}

// Stop writes what is still queued (nothing is dropped), and an event raised after Stop is written by the caller.
TEST(QueuedEventSink, StopWritesWhatIsQueuedAndLaterEventsAreWrittenByTheCaller) {
  RecordingSink inner;
  absl::Notification gate;
  inner.gate = &gate;
  auto sink = std::make_unique<QueuedEventSink>(inner, 8);
  for (int i = 0; i < 5; ++i) sink->Event(CloneSet("b"), "Normal", absl::StrCat("Reason", i), absl::StrCat("message ", i));
  std::thread stopper([&] { sink->Stop(); });
  gate.Notify();
  stopper.join();
  EXPECT_THAT(inner.Written(), ElementsAre(Line("b", 0), Line("b", 1), Line("b", 2), Line("b", 3), Line("b", 4)));
  sink->Event(CloneSet("b"), "Normal", "Reason5", "message 5");
  EXPECT_THAT(inner.Written().back(), Line("b", 5));
  sink->Stop();  // idempotent
  sink.reset();
  EXPECT_EQ(inner.Written().size(), 6u);
}

// A full queue makes the caller wait instead of dropping: with capacity 2 and the write held, 6 events raised from
// another thread all arrive, in order, once the write goes on.
TEST(QueuedEventSink, AFullQueueWaitsInsteadOfDropping) {
  RecordingSink inner;
  absl::Notification gate;
  inner.gate = &gate;
  QueuedEventSink sink(inner, 2);
  std::thread raiser([&] {
    for (int i = 0; i < 6; ++i) sink.Event(CloneSet("c"), "Normal", absl::StrCat("Reason", i), absl::StrCat("message ", i));
  });
  gate.Notify();
  raiser.join();
  sink.Flush();
  std::vector<std::string> want;
  for (int i = 0; i < 6; ++i) want.push_back(Line("c", i));
  EXPECT_THAT(inner.Written(), ElementsAreArray(want));
}

}  // namespace
}  // namespace cloneset::executor
