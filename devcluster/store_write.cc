// The store's writes: the commit that versions an object and records its event, create, and update over the
// current version as kube-apiserver's GuaranteedUpdate does it (decided outside the lock, committed inside).
#include "devcluster/store_state.h"

#include <algorithm>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "devcluster/object_meta.h"
#include "devcluster/pod_resize.h"
#include "devcluster/pvc_resize.h"
#include "devcluster/schema.h"
#include "devcluster/stored_object.h"
#include "devcluster/versions.h"

namespace cloneset::devcluster {

using store_internal::AdmitCustomResource;
using store_internal::ConflictMessage;
using store_internal::FindObject;
using store_internal::HasOwnerReferences;
using store_internal::Key;
using store_internal::NamespaceTerminating;
using store_internal::SameOwnerReferences;
using store_internal::TypeState;
using store_internal::ValidateMeta;
using store_internal::WarnAboutUnevaluatedRules;

absl::Status Store::State::CommitLocked(TypeState& ts, EventType type, nlohmann::json& object,
                                       ObjectPtr* stored) {
  int64_t rv = 0;
  absl::Status s = CommitPreparedLocked(ts, type, MakeUnversionedObject(object, ts.type.Id()), stored, &rv);
  if (s.ok()) object["metadata"]["resourceVersion"] = std::to_string(rv);
  return s;
}

absl::Status Store::State::CommitPreparedLocked(TypeState& ts, EventType type, UnversionedObject prepared,
                                               ObjectPtr* stored, int64_t* rv_out) {
  const std::string id = ts.type.Id();
  const int64_t rv = this->rv + 1;
  // etcd refuses larger requests, and past 2 MiB kube-apiserver's etcd client does not even send them; nothing is
  // committed, and the API answers 500 with the same messages.
  if (const size_t size = VersionedSize(prepared, rv); size > kMaxStoredObjectBytes) {
    // About what the etcd client would send: the value and its key.
    const size_t request = size + id.size() + prepared.object->ns.size() + prepared.object->name.size() + 16;
    if (request > kMaxEtcdClientMessageBytes)
      return absl::ResourceExhaustedError(
          absl::StrCat("rpc error: code = ResourceExhausted desc = trying to send message larger than max (", request,
                       " vs. ", kMaxEtcdClientMessageBytes, ")"));
    return absl::ResourceExhaustedError("etcdserver: request is too large");
  }
  this->rv = rv;
  *rv_out = rv;
  ObjectPtr obj = SetVersion(std::move(prepared), rv);
  if (stored) *stored = obj;
  const std::string key = Key(obj->ns, obj->name);
  ObjectPtr old;
  if (auto it = ts.objects.find(key); it != ts.objects.end()) old = it->second;
  if (options.journal) {
    absl::Status s = options.journal->Append({type == EventType::kDeleted, id, obj, rv});
    if (!s.ok()) return absl::InternalError(absl::StrCat("write-ahead log: ", s.message()));
  }
  if (type == EventType::kDeleted) {
    ts.objects.erase(key);
    IndexLocked(id, key, nullptr, old);
  } else {
    ts.objects[key] = obj;
    IndexLocked(id, key, obj, old);
  }
  ts.history.push_back({type, rv, obj, type == EventType::kModified ? old : nullptr});
  while (ts.history.size() > options.watch_history) {
    ts.floor_rv = ts.history.front().rv;
    ts.history.pop_front();
  }
  NotifyLocked(ts, id);
  if (id == kCustomResourceDefinitions) OnCrdChangeLocked(obj, type == EventType::kDeleted);
  return absl::OkStatus();
}

void Store::State::OnCrdChangeLocked(const ObjectPtr& obj, bool deleted) {
  auto parsed = ResourceTypeFromCrd(obj->Parse());
  if (!parsed.ok()) return;
  if (deleted) {
    auto it = types.find(parsed->Id());
    if (it == types.end() || !it->second->type.custom) return;
    auto ts = it->second;
    for (const auto& [key, o] : ts->objects) IndexLocked(ts->type.Id(), key, nullptr, o);
    ts->removed = true;
    NotifyLocked(*ts, it->first);
    types.erase(it);
    ++types_generation;
    return;
  }
  RegisterLocked(*parsed);
}

namespace {

// What a write of `incoming` over the current version `old` (parsed: `prev`) of an object of `type` makes, decided
// from those alone (no store state, no lock): the checks, defaults, generation and admission of an update, and the
// result serialized for the commit.
struct PreparedWrite {
  enum class Outcome { kCommit, kNoop, kDryRun } outcome = Outcome::kCommit;
  nlohmann::json next;        // the answer (kNoop: the stored object)
  UnversionedObject stored;   // kCommit: `next` serialized and indexed, without its resourceVersion
  bool finalize = false;      // the last finalizer of a deleting object went: remove it after the commit
  bool owners_changed = false;  // owner references added or changed: collect it if they dangle
};

// The type as the write's request sees it: in options.version (the storage version when empty). A type served in
// one version is itself (no copy on the hot path of pods); `holder` keeps another version's.
absl::StatusOr<const ResourceType*> RequestType(const ResourceType& type, const WriteOptions& options,
                                                std::optional<ResourceType>* holder) {
  if (options.version.empty() || options.version == type.version) return &type;
  *holder = type.InVersion(options.version);
  if (!*holder) return absl::NotFoundError(absl::StrCat("the server could not find the requested resource (", type.Id(),
                                                        " is not served in version ", options.version, ")"));
  return &**holder;
}

absl::StatusOr<PreparedWrite> PrepareWrite(const ResourceType& stored_type, const StoredObject& old,
                                           nlohmann::json prev, nlohmann::json incoming, bool status,
                                           const WriteOptions& options) {
  // Decided in the request's version, as kube-apiserver admits a write; stored in the storage version. `prev` is
  // converted first (it may also be stored in a version the CRD no longer stores in).
  std::optional<ResourceType> holder;
  absl::StatusOr<const ResourceType*> request_type = RequestType(stored_type, options, &holder);
  if (!request_type.ok()) return request_type.status();
  const ResourceType& type = **request_type;
  nlohmann::json stored_prev;  // multi-version types: prev as stored, which the no-op check compares with
  if (stored_type.MultiVersion()) {
    stored_prev = prev;
    absl::StatusOr<nlohmann::json> p = ConvertToVersion(stored_type, prev, type.version);
    if (!p.ok()) return p.status();
    prev = *std::move(p);
  }
  auto& meta = incoming["metadata"];
  const std::string name = meta["name"];
  if (auto rv = meta.find("resourceVersion");
      rv != meta.end() && rv->is_string() && !rv->get<std::string>().empty() &&
      rv->get<std::string>() != std::to_string(old.resource_version))
    return absl::AbortedError(ConflictMessage(type, name));
  if (auto uid = meta.find("uid"); uid != meta.end() && uid->is_string() && !uid->get<std::string>().empty() &&
                                   uid->get<std::string>() != old.uid)
    return absl::AbortedError(absl::StrCat("Precondition failed: UID in precondition: ", uid->get<std::string>(),
                                           ", UID in object meta: ", old.uid));
  if (absl::Status s = ValidateMeta(meta); !s.ok()) return s;
  PreparedWrite out;
  nlohmann::json& next = out.next;
  if (options.pod_resize && type.Id() == kPods && !status) {
    next = MergePodResize(prev, incoming);
    ApplyDefaults(type.Id(), next);
    if (absl::Status s = FieldErrorsStatus(ValidatePodResize(prev, next)); !s.ok()) return s;
    next["metadata"]["generation"] =
        prev["metadata"].value("generation", int64_t{1}) + (BumpsGeneration(type.Id(), prev, next) ? 1 : 0);
  } else if (status) {
    next = prev;
    if (incoming.contains("status")) next["status"] = std::move(incoming["status"]);
    else next.erase("status");
  } else {
    next = std::move(incoming);
    auto& nm = next["metadata"];
    const auto& om = prev["metadata"];
    for (const char* f : {"uid", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds",
                          "namespace", "name", "resourceVersion"}) {
      if (om.contains(f)) nm[f] = om[f];
      else nm.erase(f);
    }
    if (type.has_status) {
      if (prev.contains("status")) next["status"] = prev["status"];
      else next.erase("status");
    }
    // Fields the API server owns once set.
    for (const char* path : {".spec.clusterIP", ".spec.nodeName", ".spec.volumeName"})
      if (const auto* v = LookupPath(prev, path); v && !LookupPath(next, path)) SetPath(next, path, *v);
    if (type.Id() == kSecrets)
      if (absl::Status s = MergeSecretStringData(next); !s.ok()) return s;
    ApplyDefaults(type.Id(), next);
    if (absl::Status s = ValidateDataSize(type.Id(), next); !s.ok()) return s;
    if (type.Id() == kPods) {
      std::vector<FieldError> errors = ValidatePodUpdate(prev, next);
      if (!errors.empty()) {  // perhaps only defaults a pod stored by an earlier version lacks
        nlohmann::json defaulted = prev;
        ApplyDefaults(kPods, defaulted);
        errors = ValidatePodUpdate(defaulted, next);
      }
      if (absl::Status s = FieldErrorsStatus(errors); !s.ok()) return s;
    }
    if (type.Id() == kPersistentVolumeClaims) {
      static const std::vector<nlohmann::json> kNoClasses;
      if (absl::Status s = ValidatePvcStorageUpdate(prev, next, options.storage_classes.value_or(kNoClasses));
          !s.ok())
        return s;
    }
    next["metadata"]["generation"] =
        prev["metadata"].value("generation", int64_t{1}) + (BumpsGeneration(type.Id(), prev, next) ? 1 : 0);
  }
  next["apiVersion"] = type.ApiVersion();
  next["kind"] = type.kind;
  if (next["metadata"].contains("finalizers") && next["metadata"]["finalizers"].empty())
    next["metadata"].erase("finalizers");
  if (absl::Status s = AdmitCustomResource(type, next, &prev, options); !s.ok()) return s;
  if (type.Id() == kCustomResourceDefinitions) {
    auto t = ResourceTypeFromCrd(next);
    if (!t.ok()) return t.status();
    WarnAboutUnevaluatedRules(*t, options);
  }
  nlohmann::json to_store;
  if (stored_type.MultiVersion()) {
    absl::StatusOr<nlohmann::json> s = ConvertToVersion(stored_type, next, stored_type.version);
    if (!s.ok()) return s.status();
    to_store = *std::move(s);
  }
  nlohmann::json& written = stored_type.MultiVersion() ? to_store : next;
  if (written == (stored_type.MultiVersion() ? stored_prev : prev)) {  // no-op: no new resourceVersion, no event
    out.outcome = PreparedWrite::Outcome::kNoop;
    return out;
  }
  if (options.dry_run) {
    out.outcome = PreparedWrite::Outcome::kDryRun;
    return out;
  }
  out.finalize = old.deleting && (!next["metadata"].contains("finalizers"));
  // A reference added or changed may name an owner that does not exist (or no longer does).
  out.owners_changed = HasOwnerReferences(next) && !SameOwnerReferences(next, prev);
  out.stored = MakeUnversionedObject(written, type.Id());
  return out;
}

// Optimistic attempts of a write before the last one, which holds the store's lock throughout.
constexpr int kOptimisticAttempts = 8;

}  // namespace

absl::StatusOr<nlohmann::json> Store::State::GuaranteedWrite(
    std::string_view resource, bool status, const WriteOptions& options,
    const std::function<absl::StatusOr<std::pair<std::string, std::string>>(const ResourceType&)>& locate,
    const std::function<absl::StatusOr<nlohmann::json>(const ResourceType&, const StoredObject& current,
                                                       const nlohmann::json& parsed)>& incoming) {
  // Warnings of the attempt that counts only (an attempt that lost its race would repeat them).
  std::vector<std::string> warnings;
  WriteOptions attempt_options = options;
  attempt_options.warnings = options.warnings ? &warnings : nullptr;
  auto answer = [&](auto result) {
    if (options.warnings) options.warnings->insert(options.warnings->end(), warnings.begin(), warnings.end());
    return result;
  };
  for (int attempt = 1;; ++attempt) {
    const bool locked_throughout = attempt > kOptimisticAttempts;
    warnings.clear();
    std::unique_lock<std::mutex> l(mu);
    auto ts_or = TypeOr404(resource);
    if (!ts_or.ok()) return ts_or.status();
    std::shared_ptr<TypeState> ts = *std::move(ts_or);
    std::shared_ptr<const ResourceType> type = ts->shared_type;
    auto target = locate(*type);
    if (!target.ok()) return target.status();
    auto found = FindObject(*ts, target->first, target->second);
    if (!found.ok()) return found.status();
    const std::string key = (*found)->first;
    const ObjectPtr old = (*found)->second;
    const int64_t types_generation_seen = types_generation;
    if (!locked_throughout) l.unlock();
    nlohmann::json prev = old->Parse();
    // A Mutate callback edits the object in the request's version.
    absl::StatusOr<nlohmann::json> in;
    if (type->MultiVersion()) {
      absl::StatusOr<nlohmann::json> in_version =
          ConvertToVersion(*type, prev, options.version.empty() ? type->version : options.version);
      if (!in_version.ok()) return answer(in_version.status());
      in = incoming(*type, *old, *in_version);
    } else {
      in = incoming(*type, *old, prev);
    }
    if (!in.ok()) return answer(in.status());
    auto prepared = PrepareWrite(*type, *old, std::move(prev), *std::move(in), status, attempt_options);
    if (!prepared.ok()) return answer(prepared.status());
    if (prepared->outcome == PreparedWrite::Outcome::kNoop) {
      if (options.stored) *options.stored = old;
      return answer(std::move(prepared->next));
    }
    if (prepared->outcome == PreparedWrite::Outcome::kDryRun) return answer(std::move(prepared->next));
    if (!locked_throughout) {
      l.lock();
      auto now = ts->objects.find(key);
      // Another write got there first (or the type changed): decide again on what it left.
      if (types_generation != types_generation_seen || now == ts->objects.end() || now->second != old) continue;
    }
    int64_t rv = 0;
    if (absl::Status s = CommitPreparedLocked(*ts, EventType::kModified, std::move(prepared->stored), options.stored,
                                              &rv);
        !s.ok())
      return answer(s);
    nlohmann::json& next = prepared->next;
    next["metadata"]["resourceVersion"] = std::to_string(rv);
    if (prepared->finalize) RemoveLocked(*ts, key, 0);
    else if (prepared->owners_changed) CollectIfGarbageLocked(*ts, key, "", 0, &next);
    return answer(std::move(next));
  }
}


absl::StatusOr<nlohmann::json> Store::Create(std::string_view resource, nlohmann::json object,
                                             const WriteOptions& options) {
  if (!object.is_object()) return absl::InvalidArgumentError("body: Invalid value: must be an object");
  std::lock_guard<std::mutex> l(state_->mu);
  auto ts_or = state_->TypeOr404(resource);
  if (!ts_or.ok()) return ts_or.status();
  TypeState& ts = **ts_or;
  std::optional<ResourceType> holder;  // admitted in the request's version, stored converted
  absl::StatusOr<const ResourceType*> request_type = RequestType(ts.type, options, &holder);
  if (!request_type.ok()) return request_type.status();
  const ResourceType& type = **request_type;
  auto& meta = object["metadata"];
  if (meta.is_null()) meta = nlohmann::json::object();
  if (!meta.is_object()) return absl::InvalidArgumentError("metadata: Invalid value: must be an object");
  if (object.contains("apiVersion") && object["apiVersion"] != type.ApiVersion())
    return absl::FailedPreconditionError(absl::StrCat("the API version in the data (", object["apiVersion"].dump(),
                                                      ") does not match the expected API version (",
                                                      type.ApiVersion(), ")"));
  if (object.contains("kind") && object["kind"] != type.kind)
    return absl::FailedPreconditionError(absl::StrCat("the kind in the data (", object["kind"].dump(),
                                                      ") does not match the expected kind (", type.kind, ")"));
  object["apiVersion"] = type.ApiVersion();
  object["kind"] = type.kind;
  std::string ns;
  if (type.namespaced) {
    if (!meta.contains("namespace") || !meta["namespace"].is_string() || meta["namespace"].get<std::string>().empty())
      return absl::InvalidArgumentError("metadata.namespace: Required value");
    ns = meta["namespace"];
    auto nts = state_->FindLocked(kNamespaces);
    auto ns_it = nts->objects.find(Key("", ns));
    if (ns_it == nts->objects.end()) return absl::NotFoundError(absl::StrCat("namespaces \"", ns, "\" not found"));
    if (ns_it->second->deleting) return NamespaceTerminating(ns);
  } else {
    meta.erase("namespace");
  }
  std::string name = meta.contains("name") && meta["name"].is_string() ? meta["name"].get<std::string>() : "";
  if (name.empty()) {
    if (!meta.contains("generateName") || !meta["generateName"].is_string() ||
        meta["generateName"].get<std::string>().empty())
      return absl::InvalidArgumentError("metadata.name: Required value: name or generateName is required");
    std::string prefix = meta["generateName"];
    do name = prefix + RandomSuffix(state_->gen);
    while (ts.objects.count(Key(ns, name)));
    meta["name"] = name;
  }
  std::string why = type.Id() == kNamespaces ? ValidateDns1123Label(name) : ValidateDns1123Subdomain(name);
  if (!why.empty()) return absl::InvalidArgumentError(absl::StrCat("metadata.name: Invalid value: \"", name, "\": ", why));
  if (absl::Status s = ValidateMeta(meta); !s.ok()) return s;
  if (type.Id() == kCustomResourceDefinitions) {
    auto t = ResourceTypeFromCrd(object);
    if (!t.ok()) return t.status();
    WarnAboutUnevaluatedRules(*t, options);
    if (name != t->resource + "." + t->group)
      return absl::InvalidArgumentError(absl::StrCat("metadata.name: Invalid value: \"", name,
                                                     "\": must be spec.names.plural+\".\"+spec.group"));
    if (auto existing = state_->FindLocked(t->Id()); existing && !existing->type.custom)
      return absl::InvalidArgumentError(absl::StrCat("spec.group: Invalid value: \"", t->group, "\": conflicts with a built-in resource"));
  }
  if (ts.objects.count(Key(ns, name)))
    return absl::AlreadyExistsError(absl::StrCat(QualifiedName(type, name), " already exists"));
  meta["uid"] = NewUid(state_->gen);
  meta["creationTimestamp"] = base::FormatTime(absl::FromChrono(clock_->ChronoNow()));
  meta["generation"] = 1;
  for (const char* f : {"deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "selfLink"}) meta.erase(f);
  if (meta.contains("finalizers") && meta["finalizers"].empty()) meta.erase("finalizers");
  ResetStatusOnCreate(type, object);
  if (type.Id() == kSecrets)
    if (absl::Status s = MergeSecretStringData(object); !s.ok()) return s;
  ApplyDefaults(type.Id(), object);
  if (absl::Status s = ValidateDataSize(type.Id(), object); !s.ok()) return s;
  if (type.Id() == kPersistentVolumeClaims) {  // the StorageObjectInUseProtection admission plugin
    auto& f = meta["finalizers"];
    if (!f.is_array()) f = nlohmann::json::array();
    if (std::find(f.begin(), f.end(), nlohmann::json(kPvcProtectionFinalizer)) == f.end())
      f.push_back(kPvcProtectionFinalizer);
  }
  if (absl::Status s = AdmitCustomResource(type, object, nullptr, options); !s.ok()) return s;
  if (type.Id() == kPods) {
    if (absl::Status s = AdmitPodQuotaLocked(ns, object); !s.ok()) return s;
  }
  if (options.dry_run) return object;
  if (ts.type.MultiVersion()) {
    absl::StatusOr<nlohmann::json> stored = ConvertToVersion(ts.type, object, ts.type.version);
    if (!stored.ok()) return stored.status();
    if (absl::Status s = state_->CommitLocked(ts, EventType::kAdded, *stored, options.stored); !s.ok()) return s;
    if (HasOwnerReferences(*stored)) state_->CollectIfGarbageLocked(ts, Key(ns, name), "", 0, &*stored);
    return ConvertToVersion(ts.type, *stored, type.version);  // the answer, read back as the request's version
  }
  if (absl::Status s = state_->CommitLocked(ts, EventType::kAdded, object, options.stored); !s.ok()) return s;
  if (HasOwnerReferences(object)) state_->CollectIfGarbageLocked(ts, Key(ns, name), "", 0, &object);
  return object;
}

namespace {

// An Update's object names the object it replaces: checked before anything is looked up.
absl::StatusOr<std::pair<std::string, std::string>> UpdateTarget(const ResourceType& type,
                                                                 const nlohmann::json& incoming) {
  if (!incoming.is_object()) return absl::InvalidArgumentError("body: Invalid value: must be an object");
  auto meta = incoming.find("metadata");
  if (meta == incoming.end() || !meta->is_object()) return absl::InvalidArgumentError("metadata: Required value");
  auto name = meta->find("name");
  if (name == meta->end() || !name->is_string()) return absl::InvalidArgumentError("metadata.name: Required value");
  auto ns = meta->find("namespace");
  return std::pair<std::string, std::string>(
      type.namespaced && ns != meta->end() && ns->is_string() ? ns->get<std::string>() : "", name->get<std::string>());
}

}  // namespace

absl::StatusOr<nlohmann::json> Store::Update(std::string_view resource, nlohmann::json object,
                                             const WriteOptions& options) {
  return state_->GuaranteedWrite(
      resource, false, options, [&](const ResourceType& type) { return UpdateTarget(type, object); },
      [&](const ResourceType&, const StoredObject&, const nlohmann::json&) -> absl::StatusOr<nlohmann::json> {
        return object;  // a copy: an attempt that loses its race starts again from the request
      });
}

absl::StatusOr<nlohmann::json> Store::UpdateStatus(std::string_view resource, nlohmann::json object,
                                                   const WriteOptions& options) {
  return state_->GuaranteedWrite(
      resource, true, options, [&](const ResourceType& type) { return UpdateTarget(type, object); },
      [&](const ResourceType&, const StoredObject&, const nlohmann::json&) -> absl::StatusOr<nlohmann::json> {
        // A status write reads only the request's metadata (its preconditions) and status.
        nlohmann::json in = nlohmann::json::object();
        in["metadata"] = object["metadata"];
        if (auto st = object.find("status"); st != object.end()) in["status"] = *st;
        return in;
      });
}

absl::StatusOr<nlohmann::json> Store::Mutate(std::string_view resource, std::string_view ns, std::string_view name,
                                             bool status,
                                             const std::function<absl::Status(nlohmann::json&)>& mutate,
                                             const WriteOptions& options) {
  return state_->GuaranteedWrite(
      resource, status, options,
      [&](const ResourceType&) { return std::pair<std::string, std::string>(ns, name); },
      [&](const ResourceType& type, const StoredObject& current,
          const nlohmann::json& parsed) -> absl::StatusOr<nlohmann::json> {
        nlohmann::json j = parsed;
        if (absl::Status s = mutate(j); !s.ok()) return s;
        if (!j.is_object()) return absl::InvalidArgumentError("body: Invalid value: must be an object");
        if (!j["metadata"].is_object()) j["metadata"] = nlohmann::json::object();
        j["metadata"]["name"] = current.name;
        if (type.namespaced) j["metadata"]["namespace"] = current.ns;
        return j;
      });
}


}  // namespace cloneset::devcluster
