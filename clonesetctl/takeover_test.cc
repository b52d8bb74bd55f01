#include "clonesetctl/takeover.h"

#include <string>
#include <vector>

#include "base/time_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace cloneset::clonesetctl {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using Json = nlohmann::json;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

Json Lease(std::string holder, absl::Duration age, int duration = 15) {
  return Json{{"spec",
               {{"holderIdentity", holder},
                {"leaseDurationSeconds", duration},
                {"renewTime", base::FormatMicroTime(kNow - age)}}}};
}

TEST(KruiseManagerRunning, Table) {
  struct Case {
    std::string name;
    Json lease;
    bool running;
  };
  const std::vector<Case> cases = {
      {"no lease", Json(), false},
      {"renewed now", Lease("kruise-abc_1", absl::Seconds(2)), true},
      {"renewed within its duration and the margin", Lease("kruise-abc_1", absl::Seconds(19)), true},
      {"not renewed for longer", Lease("kruise-abc_1", absl::Seconds(21)), false},
      {"a longer lease duration", Lease("kruise-abc_1", absl::Seconds(40), 60), true},
      {"released (no holder)", Lease("", absl::Seconds(1)), false},
      {"unreadable renewTime", Json{{"spec", {{"holderIdentity", "x"}, {"renewTime", "yesterday"}}}}, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(KruiseManagerRunning(c.lease, kNow).has_value(), c.running) << c.name;
  }
  EXPECT_THAT(*KruiseManagerRunning(Lease("kruise-abc_1", absl::Seconds(3)), kNow),
              HasSubstr("held by kruise-abc_1, renewed 3s ago"));
}

Json Webhook(std::string name, Json rules, std::string policy, std::string service_ns = "kruise-system") {
  Json w{{"name", name}, {"rules", rules}, {"clientConfig", {{"service", {{"namespace", service_ns}}}}}};
  if (!policy.empty()) w["failurePolicy"] = policy;
  return w;
}

Json Rule(Json groups, Json resources) { return Json::array({{{"apiGroups", groups}, {"resources", resources}}}); }

TEST(KruiseWebhooks, Table) {
  struct Case {
    std::string name;
    std::string config;
    Json webhook;
    size_t blockers, notes;
  };
  const std::vector<Case> cases = {
      {"CloneSet webhook, Fail", "kruise-validating-webhook-configuration",
       Webhook("vcloneset.kb.io", Rule({"apps.kruise.io"}, {"clonesets"}), "Fail"), 1, 0},
      {"failurePolicy unset means Fail", "kruise-mutating-webhook-configuration",
       Webhook("mcloneset.kb.io", Rule({"apps.kruise.io"}, {"clonesets"}), ""), 1, 0},
      {"pod webhook, Ignore", "kruise-mutating-webhook-configuration",
       Webhook("mpod.kb.io", Rule({""}, {"pods"}), "Ignore"), 0, 1},
      {"pod subresources by wildcard", "kruise-validating-webhook-configuration",
       Webhook("vpod.kb.io", Rule({""}, {"pods/*"}), "Fail"), 1, 0},
      {"every group and resource", "other", Webhook("all.kb.io", Rule({"*"}, {"*"}), "Fail"), 1, 0},
      {"another Kruise workload only", "kruise-validating-webhook-configuration",
       Webhook("vstatefulset.kb.io", Rule({"apps.kruise.io"}, {"statefulsets"}), "Fail"), 0, 0},
      {"not Kruise's (name and service)", "policy-agent",
       Webhook("pods.policy.io", Rule({""}, {"pods"}), "Fail", "policy"), 0, 0},
      {"pods in another group are not pods", "kruise-x",
       Webhook("x.kb.io", Rule({"apps.kruise.io"}, {"pods"}), "Fail"), 0, 0},
  };
  for (const Case& c : cases) {
    const Json list{{"items", Json::array({{{"metadata", {{"name", c.config}}}, {"webhooks", {c.webhook}}}})}};
    const WebhookFindings found = KruiseWebhooks(list, "ValidatingWebhookConfiguration");
    EXPECT_EQ(found.blockers.size(), c.blockers) << c.name;
    EXPECT_EQ(found.notes.size(), c.notes) << c.name;
  }
  const Json list{{"items", Json::array({{{"metadata", {{"name", "kruise-validating-webhook-configuration"}}},
                                          {"webhooks", {Webhook("vcloneset.kb.io",
                                                                Rule({"apps.kruise.io"}, {"clonesets"}), "Fail")}}}})}};
  EXPECT_THAT(KruiseWebhooks(list, "ValidatingWebhookConfiguration").blockers,
              ElementsAre(HasSubstr("ValidatingWebhookConfiguration kruise-validating-webhook-configuration, "
                                    "webhook vcloneset.kb.io (failurePolicy Fail) intercepts CloneSets")));
  EXPECT_THAT(KruiseWebhooks(Json(), "x").blockers, IsEmpty());
  EXPECT_THAT(KruiseWebhooks(Json{{"items", Json::array({{{"webhooks", nullptr}}})}}, "x").blockers, IsEmpty());
}

TEST(CrdBlockers, Table) {
  const Json ours{{"metadata", {{"labels", {{"app.kubernetes.io/part-of", "cloneset"}}}}},
                  {"spec",
                   {{"versions",
                     {{{"name", "v1alpha1"}, {"served", true}, {"storage", false}},
                      {{"name", "v1beta1"}, {"served", true}, {"storage", true}}}},
                    {"conversion",
                     {{"strategy", "Webhook"},
                      {"webhook",
                       {{"clientConfig", {{"service", {{"namespace", "cloneset-system"}, {"name", "cloneset-planner"}}}}}}}}}}}};
  EXPECT_THAT(CrdBlockers(ours), IsEmpty());
  const Json kruise18{{"spec", {{"versions", {{{"name", "v1alpha1"}, {"served", true}, {"storage", true}}}}}}};
  EXPECT_THAT(CrdBlockers(kruise18), ElementsAre(HasSubstr("does not serve apps.kruise.io/v1beta1")));
  const Json kruise19{{"spec",
                       {{"versions",
                         {{{"name", "v1alpha1"}, {"storage", false}}, {{"name", "v1beta1"}, {"storage", true}}}},
                        {"conversion",
                         {{"strategy", "Webhook"},
                          {"webhook",
                           {{"clientConfig",
                             {{"service", {{"namespace", "kruise-system"}, {"name", "kruise-webhook-service"}}}}}}}}}}}};
  EXPECT_THAT(CrdBlockers(kruise19), ElementsAre(HasSubstr("service kruise-system/kruise-webhook-service")));
  Json future = ours;
  future["spec"]["versions"][1]["storage"] = false;
  future["spec"]["versions"].push_back({{"name", "v1"}, {"served", true}, {"storage", true}});
  EXPECT_THAT(CrdBlockers(future), ElementsAre(HasSubstr("stores apps.kruise.io/v1, which this project does not know")));
  EXPECT_THAT(CrdBlockers(Json()), ElementsAre(HasSubstr("no CloneSet CRD")));
}

TEST(CloneSetListVersions, Table) {
  auto crd = [](const std::string& stored, bool beta_served = true) {
    return Json{{"spec",
                 {{"versions",
                   {{{"name", "v1alpha1"}, {"served", true}, {"storage", stored == "v1alpha1"}},
                    {{"name", "v1beta1"}, {"served", beta_served}, {"storage", stored == "v1beta1"}},
                    {{"name", "v1"}, {"served", true}, {"storage", stored == "v1"}}}}}}};
  };
  EXPECT_THAT(CloneSetListVersions(crd("v1alpha1")), ElementsAre("apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"));
  EXPECT_THAT(CloneSetListVersions(crd("v1beta1")), ElementsAre("apps.kruise.io/v1beta1", "apps.kruise.io/v1alpha1"));
  EXPECT_THAT(CloneSetListVersions(crd("v1alpha1", false)), ElementsAre("apps.kruise.io/v1alpha1"));
  // A version this project does not know (a blocker of its own) is never listed in.
  EXPECT_THAT(CloneSetListVersions(crd("v1")), ElementsAre("apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"));
  EXPECT_THAT(CloneSetListVersions(Json()), ElementsAre("apps.kruise.io/v1alpha1"));
}

TEST(CheckPlan, EveryActionIsAWriteButTheStatus) {
  pb::PlanResponse plan;
  plan.set_write_status(true);
  EXPECT_THAT(CheckPlan("ns/web", plan).writes, IsEmpty());
  EXPECT_TRUE(CheckPlan("ns/web", plan).status_write);
  plan.add_actions()->mutable_patch_pod()->set_name("web-a");
  plan.add_actions()->mutable_delete_revision()->set_name("web-123");
  const TakeoverCheck check = CheckPlan("ns/web", plan);
  EXPECT_THAT(check.writes, ElementsAre(HasSubstr("patch pod web-a"), "delete ControllerRevision web-123"));
}

TEST(RenderTakeover, VerdictAndLines) {
  TakeoverReport safe;
  safe.clone_sets = {{"ns/a", {}, true, ""}, {"ns/b", {}, false, ""}};
  EXPECT_TRUE(safe.Safe());
  EXPECT_EQ(RenderTakeover(safe),
            "CloneSet ns/a: no writes (status recomputed)\n"
            "CloneSet ns/b: no writes\n"
            "Safe to take over: 2 CloneSets, no write to a pod, claim or revision (the status of 1 recomputed).\n");

  TakeoverReport unsafe;
  unsafe.clone_sets = {{"ns/a", {"patch pod a-1 (x): label k=v"}, false, ""}, {"ns/c", {}, false, "bad spec"}};
  unsafe.blockers = {"kruise-manager is running"};
  unsafe.notes = {"a note"};
  EXPECT_FALSE(unsafe.Safe());
  EXPECT_EQ(RenderTakeover(unsafe),
            "CloneSet ns/a: 1 write\n"
            "    patch pod a-1 (x): label k=v\n"
            "CloneSet ns/c: cannot be planned: bad spec\n"
            "Blocker: kruise-manager is running\n"
            "Note: a note\n"
            "Not safe to take over yet: 1 CloneSet would be written to, 1 cannot be planned, 1 blocker.\n");

  TakeoverReport blocked_only;
  blocked_only.blockers = {"x"};
  EXPECT_FALSE(blocked_only.Safe());
}

}  // namespace
}  // namespace cloneset::clonesetctl
