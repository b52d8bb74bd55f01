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

// The CloneSet CRD as the API server serves it: a blocker when it stores a version other than v1alpha1 or converts
// through a webhook (Kruise 1.9's CRD stores v1beta1 and converts in kruise-manager), since objects would then be
// read through a webhook that is going away.
std::vector<std::string> CrdBlockers(const nlohmann::json& crd);

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
