// ControllerRevisions (semantics §3): canonical data, hash and name, choosing current/update, history.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/context.h"
#include "planner/plan_builder.h"

namespace cloneset::planner {

// Upstream's revision data, byte for byte: {"spec":{"template":{"$patch":"replace",...}}} with the template
// decoded into its Go types and encoded again (planner/go_typed_json.h), then written as json.Marshal writes a
// map: compact, keys sorted at every level, Go's escapes, numbers as float64. INVALID_ARGUMENT naming the field
// when the template does not decode into those types (kruise-manager could not read the CloneSet).
absl::StatusOr<std::string> RevisionData(std::string_view template_json);
// The data this planner wrote before it decoded templates into their Go types: the template as sent, with the
// same writing rules. Revisions holding it are still recognized as the template's.
absl::StatusOr<std::string> LegacyRevisionData(std::string_view template_json);
// The PodTemplateSpec JSON inside revision data, read into the Go types as upstream's ApplyRevision does (drops
// "$patch", unknown fields; keys sorted).
absl::StatusOr<std::string> TemplateFromRevisionData(std::string_view data_json);

// OK when `data_json` holds what TemplateFromRevisionData reads (a JSON object with an object spec.template that
// decodes into the template's Go types, no deeper than kMaxJsonDepth); INVALID_ARGUMENT saying what is wrong
// otherwise.
absl::Status CheckRevisionData(std::string_view data_json);

uint32_t Fnv1Hash32(std::string_view data, uint32_t seed = 2166136261u);
// Hash of revision data plus the decimal collision count, SafeEncodeString'd.
std::string RevisionHash(std::string_view data_json, int32_t collision_count);
// Upstream's kruise.io/cloneset-volumeclaimtemplate-hash annotation value ("" when there are none);
// INVALID_ARGUMENT when a template does not decode into PersistentVolumeClaim.
absl::StatusOr<std::string> VolumeClaimTemplatesHash(const pb::CloneSetSpec& spec);

// Sorted by (revision, creationTimestamp, name).
std::vector<const pb::ControllerRevision*> SortRevisions(const pb::PlanRequest& request);

struct RevisionChoice {
  std::string current_revision;
  std::string update_revision;
  std::string current_template_json;
  std::string update_template_json;
  int32_t collision_count = 0;
  std::string vct_hash;  // VolumeClaimTemplatesHash of the CloneSet
};

// §3.4: chooses current and update revision; appends CreateRevision/UpdateRevision actions when needed.
absl::StatusOr<RevisionChoice> ChooseRevisions(const pb::PlanRequest& request,
                                               const std::vector<const pb::ControllerRevision*>& sorted,
                                               PlanBuilder& plan);

// Revisions other than the current and update revision whose data CheckRevisionData rejects: nothing can use
// them (a rollback matches a revision by its data), so they are skipped with a Warning event InvalidRevision, and
// PlanHistoryTruncation deletes them, whatever the history limit, unless a pod still carries their label.
// Upstream fails every reconcile of the CloneSet on such a revision (docs/compatibility.md "Revisions").
std::vector<const pb::ControllerRevision*> UnusableRevisions(const PlanContext& ctx);
void PlanUnusableRevisionEvents(const PlanContext& ctx, PlanBuilder& plan);

// §3.6: deletes the oldest non-live revisions beyond revisionHistoryLimit, and every unusable one that is not
// live.
void PlanHistoryTruncation(const PlanContext& ctx, PlanBuilder& plan);

}  // namespace cloneset::planner
