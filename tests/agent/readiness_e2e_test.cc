// End to end, real processes on 127.0.0.1 port 0: the embedded cluster (simulated nodes, each with a CRI
// socket), the planner, the executor and one cloneset-agent for devcluster-node-0, with a CloneSet pinned to that
// node. What docs/architecture.md "Readiness-gate progress (agent)" says the agent reports when an in-place
// update on its node is complete: pods/status condition InPlaceUpdateReady set to exactly {True, no reason, no
// message} (resourceVersion-guarded), a Normal InPlaceUpdateReady event on the pod from cloneset-agent, and the
// report counted and timed (cloneset_agent_readiness_report_latency_seconds = now - state updateTimestamp).
//
// The executor writes the same value and, in this stack, first: the planner's completion check takes the update
// as done once the container runs the new image (imageID differs from lastContainerStatuses), while the agent's
// stricter check also waits until that container is ready (the simulated kubelet's ready delay later), so the
// agent finds the condition already True. Hence two tests: the full rollout with both running (one False -> True
// flip per pod, no fight, rollout completes), and the agent's own report with the executor stopped while a pod is
// updated in place with exactly the executor's writes (after which the restarted executor must not write the
// condition again).
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "base/time_format.h"
#include "gtest/gtest.h"
#include "tests/support/stack.h"

namespace cloneset::testing {
namespace {

constexpr char kNode[] = "devcluster-node-0";
constexpr char kStateAnnotation[] = "apps.kruise.io/inplace-update-state";
// The new image takes this long to pull on the simulated node: the window in which the executor is stopped.
constexpr absl::Duration kPullTime = absl::Seconds(3);
constexpr char kOldImage[] = "registry.local/app:v1";
constexpr char kNewImage[] = "registry.local/app:v2";

std::string CloneSetYaml(int replicas, const std::string& image) {
  return absl::StrCat(R"(apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: web
  namespace: default
spec:
  replicas: )",
                      replicas, R"(
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      nodeSelector: {kubernetes.io/hostname: )",
                      kNode, R"(}
      containers: [{name: app, image: ")",
                      image, R"("}]
  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 2}
)");
}

// The pod's InPlaceUpdateReady condition, or null.
json Condition(const json& pod) {
  for (const auto& c : pod.value("status", json::object()).value("conditions", json::array())) {
    if (c.value("type", "") == "InPlaceUpdateReady") return c;
  }
  return nullptr;
}

// "True", "False/StartInPlaceUpdate", ... : what the condition says, for transition lists.
std::string ConditionValue(const json& pod) {
  json c = Condition(pod);
  if (c.is_null()) return "<none>";
  std::string v = c.value("status", "");
  if (c.contains("reason") && c["reason"].is_string()) absl::StrAppend(&v, "/", c["reason"].get<std::string>());
  if (c.contains("message") && c["message"].is_string()) absl::StrAppend(&v, "/", c["message"].get<std::string>());
  return v;
}

std::string SpecImage(const json& pod) {
  const json containers = pod.value("spec", json::object()).value("containers", json::array());
  return containers.empty() ? "" : containers[0].value("image", "");
}

// A sample's value from Prometheus text, e.g. Metric(text, "x_total{result=\"success\"}"); nullopt if absent.
std::optional<double> Metric(const std::string& text, const std::string& sample) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, sample + " ")) continue;
    double v = 0;
    if (absl::SimpleAtod(line.substr(sample.size() + 1), &v)) return v;
  }
  return std::nullopt;
}

class Agent {
 public:
  ~Agent() { Stop(); }
  std::string Start(const Stack& stack, const std::string& cri_socket) {
    std::vector<std::string> argv = {AGENT_BIN,
                                     std::string("--node_name=") + kNode,
                                     "--cri_socket=unix://" + cri_socket,
                                     "--kubeconfig=" + stack.kubeconfig(),
                                     "--metrics_listen=127.0.0.1:0",
                                     "--health_listen=127.0.0.1:0"};
    if (!process_.Start(argv, stack.dir() + "/agent.log")) return "cannot start cloneset-agent";
    metrics_ = process_.WaitForAddress("metrics on", absl::Seconds(20));
    health_ = process_.WaitForAddress("listening on", absl::Seconds(20));
    if (metrics_.empty() || health_.empty()) return "agent: " + process_.Log();
    if (!Poll([&] { return RunCommand({"curl", "-sf", "http://" + health_ + "/healthz"}, {}).exit_code == 0; },
              absl::Seconds(20))) {
      return "agent not healthy: " + process_.Log();
    }
    return "";
  }
  std::string Metrics() const { return RunCommand({"curl", "-sf", "http://" + metrics_ + "/metrics"}, {}).output; }
  int Stop() { return process_.Stop(absl::Seconds(10)); }
  std::string Log() const { return process_.Log(); }

 private:
  Process process_;
  std::string metrics_, health_;
};

// The stack with the agent running for kNode and a watch recording every version of the CloneSet's pods.
class AgentStack {
 public:
  // Empty on success, else what failed.
  std::string Start() {
    const std::string data_dir = stack_.dir() + "/dc";
    std::filesystem::create_directories(data_dir);
    StackOptions options;
    options.devcluster_flags = {"--data-dir=" + data_dir, "--image-pull-time=app:v2=" + absl::FormatDuration(kPullTime)};
    if (std::string err = stack_.Start(options); !err.empty()) return err + "\n" + stack_.DevclusterLog();
    for (const char* crd : {"imagepulljobs", "nodeimages"}) {  // the agent also serves its NodeImage
      auto r = stack_.Kubectl(
          {"apply", "-f", absl::StrCat(SOURCE_DIR, "/charts/cloneset/crds/", crd, ".apps.kruise.io.yaml")});
      if (r.exit_code != 0) return r.output;
    }
    if (std::string err = StartExecutor(); !err.empty()) return err;
    const std::string socket = absl::StrCat(data_dir, "/nodes/", kNode, "/cri.sock");
    if (!Poll([&] { return std::filesystem::is_socket(socket); }, absl::Seconds(20))) return "no CRI socket " + socket;
    if (std::string err = agent_.Start(stack_, socket); !err.empty()) return err;
    if (!stack_.StartKubectl(watch_, {"get", "pods", "-n", "default", "-l", "app=web", "-w", "-o", "json"},
                             WatchPath())) {
      return "cannot start the pod watch";
    }
    return "";
  }
  std::string StartExecutor() { return stack_.StartExecutor("e1", {.flags = {}, .wait_ready = true}); }

  // Creates the CloneSet and waits (60 s) until its pods are ready on kNode.
  std::string CreateCloneSet(int replicas) {
    auto r = stack_.Kubectl({"apply", "-f", "-"}, CloneSetYaml(replicas, kOldImage));
    if (r.exit_code != 0) return r.output;
    if (!Poll([&] { return Status().value("readyReplicas", 0) == replicas; }, absl::Seconds(60))) {
      return "CloneSet not ready:\n" + stack_.Kubectl({"get", "pods", "-A", "-o", "wide"}).output +
             stack_.ExecutorLogTails(3000);
    }
    for (const auto& pod : Pods()) {
      if (pod["spec"].value("nodeName", "") != kNode) return "pod not on " + std::string(kNode) + ": " + pod.dump();
    }
    return "";
  }

  json Pods() const {
    return stack_.GetJson({"pods", "-n", "default", "-l", "app=web"}).value("items", json::array());
  }
  json CloneSet() const { return stack_.GetJson({"clonesets.apps.kruise.io", "web", "-n", "default"}); }
  json Status() const { return CloneSet().value("status", json::object()); }

  // Every pod at kNewImage, updated and ready, and the status about the current generation (30 s).
  bool WaitRolloutComplete(int replicas) {
    return Poll(
        [&] {
          json cs = CloneSet();
          const json st = cs.value("status", json::object());
          return st.value("observedGeneration", 0) == cs["metadata"].value("generation", -1) &&
                 st.value("updatedReplicas", 0) == replicas && st.value("updatedReadyReplicas", 0) == replicas &&
                 st.value("readyReplicas", 0) == replicas && !st.value("updateRevision", "").empty() &&
                 st.value("currentRevision", "") == st.value("updateRevision", "");
        },
        absl::Seconds(30));
  }

  // The InPlaceUpdateReady values each pod went through once it had one (consecutive repeats folded).
  std::map<std::string, std::vector<std::string>> Transitions() {
    watch_.Stop(absl::Seconds(2));
    std::map<std::string, std::vector<std::string>> out;
    for (const auto& pod : ReadJsonValues(WatchPath())) {
      auto& t = out[pod["metadata"].value("name", "")];
      const std::string v = ConditionValue(pod);
      // A pod's first versions (created before the executor set the condition) are seen only when the watch
      // started early enough: leave them out.
      if (v == "<none>" && t.empty()) continue;
      if (t.empty() || t.back() != v) t.push_back(v);
    }
    return out;
  }

  // The reason=InPlaceUpdateReady events in default: pod -> count.
  std::map<std::string, int> ReadinessEvents() const {
    std::map<std::string, int> out;
    for (const auto& e : stack_.GetJson({"events", "-n", "default"}).value("items", json::array())) {
      if (e.value("reason", "") != "InPlaceUpdateReady") continue;
      EXPECT_EQ(e.value("type", ""), "Normal") << e.dump();
      EXPECT_EQ(e.value("source", json::object()).value("component", ""), "cloneset-agent") << e.dump();
      EXPECT_TRUE(absl::StrContains(e.value("message", ""), absl::StrCat("reported by cloneset-agent on ", kNode)))
          << e.dump();
      out[e["involvedObject"].value("name", "")] += e.value("count", 1);
    }
    return out;
  }

  // Every pod version the watch recorded (after Transitions stopped it).
  std::vector<json> WatchValues() const { return ReadJsonValues(WatchPath()); }

  Stack& stack() { return stack_; }
  Agent& agent() { return agent_; }
  std::string Diagnostics() const {
    return Pods().dump(1) + "\n" + stack_.ExecutorLogTails(3000) + "\n--- agent ---\n" + agent_.Log() +
           stack_.Kubectl({"get", "events", "-n", "default"}).output;
  }

 private:
  std::string WatchPath() const { return stack_.dir() + "/pods.watch"; }

  Stack stack_;    // declared first: stopped last
  Agent agent_;
  Process watch_;
};

// Both running: the rollout completes with one False -> True flip per pod and nobody writing the condition twice.
TEST(AgentReadinessE2ETest, InPlaceRolloutWithAgentAndExecutorFlipsConditionOnce) {
  AgentStack s;
  ASSERT_EQ(s.Start(), "");
  ASSERT_EQ(s.CreateCloneSet(2), "");
  const absl::Time update_start = absl::Now();
  auto r = s.stack().Kubectl({"patch", "clonesets.apps.kruise.io", "web", "-n", "default", "--type=merge", "-p",
                              absl::StrCat(R"({"spec":{"template":{"spec":{"containers":[{"name":"app","image":")",
                                           kNewImage, R"("}]}}}})")});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(s.WaitRolloutComplete(2)) << s.Status().dump(1) << s.Diagnostics();
  std::cerr << "in-place rollout of 2 pods (pull " << kPullTime << ") complete after " << absl::Now() - update_start
            << std::endl;
  absl::SleepFor(absl::Seconds(1));  // room for a late second write to show in the watch
  for (const auto& pod : s.Pods()) {
    EXPECT_EQ(SpecImage(pod), kNewImage);
    EXPECT_TRUE(IsReady(pod)) << pod.dump();
    EXPECT_EQ(Condition(pod).value("status", ""), "True");
    EXPECT_FALSE(Condition(pod).contains("reason")) << Condition(pod).dump();
    EXPECT_FALSE(Condition(pod).contains("message")) << Condition(pod).dump();
  }
  const auto transitions = s.Transitions();
  ASSERT_EQ(transitions.size(), 2u);
  for (const auto& [name, t] : transitions) {
    EXPECT_EQ(t, (std::vector<std::string>{"True", "False/StartInPlaceUpdate", "True"}))
        << name << ": " << absl::StrJoin(t, " -> ");
  }
  // Where the condition came back True (diagnostic for the report, see the top comment): the container's state.
  for (const auto& [name, t] : transitions) {
    bool was_false = false;
    for (const auto& pod : s.WatchValues()) {
      if (pod["metadata"].value("name", "") != name) continue;
      const std::string v = ConditionValue(pod);
      if (v.rfind("False", 0) == 0) was_false = true;
      if (!was_false || v != "True") continue;
      const json cs = pod["status"]["containerStatuses"][0];
      std::cerr << name << ": InPlaceUpdateReady back to True with the container "
                << cs.value("state", json::object()).begin().key() << " imageID=\"" << cs.value("imageID", "")
                << "\" ready=" << cs.value("ready", false) << std::endl;
      break;
    }
  }
  // Whoever came second wrote nothing: at most one report per pod, no errors (a 409 is allowed: it means a newer
  // pod version is on its way to the agent, which decides again).
  const std::string metrics = s.agent().Metrics();
  const double reported = Metric(metrics, R"(cloneset_agent_readiness_reports_total{result="success"})").value_or(0);
  std::cerr << "agent reports (success): " << reported << " of 2 (the executor reports first in this stack)"
            << std::endl;
  EXPECT_LE(reported, 2.0) << metrics;
  EXPECT_EQ(Metric(metrics, R"(cloneset_agent_readiness_reports_total{result="error"})").value_or(0), 0.0);
  for (const auto& [pod, n] : s.ReadinessEvents()) EXPECT_EQ(n, 1) << pod;
  EXPECT_EQ(s.agent().Stop(), 0) << s.agent().Log();  // graceful shutdown on SIGTERM
}

// The agent's own report: the executor is stopped, the pod is updated in place with exactly the executor's two
// writes (InPlaceUpdateReady False/StartInPlaceUpdate on pods/status, then the new image with the state
// annotation), the simulated kubelet pulls for kPullTime and restarts the container, and only the agent can
// report. The restarted executor then finds the condition at its own value and writes nothing.
TEST(AgentReadinessE2ETest, AgentReportsFinishedInPlaceUpdateWhileExecutorIsStopped) {
  AgentStack s;
  ASSERT_EQ(s.Start(), "");
  ASSERT_EQ(s.CreateCloneSet(1), "");
  s.stack().KillExecutor("e1");
  json pod = s.Pods().at(0);
  const std::string name = pod["metadata"].value("name", "");
  const std::string old_image_id = pod["status"]["containerStatuses"][0].value("imageID", "");
  const std::string old_container_id = pod["status"]["containerStatuses"][0].value("containerID", "");
  ASSERT_FALSE(old_image_id.empty()) << pod.dump();
  ASSERT_EQ(ConditionValue(pod), "True");

  const absl::Time update_start = absl::Now();
  const std::string now = base::FormatTime(update_start);
  auto r = s.stack().Kubectl(
      {"patch", "pod", name, "-n", "default", "--subresource=status", "--type=strategic", "-p",
       json({{"status",
              {{"conditions",
                {{{"type", "InPlaceUpdateReady"}, {"status", "False"}, {"reason", "StartInPlaceUpdate"},
                  {"lastTransitionTime", now}}}}}}})
           .dump()});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json state = {{"revision", "web-test"},
                      {"updateTimestamp", now},
                      {"lastContainerStatuses", {{"app", {{"imageID", old_image_id}, {"containerID", old_container_id}}}}}};
  r = s.stack().Kubectl({"patch", "pod", name, "-n", "default", "--type=strategic", "-p",
                         json({{"metadata", {{"annotations", {{kStateAnnotation, state.dump()}}}}},
                               {"spec", {{"containers", {{{"name", "app"}, {"image", kNewImage}}}}}}})
                             .dump()});
  ASSERT_EQ(r.exit_code, 0) << r.output;

  std::string reported_at;
  ASSERT_TRUE(Poll(
      [&] {
        pod = s.Pods().at(0);
        reported_at = Condition(pod).value("lastTransitionTime", "");
        return ConditionValue(pod) == "True";
      },
      absl::Seconds(30)))
      << s.Diagnostics();
  const absl::Duration reported_after = absl::Now() - update_start;
  std::cerr << "agent reported " << reported_after << " after the update (pull " << kPullTime << ")" << std::endl;
  EXPECT_GE(reported_after, kPullTime);
  EXPECT_TRUE(IsReady(pod)) << pod.dump();
  EXPECT_EQ(pod["status"]["containerStatuses"][0].value("image", ""), kNewImage);
  EXPECT_FALSE(Condition(pod).contains("reason")) << Condition(pod).dump();
  EXPECT_FALSE(Condition(pod).contains("message")) << Condition(pod).dump();

  std::map<std::string, int> events;
  EXPECT_TRUE(Poll(
      [&] {
        events = s.ReadinessEvents();
        return !events.empty();
      },
      absl::Seconds(10)));
  EXPECT_EQ(events, (std::map<std::string, int>{{name, 1}}));

  const std::string metrics = s.agent().Metrics();
  EXPECT_EQ(Metric(metrics, R"(cloneset_agent_readiness_reports_total{result="success"})"), 1.0) << metrics;
  EXPECT_EQ(Metric(metrics, R"(cloneset_agent_readiness_reports_total{result="error"})").value_or(0), 0.0);
  EXPECT_EQ(Metric(metrics, "cloneset_agent_readiness_report_latency_seconds_count"), 1.0) << metrics;
  // updateTimestamp has whole seconds: the latency is at least the pull time minus that truncation.
  const double latency = Metric(metrics, "cloneset_agent_readiness_report_latency_seconds_sum").value_or(0);
  EXPECT_GE(latency, absl::ToDoubleSeconds(kPullTime) - 1.0) << metrics;
  EXPECT_LE(latency, absl::ToDoubleSeconds(reported_after) + 1.0) << metrics;

  // The executor comes back: the condition already has its value, so it writes nothing.
  ASSERT_EQ(s.StartExecutor(), "");
  EXPECT_TRUE(Poll([&] { return s.Status().value("readyReplicas", 0) == 1; }, absl::Seconds(10)));
  absl::SleepFor(absl::Seconds(2));
  EXPECT_EQ(Condition(s.Pods().at(0)).value("lastTransitionTime", ""), reported_at);
  const auto transitions = s.Transitions();
  ASSERT_EQ(transitions.count(name), 1u);
  EXPECT_EQ(transitions.at(name), (std::vector<std::string>{"True", "False/StartInPlaceUpdate", "True"}))
      << absl::StrJoin(transitions.at(name), " -> ");
  EXPECT_EQ(s.agent().Stop(), 0) << s.agent().Log();
}

}  // namespace
}  // namespace cloneset::testing
