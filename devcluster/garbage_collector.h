// The decisions kube-controller-manager's garbage collector makes for one object
// (pkg/controller/garbagecollector, attemptToDeleteItem / classifyReferences / isDangling), as pure
// functions of the object and of what the cluster holds under its owner references' coordinates.
//
// The store (store_gc.cc) applies them synchronously, under its lock, right after the commit that can make a
// reference dangling (create, or an update/patch that changes ownerReferences) and for the dependents of a
// removed owner, instead of from an asynchronous work queue: same outcome, no window in which the object
// is visible with dangling owners only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "devcluster/store_types.h"

namespace cloneset::devcluster {

struct OwnerReference {
  std::string api_version, kind, name, uid;  // empty when absent or not a string
};
// metadata.ownerReferences of a wire object as it is on the wire (any JSON type), or null when absent.
const nlohmann::json* OwnerReferencesJson(const nlohmann::json& object);
// metadata.ownerReferences of a wire object; entries that are not objects are skipped.
std::vector<OwnerReference> OwnerReferencesOf(const nlohmann::json& object);

// What the cluster holds; implemented by the store over its own state, by a table in tests.
class OwnerLookup {
 public:
  virtual ~OwnerLookup() = default;
  // nullopt when the cluster does not serve apiVersion/kind, else whether that kind is namespaced.
  virtual std::optional<bool> KindNamespaced(std::string_view api_version, std::string_view kind) const = 0;
  struct Owner {
    std::string uid;
    bool waiting_for_dependents = false;  // deletionTimestamp set and the foregroundDeletion finalizer
  };
  // The object of that kind named `name` in namespace `ns` ("" for cluster-scoped kinds), if any.
  virtual std::optional<Owner> Find(std::string_view api_version, std::string_view kind, std::string_view ns,
                                    std::string_view name) const = 0;
};

enum class OwnerStatus {
  kSolid,                 // the owner exists with the referenced uid
  kDangling,              // no such owner, or one with another uid (deleted and recreated under the same name)
  kWaitingForDependents,  // the owner exists but is being deleted in the foreground
  // The reference cannot be resolved: a kind the cluster does not serve (upstream: a RESTMapper error, logged and
  // retried, the object stays), a reference without apiVersion/kind/name, or a cluster-scoped dependent naming a
  // namespaced owner kind (upstream: namespacedOwnerOfClusterScopedObjectErr, never retried).
  kUnresolvable,
};

// A namespaced owner is looked up in the dependent's namespace (owner references have no namespace; an owner in
// another namespace is absent), a cluster-scoped one cluster-wide.
OwnerStatus ClassifyOwner(const OwnerReference& ref, std::string_view dependent_ns, const OwnerLookup& lookup);

struct GcSubject {
  bool deleting = false;  // metadata.deletionTimestamp is set: a one-way trip the collector leaves alone
  std::vector<std::string> finalizers;
  bool has_dependents = false;
};

struct GcDecision {
  enum class Action { kKeep, kRemoveReferences, kDelete };
  Action action = Action::kKeep;
  std::vector<std::string> remove_uids;                // kRemoveReferences: the dangling and waiting owners' uids
  Propagation propagation = Propagation::kBackground;  // kDelete
};

// `statuses[i]` classifies `refs[i]`. Upstream's order: any unresolvable reference keeps the object as it is; a
// solid owner keeps it and strips the dangling and waiting references; an owner waiting for its dependents gets
// this one deleted in the foreground when it has dependents of its own; otherwise it is deleted with the
// propagation its finalizers ask for ("orphan", "foregroundDeletion"), background by default.
GcDecision DecideCollection(const GcSubject& subject, const std::vector<OwnerReference>& refs,
                            const std::vector<OwnerStatus>& statuses);

}  // namespace cloneset::devcluster
