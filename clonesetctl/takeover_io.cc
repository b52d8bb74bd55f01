// `clonesetctl migrate from-kruise`: reads what takeover.h judges (the CloneSets with what they own,
// kruise-manager's Lease, the admission webhooks, the CloneSet CRD) and plans each CloneSet with the planner
// linked in, as the executor would ask it (no planner needs to run yet: the check comes before the install).
#include <ostream>

#include "absl/strings/str_cat.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "planapi/request.h"
#include "planner/plan.h"
#include "clonesetctl/live.h"
#include "clonesetctl/rollout_io.h"
#include "clonesetctl/takeover.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;

// The object at `path`, null when the API server answers 404.
absl::StatusOr<Json> GetOrNull(kube::RestClient& client, const std::string& path) {
  auto body = client.Get(path);
  if (absl::IsNotFound(body.status())) return Json();
  if (!body.ok()) return body.status();
  Json doc = Json::parse(*body, nullptr, false);
  if (doc.is_discarded()) return absl::InternalError(absl::StrCat(path, ": the answer is not JSON"));
  return doc;
}

}  // namespace

int CheckKruiseTakeover(kube::RestClient& client, const std::string& server, const std::string& ns,
                        const pb::FeatureGates& gates, absl::Time now, std::ostream& out, std::ostream& err) {
  // The CRD first: the CloneSets are listed in the version it stores, then in the other it serves, the first list
  // that succeeds counts (a list in the version the objects are stored in needs no conversion webhook).
  auto crd = GetOrNull(client, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io");
  absl::StatusOr<std::vector<LiveCloneSet>> sets = absl::UnknownError("no version to list CloneSets in");
  bool first = true;
  for (const std::string& version : CloneSetListVersions(crd.ok() ? *crd : Json())) {
    auto listed = FetchCloneSets(client, server, ns, version);
    if (first || listed.ok()) sets = std::move(listed);
    first = false;
    if (sets.ok()) break;
  }
  if (!sets.ok()) {
    err << "error: " << sets.status().message() << "\n";
    return 1;
  }
  TakeoverReport report;
  for (const LiveCloneSet& live : *sets) {
    const std::string name =
        absl::StrCat(live.clone_set.metadata().namespace_(), "/", live.clone_set.metadata().name());
    planapi::RequestWithPods snapshot = PlanRequestFor(live, now, gates);
    auto plan = planapi::RequestPlan(snapshot, [](const pb::PlanRequest& r) { return planner::Plan(r); });
    if (!plan.ok()) {
      report.clone_sets.push_back(TakeoverCheck{name, {}, false, std::string(plan.status().message())});
      continue;
    }
    report.clone_sets.push_back(CheckPlan(name, *plan));
  }
  auto lease = GetOrNull(client, "/apis/coordination.k8s.io/v1/namespaces/kruise-system/leases/kruise-manager");
  if (lease.ok()) {
    if (auto running = KruiseManagerRunning(*lease, now)) report.blockers.push_back(*running);
  } else {
    report.notes.push_back(absl::StrCat("kruise-manager's Lease could not be read (", lease.status().message(),
                                        "): make sure kruise-manager is stopped"));
  }
  for (const auto& [kind, resource] : {std::pair<std::string, std::string>{"MutatingWebhookConfiguration",
                                                                           "mutatingwebhookconfigurations"},
                                       {"ValidatingWebhookConfiguration", "validatingwebhookconfigurations"}}) {
    auto list = GetOrNull(client, absl::StrCat("/apis/admissionregistration.k8s.io/v1/", resource));
    if (!list.ok()) {
      report.notes.push_back(absl::StrCat("the ", kind, "s could not be read (", list.status().message(),
                                          "): check kruise-manager's webhooks by hand"));
      continue;
    }
    WebhookFindings found = KruiseWebhooks(*list, kind);
    report.blockers.insert(report.blockers.end(), found.blockers.begin(), found.blockers.end());
    report.notes.insert(report.notes.end(), found.notes.begin(), found.notes.end());
  }
  if (crd.ok()) {
    for (std::string& b : CrdBlockers(*crd)) report.blockers.push_back(std::move(b));
  } else {
    report.notes.push_back(absl::StrCat("the CloneSet CRD could not be read (", crd.status().message(), ")"));
  }
  out << RenderTakeover(report);
  return report.Safe() ? 0 : 1;
}

}  // namespace cloneset::clonesetctl
