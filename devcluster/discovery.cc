#include "devcluster/discovery.h"

#include <algorithm>
#include <map>
#include <set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace cloneset::devcluster {
namespace {

using nlohmann::json;

const json kVerbs = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};

bool SameGv(const ResourceType& t, const std::string& group, const std::string& version) {
  return t.group == group && t.version == version;
}

std::string GvPath(const ResourceType& t) {
  return t.group.empty() ? "api/" + t.version : absl::StrCat("apis/", t.group, "/", t.version);
}

// Length-delimited field: tag (field<<3|2), length, bytes. Written with protobuf's own encoder.
void Field(std::string* out, int number, const std::string& bytes) {
  google::protobuf::io::StringOutputStream stream(out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  google::protobuf::internal::WireFormatLite::WriteBytes(number, bytes, &coded);
}

std::string Message(std::initializer_list<std::pair<int, std::string>> fields) {
  std::string out;
  for (const auto& [n, v] : fields) Field(&out, n, v);
  return out;
}

}  // namespace

std::vector<ResourceType> PerServedVersion(const std::vector<ResourceType>& types) {
  std::vector<ResourceType> out;
  for (const ResourceType& t : types) {
    if (!t.MultiVersion()) {
      out.push_back(t);
      continue;
    }
    for (const ServedVersion& v : t.served) out.push_back(*t.InVersion(v.name));
  }
  return out;
}

json ApiVersions(const std::string& server_address) {
  return {{"kind", "APIVersions"},
          {"versions", {"v1"}},
          {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}}}}};
}

json ApiGroupList(const std::vector<ResourceType>& types) {
  std::map<std::string, std::set<std::string>> groups;
  for (const auto& t : types)
    if (!t.group.empty()) groups[t.group].insert(t.version);
  json list = json::array();
  for (const auto& [g, version_set] : groups) {
    // kube-apiserver's order, whose first is the preferred version (v1beta1 before v1alpha1).
    std::vector<std::string> versions(version_set.begin(), version_set.end());
    std::sort(versions.begin(), versions.end(),
              [](const std::string& a, const std::string& b) { return KubeAwareVersionBefore(a, b); });
    json vs = json::array();
    for (const auto& v : versions) vs.push_back({{"groupVersion", g + "/" + v}, {"version", v}});
    list.push_back({{"name", g}, {"versions", vs}, {"preferredVersion", vs[0]}});
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", list}};
}

std::optional<json> ApiResourceList(const std::vector<ResourceType>& types, const std::string& group,
                                    const std::string& version) {
  json resources = json::array();
  for (const auto& t : types) {
    if (!SameGv(t, group, version)) continue;
    json r = {{"name", t.resource}, {"singularName", t.singular}, {"namespaced", t.namespaced},
              {"kind", t.kind},     {"verbs", t.verbs.empty() ? kVerbs : json(t.verbs)}};
    if (!t.short_names.empty()) r["shortNames"] = t.short_names;
    if (!t.categories.empty()) r["categories"] = t.categories;
    resources.push_back(r);
    if (t.has_status)
      resources.push_back({{"name", t.resource + "/status"}, {"singularName", ""}, {"namespaced", t.namespaced},
                           {"kind", t.kind}, {"verbs", {"get", "patch", "update"}}});
    if (t.has_scale)
      resources.push_back({{"name", t.resource + "/scale"}, {"singularName", ""}, {"namespaced", t.namespaced},
                           {"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"},
                           {"verbs", {"get", "patch", "update"}}});
    if (t.Id() == "pods") {
      resources.push_back({{"name", "pods/binding"}, {"singularName", ""}, {"namespaced", true},
                           {"kind", "Binding"}, {"verbs", {"create"}}});
      // In-place resize of cpu/memory (Kubernetes 1.32 and later; object_meta.h ValidatePodResize).
      resources.push_back({{"name", "pods/resize"}, {"singularName", ""}, {"namespaced", true},
                           {"kind", "Pod"}, {"verbs", {"get", "patch", "update"}}});
    }
  }
  if (resources.empty()) return std::nullopt;
  return json{{"kind", "APIResourceList"}, {"apiVersion", "v1"},
              {"groupVersion", group.empty() ? version : group + "/" + version}, {"resources", resources}};
}

std::string ObjectPathTemplate(const ResourceType& t) {
  return absl::StrCat("/", GvPath(t), t.namespaced ? "/namespaces/{namespace}/" : "/", t.resource, "/{name}");
}

json OpenApiV3Root(const std::vector<ResourceType>& types, const std::string& hash) {
  json paths = json::object();
  for (const auto& t : types)
    paths[GvPath(t)] = {{"serverRelativeURL", absl::StrCat("/openapi/v3/", GvPath(t), "?hash=", hash)}};
  return {{"paths", paths}};
}

std::optional<json> OpenApiV3Document(const std::vector<ResourceType>& types, const std::string& gv_path) {
  json paths = json::object();
  json schemas = json::object();
  for (const auto& t : types) {
    if (GvPath(t) != gv_path) continue;
    if (t.schema) {
      // kubectl explain finds a kind's schema by this extension; the name is the reversed group as upstream's.
      std::vector<std::string> parts = absl::StrSplit(t.group, '.');
      std::reverse(parts.begin(), parts.end());
      json schema = t.schema->root;
      schema["x-kubernetes-group-version-kind"] = {{{"group", t.group}, {"version", t.version}, {"kind", t.kind}}};
      schemas[absl::StrCat(absl::StrJoin(parts, "."), ".", t.version, ".", t.kind)] = std::move(schema);
    }
    json gvk = {{"group", t.group}, {"version", t.version}, {"kind", t.kind}};
    json params = json::array({{{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                               {{"name", "dryRun"}, {"in", "query"}, {"schema", {{"type", "string"}}}},
                               {{"name", "fieldManager"}, {"in", "query"}, {"schema", {{"type", "string"}}}}});
    paths[ObjectPathTemplate(t)] = {
        {"patch", {{"x-kubernetes-group-version-kind", gvk}, {"parameters", params},
                   {"responses", {{"200", {{"description", "OK"}}}}}}}};
  }
  if (paths.empty()) return std::nullopt;
  json doc = {{"openapi", "3.0.0"}, {"info", {{"title", "Kubernetes"}, {"version", "v1.32.0"}}}, {"paths", paths}};
  if (!schemas.empty()) doc["components"] = {{"schemas", schemas}};
  return doc;
}

std::string OpenApiV2Protobuf(const std::vector<ResourceType>& types, const std::string& version) {
  // gnostic openapi.v2: Document{1 swagger, 2 info{1 title, 2 version}, 8 paths{2 NamedPathItem}}.
  std::string paths;
  for (const auto& t : types) {
    std::string query = Message({{2, "query"}, {4, "fieldValidation"}, {6, "string"}});  // QueryParameterSubSchema
    std::string non_body = Message({{3, query}});
    std::string parameter = Message({{2, non_body}});
    std::string params_item = Message({{1, parameter}});
    std::string yaml = absl::StrCat("group: \"", t.group, "\"\nkind: ", t.kind, "\nversion: ", t.version, "\n");
    std::string any = Message({{2, yaml}});
    std::string extension = Message({{1, "x-kubernetes-group-version-kind"}, {2, any}});
    std::string operation = Message({{8, params_item}, {13, extension}});
    std::string path_item = Message({{8, operation}});
    Field(&paths, 2, Message({{1, ObjectPathTemplate(t)}, {2, path_item}}));
  }
  return Message({{1, "2.0"}, {2, Message({{1, "Kubernetes"}, {2, version}})}, {8, paths}});
}

}  // namespace cloneset::devcluster
