// Events of the simulated kubelet and scheduler: the pure derivation from status transitions, the recorder's
// aggregation and bound, and the story a pod's life writes through the simulator.
#include "base/testing/fake_clock.h"
#include "devcluster/nodes/events.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"

#include "devcluster/nodes/simulator.h"

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

const json kPod = json::parse(R"({"metadata":{"name":"web-0","namespace":"default","uid":"u1"},
  "spec":{"containers":[{"name":"app","image":"nginx:1.25"}]}})");

json Status(const std::string& state_json, const std::string& image = "nginx:1.25", int restarts = 0,
            const std::string& id = "c0") {
  return {{"containerStatuses",
           {{{"name", "app"}, {"image", image}, {"restartCount", restarts}, {"containerID", id},
             {"state", json::parse(state_json)}}}}};
}

ListOptions InDefault(const std::string& field_selector = "") {
  ListOptions o;
  o.ns = "default";
  o.field_selector = field_selector;
  return o;
}

std::vector<std::string> Reasons(const std::vector<PodEvent>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.type + " " + e.reason + ": " + e.message);
  return out;
}

TEST(KubeletEventsTest, StatusTransitions) {
  const std::string creating = R"({"waiting":{"reason":"ContainerCreating"}})";
  const std::string running = R"({"running":{"startedAt":"2026-01-01T00:00:01Z"}})";
  struct Case {
    std::string name;
    json old_status, new_status;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {"accepted, pulling", json::object(), Status(creating), {"Normal Pulling: Pulling image \"nginx:1.25\""}},
      {"pull done, started", Status(creating), Status(running),
       {"Normal Pulled: Successfully pulled image \"nginx:1.25\"", "Normal Created: Created container: app",
        "Normal Started: Started container app"}},
      {"straight to running tells the whole story", json::object(), Status(running),
       {"Normal Pulling: Pulling image \"nginx:1.25\"", "Normal Pulled: Successfully pulled image \"nginx:1.25\"",
        "Normal Created: Created container: app", "Normal Started: Started container app"}},
      {"ready flip is not an event", Status(running), Status(running), {}},
      {"in-place image change", Status(running), Status(creating, "nginx:1.26", 1, ""),
       {"Normal Killing: Container app definition changed, will be restarted",
        "Normal Pulling: Pulling image \"nginx:1.26\""}},
      {"crash-loop restart of a present image", Status(R"({"waiting":{"reason":"CrashLoopBackOff"}})", "nginx:1.25", 1),
       Status(running, "nginx:1.25", 2, "c2"),
       {"Normal Pulled: Container image \"nginx:1.25\" already present on machine",
        "Normal Created: Created container: app", "Normal Started: Started container app"}},
      {"crash", Status(running, "nginx:1.25", 0, "c0"),
       Status(R"({"waiting":{"reason":"CrashLoopBackOff"}})", "nginx:1.25", 1, "c1"),
       {"Warning BackOff: Back-off restarting failed container app in pod web-0_default"}},
      {"pull failure", Status(creating), Status(R"({"waiting":{"reason":"ErrImagePull","message":"not found"}})"),
       {"Warning Failed: Failed to pull image \"nginx:1.25\": not found", "Warning Failed: Error: ErrImagePull"}},
      {"pull back-off", Status(R"({"waiting":{"reason":"ErrImagePull"}})"),
       Status(R"({"waiting":{"reason":"ImagePullBackOff"}})"),
       {"Normal BackOff: Back-off pulling image \"nginx:1.25\"", "Warning Failed: Error: ImagePullBackOff"}},
  };
  for (const auto& c : cases) EXPECT_EQ(Reasons(KubeletEvents(kPod, c.old_status, c.new_status)), c.want) << c.name;
  auto started = KubeletEvents(kPod, json::object(), Status(running));
  ASSERT_FALSE(started.empty());
  EXPECT_EQ(started[0].field_path, "spec.containers{app}");
  EXPECT_EQ(Reasons(KillingEvents(kPod)), std::vector<std::string>{"Normal Killing: Stopping container app"});
}

class RecorderTest : public ::testing::Test {
 protected:
  std::vector<json> Events() {
    auto list = store_.ListObjects(kEvents, InDefault());
    EXPECT_TRUE(list.ok());
    return list.ok() ? *list : std::vector<json>{};
  }
  base::testing::FakeClock clock_{base::testing::FakeClock::k2026};
  Store store_{&clock_};
};

TEST_F(RecorderTest, RepeatsAggregateByCount) {
  EventRecorder recorder(&store_, &clock_);
  const PodEvent backoff{"Warning", "BackOff", "Back-off restarting failed container app in pod web-0_default",
                         "spec.containers{app}"};
  recorder.Record(kPod, backoff, {"kubelet", "devcluster-node-0"});
  clock_.Advance(seconds(10));
  recorder.Record(kPod, backoff, {"kubelet", "devcluster-node-0"});
  recorder.Record(kPod, backoff, {"kubelet", "devcluster-node-0"});
  auto events = Events();
  ASSERT_EQ(events.size(), 1u);
  const json& ev = events[0];
  EXPECT_EQ(ev["count"], 3);
  EXPECT_EQ(ev["firstTimestamp"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(ev["lastTimestamp"], "2026-01-01T00:00:10Z");
  EXPECT_EQ(ev["type"], "Warning");
  EXPECT_EQ(ev["reason"], "BackOff");
  EXPECT_EQ(ev["involvedObject"], json::parse(R"({"kind":"Pod","namespace":"default","name":"web-0","uid":"u1",
      "apiVersion":"v1","resourceVersion":"","fieldPath":"spec.containers{app}"})"));
  EXPECT_EQ(ev["source"], json::parse(R"({"component":"kubelet","host":"devcluster-node-0"})"));
  // A different message is a different event.
  recorder.Record(kPod, {"Normal", "Started", "Started container app", "spec.containers{app}"},
                  {"kubelet", "devcluster-node-0"});
  EXPECT_EQ(Events().size(), 2u);
  // Found by the field selector kubectl describe uses.
  auto described = store_.ListObjects(kEvents, InDefault("involvedObject.name=web-0,involvedObject.namespace=default,"
                                                         "involvedObject.kind=Pod,involvedObject.uid=u1"));
  ASSERT_TRUE(described.ok());
  EXPECT_EQ(described->size(), 2u);
}

TEST_F(RecorderTest, KeepsAtMostMaxEvents) {
  EventRecorder recorder(&store_, &clock_, /*max_events=*/3);
  for (int i = 0; i < 5; ++i)
    recorder.Record(kPod, {"Normal", "Pulling", "Pulling image \"v" + std::to_string(i) + "\"", ""}, {"kubelet", "n"});
  auto events = Events();
  ASSERT_EQ(events.size(), 3u);
  std::set<std::string> messages;
  for (const auto& e : events) messages.insert(e["message"].get<std::string>());
  EXPECT_EQ(messages, (std::set<std::string>{"Pulling image \"v2\"", "Pulling image \"v3\"", "Pulling image \"v4\""}));
  // An evicted key starts a new Event (count 1) instead of failing.
  recorder.Record(kPod, {"Normal", "Pulling", "Pulling image \"v0\"", ""}, {"kubelet", "n"});
  EXPECT_EQ(Events().size(), 3u);
}

// A pod's life through the simulator: the events kubectl describe shows, in order, from the right sources.
TEST(SimulatorEventsTest, PodStoryFromSchedulingToDeletion) {
  base::testing::FakeClock clock{base::testing::FakeClock::k2026};
  Store store(&clock);
  SimulatorConfig config;
  config.nodes = 1;
  config.timing.start_delay = seconds(1);
  config.timing.ready_delay = seconds(1);
  config.timing.max_grace = seconds(2);
  config.heartbeat_interval = seconds(0);
  config.poll_interval = milliseconds(2);
  config.images.default_pull_time = seconds(3);
  NodeSimulator sim(&store, &clock, config);
  ASSERT_TRUE(sim.Start().ok());
  json pod = kPod;
  pod["metadata"].erase("uid");
  ASSERT_TRUE(store.Create(kPods, pod).ok());
  auto story = [&] {
    std::vector<std::string> out;
    auto list = store.ListObjects(kEvents, InDefault());
    if (!list.ok()) return out;
    std::sort(list->begin(), list->end(), [](const json& a, const json& b) {
      return std::stoll(a["metadata"]["resourceVersion"].get<std::string>()) <
             std::stoll(b["metadata"]["resourceVersion"].get<std::string>());
    });
    for (const auto& e : *list)
      out.push_back(absl::StrCat(e["source"]["component"].get<std::string>(), " ", e["reason"].get<std::string>()));
    return out;
  };
  // The story once the simulator has written at least `n` events and acted on everything so far (checked after
  // each of its idle passes, no sleeping; bounded in real time).
  auto wait_for = [&](size_t n) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (story().size() < n && absl::Now() < deadline && sim.AwaitIdle(deadline - absl::Now())) {
    }
    return story();
  };
  EXPECT_EQ(wait_for(2), (std::vector<std::string>{"default-scheduler Scheduled", "kubelet Pulling"}));
  clock.Advance(seconds(4));  // pull + start
  EXPECT_EQ(wait_for(5), (std::vector<std::string>{"default-scheduler Scheduled", "kubelet Pulling", "kubelet Pulled",
                                                    "kubelet Created", "kubelet Started"}));
  clock.Advance(seconds(2));  // ready: no event
  ASSERT_TRUE(store.Delete(kPods, "default", "web-0").ok());
  auto final_story = wait_for(6);
  EXPECT_EQ(final_story.size(), 6u);
  if (final_story.size() == 6u) {
    EXPECT_EQ(final_story[5], "kubelet Killing");
  }
  auto scheduled = store.ListObjects(kEvents, InDefault("reason=Scheduled"));
  ASSERT_TRUE(scheduled.ok());
  ASSERT_EQ(scheduled->size(), 1u);
  EXPECT_EQ((*scheduled)[0]["message"], "Successfully assigned default/web-0 to devcluster-node-0");
  sim.Stop();
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
