// The decisions of `clonesetctl rollout ...`, table by table: the status verdict and message, history rendering,
// the template diff, undo's target, pause/resume/restart edits, the next partition, plan's hold reasons, and the
// help/completion words.
#include "clonesetctl/rollout.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "planner/context.h"
#include "planner/predicates.h"
#include "planner/revision.h"
#include "clonesetctl/cli_help.h"
#include "clonesetctl/migrate.h"

namespace cloneset::clonesetctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr char kTemplate[] =
    R"({"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"nginx:1.25"}]}})";

struct StatusCase {
  std::string name;
  int replicas = 5;
  std::optional<int> partition;
  std::string partition_pct;
  bool paused = false;
  int64_t generation = 2, observed = 2;
  int status_replicas = 5, updated = 5, updated_available = 5;
  std::string progressing_reason;  // "" = no condition
  std::string invalid_message;     // "" = no Invalid condition
  bool partition_ok = false;
  RolloutState want_state;
  std::string want_message;
};

pb::CloneSet MakeCloneSet(const StatusCase& c) {
  pb::CloneSet cs;
  cs.mutable_metadata()->set_name("web");
  cs.mutable_metadata()->set_namespace_("default");
  cs.mutable_metadata()->set_generation(c.generation);
  cs.mutable_spec()->set_replicas(c.replicas);
  cs.mutable_spec()->set_template_json(kTemplate);
  auto* us = cs.mutable_spec()->mutable_update_strategy();
  if (c.partition) us->mutable_partition()->set_int_value(*c.partition);
  if (!c.partition_pct.empty()) us->mutable_partition()->set_str_value(c.partition_pct);
  us->set_paused(c.paused);
  auto* st = cs.mutable_status();
  st->set_observed_generation(c.observed);
  st->set_replicas(c.status_replicas);
  st->set_updated_replicas(c.updated);
  st->set_updated_available_replicas(c.updated_available);
  st->set_update_revision("web-abc");
  if (!c.progressing_reason.empty()) {
    auto* cond = st->add_conditions();
    cond->set_type("Progressing");
    cond->set_status(c.progressing_reason == kProgressDeadlineExceeded ? "False" : "True");
    cond->set_reason(c.progressing_reason);
  }
  if (!c.invalid_message.empty()) {
    auto* cond = st->add_conditions();
    cond->set_type(kInvalidCondition);
    cond->set_status("True");
    cond->set_reason("InvalidSpec");
    cond->set_message(c.invalid_message);
  }
  return cs;
}

TEST(RolloutStatusMessage, Table) {
  const std::vector<StatusCase> cases = {
      {.name = "done", .want_state = RolloutState::kDone, .want_message = R"(CloneSet "web" successfully rolled out)"},
      {.name = "not observed", .generation = 3, .updated = 0,
       .want_state = RolloutState::kWaiting, .want_message = "Waiting for CloneSet spec update to be observed..."},
      {.name = "updating", .updated = 2, .updated_available = 2, .want_state = RolloutState::kWaiting,
       .want_message =
           R"(Waiting for CloneSet "web" rollout to finish: 2 out of 5 new replicas have been updated...)"},
      {.name = "updating while paused", .paused = true, .updated = 2, .updated_available = 2,
       .want_state = RolloutState::kWaiting,
       .want_message = R"(Waiting for CloneSet "web" rollout to finish: 2 out of 5 new replicas have been updated, )"
                       R"(paused (clonesetctl rollout resume web)...)"},
      {.name = "old pods terminating", .status_replicas = 6, .want_state = RolloutState::kWaiting,
       .want_message = R"(Waiting for CloneSet "web" rollout to finish: 1 old replicas are pending termination...)"},
      {.name = "updated not available", .updated_available = 3, .want_state = RolloutState::kWaiting,
       .want_message = R"(Waiting for CloneSet "web" rollout to finish: 3 of 5 updated replicas are available...)"},
      {.name = "partition not reached", .partition = 3, .updated = 1, .updated_available = 1,
       .want_state = RolloutState::kWaiting,
       .want_message = R"(Waiting for CloneSet "web" rollout to finish: 1 out of 2 new replicas have been updated )"
                       R"((partition 3)...)"},
      {.name = "partition reached, waits", .partition = 3, .updated = 2, .updated_available = 2,
       .want_state = RolloutState::kWaiting,
       .want_message = R"(Waiting for CloneSet "web" rollout to finish: partition 3 reached: 2 of 5 updated, held )"
                       R"(by the partition (clonesetctl rollout next web, or --partition-ok)...)"},
      {.name = "partition reached, ok", .partition = 3, .updated = 2, .updated_available = 2, .partition_ok = true,
       .want_state = RolloutState::kDone,
       .want_message = R"(CloneSet "web" partition 3 reached: 2 of 5 updated, held by the partition)"},
      {.name = "percent partition", .partition_pct = "40%", .updated = 3, .updated_available = 3,
       .partition_ok = true, .want_state = RolloutState::kDone,
       .want_message = R"(CloneSet "web" partition 2 reached: 3 of 5 updated, held by the partition)"},
      {.name = "partition reached, updated pods not yet available", .partition = 3, .updated = 2,
       .updated_available = 1, .partition_ok = true, .want_state = RolloutState::kWaiting,
       .want_message = R"(Waiting for CloneSet "web" rollout to finish: 1 of 2 updated replicas are available...)"},
      {.name = "deadline", .updated = 2, .progressing_reason = kProgressDeadlineExceeded,
       .want_state = RolloutState::kFailed, .want_message = R"(CloneSet "web" exceeded its progress deadline)"},
      {.name = "available condition is fine", .progressing_reason = "CloneSetAvailable",
       .want_state = RolloutState::kDone, .want_message = R"(CloneSet "web" successfully rolled out)"},
      {.name = "invalid condition", .generation = 3, .invalid_message = "spec.template: bad",
       .want_state = RolloutState::kFailed, .want_message = R"(CloneSet "web" is invalid: spec.template: bad)"},
      {.name = "invalid spec", .partition = -1, .want_state = RolloutState::kFailed,
       .want_message = R"(CloneSet "web" is invalid: spec.updateStrategy.partition: -1 must not be negative)"},
  };
  for (const StatusCase& c : cases) {
    const RolloutVerdict v = RolloutStatusMessage(MakeCloneSet(c), c.partition_ok, {});
    EXPECT_EQ(v.state, c.want_state) << c.name;
    EXPECT_EQ(v.message, c.want_message) << c.name;
    EXPECT_EQ(v.exit_code(), c.want_state == RolloutState::kFailed ? 1 : 0) << c.name;
  }
}

pb::ControllerRevision Revision(int64_t number, const std::string& image, const std::string& cause = "") {
  pb::ControllerRevision r;
  r.mutable_metadata()->set_name("web-" + std::to_string(number));
  r.set_revision(number);
  if (!cause.empty()) (*r.mutable_metadata()->mutable_annotations())[kChangeCauseAnnotation] = cause;
  Json t = Json::parse(kTemplate);
  t["spec"]["containers"][0]["image"] = image;
  r.set_data_json(*planner::RevisionData(t.dump()));
  return r;
}

TEST(RolloutHistory, TableAndOneRevision) {
  const auto history = RevisionHistory({Revision(3, "nginx:1.27", "kubectl set image"), Revision(1, "nginx:1.25"),
                                        Revision(2, "nginx:1.26")});
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].number, 1);
  EXPECT_EQ(RenderHistory("web", history),
            "cloneset.apps.kruise.io/web\n"
            "REVISION  CHANGE-CAUSE\n"
            "1         <none>\n"
            "2         <none>\n"
            "3         kubectl set image\n");
  EXPECT_EQ(RenderHistory("web", {}), "cloneset.apps.kruise.io/web\nNo rollout history found.\n");
  auto two = RenderRevision("web", history, 3);
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(*two,
            "cloneset.apps.kruise.io/web with revision #3\n"
            "Change cause: kubectl set image\n"
            // The template as kruise-manager stored it (its Go types' empty fields included), as upstream's
            // `kubectl kruise rollout history --revision` prints it.
            "Pod Template:\n"
            "  metadata:\n"
            "    creationTimestamp: null\n"
            "    labels:\n"
            "      app: web\n"
            "  spec:\n"
            "    containers:\n"
            "      - image: nginx:1.27\n"
            "        name: main\n"
            "        resources: {}\n"
            "Changes from revision #2:\n"
            "  ~ spec.containers[name=main].image: nginx:1.26 -> nginx:1.27\n");
  auto missing = RenderRevision("web", history, 9);
  EXPECT_EQ(missing.status().message(), "unable to find the specified revision 9 in history");
}

TEST(TemplateDiff, Table) {
  struct Case {
    std::string before, after;
    std::vector<std::string> want;
  };
  const std::vector<Case> cases = {
      {kTemplate, kTemplate, {}},
      {R"({"a":{"b":1,"c":"x"}})", R"({"a":{"b":2,"d":true}})", {"~ a.b: 1 -> 2", "- a.c: x", "+ a.d: true"}},
      {R"({"c":[{"name":"a","image":"1"},{"name":"b","image":"2"}]})",
       R"({"c":[{"name":"b","image":"3"},{"name":"a","image":"1"}]})",
       {"~ c[name=b].image: 2 -> 3"}},
      {R"({"args":["x","y"]})", R"({"args":["x"]})", {"- args[1]: y"}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TemplateDiff(Json::parse(c.before), Json::parse(c.after)), c.want) << c.before << " " << c.after;
  }
}

TEST(UndoTo, Table) {
  const auto history = RevisionHistory({Revision(1, "nginx:1.25"), Revision(2, "nginx:1.26")});
  const std::string at2 = history[1].template_json, at1 = history[0].template_json;
  auto d = UndoTo(history, at2, 0);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->revision, 1);
  EXPECT_EQ(d->template_json, at1);
  EXPECT_FALSE(d->skip);
  d = UndoTo(history, at2, 2);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(d->skip);
  EXPECT_EQ(UndoTo(history, at2, 7).status().message(), "unable to find specified revision 7 in history");
  EXPECT_EQ(UndoTo({history[0]}, at1, 0).status().message(), "no previous revision to roll back to");
  EXPECT_EQ(UndoTo({}, at1, 0).status().message(), "no rollout history found");
}

TEST(SetPaused, PauseResumeAndRestart) {
  Json cs = {{"metadata", {{"name", "web"}}}, {"spec", {{"template", Json::parse(kTemplate)}}}};
  EXPECT_EQ(SetPaused(cs, false).message(), R"(clonesets.apps.kruise.io "web" is not paused)");
  ASSERT_TRUE(SetPaused(cs, true).ok());
  EXPECT_EQ(cs["spec"]["updateStrategy"]["paused"], true);
  EXPECT_EQ(SetPaused(cs, true).message(), R"(clonesets.apps.kruise.io "web" is already paused)");
  EXPECT_EQ(SetRestartedAt(cs, absl::FromUnixSeconds(0)).message(),
            "can't restart paused cloneset (run rollout resume first)");
  ASSERT_TRUE(SetPaused(cs, false).ok());
  ASSERT_TRUE(SetRestartedAt(cs, absl::FromUnixSeconds(1795000000)).ok());
  EXPECT_EQ(cs["spec"]["template"]["metadata"]["annotations"][kRestartedAtAnnotation], "2026-11-18T11:06:40Z");
  EXPECT_EQ(cs["spec"]["template"]["metadata"]["labels"]["app"], "web");  // the rest of the template is kept
}

TEST(NextPartitionFor, Table) {
  struct Case {
    std::string name;
    int replicas;
    std::optional<int> partition;
    std::string max_unavailable;  // "" unset (20%)
    std::optional<int32_t> step;
    int want_from = 0, want_to = 0;
    std::string want_error;
  };
  const std::vector<Case> cases = {
      {"one default batch (20% of 10 = 2)", 10, 8, "", std::nullopt, 8, 6, ""},
      {"explicit step", 10, 8, "", 3, 8, 5, ""},
      {"never below 0", 5, 1, "", 4, 1, 0, ""},
      {"maxUnavailable batch", 5, 4, "2", std::nullopt, 4, 2, ""},
      {"no partition", 5, 0, "", std::nullopt, 0, 0, R"(CloneSet "web" is not held by a partition (partition is 0))"},
      {"bad step", 5, 3, "", 0, 0, 0, "--step must be at least 1"},
  };
  for (const Case& c : cases) {
    pb::CloneSet cs;
    cs.mutable_metadata()->set_name("web");
    cs.mutable_spec()->set_replicas(c.replicas);
    cs.mutable_spec()->set_template_json(kTemplate);
    if (c.partition) cs.mutable_spec()->mutable_update_strategy()->mutable_partition()->set_int_value(*c.partition);
    if (!c.max_unavailable.empty()) {
      cs.mutable_spec()->mutable_update_strategy()->mutable_max_unavailable()->set_int_value(
          std::stoi(c.max_unavailable));
    }
    auto next = NextPartitionFor(cs, c.step, {});
    if (!c.want_error.empty()) {
      EXPECT_EQ(next.status().message(), c.want_error) << c.name;
      continue;
    }
    ASSERT_TRUE(next.ok()) << c.name << ": " << next.status();
    EXPECT_EQ(next->from, c.want_from) << c.name;
    EXPECT_EQ(next->to, c.want_to) << c.name;
  }
}

pb::Pod Pod(const std::string& name, const std::string& revision, bool ready, const std::string& state = "") {
  pb::Pod p;
  p.mutable_metadata()->set_name(name);
  (*p.mutable_metadata()->mutable_labels())[planner::kRevisionLabel] = revision;
  if (!state.empty()) (*p.mutable_metadata()->mutable_labels())[planner::kLifecycleStateLabel] = state;
  p.set_phase("Running");
  auto* c = p.add_conditions();
  c->set_type("Ready");
  c->set_status(ready ? "True" : "False");
  planner::SetTimestamp(absl::FromUnixSeconds(100), c->mutable_last_transition_time());
  return p;
}

TEST(HoldReasons, NamesWhatHoldsTheRollout) {
  StatusCase base{.partition = 3, .want_state = RolloutState::kWaiting};
  pb::CloneSet cs = MakeCloneSet(base);
  const absl::Time now = absl::FromUnixSeconds(1000);
  std::vector<pb::Pod> pods = {Pod("web-a", "web-abc", true), Pod("web-b", "web-abc", true),
                               Pod("web-c", "web-old", true), Pod("web-d", "web-old", true),
                               Pod("web-e", "web-old", true)};
  EXPECT_THAT(HoldReasons(cs, pods, now, {}),
              ElementsAre("partition 3: 2 of 5 pods updated, the partition keeps the other 3 (clonesetctl rollout "
                          "next web)"));
  cs.mutable_spec()->mutable_update_strategy()->clear_partition();
  cs.mutable_spec()->mutable_update_strategy()->set_paused(true);
  EXPECT_THAT(HoldReasons(cs, pods, now, {}),
              ElementsAre("paused: spec.updateStrategy.paused is true (clonesetctl rollout resume web)"));
  cs.mutable_spec()->mutable_update_strategy()->set_paused(false);
  pods[0] = Pod("web-a", "web-abc", false);  // maxUnavailable 20% of 5 = 1, spent by web-a
  EXPECT_THAT(HoldReasons(cs, pods, now, {}),
              ElementsAre("maxUnavailable budget spent: 1 of 5 pods unavailable, maxUnavailable 1"));
  pods[0] = Pod("web-a", "web-abc", true);
  pods[2] = Pod("web-c", "web-old", true, planner::kStatePreparingUpdate);
  EXPECT_THAT(HoldReasons(cs, pods, now, {}),  // a pod in a hook is unavailable too
              ElementsAre("maxUnavailable budget spent: 1 of 5 pods unavailable, maxUnavailable 1",
                          "lifecycle hook: web-c (PreparingUpdate) waiting for the hook's label to be cleared"));
  pods[2] = Pod("web-c", "web-old", true);
  EXPECT_THAT(HoldReasons(cs, pods, now, {}), ElementsAre());
  // An in-place resize the kubelet holds back (the pod is Updating, so unavailable too).
  pods[0] = Pod("web-a", "web-abc", true, planner::kStateUpdating);
  auto* pending = pods[0].add_conditions();
  pending->set_type("PodResizePending");
  pending->set_status("True");
  pending->set_reason("Infeasible");
  pending->set_message("Node didn't have enough capacity: cpu, requested: 64000, capacity: 8000");
  EXPECT_THAT(HoldReasons(cs, pods, now, {}),
              ElementsAre("maxUnavailable budget spent: 1 of 5 pods unavailable, maxUnavailable 1",
                          "in-place resize held back by the kubelet: web-a (Infeasible: Node didn't have enough "
                          "capacity: cpu, requested: 64000, capacity: 8000) (Deferred: retried when the node has room; "
                          "Infeasible: change the template)"));
}

TEST(RenderConditions, EveryConditionWithItsStatus) {
  pb::CloneSetStatus st;
  auto* c = st.add_conditions();
  c->set_type("Progressing");
  c->set_status("False");
  c->set_reason("ProgressDeadlineExceeded");
  c->set_message("CloneSet revision web-1 has timed out progressing");
  c = st.add_conditions();
  c->set_type("FailedScale");
  c->set_status("True");
  EXPECT_EQ(RenderConditions(st),
            "Condition Progressing=False (ProgressDeadlineExceeded): CloneSet revision web-1 has timed out progressing\n"
            "Condition FailedScale=True\n");
  EXPECT_EQ(RenderConditions(pb::CloneSetStatus()), "");
}

TEST(CliHelp, HelpAndCompletion) {
  std::string about = "x";
  EXPECT_TRUE(WantsHelp({"status", "--help"}, &about));
  EXPECT_EQ(about, "status");
  EXPECT_TRUE(WantsHelp({"help", "rollout"}, &about));
  EXPECT_EQ(about, "rollout");
  EXPECT_TRUE(WantsHelp({"-h"}, &about));
  EXPECT_EQ(about, "");
  EXPECT_FALSE(WantsHelp({"status", "web"}, &about));
  EXPECT_THAT(UsageText("rollout"), HasSubstr("clonesetctl rollout next NAME [--step N]"));
  EXPECT_THAT(UsageText(""), HasSubstr("rollout status|history|undo|pause|resume|restart|next NAME"));

  EXPECT_THAT(CompleteWords({""}, {}),
              ElementsAre("completion", "help", "migrate", "plan", "rollout", "simulate", "status"));
  EXPECT_THAT(CompleteWords({"ro"}, {}), ElementsAre("rollout"));
  EXPECT_THAT(CompleteWords({"rollout", "re"}, {}), ElementsAre("restart", "resume"));
  EXPECT_THAT(CompleteWords({"rollout", "status", "w"}, {"web", "worker", "api"}), ElementsAre("web", "worker"));
  EXPECT_TRUE(CompletesName({"rollout", "status", ""}));
  EXPECT_TRUE(CompletesName({"-n", "prod", "status", ""}));
  EXPECT_FALSE(CompletesName({"rollout", ""}));
  EXPECT_THAT(CompleteWords({"rollout", "status", "web", "--p"}, {}), ElementsAre("--partition-ok"));
  EXPECT_THAT(CompleteWords({"completion", ""}, {}), ElementsAre("bash", "zsh"));
  EXPECT_TRUE(CompletionScript("bash").has_value());
  EXPECT_TRUE(CompletionScript("zsh").has_value());
  EXPECT_FALSE(CompletionScript("fish").has_value());
}

TEST(Migrate, CloneSetForDeployment) {
  const Json d = Json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"prod","labels":{"team":"a"},"uid":"u1","resourceVersion":"7"},
    "spec":{"replicas":4,"minReadySeconds":5,"selector":{"matchLabels":{"app":"web"}},
            "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"25%","maxSurge":1}},
            "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"n:1"}]}}},
    "status":{"replicas":4}})");
  auto cs = CloneSetForDeployment(d);
  ASSERT_TRUE(cs.ok()) << cs.status();
  EXPECT_EQ(*cs, Json::parse(R"({"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet",
    "metadata":{"name":"web","namespace":"prod","labels":{"team":"a"},
                "annotations":{"clonesetctl.cloneset.io/migrated-from":"deployment/web"}},
    "spec":{"replicas":0,"minReadySeconds":5,"selector":{"matchLabels":{"app":"web"}},
            "updateStrategy":{"type":"ReCreate","maxUnavailable":"25%","maxSurge":1},
            "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"main","image":"n:1"}]}}}})"));
  Json bad = d;
  bad["spec"].erase("selector");
  EXPECT_EQ(CloneSetForDeployment(bad).status().message(), "deployment: spec.selector is missing");
}

TEST(Migrate, Steps) {
  struct Case {
    int replicas, moved, max_unavailable;
    std::vector<std::pair<int, int>> want;
  };
  const std::vector<Case> cases = {
      {3, 0, 1, {{2, 1}, {1, 2}, {0, 3}}},
      {5, 0, 2, {{3, 2}, {1, 4}, {0, 5}}},
      {5, 3, 2, {{0, 5}}},
      {2, 2, 1, {}},
      {0, 0, 1, {}},
  };
  for (const Case& c : cases) {
    auto steps = MigrationSteps(c.replicas, c.moved, c.max_unavailable);
    ASSERT_TRUE(steps.ok());
    std::vector<std::pair<int, int>> got;
    for (const MigrationStep& s : *steps) got.emplace_back(s.deployment_replicas, s.cloneset_replicas);
    EXPECT_EQ(got, c.want) << c.replicas << " " << c.moved << " " << c.max_unavailable;
  }
  EXPECT_EQ(MigrationSteps(3, 0, 0).status().message(), "--max-unavailable must be at least 1");
  EXPECT_EQ(RenderMigration("default", "web", 3, 1, false, *MigrationSteps(3, 1, 1)),
            "Migrating deployment/web (namespace default, 3 replicas) to cloneset.apps.kruise.io/web:\n"
            "  1. scale deployment 2 -> 1 and cloneset 1 -> 2, wait until 2 CloneSet pods are available\n"
            "  2. scale deployment 1 -> 0 and cloneset 2 -> 3, wait until 3 CloneSet pods are available\n"
            "  3. done: deployment/web is left with 0 replicas (delete it with `kubectl delete deployment web -n "
            "default`)\n");
}

}  // namespace
}  // namespace cloneset::clonesetctl
