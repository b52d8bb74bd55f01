// Shapes of the objects the planner asks to create (semantics §1.5): pods and their PVCs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "planner/context.h"

namespace cloneset::planner {

struct NewPod {
  std::string pod_json;
  std::vector<std::string> pvc_jsons;    // only PVCs that do not exist yet
  std::vector<std::string> claim_names;  // every claim the pod mounts, in claim template order
  // Volumes the template's containers use that neither the template nor a claim template defines (an older
  // revision's template using a claim template removed since): each gets an emptyDir in the pod (semantics §1.5).
  std::vector<std::string> stand_in_volumes;
};

// The name of the claim that claim template `vct` gives the pod with `instance_id`: <vct>-<cs>-<id>.
std::string ClaimName(std::string_view vct, std::string_view cs_name, std::string_view instance_id);

// The names of the CloneSet's volumeClaimTemplates, in order; errors name the template that is not a JSON object
// or has no name.
absl::StatusOr<std::vector<std::string>> ClaimTemplateNames(const pb::CloneSet& cs);

// Builds the pods of one revision. Only the instance id differs between the pods of a plan, so the template and
// the volume claim templates are parsed and the documents serialized once (Create), with the places of the id cut
// out; Build joins the pieces around the id. A scale-out of 10 000 pods costs one parse and one dump, not 10 000.
class PodFactory {
 public:
  // Errors name the template that is not a JSON object or the claim template without a name.
  static absl::StatusOr<PodFactory> Create(const PlanContext& ctx, const std::string& template_json,
                                           const std::string& revision);

  // Pod `<cs>-<id>` with those of its PVCs that do not exist yet; byte-identical to assembling it from scratch.
  NewPod Build(const std::string& instance_id) const;

  // NewPod::stand_in_volumes, the same for every pod of the factory.
  const std::vector<std::string>& stand_in_volumes() const { return stand_in_volumes_; }

 private:
  // A serialized document with the instance id cut out: the id goes between consecutive pieces.
  struct Pieces {
    std::vector<std::string> parts;
    std::string Join(std::string_view escaped_id) const;
  };

  PodFactory() = default;

  const PlanContext* ctx_ = nullptr;
  std::string template_json_;  // for the fallback when the documents cannot be cut (see Create)
  std::string revision_;
  bool cut_ = false;
  std::string cs_name_;
  std::vector<std::string> vct_names_;                   // claim name = <vct>-<cs>-<id>
  std::vector<std::string> stand_in_volumes_;
  absl::flat_hash_set<std::string_view> existing_pvcs_;  // PVC names, pointing into the request
  Pieces pod_;
  std::vector<Pieces> pvcs_;  // one per volume claim template
};

// Builds pod `<cs>-<id>` at `revision` from `template_json`, with its missing PVCs.
absl::StatusOr<NewPod> BuildPod(const PlanContext& ctx, const std::string& template_json,
                                const std::string& revision, const std::string& instance_id);

}  // namespace cloneset::planner
