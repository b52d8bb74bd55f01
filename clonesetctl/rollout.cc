#include "clonesetctl/rollout.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/time_format.h"
#include "common/resources.h"
#include "planner/context.h"
#include "planner/context_builder.h"
#include "planner/predicates.h"
#include "planner/revision.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;

RolloutVerdict Waiting(std::string message) { return {RolloutState::kWaiting, std::move(message)}; }
RolloutVerdict Done(std::string message) { return {RolloutState::kDone, std::move(message)}; }
RolloutVerdict Failed(std::string message) { return {RolloutState::kFailed, std::move(message)}; }

const pb::Condition* Condition(const pb::CloneSetStatus& status, std::string_view type) {
  for (const pb::Condition& c : status.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

std::string Scalar(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Flattens `doc` into path -> scalar JSON text (objects and empty containers included as leaves when empty).
void Flatten(const Json& doc, const std::string& path, std::map<std::string, std::string>& out) {
  if (doc.is_object() && !doc.empty()) {
    for (const auto& [k, v] : doc.items()) Flatten(v, path.empty() ? k : absl::StrCat(path, ".", k), out);
    return;
  }
  if (doc.is_array() && !doc.empty()) {
    const bool by_name = std::all_of(doc.begin(), doc.end(), [](const Json& e) {
      return e.is_object() && e.contains("name") && e["name"].is_string();
    });
    for (size_t i = 0; i < doc.size(); ++i) {
      const std::string key = by_name ? absl::StrCat("[name=", doc[i]["name"].get<std::string>(), "]")
                                      : absl::StrCat("[", i, "]");
      Flatten(doc[i], path + key, out);
    }
    return;
  }
  out[path] = Scalar(doc);
}

// A small YAML rendering of a JSON document for people (kubectl's history shows the pod template).
void Yaml(const Json& doc, int indent, std::string& out) {
  const std::string pad(indent, ' ');
  if (doc.is_object()) {
    for (const auto& [k, v] : doc.items()) {
      if ((v.is_object() || v.is_array()) && !v.empty()) {
        absl::StrAppend(&out, pad, k, ":\n");
        Yaml(v, indent + 2, out);
      } else {
        absl::StrAppend(&out, pad, k, ": ", Scalar(v), "\n");
      }
    }
    return;
  }
  if (doc.is_array()) {
    for (const Json& e : doc) {
      if (e.is_object() && !e.empty()) {
        std::string inner;
        Yaml(e, indent + 2, inner);
        inner.replace(indent, 2, "- ");
        out += inner;
      } else {
        absl::StrAppend(&out, pad, "- ", Scalar(e), "\n");
      }
    }
    return;
  }
  absl::StrAppend(&out, pad, Scalar(doc), "\n");
}

std::string Quoted(const std::string& name) { return absl::StrCat("\"", name, "\""); }

}  // namespace

RolloutVerdict RolloutStatusMessage(const pb::CloneSet& cs, bool partition_ok, const pb::FeatureGates& gates) {
  const std::string name = Quoted(cs.metadata().name());
  auto resolved = planner::ResolveSpec(cs, gates);
  if (!resolved.ok()) return Failed(absl::StrCat("CloneSet ", name, " is invalid: ", resolved.status().message()));
  const pb::CloneSetStatus& st = cs.status();
  if (const pb::Condition* c = Condition(st, kInvalidCondition); c != nullptr && c->status() == "True") {
    return Failed(absl::StrCat("CloneSet ", name, " is invalid: ", c->message()));
  }
  if (cs.metadata().generation() > st.observed_generation()) {
    return Waiting("Waiting for CloneSet spec update to be observed...");
  }
  if (const pb::Condition* c = Condition(st, "Progressing");
      c != nullptr && c->reason() == kProgressDeadlineExceeded) {
    return Failed(absl::StrCat("CloneSet ", name, " exceeded its progress deadline"));
  }
  const int32_t replicas = resolved->replicas;
  const int32_t expected = resolved->expected_updated_replicas;
  const int32_t partition = replicas - expected;
  const int32_t updated = st.updated_replicas();
  const std::string waiting = absl::StrCat("Waiting for CloneSet ", name, " rollout to finish: ");
  const std::string paused =
      resolved->paused ? absl::StrCat(", paused (clonesetctl rollout resume ", cs.metadata().name(), ")") : "";
  if (updated < expected) {
    return Waiting(absl::StrCat(waiting, updated, " out of ", expected, " new replicas have been updated",
                                partition > 0 ? absl::StrCat(" (partition ", partition, ")") : "", paused, "..."));
  }
  const int32_t pending = std::max(st.replicas() - updated - partition, st.replicas() - replicas);
  if (pending > 0) {
    return Waiting(absl::StrCat(waiting, pending, " old replicas are pending termination", paused, "..."));
  }
  if (st.updated_available_replicas() < updated) {
    return Waiting(absl::StrCat(waiting, st.updated_available_replicas(), " of ", updated,
                                " updated replicas are available", paused, "..."));
  }
  if (partition > 0) {
    const std::string held =
        absl::StrCat("partition ", partition, " reached: ", updated, " of ", replicas, " updated, held by the partition");
    if (partition_ok) return Done(absl::StrCat("CloneSet ", name, " ", held));
    return Waiting(absl::StrCat(waiting, held, " (clonesetctl rollout next ", cs.metadata().name(),
                                ", or --partition-ok)..."));
  }
  return Done(absl::StrCat("CloneSet ", name, " successfully rolled out"));
}

std::vector<RevisionEntry> RevisionHistory(const std::vector<pb::ControllerRevision>& revisions) {
  std::vector<RevisionEntry> out;
  for (const pb::ControllerRevision& r : revisions) {
    RevisionEntry e;
    e.number = r.revision();
    e.name = r.metadata().name();
    e.change_cause = std::string(planner::Annotation(r.metadata(), kChangeCauseAnnotation));
    auto t = planner::TemplateFromRevisionData(r.data_json());
    if (t.ok()) e.template_json = *t;
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const RevisionEntry& a, const RevisionEntry& b) {
    return a.number != b.number ? a.number < b.number : a.name < b.name;
  });
  return out;
}

std::string RenderHistory(const std::string& name, const std::vector<RevisionEntry>& history) {
  std::string out = absl::StrCat("cloneset.apps.kruise.io/", name, "\n");
  if (history.empty()) return absl::StrCat(out, "No rollout history found.\n");
  absl::StrAppend(&out, absl::StrFormat("%-9s %s\n", "REVISION", "CHANGE-CAUSE"));
  for (const RevisionEntry& e : history) {
    absl::StrAppend(&out, absl::StrFormat("%-9d %s\n", e.number, e.change_cause.empty() ? "<none>" : e.change_cause));
  }
  return out;
}

std::vector<std::string> TemplateDiff(const Json& before, const Json& after) {
  std::map<std::string, std::string> a, b;
  Flatten(before, "", a);
  Flatten(after, "", b);
  std::vector<std::string> out;
  for (const auto& [path, value] : a) {
    auto it = b.find(path);
    if (it == b.end()) {
      out.push_back(absl::StrCat("- ", path, ": ", value));
    } else if (it->second != value) {
      out.push_back(absl::StrCat("~ ", path, ": ", value, " -> ", it->second));
    }
  }
  for (const auto& [path, value] : b) {
    if (!a.count(path)) out.push_back(absl::StrCat("+ ", path, ": ", value));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const std::string& x, const std::string& y) { return x.substr(2) < y.substr(2); });
  return out;
}

absl::StatusOr<std::string> RenderRevision(const std::string& name, const std::vector<RevisionEntry>& history,
                                           int64_t revision) {
  auto it = std::find_if(history.begin(), history.end(), [&](const RevisionEntry& e) { return e.number == revision; });
  if (it == history.end()) {
    return absl::NotFoundError(absl::StrCat("unable to find the specified revision ", revision, " in history"));
  }
  std::string out = absl::StrCat("cloneset.apps.kruise.io/", name, " with revision #", revision, "\n");
  if (!it->change_cause.empty()) absl::StrAppend(&out, "Change cause: ", it->change_cause, "\n");
  const Json tmpl = Json::parse(it->template_json, nullptr, false);
  if (tmpl.is_discarded()) return absl::StrCat(out, "Pod Template: (unreadable revision data)\n");
  absl::StrAppend(&out, "Pod Template:\n");
  Yaml(tmpl, 2, out);
  if (it == history.begin()) return out;
  const Json prev = Json::parse(std::prev(it)->template_json, nullptr, false);
  absl::StrAppend(&out, "Changes from revision #", std::prev(it)->number, ":\n");
  const std::vector<std::string> diff = TemplateDiff(prev.is_discarded() ? Json::object() : prev, tmpl);
  if (diff.empty()) absl::StrAppend(&out, "  (none)\n");
  for (const std::string& line : diff) absl::StrAppend(&out, "  ", line, "\n");
  return out;
}

absl::StatusOr<UndoDecision> UndoTo(const std::vector<RevisionEntry>& history,
                                    const std::string& current_template_json, int64_t to_revision) {
  if (history.empty()) return absl::FailedPreconditionError("no rollout history found");
  const RevisionEntry* target = nullptr;
  if (to_revision == 0) {
    if (history.size() < 2) return absl::FailedPreconditionError("no previous revision to roll back to");
    target = &history[history.size() - 2];
  } else {
    for (const RevisionEntry& e : history) {
      if (e.number == to_revision) target = &e;
    }
    if (target == nullptr) {
      return absl::NotFoundError(absl::StrCat("unable to find specified revision ", to_revision, " in history"));
    }
  }
  if (target->template_json.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("revision ", target->number, " (", target->name, ") holds no readable pod template"));
  }
  UndoDecision d;
  d.revision = target->number;
  d.template_json = target->template_json;
  auto want = planner::RevisionData(target->template_json);
  auto have = planner::RevisionData(current_template_json);
  d.skip = want.ok() && have.ok() && *want == *have;
  return d;
}

absl::Status SetPaused(Json& cs, bool paused) {
  const std::string name = cs["metadata"].value("name", "");
  Json& strategy = cs["spec"]["updateStrategy"];
  if (!strategy.is_object()) strategy = Json::object();
  const bool now = strategy.value("paused", false);
  if (now == paused) {
    return absl::FailedPreconditionError(
        absl::StrCat("clonesets.apps.kruise.io ", Quoted(name), " is ", paused ? "already paused" : "not paused"));
  }
  strategy["paused"] = paused;
  return absl::OkStatus();
}

absl::Status SetRestartedAt(Json& cs, absl::Time now) {
  const std::string name = cs["metadata"].value("name", "");
  const Json& strategy = cs["spec"].value("updateStrategy", Json::object());
  if (strategy.is_object() && strategy.value("paused", false)) {
    return absl::FailedPreconditionError(absl::StrCat("can't restart paused cloneset (run rollout resume first)"));
  }
  Json& meta = cs["spec"]["template"]["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (!meta["annotations"].is_object()) meta["annotations"] = Json::object();
  meta["annotations"][kRestartedAtAnnotation] = base::FormatTime(now);
  return absl::OkStatus();
}

absl::StatusOr<NextPartition> NextPartitionFor(const pb::CloneSet& cs, std::optional<int32_t> step,
                                               const pb::FeatureGates& gates) {
  if (step.has_value() && *step < 1) return absl::InvalidArgumentError("--step must be at least 1");
  auto resolved = planner::ResolveSpec(cs, gates);
  if (!resolved.ok()) return resolved.status();
  if (!resolved->rolling_update) {
    return absl::FailedPreconditionError(absl::StrCat("CloneSet ", Quoted(cs.metadata().name()),
                                                      " uses the OnDelete strategy: it has no partition"));
  }
  if (resolved->partition == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("CloneSet ", Quoted(cs.metadata().name()), " is not held by a partition (partition is 0)"));
  }
  const int32_t by = step.value_or(std::max(resolved->max_unavailable, 1));
  return NextPartition{resolved->partition, std::max(resolved->partition - by, 0)};
}

std::string RenderConditions(const pb::CloneSetStatus& status) {
  std::string out;
  for (const pb::Condition& c : status.conditions()) {
    absl::StrAppend(&out, "Condition ", c.type(), "=", c.status(), c.reason().empty() ? "" : " (" + c.reason() + ")",
                    c.message().empty() ? "" : ": " + c.message(), "\n");
  }
  return out;
}

std::vector<std::string> HoldReasons(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods, absl::Time now,
                                     const pb::FeatureGates& gates) {
  std::vector<std::string> out;
  auto resolved = planner::ResolveSpec(cs, gates);
  if (!resolved.ok()) return {absl::StrCat("invalid spec: ", resolved.status().message())};
  const std::string& name = cs.metadata().name();
  const std::string& update_revision = cs.status().update_revision();
  int updated = 0, unavailable = 0, active = 0;
  std::vector<std::string> hooked;
  std::vector<std::string> resizes;  // in-place resizes the kubelet holds back
  for (const pb::Pod& pod : pods) {
    if (!planner::IsActive(pod)) continue;
    ++active;
    if (const common::ResizeProgress p = common::PodResizeProgress(pod); p.state == common::ResizeState::kPending) {
      resizes.push_back(absl::StrCat(pod.metadata().name(), " (", p.reason, p.message.empty() ? "" : ": ", p.message,
                                     ")"));
    }
    if (!update_revision.empty() && planner::RevisionMatches(pod, update_revision)) ++updated;
    if (!planner::IsAvailable(pod, resolved->min_ready_seconds, now)) ++unavailable;
    const std::string_view state = planner::LifecycleState(pod);
    if (state == planner::kStatePreparingUpdate || state == planner::kStatePreparingDelete) {
      hooked.push_back(absl::StrCat(pod.metadata().name(), " (", std::string(state), ")"));
    }
  }
  if (resolved->paused) {
    out.push_back(absl::StrCat("paused: spec.updateStrategy.paused is true (clonesetctl rollout resume ", name, ")"));
  }
  if (resolved->rolling_update && resolved->partition > 0 && updated >= resolved->expected_updated_replicas) {
    out.push_back(absl::StrCat("partition ", resolved->partition, ": ", updated, " of ", resolved->replicas,
                               " pods updated, the partition keeps the other ", resolved->replicas - updated,
                               " (clonesetctl rollout next ", name, ")"));
  }
  if (resolved->rolling_update && updated < resolved->expected_updated_replicas && !resolved->paused &&
      unavailable >= resolved->max_unavailable + resolved->max_surge) {
    out.push_back(absl::StrCat("maxUnavailable budget spent: ", unavailable, " of ", active,
                               " pods unavailable, maxUnavailable ", resolved->max_unavailable));
  }
  if (!hooked.empty()) {
    out.push_back(absl::StrCat("lifecycle hook: ", absl::StrJoin(hooked, ", "),
                               " waiting for the hook's label to be cleared"));
  }
  if (!resizes.empty()) {
    out.push_back(absl::StrCat("in-place resize held back by the kubelet: ", absl::StrJoin(resizes, ", "),
                               " (Deferred: retried when the node has room; Infeasible: change the template)"));
  }
  return out;
}

}  // namespace cloneset::clonesetctl
