// Pod predicates used by every stage (semantics §0.3). Pure functions of the pod, the spec and `now`.
#pragma once

#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "kruise/keys.h"
#include "planner/resolved_spec.h"

namespace cloneset::planner {

namespace pb = ::cloneset::planner::v1;

// The planner speaks the Kruise API throughout: its names (kruise/keys.h) and, where included, its in-place
// state (kruise/inplace_state.h) are used unqualified.
using namespace ::cloneset::kruise;  // NOLINT(build/namespaces)

absl::Time ToTime(const google::protobuf::Timestamp& ts);      // unset -> absl::InfinitePast()
bool IsSet(const google::protobuf::Timestamp& ts);
void SetTimestamp(absl::Time t, google::protobuf::Timestamp* out);
// base::FormatTime ("2026-11-21T11:25:00Z") with a per-thread memo of the last value (a plan formats the same
// `now` for every pod it touches).
const std::string& Rfc3339(absl::Time t);

const pb::Condition* FindCondition(const pb::Pod& pod, std::string_view type);
bool HasReadinessGate(const pb::Pod& pod, std::string_view condition_type);

bool IsActive(const pb::Pod& pod);                               // active(p)
bool IsK8sReady(const pb::Pod& pod);                             // k8sReady(p)
bool IsRunningAvailable(const pb::Pod& pod, int32_t min_ready_seconds, absl::Time now);
bool IsUpdateReady(const pb::Pod& pod, int32_t min_ready_seconds, absl::Time now);
std::string_view LifecycleState(const pb::Pod& pod);             // lcState(p), "" if absent
bool IsAvailable(const pb::Pod& pod, int32_t min_ready_seconds, absl::Time now);  // avail(p, m)
bool IsControllerReady(const pb::Pod& pod, absl::Time now);      // ctrlReady(p) = avail(p, 0)
bool IsSpecifiedDelete(const pb::Pod& pod, const ResolvedSpec& spec);  // specDel(p)
std::string_view ShortHash(std::string_view revision);           // after the last '-'
bool RevisionMatches(const pb::Pod& pod, std::string_view revision);   // revMatch(p, rev)
std::string_view InstanceId(const pb::Pod& pod);
std::string_view InstanceId(const pb::PersistentVolumeClaim& pvc);
std::string_view Label(const pb::ObjectMeta& meta, std::string_view key);       // "" if absent
std::string_view Annotation(const pb::ObjectMeta& meta, std::string_view key);  // "" if absent

}  // namespace cloneset::planner
