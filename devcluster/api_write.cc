// Mutating verbs of ApiServer: create, update, patch, delete, deletecollection, binding.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "devcluster/api_server.h"
#include "devcluster/codec.h"
#include "devcluster/k8s_protobuf.h"
#include "devcluster/object_meta.h"
#include "kube/object_patch.h"
#include "devcluster/versions.h"

namespace cloneset::devcluster {

using nlohmann::json;

namespace {

// The answer to a write: the stored object's serialized form when the store handed it back (saves
// serializing the same object a second time on the hot write path), else the returned object.
ApiResponse Written(int status, const json& object, const ObjectPtr& stored) {
  if (!stored) return JsonResponse(status, object);
  ApiResponse r;
  r.status = status;
  r.body = stored->json;
  return r;
}

std::string MediaType(const std::string& content_type) {
  std::string t = content_type.substr(0, content_type.find(';'));
  return absl::AsciiStrToLower(absl::StripAsciiWhitespace(t));
}

bool DryRun(const ApiRequest& req) { return req.Query("dryRun") == "All"; }

// The write options of a create/update/patch: dry run, and fieldValidation (Ignore, Warn, Strict; Warn when
// absent, as kube-apiserver) whose warnings go to the response, and the route's version for a type served in
// several. Nullopt when fieldValidation is not one of those.
std::optional<WriteOptions> WriteOptionsFor(const ApiRequest& req, const ResourceType& type, ApiResponse* response) {
  WriteOptions wo{.dry_run = DryRun(req)};
  if (type.MultiVersion()) wo.version = type.version;
  std::string v = req.Query("fieldValidation");
  if (!v.empty() && v != "Ignore" && v != "Warn" && v != "Strict") return std::nullopt;
  if (!v.empty()) wo.field_validation = v;
  wo.warnings = &response->warnings;
  return wo;
}

// A claim's update is admitted against the StorageClasses as they are now (kube-apiserver's resize admission reads
// them from its informer); read before the write, so the store decides without reading another type.
void AddStorageClasses(const Store& store, const ApiServer::Route& route, WriteOptions& wo) {
  if (route.type.Id() != kPersistentVolumeClaims || !route.subresource.empty()) return;
  auto listed = store.List(kStorageClasses, ListOptions{});
  if (!listed.ok()) return;
  std::vector<json> classes;
  for (const ObjectPtr& sc : listed->items) classes.push_back(sc->Parse());
  wo.storage_classes = std::move(classes);
}

ApiResponse BadFieldValidation(const ApiRequest& req) {
  return StatusError(400, "BadRequest",
                     absl::StrCat("fieldValidation: Unsupported value: \"", req.Query("fieldValidation"),
                                  "\": supported values: \"Ignore\", \"Strict\", \"Warn\""));
}

// Moves the warnings gathered while writing onto the final response.
ApiResponse WithWarnings(ApiResponse r, std::vector<std::string>& warnings) {
  r.warnings = std::move(warnings);
  return r;
}

ApiResponse Unsupported(const std::string& media, const std::string& accepted) {
  return StatusError(415, "UnsupportedMediaType",
                     absl::StrCat("the body of the request was in an unknown format - accepted media types include: ",
                                  accepted));
}

constexpr char kObjectMedia[] = "application/json, application/yaml, application/vnd.kubernetes.protobuf";

// Decodes a create/update body; on failure `error` holds the Status response.
std::optional<json> DecodeBody(const ApiRequest& req, ApiResponse* error) {
  std::string type = MediaType(req.Header("content-type"));
  absl::StatusOr<json> parsed;
  if (req.body.empty()) {
    *error = StatusError(400, "BadRequest", "the request body is empty");
    return std::nullopt;
  }
  if (type.empty() || type == "application/json") {
    parsed = ParseJson(req.body);
  } else if (type == "application/yaml" || type == "application/x-yaml" || type == "text/yaml") {
    parsed = ParseYaml(req.body);
  } else if (type == kKubernetesProtobufMediaType) {
    parsed = DecodeKubernetesProtobuf(req.body);
    if (absl::IsUnimplemented(parsed.status())) {
      *error = StatusError(415, "UnsupportedMediaType", std::string(parsed.status().message()));
      return std::nullopt;
    }
  } else {
    *error = Unsupported(type, kObjectMedia);
    return std::nullopt;
  }
  if (!parsed.ok()) {
    *error = StatusError(400, "BadRequest", std::string(parsed.status().message()));
    return std::nullopt;
  }
  if (!parsed->is_object()) {
    *error = StatusError(400, "BadRequest", "the request body must be a JSON or YAML object");
    return std::nullopt;
  }
  return std::move(*parsed);
}

// Fills metadata.namespace from the URL; a conflicting one is a 400 like kube-apiserver's.
std::optional<ApiResponse> FillNamespace(json& obj, const ResourceType& type, const std::string& ns) {
  if (!type.namespaced) return std::nullopt;
  if (!obj["metadata"].is_object()) obj["metadata"] = json::object();
  auto& meta = obj["metadata"];
  if (meta.contains("namespace") && meta["namespace"].is_string() && !meta["namespace"].get<std::string>().empty() &&
      meta["namespace"] != ns)
    return StatusError(400, "BadRequest",
                       "the namespace of the provided object does not match the namespace sent on the request");
  meta["namespace"] = ns;
  return std::nullopt;
}

std::string NameOf(const json& obj) {
  if (obj.contains("metadata") && obj["metadata"].is_object() && obj["metadata"].contains("name") &&
      obj["metadata"]["name"].is_string())
    return obj["metadata"]["name"];
  return "";
}

// A deleted object (or the Status a delete answers) in the request's version.
absl::StatusOr<json> InRequestVersion(const ResourceType& t, json answer) {
  if (!t.MultiVersion() || answer.value("kind", "") != t.kind) return answer;
  return ConvertToVersion(t, answer, t.version);
}

absl::Status ApplyScale(const ResourceType& t, json& object, const json& scale) {
  const json* replicas = LookupPath(scale, ".spec.replicas");
  if (!replicas || !replicas->is_number_integer())
    return absl::InvalidArgumentError("spec.replicas: Invalid value: must be an integer");
  if (replicas->get<int64_t>() < 0)
    return absl::InvalidArgumentError(
        absl::StrCat("spec.replicas: Invalid value: ", replicas->dump(), ": must be greater than or equal to 0"));
  SetPath(object, t.scale_spec_path, *replicas);
  return absl::OkStatus();
}

}  // namespace

ApiResponse ApiServer::Create(const ApiRequest& req, const Route& route) {
  ApiResponse error;
  auto obj = DecodeBody(req, &error);
  if (!obj) return error;
  if (auto e = FillNamespace(*obj, route.type, route.ns)) return std::move(*e);
  std::string name = NameOf(*obj);
  ObjectPtr stored;
  ApiResponse collect;
  auto wo = WriteOptionsFor(req, route.type, &collect);
  if (!wo) return BadFieldValidation(req);
  // The stored serialization is the answer only when the type is stored in the request's version.
  if (!route.type.MultiVersion()) wo->stored = &stored;
  auto created = store_->Create(route.type.Id(), std::move(*obj), *wo);
  if (!created.ok()) return FromStatus(created.status(), &route.type, name);
  return WithWarnings(Written(201, *created, stored), collect.warnings);
}

ApiResponse ApiServer::Update(const ApiRequest& req, const Route& route) {
  ApiResponse error;
  auto obj = DecodeBody(req, &error);
  if (!obj) return error;
  ApiResponse collect;
  auto wo_or = WriteOptionsFor(req, route.type, &collect);
  if (!wo_or) return BadFieldValidation(req);
  WriteOptions wo = *wo_or;
  if (route.subresource == "scale") {
    json scale = std::move(*obj);
    std::string rv = LookupPath(scale, ".metadata.resourceVersion") && scale["metadata"]["resourceVersion"].is_string()
                         ? scale["metadata"]["resourceVersion"].get<std::string>()
                         : "";
    auto r = store_->Mutate(
        route.type.Id(), route.ns, route.name, false,
        [&](json& o) {
          if (!rv.empty()) o["metadata"]["resourceVersion"] = rv;
          return ApplyScale(route.type, o, scale);
        },
        wo);
    if (!r.ok()) return FromStatus(r.status(), &route.type, route.name);
    return JsonResponse(200, ScaleOf(route.type, *r));
  }
  if (auto e = FillNamespace(*obj, route.type, route.ns)) return std::move(*e);
  // A body of another version than the URL's is refused as kube-apiserver's decoder refuses it (a type served in
  // several versions would otherwise take one version's object for another's).
  if (auto v = obj->find("apiVersion"); v != obj->end() && *v != route.type.ApiVersion())
    return StatusError(400, "BadRequest",
                       absl::StrCat("the API version in the data (", v->dump(), ") does not match the expected API "
                                    "version (", route.type.ApiVersion(), ")"));
  std::string name = NameOf(*obj);
  if (name.empty()) (*obj)["metadata"]["name"] = name = route.name;
  if (name != route.name)
    return StatusError(400, "BadRequest",
                       absl::StrCat("the name of the object (", name, ") does not match the name on the URL (",
                                    route.name, ")"));
  ObjectPtr stored;
  if (!route.type.MultiVersion()) wo.stored = &stored;
  wo.pod_resize = route.subresource == "resize";
  AddStorageClasses(*store_, route, wo);
  auto r = route.subresource == "status" ? store_->UpdateStatus(route.type.Id(), std::move(*obj), wo)
                                         : store_->Update(route.type.Id(), std::move(*obj), wo);
  if (!r.ok()) return FromStatus(r.status(), &route.type, route.name);
  return WithWarnings(Written(200, *r, stored), collect.warnings);
}

ApiResponse ApiServer::Patch(const ApiRequest& req, const Route& route) {
  std::string media = MediaType(req.Header("content-type"));
  const bool builtin = !route.type.custom;
  const std::string accepted = builtin ? "application/json-patch+json, application/merge-patch+json, "
                                         "application/strategic-merge-patch+json, application/apply-patch+yaml"
                                       : "application/json-patch+json, application/merge-patch+json, "
                                         "application/apply-patch+yaml";
  enum class Kind { kMerge, kJson, kStrategic, kApply } kind;
  if (media == "application/merge-patch+json") kind = Kind::kMerge;
  else if (media == "application/json-patch+json") kind = Kind::kJson;
  else if (media == "application/strategic-merge-patch+json" && (builtin || route.subresource == "scale")) kind = Kind::kStrategic;
  else if (media == "application/apply-patch+yaml") kind = Kind::kApply;
  else return Unsupported(media, accepted);
  if (req.body.empty()) return StatusError(400, "BadRequest", "the request body is empty");
  auto patch = kind == Kind::kApply ? ParseYaml(req.body) : ParseJson(req.body);
  if (!patch.ok()) return StatusError(400, "BadRequest", std::string(patch.status().message()));
  if (kind != Kind::kJson && !patch->is_object())
    return StatusError(400, "BadRequest", "the patch must be a JSON object");
  ApiResponse collect;
  auto wo_or = WriteOptionsFor(req, route.type, &collect);
  if (!wo_or) return BadFieldValidation(req);
  WriteOptions wo = *wo_or;
  auto apply = [&](const json& target) -> absl::StatusOr<json> {
    switch (kind) {
      case Kind::kMerge:
      case Kind::kApply: return kube::ApplyMergePatch(target, *patch);
      case Kind::kJson: return kube::ApplyJsonPatch(target, *patch);
      case Kind::kStrategic: return kube::ApplyStrategicMergePatch(target, *patch, route.type.kind);
    }
    return absl::InternalError("unknown patch type");
  };
  if (kind == Kind::kApply && route.subresource.empty() &&
      !store_->GetStored(route.type.Id(), route.ns, route.name).ok()) {
    // Server-side apply of an absent object creates it.
    json obj = *patch;
    if (auto e = FillNamespace(obj, route.type, route.ns)) return std::move(*e);
    if (NameOf(obj).empty()) obj["metadata"]["name"] = route.name;
    auto created = store_->Create(route.type.Id(), std::move(obj), wo);
    if (!created.ok()) return FromStatus(created.status(), &route.type, route.name);
    return WithWarnings(JsonResponse(201, *created), collect.warnings);
  }
  bool status_only = route.subresource == "status";
  wo.pod_resize = route.subresource == "resize";
  AddStorageClasses(*store_, route, wo);
  ObjectPtr stored;
  if (route.subresource != "scale" && !route.type.MultiVersion()) wo.stored = &stored;
  auto r = store_->Mutate(
      route.type.Id(), route.ns, route.name, status_only,
      [&](json& o) -> absl::Status {
        if (route.subresource == "scale") {
          auto scale = apply(ScaleOf(route.type, o));
          if (!scale.ok()) return scale.status();
          if (const json* rv = LookupPath(*scale, ".metadata.resourceVersion"); rv && rv->is_string())
            o["metadata"]["resourceVersion"] = *rv;
          return ApplyScale(route.type, o, *scale);
        }
        auto next = apply(o);
        if (!next.ok()) return next.status();
        if (!next->is_object()) return absl::FailedPreconditionError("the patched object must be a JSON object");
        o = std::move(*next);
        return absl::OkStatus();
      },
      wo);
  if (!r.ok()) return FromStatus(r.status(), &route.type, route.name);
  if (route.subresource == "scale") return WithWarnings(JsonResponse(200, ScaleOf(route.type, *r)), collect.warnings);
  return WithWarnings(Written(200, *r, stored), collect.warnings);
}

ApiResponse ApiServer::Delete(const ApiRequest& req, const Route& route) {
  DeleteOptions o;
  json body = json::object();
  if (!req.body.empty()) {
    auto parsed = ParseJson(req.body);
    if (!parsed.ok()) return StatusError(400, "BadRequest", std::string(parsed.status().message()));
    if (!parsed->is_object()) return StatusError(400, "BadRequest", "DeleteOptions must be a JSON object");
    body = std::move(*parsed);
  }
  std::string policy = body.value("propagationPolicy", req.Query("propagationPolicy"));
  if (body.value("orphanDependents", false) || req.Query("orphanDependents") == "true") policy = "Orphan";
  if (policy == "Foreground") o.propagation = Propagation::kForeground;
  else if (policy == "Orphan") o.propagation = Propagation::kOrphan;
  else if (!policy.empty() && policy != "Background")
    return StatusError(400, "BadRequest", absl::StrCat("propagationPolicy: Unsupported value: \"", policy, "\""));
  if (body.contains("gracePeriodSeconds") && body["gracePeriodSeconds"].is_number_integer())
    o.grace_period_seconds = body["gracePeriodSeconds"].get<int64_t>();
  else if (std::string g = req.Query("gracePeriodSeconds"); !g.empty()) {
    int64_t v;
    if (!absl::SimpleAtoi(g, &v)) return StatusError(400, "BadRequest", "invalid gracePeriodSeconds");
    o.grace_period_seconds = v;
  }
  if (body.contains("dryRun") && body["dryRun"].is_array())
    for (const auto& d : body["dryRun"]) o.dry_run |= d == "All";
  o.dry_run |= DryRun(req);
  if (body.contains("preconditions") && body["preconditions"].is_object()) {
    const auto& p = body["preconditions"];
    if (p.contains("uid") && p["uid"].is_string()) o.precondition_uid = p["uid"].get<std::string>();
    if (p.contains("resourceVersion") && p["resourceVersion"].is_string())
      o.precondition_resource_version = p["resourceVersion"].get<std::string>();
  }
  auto r = store_->Delete(route.type.Id(), route.ns, route.name, o);
  if (!r.ok()) return FromStatus(r.status(), &route.type, route.name);
  absl::StatusOr<json> answer = InRequestVersion(route.type, *std::move(r));
  if (!answer.ok()) return FromStatus(answer.status(), &route.type, route.name);
  return JsonResponse(200, *answer);
}

ApiResponse ApiServer::DeleteCollection(const ApiRequest& req, const Route& route) {
  ListOptions lo;
  lo.ns = route.ns;
  lo.label_selector = req.Query("labelSelector");
  lo.field_selector = req.Query("fieldSelector");
  auto list = store_->List(route.type.Id(), lo);
  if (!list.ok()) return FromStatus(list.status(), &route.type, "");
  DeleteOptions o;
  o.dry_run = DryRun(req);
  json items = json::array();
  for (const auto& obj : list->items) {
    auto r = store_->Delete(route.type.Id(), obj->ns, obj->name, o);
    if (!r.ok()) continue;
    absl::StatusOr<json> item = InRequestVersion(route.type, *std::move(r));
    if (item.ok()) items.push_back(*std::move(item));
  }
  return JsonResponse(200, {{"kind", route.type.kind + "List"}, {"apiVersion", route.type.ApiVersion()},
                    {"metadata", {{"resourceVersion", std::to_string(store_->CurrentResourceVersion())}}},
                    {"items", items}});
}

ApiResponse ApiServer::Bind(const ApiRequest& req, const Route& route) {
  ApiResponse error;
  auto binding = DecodeBody(req, &error);
  if (!binding) return error;
  const json* target = LookupPath(*binding, ".target.name");
  if (!target || !target->is_string() || target->get<std::string>().empty())
    return FromStatus(absl::InvalidArgumentError("target.name: Required value"), &route.type, route.name);
  std::string node = *target;
  auto r = store_->Mutate(route.type.Id(), route.ns, route.name, false, [&](json& pod) -> absl::Status {
    if (LookupPath(pod, ".metadata.deletionTimestamp"))
      return absl::AbortedError(absl::StrCat("pod ", route.name, " is being deleted, cannot be assigned to a host"));
    const json* current = LookupPath(pod, ".spec.nodeName");
    if (current && current->is_string() && !current->get<std::string>().empty())
      return absl::AbortedError(absl::StrCat("pod ", route.name, " is already assigned to node \"",
                                             current->get<std::string>(), "\""));
    pod["spec"]["nodeName"] = node;
    return absl::OkStatus();
  }, WriteOptions{.dry_run = DryRun(req)});
  if (!r.ok()) return FromStatus(r.status(), &route.type, route.name);
  return JsonResponse(201, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"},
                    {"code", 201}});
}

}  // namespace cloneset::devcluster
