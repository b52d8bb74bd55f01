#include "clonesetctl/simulate.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/message_differencer.h"
#include "kruise/keys.h"
#include "nlohmann/json.hpp"
#include "planapi/request.h"
#include "planner/plan.h"
#include "planner/predicates.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;

// The simulation's epoch; only differences are ever shown.
absl::Time Epoch() { return absl::FromUnixSeconds(1767225600); }  // 2026-01-01T00:00:00Z

Json IntOrPercent(const std::string& value) {
  int n = 0;
  if (absl::SimpleAtoi(value, &n)) return n;
  return value;
}

std::string Show(const Json& v) { return v.is_null() ? "unset" : v.is_string() ? v.get<std::string>() : v.dump(); }

absl::Status ValidateCloneSet(const pb::CloneSet& cs, const pb::CloneSet* old) {
  pb::ValidateRequest req;
  *req.mutable_clone_set() = cs;
  if (old != nullptr) *req.mutable_old() = *old;
  auto resp = planner::Validate(req);
  if (!resp.ok()) return resp.status();
  if (resp->errors_size() == 0) return absl::OkStatus();
  std::vector<std::string> lines;
  for (const pb::FieldError& e : resp->errors()) lines.push_back(absl::StrCat(e.field(), ": ", e.message()));
  return absl::InvalidArgumentError(absl::StrCat("invalid CloneSet: ", absl::StrJoin(lines, "; ")));
}

std::string Strategy(const pb::CloneSet& cs) {
  const pb::UpdateStrategy& u = cs.spec().update_strategy();
  auto ios = [](const pb::IntOrString& v, const char* unset) -> std::string {
    switch (v.value_case()) {
      case pb::IntOrString::kIntValue: return std::to_string(v.int_value());
      case pb::IntOrString::kStrValue: return v.str_value();
      default: return unset;
    }
  };
  std::string s = absl::StrCat(u.type().empty() ? "ReCreate" : u.type(), ", maxUnavailable ",
                               ios(u.max_unavailable(), "20%"), ", maxSurge ", ios(u.max_surge(), "0"),
                               ", partition ", ios(u.partition(), "0"));
  if (u.paused()) absl::StrAppend(&s, ", paused");
  return s;
}

struct RunState {
  absl::Time now;
  pb::PlanSummary last_summary;
  std::set<std::string> warnings;
  std::vector<std::string> warning_list;
};

// Plans and applies until nothing changes any more. Records steps (relative to `start`) into `result` when set.
absl::Status RunUntilSettled(SimCluster& cluster, RunState& st, absl::Time start, absl::Duration limit,
                             SimulateResult* result, bool* timed_out) {
  using google::protobuf::util::MessageDifferencer;
  int same_instant = 0;
  int idle_wakeups = 0;
  absl::Time last_change = st.now;
  *timed_out = false;
  auto track_peaks = [&] {
    if (result == nullptr) return;
    const PodCounts c = cluster.Counts(st.now);
    result->peak_unavailable = std::max(result->peak_unavailable, c.unavailable);
    result->peak_surge = std::max(result->peak_surge, c.surge);
  };
  while (true) {
    absl::StatusOr<bool> advanced = cluster.Advance(st.now);
    if (!advanced.ok()) return advanced.status();
    if (*advanced) {
      last_change = st.now;
      idle_wakeups = 0;
    }
    track_peaks();
    // Asked and read as the executor asks and reads (planapi/request.h), of the planner in this process.
    planapi::RequestWithPods snapshot = cluster.Snapshot(st.now);
    auto plan = planapi::RequestPlan(snapshot, [](const pb::PlanRequest& request) { return planner::Plan(request); });
    if (!plan.ok()) return plan.status();
    st.last_summary = plan->summary();
    for (const pb::Event& e : plan->events()) {
      const std::string line = absl::StrCat(e.reason(), ": ", e.message());
      if (e.type() == pb::WARNING && st.warnings.insert(line).second) st.warning_list.push_back(line);
    }
    const bool status_changes =
        plan->write_status() && !MessageDifferencer::Equals(plan->status(), cluster.clone_set().status());
    if (plan->actions_size() > 0 || status_changes) {
      if (++same_instant > 200) {
        return absl::InternalError(absl::StrCat("the plan does not settle at +", absl::FormatDuration(st.now - start),
                                                " (phase ", plan->summary().phase(), ")"));
      }
      const AppliedPlan applied = cluster.Apply(*plan, st.now);
      last_change = st.now;
      idle_wakeups = 0;
      if (result != nullptr) {
        result->writes += applied.writes;
        if (!applied.created.empty() || !applied.deleted.empty() || !applied.updated_in_place.empty() ||
            !applied.lifecycle.empty()) {
          std::string phase = plan->summary().phase();
          if (phase.empty()) {
            phase = !applied.created.empty()           ? "create"
                    : !applied.deleted.empty()          ? "delete"
                    : !applied.updated_in_place.empty() ? "update"
                                                        : "lifecycle";
          }
          result->steps.push_back(TimelineStep{st.now - start, phase, applied.created,
                                               applied.deleted, applied.updated_in_place, applied.lifecycle,
                                               cluster.Counts(st.now)});
        }
      }
      track_peaks();
      continue;
    }
    same_instant = 0;
    std::optional<absl::Time> next = cluster.NextTransition(st.now);
    if (plan->has_requeue_after()) {
      const absl::Duration d = absl::Seconds(plan->requeue_after().seconds()) +
                               absl::Nanoseconds(plan->requeue_after().nanos());
      if (d > absl::ZeroDuration() && (!next || st.now + d < *next)) next = st.now + d;
    }
    if (!next) break;
    if (++idle_wakeups > 3 && !cluster.NextTransition(st.now)) break;  // only timers that change nothing
    if (*next - start > limit) {
      *timed_out = true;
      break;
    }
    st.now = *next;
  }
  if (result != nullptr) result->duration = last_change - start;
  return absl::OkStatus();
}

absl::StatusOr<std::string> FindCloneSet(const std::string& yaml) {
  auto docs = snapshot::YamlDocumentsToJson(yaml);
  if (!docs.ok()) return absl::InvalidArgumentError(absl::StrCat("manifest: ", docs.status().message()));
  for (const std::string& doc : *docs) {
    Json j = Json::parse(doc, nullptr, false);
    if (j.is_object() && j.value("kind", "") == "CloneSet") return doc;
  }
  return absl::InvalidArgumentError("manifest: no document of kind CloneSet");
}

}  // namespace

absl::StatusOr<std::string> ApplySets(const std::string& clone_set_json, const std::vector<std::string>& sets,
                                      std::vector<std::string>* changes) {
  Json doc = Json::parse(clone_set_json, nullptr, false);
  if (!doc.is_object()) return absl::InvalidArgumentError("CloneSet: expected a JSON object");
  const bool beta = doc.value("apiVersion", "") == kruise::kV1beta1;
  for (const std::string& set : sets) {
    std::pair<std::string, std::string> kv = absl::StrSplit(set, absl::MaxSplits('=', 1));
    const auto& [key, value] = kv;
    if (set.find('=') == std::string::npos || value.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--set ", set, ": expected key=value"));
    }
    Json* target = nullptr;
    Json new_value = value;
    if (key == "image" || key.rfind("image.", 0) == 0) {
      Json& containers = doc["spec"]["template"]["spec"]["containers"];
      if (!containers.is_array() || containers.empty()) {
        return absl::InvalidArgumentError("--set image: spec.template.spec.containers is empty");
      }
      if (key == "image") {
        target = &containers[0]["image"];
      } else {
        const std::string name = key.substr(6);
        for (Json& c : containers) {
          if (c.value("name", "") == name) target = &c["image"];
        }
        if (target == nullptr) {
          return absl::InvalidArgumentError(absl::StrCat("--set ", key, ": no container named ", name));
        }
      }
    } else if (key == "replicas" || key == "minReadySeconds") {
      int n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < 0) {
        return absl::InvalidArgumentError(absl::StrCat("--set ", key, ": expected a non-negative integer"));
      }
      target = &doc["spec"][key];
      new_value = n;
    } else if (key == "partition" || key == "maxUnavailable" || key == "maxSurge" || key == "paused") {
      Json& strategy = beta ? doc["spec"]["updateStrategy"]["rollingUpdate"] : doc["spec"]["updateStrategy"];
      target = &strategy[key];
      if (key == "paused") {
        if (value != "true" && value != "false") {
          return absl::InvalidArgumentError("--set paused: expected true or false");
        }
        new_value = value == "true";
      } else {
        new_value = IntOrPercent(value);
      }
    } else if (key == "type") {
      target = beta ? &doc["spec"]["updateStrategy"]["rollingUpdate"]["podUpdatePolicy"]
                    : &doc["spec"]["updateStrategy"]["type"];
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "--set ", key, ": unknown key (known: image, image.<container>, replicas, partition, maxUnavailable, "
          "maxSurge, paused, type, minReadySeconds)"));
    }
    if (changes != nullptr) changes->push_back(absl::StrCat(key, ": ", Show(*target), " -> ", Show(new_value)));
    *target = new_value;
  }
  return doc.dump();
}

absl::StatusOr<SimulateResult> Simulate(const SimulateInput& input) {
  auto original = FindCloneSet(input.manifest_yaml);
  if (!original.ok()) return original.status();
  SimulateResult result;
  auto updated_json = ApplySets(*original, input.sets, &result.changes);
  if (!updated_json.ok()) return updated_json.status();

  SimOptions warmup_options = input.options;
  SimCluster cluster(input.options, Epoch());
  RunState st;
  st.now = Epoch();
  if (absl::Status s = cluster.ApplyCloneSet(*original, st.now); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("invalid CloneSet: ", s.message()));
  }
  if (absl::Status s = ValidateCloneSet(cluster.clone_set(), nullptr); !s.ok()) return s;
  result.name = cluster.clone_set().metadata().name();
  result.namespace_ = cluster.clone_set().metadata().namespace_();
  bool timed_out = false;
  absl::Time start = st.now;
  if (!input.sets.empty()) {
    // Warm-up: the steady state at the old template, without start failures.
    warmup_options.fail_rate = 0;
    SimCluster steady(warmup_options, Epoch());
    if (absl::Status s = steady.ApplyCloneSet(*original, st.now); !s.ok()) return s;
    SimulateResult ignored;
    if (absl::Status s = RunUntilSettled(steady, st, st.now, input.max_duration, &ignored, &timed_out); !s.ok()) {
      return s;
    }
    const PodCounts c = steady.Counts(st.now);
    if (timed_out || c.available != c.desired || c.updated != c.desired) {
      std::vector<std::string> why(st.last_summary.blocked_reasons().begin(), st.last_summary.blocked_reasons().end());
      return absl::FailedPreconditionError(absl::StrCat(
          "the manifest as written never reaches a steady state (", c.available, "/", c.desired, " available)",
          why.empty() ? "" : absl::StrCat(": ", absl::StrJoin(why, "; "))));
    }
    cluster = std::move(steady);
    result.from_revision = cluster.clone_set().status().update_revision();
    const pb::CloneSet old = cluster.clone_set();
    if (absl::Status s = cluster.ApplyCloneSet(*updated_json, st.now); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid CloneSet after --set: ", s.message()));
    }
    if (absl::Status s = ValidateCloneSet(cluster.clone_set(), &old); !s.ok()) return s;
    cluster.set_fail_rate(input.options.fail_rate);  // failures start with the rollout
    start = st.now;
  }
  result.strategy = Strategy(cluster.clone_set());
  st.warnings.clear();
  st.warning_list.clear();
  if (absl::Status s = RunUntilSettled(cluster, st, start, input.max_duration, &result, &timed_out); !s.ok()) {
    return s;
  }
  result.to_revision = cluster.clone_set().status().update_revision();
  result.final_counts = cluster.Counts(st.now);
  result.warnings = st.warning_list;
  const PodCounts& c = result.final_counts;
  const pb::CloneSetStatus& status = cluster.clone_set().status();
  const bool all_available = c.available == c.desired && c.pods == c.desired;
  if (all_available && c.updated == c.desired) {
    result.outcome = "complete";
  } else if (all_available && c.updated == status.expected_updated_replicas() && c.updated < c.desired) {
    result.outcome = "partition";
    result.reasons.push_back(absl::StrCat("partition keeps ", c.desired - c.updated, " of ", c.desired,
                                          " pods at the old revision"));
  } else {
    result.outcome = "stalled";
  }
  for (const std::string& r : st.last_summary.blocked_reasons()) {
    if (result.outcome != "complete") result.reasons.push_back(r);
  }
  if (result.outcome == "stalled") {
    if (cluster.failed_starts() > 0) {
      result.reasons.push_back(absl::StrCat(cluster.failed_starts(),
                                            " pods never became ready (simulated start failures, --fail-rate)"));
    }
    if (timed_out) {
      result.reasons.push_back(absl::StrCat("still changing after ", absl::FormatDuration(input.max_duration)));
    }
    if (result.reasons.empty()) {
      result.reasons.push_back(absl::StrCat(c.available, " of ", c.desired, " pods available, ", c.updated,
                                            " updated; nothing more happens"));
    }
  }
  return result;
}

}  // namespace cloneset::clonesetctl
