// Upstream's feature gates through the running executor. The suite's executor runs as upstream's CI runs
// kruise-manager, with the CloneSet gates on (--feature_gates=...), InPlaceUpdateEnvFromMetadata off, a gate of
// another component named (PodWebhook), and --cloneset-scaling-exclude-preparing-delete in upstream's spelling.
// Each test drives a scenario whose outcome differs under upstream's defaults (the other e2e suites run with
// those) and checks the gated outcome; and an executor given an unknown gate or a bad value refuses to start.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "e2e_fixture.h"

namespace cloneset::testing {
namespace {

constexpr char kGates[] =
    "CloneSetShortHash=true,CloneSetPartitionRollback=true,PreparingUpdateAsUpdate=true,"
    "InPlaceUpdateEnvFromMetadata=false,RecreatePodWhenChangeVCTInCloneSetGate=true,"
    "PreDownloadImageForInPlaceUpdate=true,PodWebhook=false";
constexpr char kStateLabel[] = "lifecycle.apps.kruise.io/state";
constexpr char kHold[] = "example.io/hold";  // the lifecycle hooks' labelsHandler: held while the label is "true"

class GatesTest : public E2eTest {
 public:
  static void SetUpTestSuite() {
    StartCluster({.executor_flags = {absl::StrCat("--feature_gates=", kGates),
                                     "--cloneset-scaling-exclude-preparing-delete"},
                  .crds = {"imagepulljobs.apps.kruise.io.yaml", "nodeimages.apps.kruise.io.yaml"}});
  }

 protected:
  void SetImage(const std::string& app, const std::string& image) {
    MustKubectl({"patch", "-n", ns_, "clonesets.apps.kruise.io/" + app, "--type=json", "-p",
                 absl::StrCat(R"([{"op":"replace","path":"/spec/template/spec/containers/0/image","value":")", image,
                              "\"}]")});
  }
  void MergePatch(const std::string& kind_name, const std::string& patch) {
    MustKubectl({"patch", "-n", ns_, kind_name, "--type=merge", "-p", patch});
  }
  int OnImage(const std::string& app, const std::string& image) {
    int n = 0;
    for (const auto& [_, p] : Pods(app)) n += p.image == image;
    return n;
  }
  std::map<std::string, std::string> States(const std::string& app) {
    std::map<std::string, std::string> out;
    for (const auto& [name, p] : Pods(app)) out[name] = p.labels.count(kStateLabel) ? p.labels.at(kStateLabel) : "";
    return out;
  }
  std::string UpdateRevision(const std::string& app) {
    return CloneSet(app).value("status", json::object()).value("updateRevision", "");
  }
};

// A CloneSet manifest whose pod template has the labels `extra_labels` ("key: value" lines) besides app=<name>.
std::string WithTemplateLabels(std::string yaml, const std::string& name, const std::vector<std::string>& extra_labels) {
  const std::string app = "        app: " + name + "\n";
  std::string more = app;
  for (const std::string& l : extra_labels) more += "        " + l + "\n";
  yaml.replace(yaml.find(app), app.size(), more);
  return yaml;
}

// CloneSetShortHash: a pod's controller-revision-hash label is the revision's short hash (what follows its last
// "-"), at creation and after an in-place update; the pods still count as updated. Upstream's default labels them
// with the revision's full name.
TEST_F(GatesTest, CloneSetShortHashLabelsPodsWithTheShortHash) {
  Apply(CloneSetYaml("short", 2, "img:v1", "  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}\n"));
  const auto labelled = [&](const std::string& image) {
    const json status = CloneSet("short").value("status", json::object());
    const std::string revision = status.value("updateRevision", "");
    const auto dash = revision.rfind('-');
    if (dash == std::string::npos || status.value("updatedReadyReplicas", 0) != 2) return false;
    const auto pods = Pods("short");
    if (pods.size() != 2 || Terminating("short") != 0) return false;
    for (const auto& [name, p] : pods) {
      if (p.image != image || !p.ready || p.revision != revision.substr(dash + 1)) return false;
      if (p.labels.count("pod-template-hash") == 0 || p.labels.at("pod-template-hash") != p.revision) return false;
    }
    return true;
  };
  ASSERT_TRUE(Eventually([&] { return labelled("img:v1"); })) << Describe("short");
  const auto before = Pods("short");
  EXPECT_NE(before.begin()->second.revision, UpdateRevision("short"));
  SetImage("short", "img:v2");
  ASSERT_TRUE(Eventually([&] { return labelled("img:v2"); })) << Describe("short");
  for (const auto& [name, p] : Pods("short")) {
    ASSERT_TRUE(before.count(name)) << name << " was recreated";
    EXPECT_EQ(before.at(name).uid, p.uid) << name << " was recreated";
    EXPECT_NE(before.at(name).revision, p.revision) << name;
  }
}

// CloneSetPartitionRollback: raising the partition moves pods of the update revision back to the current one (in
// place). Upstream's default leaves them where they are.
TEST_F(GatesTest, CloneSetPartitionRollbackMovesPodsBack) {
  const std::string strategy = "  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1, partition: 2}\n";
  Apply(CloneSetYaml("rollback", 4, "img:v1", strategy));
  ASSERT_TRUE(Eventually([&] { return AllReady("rollback", 4, "img:v1"); })) << Describe("rollback");
  const auto before = Pods("rollback");
  SetImage("rollback", "img:v2");
  ASSERT_TRUE(Eventually([&] {
    return OnImage("rollback", "img:v2") == 2 &&
           CloneSet("rollback").value("status", json::object()).value("updatedReadyReplicas", 0) == 2;
  })) << Describe("rollback");
  // v1alpha1's shape (updateStrategy.partition): kubectl's default version is v1beta1.
  MergePatch("clonesets.v1alpha1.apps.kruise.io/rollback", R"({"spec":{"updateStrategy":{"partition":3}}})");
  ASSERT_TRUE(Eventually([&] {
    const auto pods = Pods("rollback");
    int ready = 0;
    for (const auto& [_, p] : pods) ready += p.ready;
    return OnImage("rollback", "img:v2") == 1 && OnImage("rollback", "img:v1") == 3 && ready == 4;
  })) << Describe("rollback");
  for (const auto& [name, p] : Pods("rollback")) {
    ASSERT_TRUE(before.count(name)) << name;
    EXPECT_EQ(before.at(name).uid, p.uid) << name << " was recreated, not rolled back in place";
  }
  EXPECT_EQ(CloneSet("rollback").value("status", json::object()).value("updatedReplicas", -1), 1);
}

// PreparingUpdateAsUpdate: while a pod waits in PreparingUpdate (its in-place update hook holds it), a scale-out
// counts it as updated. With partition 3 of 4 the CloneSet then already has its one updated pod, so both new pods
// get the current revision (img:v1); upstream's default counts it as current and creates one of them at img:v2.
TEST_F(GatesTest, PreparingUpdateAsUpdateCountsTheHeldPodWhenScaling) {
  const std::string spec =
      absl::StrCat("  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1, partition: 1}\n",
                   "  lifecycle:\n    inPlaceUpdate: {labelsHandler: {", kHold, ": \"true\"}}\n");
  const auto manifest = [&](const std::string& image) {
    return WithTemplateLabels(CloneSetYaml("prep", 2, image, spec), "prep", {absl::StrCat(kHold, ": \"true\"")});
  };
  Apply(manifest("img:v1"));
  ASSERT_TRUE(Eventually([&] { return AllReady("prep", 2, "img:v1"); })) << Describe("prep");
  const auto before = Pods("prep");
  Apply(manifest("img:v2"));
  std::string held;
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [name, state] : States("prep")) {
      if (state == "PreparingUpdate") held = name;
    }
    return !held.empty();
  })) << Describe("prep");
  MergePatch("clonesets.v1alpha1.apps.kruise.io/prep", R"({"spec":{"replicas":4,"updateStrategy":{"partition":3}}})");
  ASSERT_TRUE(Eventually([&] {
    const auto pods = Pods("prep");
    int ready = 0;
    for (const auto& [_, p] : pods) ready += p.ready;
    return pods.size() == 4 && ready >= 3;
  })) << Describe("prep");
  absl::SleepFor(absl::Seconds(2));  // a pod created at the update revision would show by now
  const auto after = Pods("prep");
  ASSERT_EQ(after.size(), 4u) << Describe("prep");
  int created = 0;
  for (const auto& [name, p] : after) {
    if (before.count(name)) continue;
    ++created;
    EXPECT_EQ(p.image, "img:v1") << name << " was created at the update revision\n" << Describe("prep");
  }
  EXPECT_EQ(created, 2);
  EXPECT_EQ(States("prep")[held], "PreparingUpdate") << "the hook no longer holds " << held;
  EXPECT_EQ(after.at(held).image, "img:v1") << held << " was updated while its hook held it";
}

// InPlaceUpdateEnvFromMetadata=false: a changed label that a container reads through an env fieldRef is patched
// onto the pod like any other label, without waiting for that container to restart. Upstream's default waits for
// the restart (kruise-daemon's, here the node agent's, which this cluster does not run).
TEST_F(GatesTest, InPlaceUpdateEnvFromMetadataOffPatchesTheLabelOnly) {
  const std::string env =
      "        env:\n        - {name: TIER, valueFrom: {fieldRef: {fieldPath: \"metadata.labels['tier']\"}}}\n";
  const auto manifest = [&](const std::string& tier) {
    return WithTemplateLabels(
        CloneSetYaml("envmeta", 2, "img:v1", "  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1}\n", env),
        "envmeta", {"tier: " + tier});
  };
  Apply(manifest("a"));
  ASSERT_TRUE(Eventually([&] { return AllReady("envmeta", 2, "img:v1"); })) << Describe("envmeta");
  const auto before = Pods("envmeta");
  Apply(manifest("b"));
  ASSERT_TRUE(Eventually([&] {
    const json status = CloneSet("envmeta").value("status", json::object());
    if (status.value("updatedReadyReplicas", 0) != 2 || status.value("updatedReplicas", 0) != 2) return false;
    for (const auto& [_, p] : Pods("envmeta")) {
      if (!p.ready || p.labels.count("tier") == 0 || p.labels.at("tier") != "b") return false;
    }
    return true;
  })) << Describe("envmeta");
  for (const auto& [name, p] : Pods("envmeta")) {
    ASSERT_TRUE(before.count(name)) << name;
    EXPECT_EQ(before.at(name).uid, p.uid) << name << " was recreated";
    EXPECT_EQ(before.at(name).restart_count, p.restart_count) << name << " was restarted";
  }
  for (const auto& pod : GetJson({"pods", "-l", "app=envmeta"}).value("items", json::array())) {
    const json annotations = pod["metadata"].value("annotations", json::object());
    const std::string state = annotations.value("apps.kruise.io/inplace-update-state", "");
    EXPECT_NE(state, "") << pod["metadata"].value("name", "") << " was not updated in place";
    EXPECT_EQ(state.find("updateEnvFromMetadata"), std::string::npos) << state;
  }
}

// PreDownloadImageForInPlaceUpdate: an in-place rollout of more than 3 replicas held by a partition gets an
// ImagePullJob for the new image (once one updated pod is ready). Upstream's default creates none (and a CloneSet
// without the gate needs the apps.kruise.io/image-predownload-parallelism annotation for it).
TEST_F(GatesTest, PreDownloadImageForInPlaceUpdateCreatesTheImagePullJob) {
  const std::string strategy = "  updateStrategy: {type: InPlaceIfPossible, maxUnavailable: 1, partition: 3}\n";
  Apply(CloneSetYaml("predl", 4, "img:v1", strategy));
  ASSERT_TRUE(Eventually([&] { return AllReady("predl", 4, "img:v1"); })) << Describe("predl");
  SetImage("predl", "img:v2");
  json job;
  ASSERT_TRUE(Eventually([&] {
    const std::string revision = UpdateRevision("predl");
    for (const auto& j : GetJson({"imagepulljobs.apps.kruise.io"}).value("items", json::array())) {
      if (!revision.empty() && j["metadata"].value("name", "") == revision + "-main") job = j;
    }
    return !job.is_null();
  })) << Describe("predl") << Kubectl({"get", "imagepulljobs.apps.kruise.io", "-n", ns_, "-o", "yaml"}).output;
  EXPECT_EQ(job["spec"].value("image", ""), "img:v2");
  bool event = false;
  for (const auto& [reason, message] : Events()) event = event || reason == "CreatedImagePullJob";
  EXPECT_TRUE(event) << Kubectl({"get", "events", "-n", ns_}).output;
  EXPECT_EQ(OnImage("predl", "img:v2"), 1) << "partition 3 of 4";
}

// --cloneset-scaling-exclude-preparing-delete: a pod chosen for deletion (podsToDelete) and held in PreparingDelete
// by its hook does not count as a replica, so scaling back out creates a new pod beside it. Upstream's default counts
// it and creates none. (A pod scaled in without being named would be taken back instead: replicas went up again.)
TEST_F(GatesTest, ScalingExcludePreparingDeleteReplacesTheHeldPod) {
  const std::string spec = absl::StrCat("  updateStrategy: {maxUnavailable: 1}\n",
                                        "  lifecycle:\n    preDelete: {labelsHandler: {", kHold, ": \"true\"}}\n");
  Apply(WithTemplateLabels(CloneSetYaml("exclude", 2, "img:v1", spec), "exclude", {absl::StrCat(kHold, ": \"true\"")}));
  ASSERT_TRUE(Eventually([&] { return AllReady("exclude", 2, "img:v1"); })) << Describe("exclude");
  const auto before = Pods("exclude");
  const std::string held = before.begin()->first;
  MergePatch("clonesets.apps.kruise.io/exclude",
             absl::StrCat(R"({"spec":{"replicas":1,"scaleStrategy":{"podsToDelete":[")", held, R"("]}}})"));
  ASSERT_TRUE(Eventually([&] { return States("exclude")[held] == "PreparingDelete"; })) << Describe("exclude");
  MergePatch("clonesets.apps.kruise.io/exclude", R"({"spec":{"replicas":2}})");
  ASSERT_TRUE(Eventually([&] {
    const auto pods = Pods("exclude");
    int ready_new = 0;
    for (const auto& [name, p] : pods) ready_new += !before.count(name) && p.ready;
    return pods.size() == 3 && ready_new == 1;
  })) << Describe("exclude");
  EXPECT_EQ(States("exclude")[held], "PreparingDelete") << held << " left PreparingDelete";
  // The hook owner releases it: it goes, and the two others stay.
  MergePatch("pod/" + held, absl::StrCat(R"({"metadata":{"labels":{")", kHold, R"(":null}}})"));
  ASSERT_TRUE(Eventually([&] { return AllReady("exclude", 2, "img:v1") && !Pods("exclude").count(held); }))
      << Describe("exclude");
}

// The gates in force: one log line at start, a warning naming the gate that concerns another component, and the
// metric cloneset_executor_feature_gate{name,stage} 1 or 0 for each CloneSet gate.
TEST_F(GatesTest, GatesInForceAreLoggedAndExported) {
  const std::string log = cluster_->ExecutorLog();
  std::string line;
  for (size_t at = 0; at < log.size();) {
    const size_t end = log.find('\n', at);
    const std::string l = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (l.find("\"msg\":\"feature gates\"") != std::string::npos) line = l;
    at = end == std::string::npos ? log.size() : end + 1;
  }
  ASSERT_NE(line, "") << log.substr(0, 4000);
  for (const char* want : {"CloneSetShortHash=true", "CloneSetPartitionRollback=true", "PreparingUpdateAsUpdate=true",
                           "InPlaceUpdateEnvFromMetadata=false", "RecreatePodWhenChangeVCTInCloneSetGate=true",
                           "PreDownloadImageForInPlaceUpdate=true", "InPlaceWorkloadVerticalScaling=false",
                           "cloneset-scaling-exclude-preparing-delete=true"}) {
    EXPECT_NE(line.find(want), std::string::npos) << want << " not in: " << line;
  }
  EXPECT_NE(log.find("PodWebhook concerns Kruise's pod webhook"), std::string::npos) << log.substr(0, 4000);

  const size_t m = log.find("metrics on http://");
  ASSERT_NE(m, std::string::npos) << log.substr(0, 4000);
  const std::string address = log.substr(m + 18, log.find_first_of(" \n", m + 18) - (m + 18));
  const CommandResult metrics = RunCommand({"curl", "-sf", "http://" + address + "/metrics"}, {});
  ASSERT_EQ(metrics.exit_code, 0) << metrics.output;
  for (const char* want : {"cloneset_executor_feature_gate{name=\"CloneSetShortHash\",stage=\"ALPHA\"} 1",
                           "cloneset_executor_feature_gate{name=\"InPlaceUpdateEnvFromMetadata\",stage=\"BETA\"} 0",
                           "cloneset_executor_feature_gate{name=\"InPlaceWorkloadVerticalScaling\",stage=\"ALPHA\"} 0"}) {
    EXPECT_NE(metrics.output.find(want), std::string::npos) << want;
  }
  EXPECT_EQ(metrics.output.find("name=\"PodWebhook\""), std::string::npos) << "only the CloneSet gates are exported";
}

// An unknown gate or a bad value: the executor exits at once with code 1 (every daemon's code for "did not
// start", base/daemon_main.h), its log naming the gate, in either spelling of the flag.
TEST_F(GatesTest, InvalidGatesAreRefusedAtStart) {
  struct Bad {
    std::string flag, want;
  };
  for (const Bad& bad : {Bad{"--feature-gates=CloneSetShortHash=true,NoSuchGate=true",
                             "unrecognized feature gate: NoSuchGate"},
                         Bad{"--feature_gates=CloneSetShortHash=maybe", "invalid value of CloneSetShortHash=maybe"}}) {
    SCOPED_TRACE(bad.flag);
    const CommandResult r =
        cluster_->stack().RunExecutorToExit("refused", {.flags = {bad.flag}}, absl::Seconds(20));
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find(bad.want), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("invalid feature gates"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace cloneset::testing
