#include "clonesetctl/takeover.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/json_read.h"
#include "base/time_format.h"
#include "kruise/keys.h"
#include "clonesetctl/live.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;

using base::json_read::Str;

bool Contains(const Json& list, std::string_view value) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(), [&](const Json& v) { return v.is_string() && v == value; });
}

// Whether a webhook's rules match writes of `resource` in API group `group` ("" for core).
bool Intercepts(const Json& webhook, std::string_view group, std::string_view resource) {
  const auto rules = webhook.find("rules");
  if (rules == webhook.end() || !rules->is_array()) return false;
  for (const Json& rule : *rules) {
    const Json groups = rule.value("apiGroups", Json::array());
    const Json resources = rule.value("resources", Json::array());
    const bool group_matches = Contains(groups, group) || Contains(groups, "*");
    const bool resource_matches = Contains(resources, resource) || Contains(resources, "*") ||
                                  Contains(resources, std::string(resource) + "/*") || Contains(resources, "*/*");
    if (group_matches && resource_matches) return true;
  }
  return false;
}

}  // namespace

TakeoverCheck CheckPlan(std::string clone_set, const pb::PlanResponse& plan) {
  TakeoverCheck check;
  check.clone_set = std::move(clone_set);
  for (const pb::Action& action : plan.actions()) check.writes.push_back(DescribeAction(action));
  check.status_write = plan.write_status();
  return check;
}

std::optional<std::string> KruiseManagerRunning(const Json& lease, absl::Time now) {
  if (!lease.is_object()) return std::nullopt;
  const Json spec = lease.value("spec", Json::object());
  const std::string holder = Str(spec, "holderIdentity");
  if (holder.empty()) return std::nullopt;
  const int64_t duration = spec.value("leaseDurationSeconds", 15);
  const absl::StatusOr<absl::Time> renewed = base::ParseTime(Str(spec, "renewTime"));
  if (!renewed.ok()) {
    return absl::StrCat("kruise-manager's Lease kruise-system/kruise-manager is held by ", holder,
                        " (its renewTime cannot be read): stop kruise-manager first");
  }
  const absl::Duration age = now - *renewed;
  if (age > absl::Seconds(duration + 5)) return std::nullopt;
  return absl::StrCat("kruise-manager is running: its Lease kruise-system/kruise-manager is held by ", holder,
                      ", renewed ", absl::FormatDuration(absl::Trunc(std::max(age, absl::ZeroDuration()),
                                                                     absl::Seconds(1))),
                      " ago; stop it first (two controllers would write the same pods)");
}

WebhookFindings KruiseWebhooks(const Json& list, std::string_view kind) {
  WebhookFindings out;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const Json& config : list["items"]) {
    const std::string config_name = Str(config.value("metadata", Json::object()), "name");
    const Json webhooks = config.value("webhooks", Json::array());
    if (!webhooks.is_array()) continue;
    for (const Json& webhook : webhooks) {
      if (!webhook.is_object()) continue;
      const Json service = webhook.value("clientConfig", Json::object()).value("service", Json::object());
      const bool kruise = absl::StartsWith(config_name, "kruise-") || Str(service, "namespace") == "kruise-system";
      if (!kruise) continue;
      std::vector<std::string> what;
      if (Intercepts(webhook, "apps.kruise.io", "clonesets")) what.push_back("CloneSets");
      if (Intercepts(webhook, "", "pods")) what.push_back("pods");
      if (what.empty()) continue;
      std::string policy = Str(webhook, "failurePolicy");
      if (policy.empty()) policy = "Fail";  // admissionregistration.k8s.io/v1's default
      const std::string name = absl::StrCat(std::string(kind), " ", config_name, ", webhook ", Str(webhook, "name"));
      if (policy == "Fail") {
        out.blockers.push_back(absl::StrCat(name, " (failurePolicy Fail) intercepts ", absl::StrJoin(what, " and "),
                                            ": once kruise-manager stops, every such write is refused; delete it "
                                            "(or set failurePolicy Ignore) before stopping kruise-manager"));
      } else {
        out.notes.push_back(absl::StrCat(name, " (failurePolicy ", policy, ") intercepts ",
                                         absl::StrJoin(what, " and "),
                                         ": while kruise-manager is stopped the API server skips it after its "
                                         "timeout on every such write; delete it to save that wait"));
      }
    }
  }
  return out;
}

std::vector<std::string> CrdBlockers(const Json& crd) {
  std::vector<std::string> out;
  if (!crd.is_object()) {
    out.push_back("the API server serves no CloneSet CRD (clonesets.apps.kruise.io)");
    return out;
  }
  const Json spec = crd.value("spec", Json::object());
  bool serves_v1beta1 = false;
  for (const Json& version : spec.value("versions", Json::array())) {
    if (!version.is_object()) continue;
    const std::string name = Str(version, "name");
    if (name == "v1beta1" && version.value("served", true)) serves_v1beta1 = true;
    if (version.value("storage", false) && name != "v1alpha1" && name != "v1beta1") {
      out.push_back(absl::StrCat("the CloneSet CRD stores apps.kruise.io/", name,
                                 ", which this project does not know (it serves and converts v1alpha1 and v1beta1)"));
    }
  }
  // This project's CRD carries the label app.kubernetes.io/part-of: cloneset; its webhook is the planners.
  const Json labels = crd.value("metadata", Json::object()).value("labels", Json::object());
  const bool ours = labels.is_object() && labels.value("app.kubernetes.io/part-of", "") == "cloneset";
  const Json conversion = spec.value("conversion", Json::object());
  if (!ours && Str(conversion, "strategy") == "Webhook") {
    const Json service = conversion.value("webhook", Json::object())
                             .value("clientConfig", Json::object())
                             .value("service", Json::object());
    out.push_back(absl::StrCat("the CloneSet CRD converts through the webhook of service ",
                               Str(service, "namespace"), "/", Str(service, "name"),
                               ", not this project's (kruise-manager's stops with it): once kruise-manager is stopped, "
                               "apply this project's CRD (charts/cloneset/files/crds, or install the chart), whose "
                               "webhook is the planners"));
  } else if (!serves_v1beta1) {
    out.push_back("the CloneSet CRD does not serve apps.kruise.io/v1beta1, which the executor reads (Kruise 1.8's "
                  "CRD, or an older one of this project): apply this project's CRD (charts/cloneset/files/crds, or "
                  "install the chart) once kruise-manager is stopped");
  }
  return out;
}

std::vector<std::string> CloneSetListVersions(const Json& crd) {
  const Json spec = crd.is_object() ? crd.value("spec", Json::object()) : Json::object();
  std::vector<std::string> out;
  for (const bool storage : {true, false}) {
    for (const Json& version : spec.value("versions", Json::array())) {
      if (!version.is_object() || version.value("storage", false) != storage) continue;
      if (!version.value("served", true)) continue;
      const std::string name = Str(version, "name");
      if (name == "v1alpha1" || name == "v1beta1") out.push_back(absl::StrCat(kruise::kGroup, "/", name));
    }
  }
  if (out.empty()) out.push_back(kruise::kV1alpha1);
  return out;
}

bool TakeoverReport::Safe() const {
  if (!blockers.empty()) return false;
  return std::all_of(clone_sets.begin(), clone_sets.end(),
                     [](const TakeoverCheck& c) { return c.error.empty() && c.writes.empty(); });
}

std::string RenderTakeover(const TakeoverReport& report) {
  std::string out;
  int status_writes = 0, written = 0;
  for (const TakeoverCheck& c : report.clone_sets) {
    if (!c.error.empty()) {
      absl::StrAppend(&out, "CloneSet ", c.clone_set, ": cannot be planned: ", c.error, "\n");
      continue;
    }
    status_writes += c.status_write ? 1 : 0;
    if (c.writes.empty()) {
      absl::StrAppend(&out, "CloneSet ", c.clone_set, ": no writes", c.status_write ? " (status recomputed)" : "",
                      "\n");
      continue;
    }
    ++written;
    absl::StrAppend(&out, "CloneSet ", c.clone_set, ": ", c.writes.size(), c.writes.size() == 1 ? " write" : " writes",
                    "\n");
    for (const std::string& w : c.writes) absl::StrAppend(&out, "    ", w, "\n");
  }
  for (const std::string& b : report.blockers) absl::StrAppend(&out, "Blocker: ", b, "\n");
  for (const std::string& n : report.notes) absl::StrAppend(&out, "Note: ", n, "\n");
  const size_t n = report.clone_sets.size();
  if (report.Safe()) {
    absl::StrAppend(&out, "Safe to take over: ", n, n == 1 ? " CloneSet" : " CloneSets",
                    ", no write to a pod, claim or revision", status_writes > 0
                        ? absl::StrCat(" (the status of ", status_writes, " recomputed)")
                        : "",
                    ".\n");
  } else {
    std::vector<std::string> why;
    if (written > 0) why.push_back(absl::StrCat(written, written == 1 ? " CloneSet" : " CloneSets", " would be written to"));
    const long errors = std::count_if(report.clone_sets.begin(), report.clone_sets.end(),
                                      [](const TakeoverCheck& c) { return !c.error.empty(); });
    if (errors > 0) why.push_back(absl::StrCat(errors, " cannot be planned"));
    if (!report.blockers.empty()) {
      why.push_back(absl::StrCat(report.blockers.size(), report.blockers.size() == 1 ? " blocker" : " blockers"));
    }
    absl::StrAppend(&out, "Not safe to take over yet: ", absl::StrJoin(why, ", "), ".\n");
  }
  return out;
}

}  // namespace cloneset::clonesetctl
