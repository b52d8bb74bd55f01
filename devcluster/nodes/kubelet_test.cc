#include "devcluster/nodes/kubelet.h"

#include <gtest/gtest.h>

#include <map>

namespace cloneset::devcluster::nodes {
namespace {

using nlohmann::json;
using std::chrono::seconds;

const TimePoint kT0{seconds(1'767'225'600)};  // 2026-01-01T00:00:00Z

json Pod(json containers, json extra = json::object()) {
  json pod = {{"metadata", {{"name", "p"}, {"namespace", "ns"}, {"uid", "u"}}},
              {"spec", {{"nodeName", "n0"}, {"containers", containers}}}};
  pod.update(extra, true);
  return pod;
}

std::string Cond(const json& status, const std::string& type) {
  for (const auto& c : status["conditions"]) {
    if (c["type"] == type) return c["status"];
  }
  return "";
}

struct Harness {
  KubeletTiming timing;
  NodeContext node{.name = "n0", .host_ip = "172.16.0.2", .ready = true, .resize = {}};
  std::map<std::string, TimePoint> pulls_done;  // image -> when its pull finishes
  PodProgress progress;
  json pod;
  NeverReadyDraw never_ready;  // unset: no container start is drawn as never ready

  KubeletDecision Step(TimePoint now) {
    auto d = DecidePod(
        pod, progress, node, "10.64.0.1", timing, now,
        [&](const std::string& image) {
          ImageView v;
          auto it = pulls_done.find(image);
          TimePoint done = it == pulls_done.end() ? now : it->second;
          v.present = done <= now;
          v.ready_at = done;
          return v;
        },
        never_ready);
    if (d.status) pod["status"] = *d.status;
    return d;
  }
};

TEST(Kubelet, LifecycleTimeline) {
  Harness h;
  h.timing.start_delay = seconds(1);
  h.timing.ready_delay = seconds(2);
  h.pulls_done["app:1"] = kT0 + seconds(5);
  h.pod = Pod({{{"name", "c"}, {"image", "app:1"}}});
  struct Step {
    int at;
    std::string phase, waiting, ready;
    std::optional<int> wake;
  };
  for (const Step& s : std::vector<Step>{{0, "Pending", "ContainerCreating", "False", 6},
                                         {6, "Running", "", "False", 8},
                                         {8, "Running", "", "True", std::nullopt}}) {
    auto d = h.Step(kT0 + seconds(s.at));
    const json& st = h.pod["status"];
    EXPECT_EQ(st["phase"], s.phase) << s.at;
    EXPECT_EQ(st["containerStatuses"][0]["state"].value("waiting", json::object()).value("reason", ""), s.waiting)
        << s.at;
    EXPECT_EQ(Cond(st, "Ready"), s.ready) << s.at;
    EXPECT_EQ(d.wake_at, s.wake ? std::optional<TimePoint>(kT0 + seconds(*s.wake)) : std::nullopt) << s.at;
  }
  EXPECT_EQ(h.pod["status"]["startTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["state"]["running"]["startedAt"], "2026-01-01T00:00:06Z");
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["imageID"], ImageIdFor("app:1"));
  EXPECT_EQ(h.pod["status"]["podIP"], "10.64.0.1");
  EXPECT_EQ(h.pod["status"]["qosClass"], "BestEffort");
  // Steady: no write, no wake, no memory.
  auto d = h.Step(kT0 + seconds(100));
  EXPECT_FALSE(d.status.has_value());
  EXPECT_FALSE(d.keep_progress);
  EXPECT_FALSE(d.wake_at.has_value());
}

TEST(Kubelet, ReadinessGatesTable) {
  struct Case {
    json conditions;
    std::string ready;
    std::string reason;
  };
  for (const Case& c : std::vector<Case>{
           {json::array(), "False", "ReadinessGatesNotReady"},
           {json::array({{{"type", "G"}, {"status", "False"}}}), "False", "ReadinessGatesNotReady"},
           {json::array({{{"type", "G"}, {"status", "True"}}}), "True", ""},
       }) {
    Harness h;
    h.timing.start_delay = h.timing.ready_delay = seconds(0);
    h.pod = Pod({{{"name", "c"}, {"image", "x"}}}, {{"spec", {{"readinessGates", {{{"conditionType", "G"}}}}}}});
    h.pod["status"]["conditions"] = c.conditions;
    h.Step(kT0);
    EXPECT_EQ(Cond(h.pod["status"], "ContainersReady"), "True");
    EXPECT_EQ(Cond(h.pod["status"], "Ready"), c.ready) << c.conditions;
    for (const auto& cond : h.pod["status"]["conditions"]) {
      if (cond["type"] == "Ready") {
        EXPECT_EQ(cond.value("reason", ""), c.reason);
      }
      if (cond["type"] == "G") {
        EXPECT_EQ(cond, c.conditions[0]);  // others' conditions are untouched
      }
    }
  }
}

TEST(Kubelet, ImageChangeRestartsOnlyThatContainer) {
  Harness h;
  h.timing.start_delay = seconds(1);
  h.timing.ready_delay = seconds(1);
  h.pod = Pod({{{"name", "a"}, {"image", "a:1"}}, {{"name", "b"}, {"image", "b:1"}}});
  h.Step(kT0);
  h.Step(kT0 + seconds(2));
  ASSERT_EQ(Cond(h.pod["status"], "Ready"), "True");
  json b_before = h.pod["status"]["containerStatuses"][1];
  h.pod["spec"]["containers"][0]["image"] = "a:2";
  h.pulls_done["a:2"] = kT0 + seconds(13);
  auto d = h.Step(kT0 + seconds(10));
  const json& a = h.pod["status"]["containerStatuses"][0];
  EXPECT_EQ(a["restartCount"], 1);
  // Until the new container runs, the status shows the one it replaces (as a kubelet does), so a controller
  // comparing imageIDs does not take the update as done while the new image is still being pulled.
  EXPECT_EQ(a["image"], "a:1");
  EXPECT_EQ(a["imageID"], ImageIdFor("a:1"));
  EXPECT_EQ(a["state"]["waiting"]["reason"], "ContainerCreating");
  EXPECT_EQ(a["lastState"]["terminated"]["finishedAt"], "2026-01-01T00:00:10Z");
  EXPECT_EQ(h.pod["status"]["phase"], "Running");  // a restart does not make the pod Pending again
  EXPECT_EQ(h.pod["status"]["containerStatuses"][1], b_before);
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "False");
  EXPECT_EQ(d.wake_at, kT0 + seconds(14));
  h.Step(kT0 + seconds(15));
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "True");
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["image"], "a:2");
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["imageID"], ImageIdFor("a:2"));
  EXPECT_NE(h.pod["status"]["containerStatuses"][0]["containerID"], b_before["containerID"]);
}

TEST(Kubelet, GracefulDeletionTable) {
  struct Case {
    json grace;
    int cap;
    int removed_after;
  };
  for (const Case& c : std::vector<Case>{{30, 5, 5}, {2, 5, 2}, {0, 5, 0}, {nullptr, 3, 3}}) {
    Harness h;
    h.timing.max_grace = seconds(c.cap);
    h.pod = Pod({{{"name", "c"}, {"image", "x"}}});
    h.pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:30Z";
    if (!c.grace.is_null()) h.pod["metadata"]["deletionGracePeriodSeconds"] = c.grace;
    if (c.removed_after > 0) {
      auto d = h.Step(kT0);
      EXPECT_FALSE(d.remove) << c.grace;
      EXPECT_EQ(d.wake_at, kT0 + seconds(c.removed_after)) << c.grace;
      EXPECT_FALSE(h.Step(kT0 + seconds(c.removed_after) - std::chrono::milliseconds(1)).remove);
    }
    EXPECT_TRUE(h.Step(kT0 + seconds(c.removed_after)).remove) << c.grace;
  }
}

TEST(Kubelet, FaultsTable) {
  Harness h;
  h.timing.start_delay = h.timing.ready_delay = seconds(0);
  h.pod = Pod({{{"name", "c"}, {"image", "x"}}},
              {{"metadata", {{"annotations", {{kFaultAnnotation, "slow-start=5s"}}}}}});
  auto d = h.Step(kT0);
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ContainerCreating");
  EXPECT_EQ(d.wake_at, kT0 + seconds(5));
  h.Step(kT0 + seconds(5));
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "True");

  Harness f;
  f.pod = Pod({{{"name", "c"}, {"image", "x"}}}, {{"metadata", {{"annotations", {{kFaultAnnotation, "image-pull-failure"}}}}}});
  d = f.Step(kT0);
  EXPECT_EQ(f.pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ErrImagePull");
  EXPECT_EQ(d.wake_at, kT0 + seconds(10));
  f.Step(kT0 + seconds(10));
  EXPECT_EQ(f.pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"], "ImagePullBackOff");

  Harness c;
  c.timing.start_delay = seconds(0);
  c.pod = Pod({{{"name", "c"}, {"image", "x"}}}, {{"metadata", {{"annotations", {{kFaultAnnotation, "crash-loop"}}}}}});
  struct Step {
    int at;
    std::string state;
    int restarts;
  };
  // runs 1 s, back-off 10 s, runs 1 s, back-off 20 s ...
  for (const Step& s : std::vector<Step>{{0, "running", 0}, {1, "waiting", 1}, {11, "running", 1}, {12, "waiting", 2},
                                         {31, "waiting", 2}, {32, "running", 2}}) {
    c.Step(kT0 + seconds(s.at));
    const json& cs = c.pod["status"]["containerStatuses"][0];
    EXPECT_TRUE(cs["state"].contains(s.state)) << s.at << " " << cs.dump();
    EXPECT_EQ(cs["restartCount"], s.restarts) << s.at;
    EXPECT_EQ(Cond(c.pod["status"], "Ready"), "False");
  }

  EXPECT_EQ(ParsePodFaults({{"metadata", {{"annotations", {{kFaultAnnotation, "explode"}}}}}}).error,
            "unknown fault \"explode\"");
}

// A never-ready start, from the pod's fault or drawn per started container: it runs (the pod is Running) but its
// readiness never passes, so no wake is set for it; a later restart is drawn again and may become ready.
TEST(Kubelet, NeverReadyStartsRunButStayUnready) {
  Harness a;
  a.timing.start_delay = a.timing.ready_delay = seconds(1);
  a.pod = Pod({{{"name", "c"}, {"image", "x"}}}, {{"metadata", {{"annotations", {{kFaultAnnotation, "never-ready"}}}}}});
  a.Step(kT0);
  auto d = a.Step(kT0 + seconds(1));
  EXPECT_EQ(a.pod["status"]["phase"], "Running");
  EXPECT_TRUE(a.pod["status"]["containerStatuses"][0]["state"].contains("running"));
  EXPECT_FALSE(d.wake_at.has_value());
  EXPECT_TRUE(d.keep_progress);
  d = a.Step(kT0 + seconds(100));
  EXPECT_EQ(Cond(a.pod["status"], "Ready"), "False");
  EXPECT_EQ(a.pod["status"]["containerStatuses"][0]["ready"], false);

  Harness h;
  h.timing.start_delay = h.timing.ready_delay = seconds(1);
  std::vector<std::string> asked;
  std::vector<bool> answers = {false, false, true, false};  // a:1, b:1, then a:2 (never ready), then a:3
  h.never_ready = [&](const std::string& container) {
    asked.push_back(container);
    bool answer = answers.front();
    answers.erase(answers.begin());
    return answer;
  };
  h.pod = Pod({{{"name", "a"}, {"image", "a:1"}}, {{"name", "b"}, {"image", "b:1"}}});
  h.Step(kT0);
  h.Step(kT0 + seconds(2));
  ASSERT_EQ(Cond(h.pod["status"], "Ready"), "True");
  EXPECT_EQ(asked, (std::vector<std::string>{"a", "b"}));
  h.pod["spec"]["containers"][0]["image"] = "a:2";
  h.Step(kT0 + seconds(10));
  d = h.Step(kT0 + seconds(11));
  EXPECT_EQ(asked, (std::vector<std::string>{"a", "b", "a"}));  // only the restarted container is asked
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["image"], "a:2");
  EXPECT_EQ(h.pod["status"]["containerStatuses"][0]["ready"], false);
  EXPECT_EQ(h.pod["status"]["containerStatuses"][1]["ready"], true);
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "False");
  EXPECT_FALSE(d.wake_at.has_value());
  h.Step(kT0 + seconds(50));
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "False");
  h.pod["spec"]["containers"][0]["image"] = "a:3";
  h.Step(kT0 + seconds(60));
  h.Step(kT0 + seconds(62));
  EXPECT_EQ(asked.size(), 4u);
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "True");
}

TEST(Kubelet, NotReadyNodeOnlyMarksPodNotReady) {
  Harness h;
  h.timing.start_delay = h.timing.ready_delay = seconds(0);
  h.pod = Pod({{{"name", "c"}, {"image", "x"}}});
  h.Step(kT0);
  ASSERT_EQ(Cond(h.pod["status"], "Ready"), "True");
  h.node.ready = false;
  h.Step(kT0 + seconds(1));
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "False");
  EXPECT_EQ(Cond(h.pod["status"], "ContainersReady"), "True");
  h.node.ready = true;
  h.Step(kT0 + seconds(2));
  EXPECT_EQ(Cond(h.pod["status"], "Ready"), "True");
}

}  // namespace
}  // namespace cloneset::devcluster::nodes
