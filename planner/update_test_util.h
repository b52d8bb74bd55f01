// Helpers shared by the update-stage tests (lifecycle_test, update_test, predownload_test): a scenario that
// owns its request and context, and a compact one-line rendering of plan actions for exact expectations.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "planner/context.h"
#include "planner/plan_builder.h"
#include "planner/revision.h"
#include "planner/testing/fixtures.h"

namespace cloneset::planner::update_testing {

namespace t = ::cloneset::planner::testing;

struct Scenario {
  pb::PlanRequest request;
  PlanContext ctx;
  PlanBuilder plan;
};

// Revisions cs-1 (nginx:1.25, current) and cs-2 (nginx:1.26, update) unless the caller passes others.
inline std::unique_ptr<Scenario> MakeScenario(const pb::CloneSet& cs, const std::vector<pb::Pod>& pods,
                                              const ResolvedSpec& spec,
                                              const std::vector<pb::PersistentVolumeClaim>& pvcs = {},
                                              std::vector<pb::ControllerRevision> revisions = {},
                                              const std::string& current = "cs-1",
                                              const std::string& update = "cs-2") {
  if (revisions.empty()) {
    revisions = {t::RevisionBuilder("cs-1", 1).Template(t::TemplateJson("nginx:1.25")),
                 t::RevisionBuilder("cs-2", 2).Template(t::TemplateJson("nginx:1.26"))};
  }
  auto s = std::make_unique<Scenario>();
  s->request = t::Request(cs, pods, pvcs, revisions);
  s->ctx = t::MakeContext(s->request, spec, current, update);
  for (const pb::ControllerRevision* r : s->ctx.revisions) {
    // The fixture stores canonical revision data; take each template back out for the context.
    absl::StatusOr<std::string> tmpl = TemplateFromRevisionData(r->data_json());
    if (!tmpl.ok()) continue;
    if (r->metadata().name() == current) s->ctx.current_template_json = *tmpl;
    if (r->metadata().name() == update) s->ctx.update_template_json = *tmpl;
  }
  return s;
}

inline std::string Join(const google::protobuf::Map<std::string, std::string>& m, bool values = true) {
  std::map<std::string, std::string> sorted(m.begin(), m.end());
  std::vector<std::string> parts;
  for (const auto& [k, v] : sorted) parts.push_back(values ? absl::StrCat(k, "=", v) : k);
  return absl::StrJoin(parts, ",");
}

template <typename List>
std::string JoinList(const List& list) {
  std::vector<std::string> parts(list.begin(), list.end());
  return absl::StrJoin(parts, ",");
}

// "patch cs-a in-place-update labels=a=1 rm-labels=x images=main=nginx ann=k1,k2 rm-ann=k3 fin+=f fin-=g"
inline std::string Describe(const pb::Action& a) {
  std::string out;
  if (a.has_patch_pod()) {
    const pb::PatchPod& p = a.patch_pod();
    out = absl::StrCat("patch ", p.name(), " ", p.purpose());
    if (!p.set_labels().empty()) absl::StrAppend(&out, " labels=", Join(p.set_labels()));
    if (!p.remove_labels().empty()) absl::StrAppend(&out, " rm-labels=", JoinList(p.remove_labels()));
    if (!p.container_images().empty()) absl::StrAppend(&out, " images=", Join(p.container_images()));
    if (!p.set_annotations().empty()) absl::StrAppend(&out, " ann=", Join(p.set_annotations(), false));
    if (!p.remove_annotations().empty()) absl::StrAppend(&out, " rm-ann=", JoinList(p.remove_annotations()));
    if (!p.add_finalizers().empty()) absl::StrAppend(&out, " fin+=", JoinList(p.add_finalizers()));
    if (!p.remove_finalizers().empty()) absl::StrAppend(&out, " fin-=", JoinList(p.remove_finalizers()));
  } else if (a.has_patch_pod_status()) {
    const pb::PatchPodStatus& p = a.patch_pod_status();
    out = absl::StrCat("status ", p.name(), " ", p.purpose());
    for (const pb::Condition& c : p.set_conditions()) {
      absl::StrAppend(&out, " ", c.type(), "=", c.status(), c.reason().empty() ? "" : "/", c.reason());
    }
  } else if (a.has_delete_pod()) {
    out = absl::StrCat("delete ", a.delete_pod().name(), " pvcs=", JoinList(a.delete_pod().pvc_names()));
  } else if (a.has_update_revision()) {
    out = absl::StrCat("label-revision ", a.update_revision().name(), " ", Join(a.update_revision().set_labels()));
  } else if (a.has_create_image_pull_job()) {
    out = "create-job";
  } else if (a.has_delete_image_pull_job()) {
    out = absl::StrCat("delete-job ", a.delete_image_pull_job().name());
  } else {
    out = "other";
  }
  return out;
}

inline std::vector<std::string> Describe(const PlanBuilder& plan) {
  std::vector<std::string> out;
  for (const pb::Action& a : const_cast<PlanBuilder&>(plan).response()->actions()) out.push_back(Describe(a));
  return out;
}

inline std::vector<std::string> Events(const PlanBuilder& plan) {
  std::vector<std::string> out;
  for (const pb::Event& e : const_cast<PlanBuilder&>(plan).response()->events()) {
    out.push_back(absl::StrCat(e.type() == pb::WARNING ? "Warning " : "Normal ", e.reason(), ": ", e.message()));
  }
  return out;
}

}  // namespace cloneset::planner::update_testing
