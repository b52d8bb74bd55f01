// Whether CloneSets that upstream's kruise-manager manages can be handed to our executor without a rollout: per
// CloneSet, every write its first plan would make (the planner, asked as the executor asks it, from the live
// objects), and what in the cluster must change first (kruise-manager still running, its admission webhooks, a CRD
// we cannot serve). Pure functions of objects already read; takeover_io.cc reads them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"

namespace cloneset::clonesetctl {

namespace pb = ::cloneset::planner::v1;

struct TakeoverCheck {
  std::string clone_set;            // namespace/name
  std::vector<std::string> writes;  // one line per write to a pod, claim, revision, the spec or an image pull job
  bool status_write = false;        // the status would be rewritten (it is recomputed on every reconcile: harmless)
  std::string error;                // the CloneSet could not be planned: the executor would stop at it too
};

// The writes of `plan` other than the CloneSet's status, one line each (DescribeAction).
TakeoverCheck CheckPlan(std::string clone_set, const pb::PlanResponse& plan);

// kruise-manager's leader-election Lease (kruise-system/kruise-manager; null when absent): a blocker while it is
// held and was renewed within its lease duration (plus a 5 s margin) of `now`, since two controllers would then
// write the same pods.
std::optional<std::string> KruiseManagerRunning(const nlohmann::json& lease, absl::Time now);

// The admission webhooks of a MutatingWebhookConfigurationList or ValidatingWebhookConfigurationList (`kind`
// names which, for the messages) that kruise-manager serves (configuration named kruise-*, or a service in
// kruise-system) and that intercept CloneSets or pods. A CloneSet or pod webhook with failurePolicy Fail is a
// blocker (every such write is refused once kruise-manager stops); with Ignore it is a note.
struct WebhookFindings {
  std::vector<std::string> blockers;
  std::vector<std::string> notes;
};
WebhookFindings KruiseWebhooks(const nlohmann::json& list, std::string_view kind);

// The CloneSet CRD as the API server serves it (null when absent): blockers for what must change before the
// executor can run on it. No CRD; a storage version other than v1alpha1 and v1beta1; a conversion webhook that is not
// this project's (Kruise 1.9's converts in kruise-manager, which stops; ours carries the label
// app.kubernetes.io/part-of: cloneset and converts in the planners); no v1beta1 served (Kruise 1.8's CRD), which the
// executor reads.
std::vector<std::string> CrdBlockers(const nlohmann::json& crd);

// The apiVersions to list CloneSets in, to try in order: the CRD's storage version first, then the other one of
// v1alpha1 and v1beta1 that it serves (apps.kruise.io/v1alpha1 alone when the CRD is unknown). A list in the version an
// object is stored in needs no conversion webhook: the check reads a cluster whose webhook is gone (kruise-manager's,
// stopped) or not yet running (the planners', before the install) as long as its CloneSets are stored in one version
// (Kruise 1.8's in v1alpha1 under this project's CRD, which stores v1beta1 from then on; Kruise 1.9's in v1beta1).
std::vector<std::string> CloneSetListVersions(const nlohmann::json& crd);

struct TakeoverReport {
  std::vector<TakeoverCheck> clone_sets;
  std::vector<std::string> blockers;
  std::vector<std::string> notes;
  // No blocker, no plan error and no write other than status.
  bool Safe() const;
};

// The report as text: one block per CloneSet that would be written to (or "no writes" per CloneSet), then the
// blockers and notes, then a verdict line.
std::string RenderTakeover(const TakeoverReport& report);

}  // namespace cloneset::clonesetctl
