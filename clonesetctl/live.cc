#include "clonesetctl/live.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/resources.h"
#include "nlohmann/json.hpp"
#include "planner/client/grpc_planner_client.h"
#include "planner/context.h"
#include "planner/predicates.h"
#include "snapshot/snapshot.h"
#include "clonesetctl/rollout.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;

bool OwnedBy(const pb::ObjectMeta& meta, const std::string& uid) {
  return std::any_of(meta.owner_references().begin(), meta.owner_references().end(),
                     [&](const pb::OwnerReference& o) { return o.uid() == uid; });
}

absl::Status Reachable(const absl::Status& s, const std::string& server) {
  if (absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) {
    return absl::UnavailableError(absl::StrCat("cannot reach the cluster at ", server, ": ", s.message()));
  }
  return s;
}

// Every item of a LIST response, as compact JSON.
absl::StatusOr<std::vector<std::string>> Items(kube::RestClient& client, const std::string& server,
                                               const std::string& path) {
  auto body = client.List(path, {});
  if (!body.ok()) return Reachable(body.status(), server);
  Json doc = Json::parse(*body, nullptr, false);
  if (!doc.is_object() || !doc["items"].is_array()) {
    return absl::InternalError(absl::StrCat(path, ": response is not a list"));
  }
  std::vector<std::string> items;
  for (const Json& item : doc["items"]) items.push_back(item.dump());
  return items;
}

std::string ShortRevision(const pb::Pod& pod) {
  return std::string(planner::ShortHash(planner::Label(pod.metadata(), planner::kRevisionLabel)));
}

std::string Bar(int done, int total, int width) {
  if (total <= 0) return std::string(width, '.');
  const int filled = std::clamp(done * width / total, 0, width);
  return std::string(filled, '#') + std::string(width - filled, '.');
}

// Every StorageClass the client may read; none when it may not (the planner then expands no claim).
std::vector<pb::StorageClass> StorageClasses(kube::RestClient& client, const std::string& server) {
  std::vector<pb::StorageClass> out;
  if (auto listed = Items(client, server, "/apis/storage.k8s.io/v1/storageclasses"); listed.ok()) {
    for (const std::string& item : *listed) {
      if (auto sc = snapshot::StorageClassFromJson(item); sc.ok()) out.push_back(*std::move(sc));
    }
  }
  return out;
}

// "data-cs-a", or "data-cs-a (expanding to 20Gi)" while the claim's request is above its capacity.
std::string ClaimCell(const pb::PersistentVolumeClaim& pvc) {
  if (pvc.storage_capacity().empty() || pvc.storage_request().empty()) return pvc.metadata().name();
  absl::StatusOr<__int128> want = common::QuantityNanos(pvc.storage_request());
  absl::StatusOr<__int128> have = common::QuantityNanos(pvc.storage_capacity());
  if (!want.ok() || !have.ok() || *want <= *have) return pvc.metadata().name();
  return absl::StrCat(pvc.metadata().name(), " (expanding to ", pvc.storage_request(), ")");
}

}  // namespace

absl::StatusOr<LiveCloneSet> FetchCloneSet(kube::RestClient& client, const std::string& server,
                                           const std::string& ns, const std::string& name) {
  LiveCloneSet live;
  auto body = client.Get(absl::StrCat("/apis/apps.kruise.io/v1alpha1/namespaces/", ns, "/clonesets/", name));
  if (absl::IsNotFound(body.status())) {
    return absl::NotFoundError(absl::StrCat("CloneSet ", ns, "/", name, " not found"));
  }
  if (!body.ok()) return Reachable(body.status(), server);
  auto cs = snapshot::CloneSetFromJson(*body);
  if (!cs.ok()) return cs.status();
  live.clone_set = *std::move(cs);
  const std::string& uid = live.clone_set.metadata().uid();

  auto pods = Items(client, server, absl::StrCat("/api/v1/namespaces/", ns, "/pods"));
  if (!pods.ok()) return pods.status();
  for (const std::string& item : *pods) {
    auto pod = snapshot::PodFromJson(item);
    if (pod.ok() && OwnedBy(pod->metadata(), uid)) live.pods.push_back(*std::move(pod));
  }
  std::sort(live.pods.begin(), live.pods.end(),
            [](const pb::Pod& a, const pb::Pod& b) { return a.metadata().name() < b.metadata().name(); });
  auto pvcs = Items(client, server, absl::StrCat("/api/v1/namespaces/", ns, "/persistentvolumeclaims"));
  if (!pvcs.ok()) return pvcs.status();
  for (const std::string& item : *pvcs) {
    auto pvc = snapshot::PvcFromJson(item);
    if (pvc.ok() && OwnedBy(pvc->metadata(), uid)) live.pvcs.push_back(*std::move(pvc));
  }
  auto revs = Items(client, server, absl::StrCat("/apis/apps/v1/namespaces/", ns, "/controllerrevisions"));
  if (!revs.ok()) return revs.status();
  for (const std::string& item : *revs) {
    auto rev = snapshot::RevisionFromJson(item);
    if (rev.ok() && OwnedBy(rev->metadata(), uid)) live.revisions.push_back(*std::move(rev));
  }
  auto nodes = Items(client, server, "/api/v1/nodes");
  if (nodes.ok()) {
    for (const std::string& item : *nodes) {
      auto node = snapshot::NodeFromJson(item);
      if (node.ok()) live.nodes.push_back(*std::move(node));
    }
  }
  live.storage_classes = StorageClasses(client, server);
  return live;
}

absl::StatusOr<std::vector<LiveCloneSet>> FetchCloneSets(kube::RestClient& client, const std::string& server,
                                                         const std::string& ns, const std::string& api_version) {
  const std::string in = ns.empty() ? "" : absl::StrCat("/namespaces/", ns);
  auto sets = Items(client, server, absl::StrCat("/apis/", api_version, in, "/clonesets"));
  if (!sets.ok()) return sets.status();
  std::vector<LiveCloneSet> out;
  std::map<std::string, size_t> by_uid;
  for (const std::string& item : *sets) {
    auto cs = snapshot::CloneSetFromJson(item);
    if (!cs.ok()) {
      const Json doc = Json::parse(item, nullptr, false);
      const std::string what = doc.is_object() ? absl::StrCat(doc["metadata"].value("namespace", ""), "/",
                                                              doc["metadata"].value("name", "?"))
                                               : "?";
      return absl::Status(cs.status().code(), absl::StrCat("CloneSet ", what, ": ", cs.status().message()));
    }
    by_uid[cs->metadata().uid()] = out.size();
    out.push_back(LiveCloneSet{*std::move(cs), {}, {}, {}, {}, {}});
  }
  if (out.empty()) return out;
  // One list per kind for every CloneSet at once, each object given to the CloneSet its owner reference names.
  auto owner = [&](const pb::ObjectMeta& meta) -> LiveCloneSet* {
    for (const pb::OwnerReference& o : meta.owner_references()) {
      if (auto it = by_uid.find(o.uid()); it != by_uid.end()) return &out[it->second];
    }
    return nullptr;
  };
  auto pods = Items(client, server, absl::StrCat("/api/v1", in, "/pods"));
  if (!pods.ok()) return pods.status();
  for (const std::string& item : *pods) {
    auto pod = snapshot::PodFromJson(item);
    if (!pod.ok()) continue;
    if (LiveCloneSet* live = owner(pod->metadata())) live->pods.push_back(*std::move(pod));
  }
  auto pvcs = Items(client, server, absl::StrCat("/api/v1", in, "/persistentvolumeclaims"));
  if (!pvcs.ok()) return pvcs.status();
  for (const std::string& item : *pvcs) {
    auto pvc = snapshot::PvcFromJson(item);
    if (!pvc.ok()) continue;
    if (LiveCloneSet* live = owner(pvc->metadata())) live->pvcs.push_back(*std::move(pvc));
  }
  auto revs = Items(client, server, absl::StrCat("/apis/apps/v1", in, "/controllerrevisions"));
  if (!revs.ok()) return revs.status();
  for (const std::string& item : *revs) {
    auto rev = snapshot::RevisionFromJson(item);
    if (!rev.ok()) continue;
    if (LiveCloneSet* live = owner(rev->metadata())) live->revisions.push_back(*std::move(rev));
  }
  std::vector<pb::Node> nodes;
  if (auto listed = Items(client, server, "/api/v1/nodes"); listed.ok()) {
    for (const std::string& item : *listed) {
      if (auto node = snapshot::NodeFromJson(item); node.ok()) nodes.push_back(*std::move(node));
    }
  }
  const std::vector<pb::StorageClass> classes = StorageClasses(client, server);
  for (LiveCloneSet& live : out) {
    std::sort(live.pods.begin(), live.pods.end(),
              [](const pb::Pod& a, const pb::Pod& b) { return a.metadata().name() < b.metadata().name(); });
    live.nodes = nodes;
    live.storage_classes = classes;
  }
  return out;
}

std::string RenderStatus(const LiveCloneSet& live, absl::Time now) {
  const pb::CloneSet& cs = live.clone_set;
  const pb::CloneSetStatus& st = cs.status();
  const int desired = cs.spec().has_replicas() ? cs.spec().replicas() : 1;
  int updated = 0, ready = 0, available = 0, active = 0;
  for (const pb::Pod& pod : live.pods) {
    if (!planner::IsActive(pod)) continue;
    ++active;
    if (planner::RevisionMatches(pod, st.update_revision())) ++updated;
    if (planner::IsK8sReady(pod)) ++ready;
    if (planner::IsAvailable(pod, cs.spec().min_ready_seconds(), now)) ++available;
  }
  std::string out = absl::StrFormat(
      "CloneSet %s/%s  generation %d (observed %d)  update revision %s (current %s)\n",
      cs.metadata().namespace_(), cs.metadata().name(), cs.metadata().generation(), st.observed_generation(),
      st.update_revision().empty() ? "-" : st.update_revision(),
      st.current_revision().empty() ? "-" : st.current_revision());
  const pb::UpdateStrategy& u = cs.spec().update_strategy();
  auto ios = [](const pb::IntOrString& v, const char* unset) -> std::string {
    if (v.value_case() == pb::IntOrString::kIntValue) return std::to_string(v.int_value());
    if (v.value_case() == pb::IntOrString::kStrValue) return v.str_value();
    return unset;
  };
  absl::StrAppend(&out, absl::StrFormat("strategy %s  maxUnavailable %s  maxSurge %s  partition %s%s\n",
                                        u.type().empty() ? "ReCreate" : u.type(), ios(u.max_unavailable(), "20%"),
                                        ios(u.max_surge(), "0"), ios(u.partition(), "0"),
                                        u.paused() ? "  PAUSED" : ""));
  absl::StrAppend(&out, absl::StrFormat("updated [%s] %d/%d   ready [%s] %d/%d   available %d/%d   pods %d\n",
                                        Bar(updated, desired, 20), updated, desired, Bar(ready, desired, 20), ready,
                                        desired, available, desired, active));
  absl::StrAppend(&out, absl::StrFormat("%-28s %-18s %-12s %-16s %-6s %-8s %s\n", "POD", "NODE", "REVISION",
                                        "LIFECYCLE", "READY", "RESTARTS", "PVC"));
  for (const pb::Pod& pod : live.pods) {
    int restarts = 0, containers_ready = 0;
    for (const pb::ContainerStatus& c : pod.container_statuses()) {
      restarts += c.restart_count();
      containers_ready += c.ready() ? 1 : 0;
    }
    std::vector<std::string> claims;
    for (const pb::PersistentVolumeClaim& pvc : live.pvcs) {
      if (!planner::InstanceId(pvc).empty() && planner::InstanceId(pvc) == planner::InstanceId(pod)) {
        claims.push_back(ClaimCell(pvc));
      }
    }
    std::string state(planner::LifecycleState(pod));
    if (planner::IsSet(pod.metadata().deletion_timestamp())) state = "Terminating";
    absl::StrAppend(&out, absl::StrFormat("%-28s %-18s %-12s %-16s %-6s %-8d %s\n", pod.metadata().name(),
                                          pod.node_name().empty() ? "-" : pod.node_name(),
                                          ShortRevision(pod).empty() ? "-" : ShortRevision(pod),
                                          state.empty() ? "-" : state,
                                          absl::StrCat(containers_ready, "/", pod.containers_size()), restarts,
                                          claims.empty() ? "-" : absl::StrJoin(claims, ",")));
  }
  absl::StrAppend(&out, RenderConditions(st));
  return out;
}

absl::StatusOr<pb::PlanResponse> AskPlanner(const std::string& address, planapi::RequestWithPods snapshot,
                                            absl::Duration deadline) {
  // One call: no health probe (no thread), and nothing tracks the planner's reachability.
  planner::client::GrpcPlannerOptions options;
  options.address = address;
  options.deadline = deadline;
  auto client = planner::client::NewGrpcPlannerClient(options);
  if (!client.ok()) return client.status();
  absl::StatusOr<pb::PlanResponse> plan = planapi::RequestPlan(
      snapshot, [&](const pb::PlanRequest& request) { return (*client)->Plan(request); });
  if (plan.ok()) return plan;
  const absl::Status& s = plan.status();
  if (absl::IsUnavailable(s) || absl::IsDeadlineExceeded(s)) {
    return absl::UnavailableError(absl::StrCat("planner at ", address, " is unreachable: ", s.message()));
  }
  return absl::Status(s.code(), absl::StrCat("planner at ", address, ": ", s.message()));
}

planapi::RequestWithPods PlanRequestFor(const LiveCloneSet& live, absl::Time now, const pb::FeatureGates& gates) {
  // The executor's cache answers for the nodes it can read among those asked; here every node was listed.
  const planapi::NodeLookup nodes = [&live](const std::vector<std::string>& names) {
    std::vector<pb::Node> out;
    for (const std::string& name : names) {
      for (const pb::Node& n : live.nodes) {
        if (n.name() == name) out.push_back(n);
      }
    }
    return out;
  };
  planapi::RequestWithPods snapshot = planapi::AssembleRequest(
      live.clone_set, {live.pods, live.pvcs, live.revisions}, nodes, now, planapi::RequestOptions{.feature_gates = gates});
  planapi::SetStorageClasses(live.storage_classes, &snapshot.request);
  return snapshot;
}

std::string DescribeAction(const pb::Action& a) {
  std::string line;
  switch (a.kind_case()) {
    case pb::Action::kCreateRevision: line = "create ControllerRevision"; break;
    case pb::Action::kUpdateRevision: line = "update ControllerRevision " + a.update_revision().name(); break;
    case pb::Action::kDeleteRevision: line = "delete ControllerRevision " + a.delete_revision().name(); break;
    case pb::Action::kCreatePod: {
      Json pod = Json::parse(a.create_pod().pod_json(), nullptr, false);
      line = absl::StrFormat("create pod %s (revision %s, batch %d%s)",
                             pod.is_object() ? pod["metadata"].value("name", "?") : "?", a.create_pod().revision(),
                             a.create_pod().batch(),
                             a.create_pod().pvc_jsons().empty()
                                 ? ""
                                 : absl::StrCat(", ", a.create_pod().pvc_jsons_size(), " new PVC"));
      break;
    }
    case pb::Action::kDeletePod:
      line = absl::StrCat("delete pod ", a.delete_pod().name(),
                          a.delete_pod().pvc_names().empty()
                              ? ""
                              : absl::StrCat(" and PVC ", absl::StrJoin(a.delete_pod().pvc_names(), ",")));
      break;
    case pb::Action::kPatchPod: {
      const pb::PatchPod& p = a.patch_pod();
      std::vector<std::string> what;
      for (const auto& [c, img] : p.container_images()) what.push_back(absl::StrCat("image ", c, "=", img));
      for (const auto& [k, v] : p.set_labels()) what.push_back(absl::StrCat("label ", k, "=", v));
      for (const auto& k : p.remove_labels()) what.push_back(absl::StrCat("remove label ", k));
      for (const auto& f : p.add_finalizers()) what.push_back(absl::StrCat("finalizer +", f));
      for (const auto& f : p.remove_finalizers()) what.push_back(absl::StrCat("finalizer -", f));
      if (!p.set_annotations().empty() || !p.remove_annotations().empty()) what.push_back("annotations");
      line = absl::StrCat("patch pod ", p.name(), " (", p.purpose(), "): ", absl::StrJoin(what, ", "));
      break;
    }
    case pb::Action::kPatchPodStatus: {
      std::vector<std::string> conds;
      for (const auto& c : a.patch_pod_status().set_conditions()) conds.push_back(c.type() + "=" + c.status());
      line = absl::StrCat("patch pod ", a.patch_pod_status().name(), " status (", a.patch_pod_status().purpose(),
                          "): ", absl::StrJoin(conds, ", "));
      break;
    }
    case pb::Action::kResizePod: {
      std::vector<std::string> what;
      for (const auto& c : a.resize_pod().containers()) {
        for (const auto& [list, values] : {std::pair{"requests", &c.requests()}, std::pair{"limits", &c.limits()}}) {
          std::vector<std::pair<std::string, std::string>> sorted(values->begin(), values->end());
          std::sort(sorted.begin(), sorted.end());
          for (const auto& [k, v] : sorted) what.push_back(absl::StrCat(c.name(), " ", list, ".", k, "=", v));
        }
      }
      line = absl::StrCat("resize pod ", a.resize_pod().name(), " (", a.resize_pod().purpose(), "): ",
                          absl::StrJoin(what, ", "));
      break;
    }
    case pb::Action::kDeletePvc: line = "delete PVC " + a.delete_pvc().name(); break;
    case pb::Action::kCreatePvc: {
      Json pvc = Json::parse(a.create_pvc().pvc_json(), nullptr, false);
      line = absl::StrCat("create missing PVC ", pvc.is_object() ? pvc["metadata"].value("name", "?") : "?",
                          " of pod ", a.create_pvc().pod_name());
      break;
    }
    case pb::Action::kUpdatePvcOwner: line = "move owner of PVC " + a.update_pvc_owner().name(); break;
    case pb::Action::kExpandPvc:
      line = absl::StrCat("expand PVC ", a.expand_pvc().name(), " of pod ", a.expand_pvc().pod_name(), " to ",
                          a.expand_pvc().storage());
      break;
    case pb::Action::kPatchCloneSet:
      line = absl::StrCat("patch CloneSet (", a.patch_clone_set().purpose(), "): ",
                          a.patch_clone_set().merge_patch_json());
      break;
    case pb::Action::kCreateImagePullJob: line = "create ImagePullJob"; break;
    case pb::Action::kDeleteImagePullJob: line = "delete ImagePullJob " + a.delete_image_pull_job().name(); break;
    case pb::Action::kStartInPlaceUpdates:  // not after AskPlanner (planapi::RequestPlan expands batches)
      line = absl::StrCat("start in-place updates of ", a.start_in_place_updates().targets_size(), " pods");
      break;
    case pb::Action::KIND_NOT_SET: line = "(empty action)"; break;
  }
  return line;
}

std::string RenderPlan(const LiveCloneSet& live, const pb::PlanResponse& plan) {
  const pb::PlanSummary& s = plan.summary();
  std::string out = absl::StrFormat("Plan for CloneSet %s/%s: phase %s, update revision %s (current %s)\n",
                                    live.clone_set.metadata().namespace_(), live.clone_set.metadata().name(),
                                    s.phase().empty() ? "-" : s.phase(), plan.update_revision(),
                                    plan.current_revision());
  if (plan.actions().empty()) absl::StrAppend(&out, "No actions: nothing to do now.\n");
  int i = 0;
  for (const pb::Action& a : plan.actions()) {
    absl::StrAppend(&out, absl::StrFormat("%3d. %s\n", ++i, DescribeAction(a)));
  }
  absl::StrAppend(&out, absl::StrFormat(
                            "Summary: scale up %d (limited to %d), scale down %d, update %d (starting now %d, "
                            "budget %d), surge %d\n",
                            s.scale_up(), s.scale_up_limited_to(), s.scale_down(), s.update_num(), s.updated_now(),
                            s.update_max_unavailable(), s.use_surge()));
  for (const std::string& r : s.blocked_reasons()) absl::StrAppend(&out, "Blocked: ", r, "\n");
  if (plan.write_status()) {
    absl::StrAppend(&out, absl::StrFormat("Status write: replicas %d, ready %d, updated %d, updatedReady %d\n",
                                          plan.status().replicas(), plan.status().ready_replicas(),
                                          plan.status().updated_replicas(), plan.status().updated_ready_replicas()));
  }
  for (const pb::Event& e : plan.events()) {
    absl::StrAppend(&out, "Event: ", e.type() == pb::WARNING ? "Warning " : "Normal ", e.reason(), ": ",
                    e.message(), "\n");
  }
  if (plan.has_requeue_after() && plan.requeue_after().seconds() + plan.requeue_after().nanos() > 0) {
    absl::StrAppend(&out, "Requeue after ", plan.requeue_after().seconds(), "s\n");
  }
  return out;
}

absl::StatusOr<std::string> PlannerAddress(const std::string& flag, const std::string& env) {
  if (!flag.empty()) return flag;
  if (!env.empty()) return env;
  return absl::InvalidArgumentError(
      "plan needs the planner's address: --planner HOST:PORT, or CLONESET_PLANNER in the environment");
}

}  // namespace cloneset::clonesetctl
