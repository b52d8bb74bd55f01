#include "devcluster/api_server.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "devcluster/codec.h"
#include "devcluster/discovery.h"
#include "devcluster/events_v1.h"
#include "devcluster/object_meta.h"
#include "devcluster/table.h"
#include "devcluster/versions.h"

namespace cloneset::devcluster {

using nlohmann::json;

ApiResponse JsonResponse(int status, const json& body) {
  ApiResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

namespace {

ApiResponse Raw(int status, std::string body) {
  ApiResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

bool WantsTable(const ApiRequest& req) { return absl::StrContains(req.Header("accept"), "as=Table"); }

}  // namespace

bool QueryBool(const ApiRequest& req, const std::string& name) {
  // kube-apiserver decodes boolean query parameters with apimachinery's Convert_Slice_string_To_bool: absent is
  // false, "0" and any case of "false" are false, every other value (also "True", "TRUE", "t", "1", "") is true.
  // Clients differ (Go sends "true", the Python client "True"), so "true" alone is not enough.
  auto it = req.query.find(name);
  if (it == req.query.end()) return false;
  return !(it->second == "0" || absl::EqualsIgnoreCase(it->second, "false"));
}

namespace {

base::Clock::TimePoint Now(Store* s) { return s->clock()->ChronoNow(); }

}  // namespace

json ScaleOf(const ResourceType& t, const json& o) {
  const json& m = o["metadata"];
  json meta = json::object();
  for (const char* f : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"})
    if (m.contains(f)) meta[f] = m[f];
  const json* spec = LookupPath(o, t.scale_spec_path);
  const json* status = LookupPath(o, t.scale_status_path);
  json scale = {{"kind", "Scale"}, {"apiVersion", "autoscaling/v1"}, {"metadata", meta},
                {"spec", {{"replicas", spec && spec->is_number() ? *spec : json(0)}}},
                {"status", {{"replicas", status && status->is_number() ? *status : json(0)}}}};
  if (!t.scale_selector_path.empty())
    if (const json* sel = LookupPath(o, t.scale_selector_path); sel && sel->is_string())
      scale["status"]["selector"] = *sel;
  return scale;
}

namespace {

// count_remaining: kube-apiserver reports remainingItemCount only for lists without a label or field selector
// (with one, it cannot know how many of the remaining objects match without reading them all). The items in the
// list's version: a conversion that fails fails the list, as kube-apiserver's does.
absl::StatusOr<std::string> ListJson(const ResourceType& t, const ListResult& list, bool count_remaining) {
  json meta = {{"resourceVersion", std::to_string(list.resource_version)}};
  if (!list.continue_token.empty()) {
    meta["continue"] = list.continue_token;
    if (count_remaining) meta["remainingItemCount"] = list.remaining;
  }
  std::string out = absl::StrCat(R"({"kind":")", t.kind, R"(List","apiVersion":")", t.ApiVersion(),
                                 R"(","metadata":)", meta.dump(), R"(,"items":[)");
  for (size_t i = 0; i < list.items.size(); ++i) {
    if (i) out += ',';
    if (!t.MultiVersion()) {
      out += list.items[i]->json;
      continue;
    }
    absl::StatusOr<std::string> item = SerializedInVersion(t, list.items[i]->json, t.version);
    if (!item.ok()) return item.status();
    out += *item;
  }
  out += "]}";
  return out;
}


absl::StatusOr<int64_t> ParseInt(const std::string& s, const std::string& name) {
  int64_t v;
  if (!absl::SimpleAtoi(s, &v)) return absl::FailedPreconditionError(absl::StrCat("invalid ", name, ": \"", s, "\""));
  return v;
}

}  // namespace

ApiResponse StatusError(int code, const std::string& reason, const std::string& message, const json& details) {
  json s = {{"kind", "Status"},   {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
            {"message", message}, {"reason", reason},   {"code", code}};
  if (!details.is_null()) s["details"] = details;
  return JsonResponse(code, s);
}

ApiResponse FromStatus(const absl::Status& status, const ResourceType* type, const std::string& name) {
  std::string msg(status.message());
  json details = json::object();
  if (!name.empty()) details["name"] = name;
  if (type) {
    details["group"] = type->group;
    details["kind"] = type->resource;
  }
  switch (status.code()) {
    case absl::StatusCode::kNotFound: return StatusError(404, "NotFound", msg, details);
    case absl::StatusCode::kAlreadyExists: return StatusError(409, "AlreadyExists", msg, details);
    case absl::StatusCode::kAborted: return StatusError(409, "Conflict", msg, details);
    case absl::StatusCode::kOutOfRange: return StatusError(410, "Expired", msg, details);
    case absl::StatusCode::kFailedPrecondition: return StatusError(400, "BadRequest", msg);
    case absl::StatusCode::kResourceExhausted: {
      // etcd's refusal passed through as kube-apiserver does: 500, the etcd message, no reason.
      return JsonResponse(500, {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()},
                        {"status", "Failure"}, {"message", msg}, {"code", 500}});
    }
    case absl::StatusCode::kInvalidArgument: {
      std::string kind = type ? (type->group.empty() ? type->kind : type->kind + "." + type->group) : "Object";
      if (auto causes = status.GetPayload(kFieldCausesPayload)) {
        // Several field errors (schema validation): kube-apiserver lists them in brackets.
        if (type) details["kind"] = type->kind;
        details["causes"] = json::parse(std::string(*causes), nullptr, false);
        return StatusError(422, "Invalid", absl::StrCat(kind, " \"", name, "\" is invalid: ", msg), details);
      }
      std::string field, detail = msg;
      if (size_t p = msg.find(": "); p != std::string::npos) {
        field = msg.substr(0, p);
        detail = msg.substr(p + 2);
      }
      if (type) details["kind"] = type->kind;
      details["causes"] = {{{"reason", "FieldValueInvalid"}, {"message", detail}, {"field", field}}};
      return StatusError(422, "Invalid", absl::StrCat(kind, " \"", name, "\" is invalid: ", msg), details);
    }
    case absl::StatusCode::kUnimplemented: return StatusError(405, "MethodNotAllowed", msg);
    case absl::StatusCode::kPermissionDenied: {
      // Admission's refusals (namespace lifecycle, quota) as kube-apiserver words them: `pods "x" is forbidden: ...`.
      if (auto causes = status.GetPayload(kFieldCausesPayload)) {
        details["causes"] = json::parse(std::string(*causes), nullptr, false);
      }
      const std::string resource = type ? type->resource : "";
      return StatusError(403, "Forbidden", absl::StrCat(resource, " \"", name, "\" is forbidden: ", msg), details);
    }
    default: return StatusError(500, "InternalError", absl::StrCat("Internal error occurred: ", msg));
  }
}

ApiServer::ApiServer(Store* store, ApiServerOptions options) : store_(store), options_(std::move(options)) {}

namespace {

// kubectl auth can-i: the embedded cluster has no RBAC (any holder of its token may do anything), so every review
// is allowed, and says why. A JSON body's spec is echoed; a protobuf body (kubectl 1.32+) is answered without it.
ApiResponse SelfSubjectReview(const ApiRequest& req, bool access) {
  json spec = json::object();
  if (!absl::StrContains(req.Header("content-type"), "protobuf")) {
    auto body = ParseJson(req.body);
    if (body.ok() && body->is_object() && body->contains("spec")) spec = (*body)["spec"];
  }
  json review = {{"kind", access ? "SelfSubjectAccessReview" : "SelfSubjectRulesReview"},
                 {"apiVersion", "authorization.k8s.io/v1"},
                 {"metadata", {{"creationTimestamp", nullptr}}},
                 {"spec", spec}};
  if (access) {
    review["status"] = {{"allowed", true}, {"reason", "the embedded cluster has no RBAC: every request is allowed"}};
  } else {
    review["status"] = {{"resourceRules", {{{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}}}},
                        {"nonResourceRules", {{{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}}},
                        {"incomplete", false}};
  }
  ApiResponse r = JsonResponse(201, review);
  r.verb = "create";
  r.resource = access ? "selfsubjectaccessreviews.authorization.k8s.io" : "selfsubjectrulesreviews.authorization.k8s.io";
  return r;
}

}  // namespace

std::vector<ResourceType> ApiServer::DiscoveryTypes() const {
  std::vector<ResourceType> types = PerServedVersion(store_->Types());
  if (auto core = store_->FindType(kEvents)) {
    ResourceType ev = *core;
    ev.group = kEventsGroup;
    types.push_back(ev);
  }
  for (const char* kind : {"SelfSubjectAccessReview", "SelfSubjectRulesReview"}) {
    ResourceType t;
    t.group = "authorization.k8s.io";
    t.version = "v1";
    t.kind = kind;
    t.resource = absl::AsciiStrToLower(kind) + "s";
    t.namespaced = false;
    t.verbs = {"create"};
    types.push_back(t);
  }
  return types;
}

ApiResponse ApiServer::HandleEventsV1(const ApiRequest& req) {
  ApiRequest core = req;
  core.path = "/api/v1/" + req.path.substr(std::string("/apis/events.k8s.io/v1/").size());
  if (auto fs = core.query.find("fieldSelector"); fs != core.query.end())
    fs->second = EventsV1FieldSelectorToCore(fs->second);
  std::vector<std::string> seg = absl::StrSplit(core.path, '/', absl::SkipEmpty());
  const size_t resource_at = seg.size() >= 5 && seg[2] == "namespaces" ? 4 : 2;
  if (seg.size() <= resource_at || seg[resource_at] != "events" || seg.size() > resource_at + 2)
    return StatusError(404, "NotFound", "the server could not find the requested resource");
  if (!req.body.empty() && (req.method == "POST" || req.method == "PUT" || req.method == "PATCH")) {
    std::string media = absl::AsciiStrToLower(req.Header("content-type"));
    if (absl::StrContains(media, "protobuf"))
      return StatusError(415, "UnsupportedMediaType",
                         "events.k8s.io/v1 bodies are accepted as JSON or YAML by the embedded cluster");
    const bool yaml = absl::StrContains(media, "yaml");
    auto body = yaml ? ParseYaml(req.body) : ParseJson(req.body);
    if (!body.ok()) return StatusError(400, "BadRequest", std::string(body.status().message()));
    if (req.method == "PATCH") {
      core.body = EventsV1PatchToCore(*body).dump();
    } else {
      if (!body->is_object()) return StatusError(400, "BadRequest", "the request body must be a JSON or YAML object");
      if (body->contains("apiVersion") && (*body)["apiVersion"] != std::string(kEventsGroup) + "/v1")
        return StatusError(400, "BadRequest", "the API version in the data does not match the expected API version "
                                              "(events.k8s.io/v1)");
      core.body = EventsV1ToCoreEvent(*body).dump();
      core.headers["content-type"] = "application/json";
    }
  }
  ApiResponse r = Dispatch(core);
  r.resource = "events.events.k8s.io";
  if (r.watch) {
    r.watch->events_v1 = true;
    return r;
  }
  if (r.content_type != "application/json" || r.body.empty()) return r;
  auto parsed = ParseJson(r.body);
  if (parsed.ok()) r.body = CoreResponseToEventsV1(*parsed).dump();
  return r;
}

ApiResponse ApiServer::Handle(const ApiRequest& req) {
  try {
    // The message of kube-apiserver's limitedReadBody (NewRequestEntityTooLargeError).
    if (req.body.size() > options_.max_body_bytes)
      return StatusError(413, "RequestEntityTooLarge",
                         absl::StrCat("Request entity too large: limit is ", options_.max_body_bytes));
    static const char* kPublic[] = {"/version", "/version/", "/healthz", "/readyz", "/livez"};
    bool is_public = std::any_of(std::begin(kPublic), std::end(kPublic), [&](const char* p) { return req.path == p; });
    if (!options_.token.empty() && !is_public && req.Header("authorization") != "Bearer " + options_.token)
      return StatusError(401, "Unauthorized", "Unauthorized");
    return Dispatch(req);
  } catch (const std::exception& e) {
    // Last line of defence: a bug must not take the cluster down.
    return StatusError(500, "InternalError", absl::StrCat("Internal error occurred: ", e.what()));
  }
}

ApiResponse ApiServer::Dispatch(const ApiRequest& req) {
  const std::string& path = req.path;
  if (path == "/version" || path == "/version/") {
    ApiResponse r = JsonResponse(200, {{"major", "1"},
                               {"minor", options_.version_minor},
                               {"gitVersion", absl::StrCat("v1.", options_.version_minor, ".0")},
                               {"gitCommit", "cloneset-devcluster"},
                               {"gitTreeState", "clean"},
                               {"buildDate", "2026-01-01T00:00:00Z"},
                               {"goVersion", "go1.23"},
                               {"compiler", "gc"},
                               {"platform", "linux/amd64"}});
    r.resource = "version";
    return r;
  }
  if (path == "/healthz" || path == "/readyz" || path == "/livez") {
    ApiResponse r = Raw(200, "ok");
    r.content_type = "text/plain";
    r.resource = path.substr(1);
    return r;
  }
  std::vector<std::string> seg = absl::StrSplit(path, '/', absl::SkipEmpty());
  auto types = [&] { return PerServedVersion(store_->Types()); };
  if (req.method == "GET") {
    if (path == "/api") return JsonResponse(200, ApiVersions(options_.server_address));
    if (path == "/apis") return JsonResponse(200, ApiGroupList(DiscoveryTypes()));
    if (path == "/openapi/v3") return JsonResponse(200, OpenApiV3Root(types(), std::to_string(store_->TypesGeneration())));
    if (seg.size() >= 3 && seg[0] == "openapi" && seg[1] == "v3") {
      std::string gv = path.substr(std::string("/openapi/v3/").size());
      auto doc = OpenApiV3Document(types(), gv);
      if (!doc) return StatusError(404, "NotFound", "the server could not find the requested resource");
      return JsonResponse(200, *doc);
    }
    if (path == "/openapi/v2") {
      if (!absl::StrContains(req.Header("accept"), "protobuf"))
        return StatusError(406, "NotAcceptable", "only the protobuf OpenAPI v2 document is served");
      ApiResponse r = Raw(200, OpenApiV2Protobuf(types(), absl::StrCat("v1.", options_.version_minor, ".0")));
      r.content_type = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
      return r;
    }
  }
  if (absl::StartsWith(path, "/apis/events.k8s.io/v1/")) return HandleEventsV1(req);
  if (path == "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews" ||
      path == "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews") {
    if (req.method != "POST") return StatusError(405, "MethodNotAllowed", "method not allowed");
    return SelfSubjectReview(req, absl::EndsWith(path, "accessreviews"));
  }
  Route route;
  size_t rest = 0;
  if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v1") {
    route.version = "v1";
    rest = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    route.group = seg[1];
    route.version = seg[2];
    rest = 3;
  } else {
    return StatusError(404, "NotFound", "the server could not find the requested resource");
  }
  std::vector<std::string> r(seg.begin() + rest, seg.end());
  if (r.empty()) {
    if (req.method != "GET") return StatusError(405, "MethodNotAllowed", "method not allowed");
    auto list = ApiResourceList(DiscoveryTypes(), route.group, route.version);
    if (!list) return StatusError(404, "NotFound", "the server could not find the requested resource");
    return JsonResponse(200, *list);
  }
  if (r[0] == "namespaces" && r.size() >= 3 && r[2] != "status" && r[2] != "finalize") {
    route.ns = r[1];
    r.erase(r.begin(), r.begin() + 2);
  }
  if (r.size() > 3) return StatusError(404, "NotFound", "the server could not find the requested resource");
  route.resource = r[0];
  if (r.size() >= 2) route.name = r[1];
  if (r.size() == 3) route.subresource = r[2];
  std::string id = route.group.empty() ? route.resource : route.resource + "." + route.group;
  auto stored_type = store_->FindType(id);
  // The type in the URL's version: that version's schema, columns and subresources (a CRD may serve several).
  std::optional<ResourceType> type = stored_type ? stored_type->InVersion(route.version) : std::nullopt;
  if (!type) return StatusError(404, "NotFound", "the server could not find the requested resource");
  route.type = *std::move(type);
  if (!route.ns.empty() && !type->namespaced)
    return StatusError(404, "NotFound", "the server could not find the requested resource");
  ApiResponse resp = HandleResource(req, route);
  resp.resource = id;
  return resp;
}

ApiResponse ApiServer::HandleResource(const ApiRequest& req, Route& route) {
  const std::string& m = req.method;
  const std::string& sub = route.subresource;
  if (!sub.empty() && sub != "status" && sub != "scale" && sub != "binding" && sub != "resize")
    return StatusError(404, "NotFound", "the server could not find the requested resource");
  if ((sub == "status" && !route.type.has_status) || (sub == "scale" && !route.type.has_scale) ||
      ((sub == "binding" || sub == "resize") && route.type.Id() != kPods))
    return StatusError(404, "NotFound", "the server could not find the requested resource");
  if (route.type.namespaced && !route.name.empty() && route.ns.empty())
    return StatusError(404, "NotFound", "the server could not find the requested resource");
  ApiResponse resp;
  if (route.name.empty()) {
    if (m == "GET") {
      bool watch = QueryBool(req, "watch");
      resp = watch ? Watch(req, route) : List(req, route);
      resp.verb = watch ? "watch" : "list";
    } else if (m == "POST") {
      if (route.type.namespaced && route.ns.empty())
        return StatusError(404, "NotFound", "the server could not find the requested resource");
      resp = Create(req, route);
      resp.verb = "create";
    } else if (m == "DELETE") {
      resp = DeleteCollection(req, route);
      resp.verb = "deletecollection";
    } else {
      return StatusError(405, "MethodNotAllowed", absl::StrCat("method ", m, " is not allowed on a collection"));
    }
    return resp;
  }
  if (m == "GET") {
    resp = Get(req, route);
    resp.verb = "get";
  } else if (m == "PUT") {
    resp = Update(req, route);
    resp.verb = "update";
  } else if (m == "PATCH") {
    resp = Patch(req, route);
    resp.verb = "patch";
  } else if (m == "DELETE" && sub.empty()) {
    resp = Delete(req, route);
    resp.verb = "delete";
  } else if (m == "POST" && sub == "binding") {
    resp = Bind(req, route);
    resp.verb = "create";
  } else {
    return StatusError(405, "MethodNotAllowed", absl::StrCat("method ", m, " is not allowed here"));
  }
  return resp;
}

// The list options' rules of kube-apiserver (ValidateListOptions) for the streaming list: sendInitialEvents only on
// a watch, with resourceVersionMatch=NotOlderThan; resourceVersionMatch on a watch only with sendInitialEvents.
// (Without allowWatchBookmarks it is accepted, and the end of the initial events is not marked.) A 422 for ListOptions.meta.k8s.io naming the fields, as the real server answers.
static std::optional<ApiResponse> InvalidWatchListOptions(const ApiRequest& req) {
  const bool watch = QueryBool(req, "watch");
  const std::string send = req.Query("sendInitialEvents"), match = req.Query("resourceVersionMatch");
  std::vector<FieldError> errors;
  if (!watch) {
    if (!send.empty())
      errors.push_back({"FieldValueForbidden", "sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list"});
  } else {
    if (!send.empty()) {
      if (match != "NotOlderThan")
        errors.push_back({"FieldValueForbidden", "resourceVersionMatch",
                          "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"});
    }
    if (!match.empty()) {
      if (send.empty())
        errors.push_back({"FieldValueForbidden", "resourceVersionMatch",
                          "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"});
      if (match != "NotOlderThan")
        errors.push_back({"FieldValueNotSupported", "resourceVersionMatch",
                          absl::StrCat("Unsupported value: \"", match, "\": supported values: \"NotOlderThan\"")});
    }
  }
  if (errors.empty()) return std::nullopt;
  std::vector<std::string> parts;
  json causes = json::array();
  for (const auto& e : errors) {
    parts.push_back(absl::StrCat(e.field, ": ", e.message));
    causes.push_back({{"reason", e.reason}, {"message", e.message}, {"field", e.field}});
  }
  std::string all = parts.size() == 1 ? parts[0] : absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
  return StatusError(422, "Invalid", absl::StrCat("ListOptions.meta.k8s.io \"\" is invalid: ", all),
                     {{"group", "meta.k8s.io"}, {"kind", "ListOptions"}, {"causes", causes}});
}

ApiResponse ApiServer::List(const ApiRequest& req, const Route& route) {
  if (auto invalid = InvalidWatchListOptions(req)) return std::move(*invalid);
  ListOptions o;
  o.ns = route.ns;
  o.label_selector = req.Query("labelSelector");
  o.field_selector = req.Query("fieldSelector");
  o.continue_token = req.Query("continue");
  if (std::string l = req.Query("limit"); !l.empty()) {
    auto v = ParseInt(l, "limit");
    if (!v.ok()) return FromStatus(v.status(), &route.type, "");
    o.limit = *v;
  }
  auto list = store_->List(route.type.Id(), o);
  if (!list.ok()) return FromStatus(list.status(), &route.type, "");
  if (!WantsTable(req)) {
    absl::StatusOr<std::string> body = ListJson(route.type, *list, o.label_selector.empty() && o.field_selector.empty());
    if (!body.ok()) return FromStatus(body.status(), &route.type, "");
    return Raw(200, *std::move(body));
  }
  std::vector<json> objects;
  objects.reserve(list->items.size());
  for (const auto& it : list->items) {
    absl::StatusOr<json> item = ParsedInVersion(route.type, it);
    if (!item.ok()) return FromStatus(item.status(), &route.type, "");
    objects.push_back(*std::move(item));
  }
  return JsonResponse(200, BuildTable(route.type, objects, Now(store_), std::to_string(list->resource_version),
                              list->continue_token, req.Query("includeObject") == "Object"));
}

ApiResponse ApiServer::Watch(const ApiRequest& req, const Route& route) {
  WatchOptions o;
  o.ns = route.ns;
  o.label_selector = req.Query("labelSelector");
  o.field_selector = req.Query("fieldSelector");
  o.allow_bookmarks = QueryBool(req, "allowWatchBookmarks");
  if (auto invalid = InvalidWatchListOptions(req)) return std::move(*invalid);
  o.send_initial_events = QueryBool(req, "sendInitialEvents");
  if (std::string rv = req.Query("resourceVersion"); !rv.empty() && rv != "0") {
    auto v = ParseInt(rv, "resourceVersion");
    if (!v.ok()) return FromStatus(v.status(), &route.type, "");
    o.resource_version = *v;
  }
  auto stream = std::make_unique<WatchStream>();
  // get -w sends no timeout; the real server holds such watches for 30-60 minutes.
  int64_t timeout = 1800;
  if (std::string t = req.Query("timeoutSeconds"); !t.empty()) {
    auto v = ParseInt(t, "timeoutSeconds");
    if (!v.ok()) return FromStatus(v.status(), &route.type, "");
    timeout = std::max<int64_t>(0, *v);
  }
  stream->deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  auto w = store_->Watch(route.type.Id(), o);
  if (!w.ok()) return FromStatus(w.status(), &route.type, "");
  stream->watcher = std::move(*w);
  stream->type = route.type;
  stream->table = WantsTable(req);
  ApiResponse r;
  r.watch = std::move(stream);
  return r;
}

ApiServer::StreamStep ApiServer::NextWatchChunk(WatchStream& s, std::string* out, std::chrono::milliseconds poll) {
  if (s.ended) return StreamStep::kEnd;
  auto now = std::chrono::steady_clock::now();
  if (now >= s.deadline) return StreamStep::kEnd;
  auto wait = std::min<std::chrono::milliseconds>(
      poll, std::chrono::duration_cast<std::chrono::milliseconds>(s.deadline - now) + std::chrono::milliseconds(1));
  WatchEvent ev;
  // Ended() takes the store lock too: ask only when no event came (a stopped watcher returns false at once).
  if (!s.watcher->Next(&ev, wait)) return s.watcher->Ended() ? StreamStep::kEnd : StreamStep::kIdle;
  return FormatWatchEvent(s, ev, now, out);
}

ApiServer::StreamStep ApiServer::PollWatchChunk(WatchStream& s, std::string* out, bool offer_bookmark) {
  if (s.ended) return StreamStep::kEnd;
  auto now = std::chrono::steady_clock::now();
  if (now >= s.deadline) return StreamStep::kEnd;
  WatchEvent ev;
  bool got = offer_bookmark ? s.watcher->NextOrBookmark(&ev) : s.watcher->Next(&ev, std::chrono::milliseconds(0));
  if (!got) return s.watcher->Ended() ? StreamStep::kEnd : StreamStep::kIdle;
  return FormatWatchEvent(s, ev, now, out);
}

ApiServer::StreamStep ApiServer::FormatWatchEvent(WatchStream& s, const WatchEvent& ev,
                                                  std::chrono::steady_clock::time_point now, std::string* out) {
  if (ev.type == EventType::kBookmark && !ev.initial_events_end) {
    // The watcher offers a bookmark whenever a wait times out; send at most one per interval.
    if (now - s.last_bookmark < std::chrono::seconds(1)) return StreamStep::kIdle;
    s.last_bookmark = now;
  }
  const char* type = EventTypeName(ev.type);
  if (ev.type == EventType::kError) {
    s.ended = true;
    json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
                   {"message", std::string(ev.error.message())}, {"reason", "Expired"}, {"code", 410}};
    *out = json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
    return StreamStep::kData;
  }
  if (ev.type == EventType::kBookmark) {
    json obj = {{"kind", s.type.kind}, {"apiVersion", s.events_v1 ? "events.k8s.io/v1" : s.type.ApiVersion()},
                {"metadata", {{"resourceVersion", std::to_string(ev.resource_version)}}}};
    if (ev.initial_events_end) obj["metadata"]["annotations"] = {{"k8s.io/initial-events-end", "true"}};
    *out = json{{"type", "BOOKMARK"}, {"object", obj}}.dump() + "\n";
    return StreamStep::kData;
  }
  // Each event's object in the watch's version; one that cannot be converted ends the watch with an error event, as
  // kube-apiserver's does.
  absl::StatusOr<std::string> object = StoredInVersion(s.type, ev.object);
  if (!object.ok()) {
    s.ended = true;
    json status = {{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Failure"},
                   {"message", std::string(object.status().message())}, {"reason", "InternalError"}, {"code", 500}};
    *out = json{{"type", "ERROR"}, {"object", status}}.dump() + "\n";
    return StreamStep::kData;
  }
  if (s.table) {
    json table = BuildTable(s.type, {json::parse(*object)}, Now(store_), std::to_string(ev.resource_version), "",
                            false, !s.sent_columns);
    s.sent_columns = true;
    *out = json{{"type", type}, {"object", table}}.dump() + "\n";
  } else if (s.events_v1) {
    *out = json{{"type", type}, {"object", CoreEventToEventsV1(ev.object->Parse())}}.dump() + "\n";
  } else {
    *out = absl::StrCat(R"({"type":")", type, R"(","object":)", *object, "}\n");
  }
  return StreamStep::kData;
}

ApiResponse ApiServer::Get(const ApiRequest& req, const Route& route) {
  auto obj = store_->GetStored(route.type.Id(), route.ns, route.name);
  if (!obj.ok()) return FromStatus(obj.status(), &route.type, route.name);
  if (route.subresource == "scale") return JsonResponse(200, ScaleOf(route.type, (*obj)->Parse()));
  if (WantsTable(req)) {
    absl::StatusOr<json> object = ParsedInVersion(route.type, *obj);
    if (!object.ok()) return FromStatus(object.status(), &route.type, route.name);
    return JsonResponse(200, BuildTable(route.type, {*std::move(object)}, Now(store_),
                                        std::to_string((*obj)->resource_version), "",
                                        req.Query("includeObject") == "Object"));
  }
  absl::StatusOr<std::string> body = StoredInVersion(route.type, *obj);
  if (!body.ok()) return FromStatus(body.status(), &route.type, route.name);
  return Raw(200, *std::move(body));
}

}  // namespace cloneset::devcluster
