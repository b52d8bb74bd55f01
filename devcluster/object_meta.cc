#include "devcluster/object_meta.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "base/time_format.h"
#include "common/image_ref.h"
#include "common/resources.h"

namespace cloneset::devcluster {
std::string StringAt(const nlohmann::json& obj, std::initializer_list<const char*> path) {
  const nlohmann::json* cur = &obj;
  for (const char* p : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(p);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

std::string NewUid(absl::BitGen& gen) {
  uint64_t a = absl::Uniform<uint64_t>(gen), b = absl::Uniform<uint64_t>(gen);
  a = (a & ~0xF000ULL) | 0x4000ULL;                 // version 4
  b = (b & ~(0xC000ULL << 48)) | (0x8000ULL << 48);  // RFC 4122 variant
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", a >> 32, (a >> 16) & 0xFFFF, a & 0xFFFF, b >> 48,
                         b & 0xFFFFFFFFFFFFULL);
}

std::string RandomSuffix(absl::BitGen& gen) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::string s;
  for (int i = 0; i < 5; ++i) s += kAlphabet[absl::Uniform<size_t>(gen, 0, sizeof(kAlphabet) - 1)];
  return s;
}

const std::vector<std::string>& SupportedFields(std::string_view resource) {
  static const std::map<std::string, std::vector<std::string>, std::less<>> kFields = {
      {"pods",
       {"metadata.name", "metadata.namespace", "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
        "spec.serviceAccountName", "status.phase", "status.podIP", "status.nominatedNodeName"}},
      {"events",
       {"metadata.name", "metadata.namespace", "involvedObject.kind", "involvedObject.namespace",
        "involvedObject.name", "involvedObject.uid", "involvedObject.apiVersion",
        "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason", "reportingComponent",
        "source", "type"}},
      {"nodes", {"metadata.name", "metadata.namespace", "spec.unschedulable"}},
      {"namespaces", {"metadata.name", "metadata.namespace", "status.phase"}},
      {"secrets", {"metadata.name", "metadata.namespace", "type"}},
      {"persistentvolumeclaims", {"metadata.name", "metadata.namespace", "status.phase"}},
      {"persistentvolumes", {"metadata.name", "metadata.namespace", "status.phase"}},
  };
  static const std::vector<std::string> kDefault = {"metadata.name", "metadata.namespace"};
  auto it = kFields.find(resource);
  return it == kFields.end() ? kDefault : it->second;
}

absl::Status CheckFieldSelector(const FieldSelector& selector, std::string_view resource) {
  const auto& fields = SupportedFields(resource);
  for (const auto& r : selector.requirements())
    if (std::find(fields.begin(), fields.end(), r.key) == fields.end())
      return absl::FailedPreconditionError(
          absl::StrCat("field label not supported: ", r.key, " (resource ", std::string(resource), ")"));
  return absl::OkStatus();
}

void ApplyDefaults(std::string_view resource, nlohmann::json& object) {
  auto default_ports = [](nlohmann::json& ports) {
    if (!ports.is_array()) return;
    for (auto& p : ports)
      if (p.is_object() && !p.contains("protocol")) p["protocol"] = "TCP";
  };
  if (resource == "pods" && object.contains("spec") && object["spec"].is_object()) {
    auto& spec = object["spec"];
    if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
    if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
    if (!spec.contains("schedulerName")) spec["schedulerName"] = "default-scheduler";
    // kube-apiserver's other pod defaults (SetDefaults_PodSpec, SetDefaults_Container), so that what a controller
    // reads back differs from its template as on a real cluster.
    if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
    if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
    if (!spec.contains("securityContext")) spec["securityContext"] = nlohmann::json::object();
    // SetDefaults_Pod: requests default to limits (pods only, not templates).
    common::DefaultRequestsFromLimits(spec);
    for (const char* list : {"containers", "initContainers"}) {
      if (!spec.contains(list) || !spec[list].is_array()) continue;
      for (auto& c : spec[list]) {
        if (!c.is_object()) continue;
        if (c.contains("ports")) default_ports(c["ports"]);
        if (!c.contains("terminationMessagePath")) c["terminationMessagePath"] = "/dev/termination-log";
        if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
        if (!c.contains("imagePullPolicy") && c.contains("image") && c["image"].is_string()) {
          // kube-apiserver's SetDefaults_Container: Always when the tag its reference parser reads is "latest",
          // written or implied (no tag and no digest), else IfNotPresent. The tree's one reference parser
          // (common/image_ref.h) reads it: a ':' of a registry port ("registry:5000/app") is not a tag.
          std::string ref = common::NormalizeImage(c["image"].get<std::string>());
          if (const size_t at = ref.find('@'); at != std::string::npos) ref.resize(at);
          c["imagePullPolicy"] = absl::EndsWith(ref, ":latest") ? "Always" : "IfNotPresent";
        }
      }
    }
  }
  if (resource == "deployments.apps" && object.contains("spec") && object["spec"].is_object() &&
      !object["spec"].contains("replicas"))
    object["spec"]["replicas"] = 1;
  if (resource == "services" && object.contains("spec") && object["spec"].is_object()) {
    auto& spec = object["spec"];
    if (!spec.contains("type")) spec["type"] = "ClusterIP";
    if (!spec.contains("sessionAffinity")) spec["sessionAffinity"] = "None";
    if (spec.contains("ports") && spec["ports"].is_array()) {
      default_ports(spec["ports"]);
      for (auto& p : spec["ports"])
        if (p.is_object() && !p.contains("targetPort") && p.contains("port")) p["targetPort"] = p["port"];
    }
  }
  // SetDefaults_Secret: kubectl create secret generic sends no type.
  if (resource == "secrets" && (!object.contains("type") || object["type"] == "")) object["type"] = "Opaque";
  if (resource == "persistentvolumeclaims" && object.contains("spec") && object["spec"].is_object()) {
    if (!object["spec"].contains("volumeMode")) object["spec"]["volumeMode"] = "Filesystem";
  }
}

absl::Status MergeSecretStringData(nlohmann::json& secret) {
  auto it = secret.find("stringData");
  if (it == secret.end()) return absl::OkStatus();
  if (it->is_null()) {
    secret.erase(it);
    return absl::OkStatus();
  }
  if (!it->is_object()) return absl::InvalidArgumentError("stringData: Invalid value: must be a map of strings");
  for (const auto& [k, v] : it->items())
    if (!v.is_string())
      return absl::InvalidArgumentError(
          absl::StrCat("stringData[", k, "]: Invalid value: ", v.dump(), ": must be a string"));
  auto& data = secret["data"];
  if (!data.is_object()) data = nlohmann::json::object();
  // stringData wins over data for the same key, as documented for the Secret type.
  for (const auto& [k, v] : it->items()) data[k] = absl::Base64Escape(v.get<std::string>());
  secret.erase("stringData");
  return absl::OkStatus();
}

absl::Status ValidateDataSize(std::string_view resource, const nlohmann::json& object) {
  if (resource != "configmaps" && resource != "secrets") return absl::OkStatus();
  size_t total = 0;
  for (const char* field : {"data", "binaryData"}) {
    if (resource == "secrets" && std::string_view(field) == "binaryData") continue;
    auto it = object.find(field);
    if (it == object.end() || !it->is_object()) continue;
    for (const auto& [k, v] : it->items()) {
      if (!v.is_string()) continue;
      const std::string& text = v.get_ref<const std::string&>();
      size_t bytes = text.size();
      if (resource == "secrets" || std::string_view(field) == "binaryData") {  // base64 on the wire
        size_t pad = text.size() >= 2 && text[text.size() - 2] == '=' ? 2 : !text.empty() && text.back() == '=' ? 1 : 0;
        bytes = text.size() / 4 * 3 - std::min(pad, text.size() / 4 * 3);
      }
      total += k.size() * (resource == "configmaps") + bytes;
    }
  }
  if (total <= kMaxDataBytes) return absl::OkStatus();
  return FieldErrorsStatus({{"FieldValueTooLong", resource == "secrets" ? "data" : "[]",
                             absl::StrCat("Too long: may not be more than ", kMaxDataBytes, " bytes")}});
}

std::vector<std::string> ClaimsOf(const nlohmann::json& pod) {
  std::vector<std::string> claims;
  const nlohmann::json* volumes = LookupPath(pod, ".spec.volumes");
  if (!volumes || !volumes->is_array()) return claims;
  const std::string pod_name = StringAt(pod, {"metadata", "name"});
  for (const auto& v : *volumes) {
    if (!v.is_object()) continue;
    if (std::string c = StringAt(v, {"persistentVolumeClaim", "claimName"}); !c.empty()) claims.push_back(c);
    else if (v.contains("ephemeral") && v["ephemeral"].is_object() && !StringAt(v, {"name"}).empty())
      claims.push_back(pod_name + "-" + StringAt(v, {"name"}));
  }
  return claims;
}

bool PodUsesClaim(const nlohmann::json& pod, const std::string& claim) {
  if (StringAt(pod, {"spec", "nodeName"}).empty()) return false;
  const nlohmann::json* volumes = LookupPath(pod, ".spec.volumes");
  if (!volumes || !volumes->is_array()) return false;
  const nlohmann::json* grace = LookupPath(pod, ".metadata.deletionGracePeriodSeconds");
  const bool shut_down =
      LookupPath(pod, ".metadata.deletionTimestamp") && grace && grace->is_number() && grace->get<int64_t>() == 0;
  const std::string pod_name = StringAt(pod, {"metadata", "name"});
  for (const auto& v : *volumes) {
    if (!v.is_object()) continue;
    if (StringAt(v, {"persistentVolumeClaim", "claimName"}) == claim) return true;
    if (!shut_down && v.contains("ephemeral") && v["ephemeral"].is_object() &&
        pod_name + "-" + StringAt(v, {"name"}) == claim)
      return true;
  }
  return false;
}

void ResetStatusOnCreate(const ResourceType& type, nlohmann::json& object) {
  const std::string id = type.Id();
  if (id == "pods") {
    // The class kube-apiserver computes when it creates the pod (requests defaulted from limits first); it never
    // changes afterwards, and a resize may not change it.
    nlohmann::json spec = object.contains("spec") ? object["spec"] : nlohmann::json::object();
    common::DefaultRequestsFromLimits(spec);
    object["status"] = {{"phase", "Pending"},
                        {"qosClass", std::string(common::QosClassName(common::PodQosClass(spec)))}};
  } else if (id == "persistentvolumeclaims" || id == "persistentvolumes") {
    object["status"] = {{"phase", "Pending"}};
  } else if (id == "namespaces") {
    object["status"] = {{"phase", "Active"}};
  } else if (id == "services") {
    object["status"] = {{"loadBalancer", nlohmann::json::object()}};
  } else if (id == "customresourcedefinitions.apiextensions.k8s.io") {
    nlohmann::json names = object.contains("spec") && object["spec"].is_object()
                               ? object["spec"].value("names", nlohmann::json::object())
                               : nlohmann::json::object();
    object["status"] = {{"acceptedNames", names},
                        {"conditions",
                         {{{"type", "NamesAccepted"}, {"status", "True"}, {"reason", "NoConflicts"}},
                          {{"type", "Established"}, {"status", "True"}, {"reason", "InitialNamesAccepted"}}}},
                        {"storedVersions", nlohmann::json::array()}};
  } else if (type.custom && type.has_status) {
    object.erase("status");
  }
}

bool SpecChanged(const nlohmann::json& before, const nlohmann::json& after) {
  if (!before.is_object() || !after.is_object()) return before != after;
  for (const auto& [k, v] : after.items()) {
    if (k == "metadata" || k == "status" || k == "apiVersion" || k == "kind") continue;
    auto it = before.find(k);
    if (it == before.end() || *it != v) return true;
  }
  for (const auto& [k, v] : before.items()) {
    if (k == "metadata" || k == "status" || k == "apiVersion" || k == "kind") continue;
    if (!after.contains(k)) return true;
  }
  return false;
}

bool BumpsGeneration(std::string_view resource, const nlohmann::json& before, const nlohmann::json& after) {
  if (!SpecChanged(before, after)) return false;
  if (resource != "pods") return true;
  const nlohmann::json* old_spec = LookupPath(before, ".spec");
  const nlohmann::json* new_spec = LookupPath(after, ".spec");
  if (!old_spec || !new_spec || !old_spec->is_object() || !new_spec->is_object()) return true;
  // Compare the specs with nodeName taken out; only then is the change a binding.
  nlohmann::json a = *old_spec, b = *new_spec;
  a.erase("nodeName");
  b.erase("nodeName");
  if (a != b) return true;
  for (const auto& [k, v] : after.items())
    if (k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" && k != "spec" &&
        (!before.contains(k) || before[k] != v))
      return true;
  for (const auto& [k, v] : before.items())
    if (k != "metadata" && k != "status" && k != "apiVersion" && k != "kind" && k != "spec" && !after.contains(k))
      return true;
  return false;
}

const nlohmann::json* LookupPath(const nlohmann::json& object, std::string_view path) {
  if (!path.empty() && path[0] == '.') path.remove_prefix(1);
  const nlohmann::json* cur = &object;
  for (absl::string_view part : absl::StrSplit(absl::string_view(path.data(), path.size()), '.')) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(std::string(part.data(), part.size()));
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

void SetPath(nlohmann::json& object, std::string_view path, nlohmann::json value) {
  if (!path.empty() && path[0] == '.') path.remove_prefix(1);
  nlohmann::json* cur = &object;
  std::vector<std::string> parts = absl::StrSplit(absl::string_view(path.data(), path.size()), '.');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (!cur->is_object()) *cur = nlohmann::json::object();
    cur = &(*cur)[parts[i]];
  }
  if (!cur->is_object()) *cur = nlohmann::json::object();
  (*cur)[parts.back()] = std::move(value);
}

namespace {

// The API server's semantic equality over JSON: null, [] and {} equal an absent field.
nlohmann::json Normalized(const nlohmann::json& v) {
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, e] : v.items()) {
      nlohmann::json n = Normalized(e);
      if (n.is_null() || ((n.is_array() || n.is_object()) && n.empty())) continue;
      out[k] = std::move(n);
    }
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : v) out.push_back(Normalized(e));
    return out;
  }
  return v;
}

// The paths under `path` where the two normalized values differ (at most `limit`), for the Forbidden message.
void DiffPaths(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
               std::vector<std::string>& out, size_t limit) {
  if (out.size() >= limit || a == b) return;
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.insert(k);
    for (const auto& [k, v] : b.items()) keys.insert(k);
    static const nlohmann::json kAbsent;
    for (const auto& k : keys)
      DiffPaths(a.contains(k) ? a[k] : kAbsent, b.contains(k) ? b[k] : kAbsent, path + "." + k, out, limit);
    return;
  }
  if (a.is_array() && b.is_array() && a.size() == b.size()) {
    for (size_t i = 0; i < a.size(); ++i) DiffPaths(a[i], b[i], absl::StrCat(path, "[", i, "]"), out, limit);
    return;
  }
  out.push_back(path);
}

const nlohmann::json& Member(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

// The containers (or init containers) of an update: same count, each with an image without surrounding blanks.
// True when the count changed (nothing else is checked then, as kube-apiserver stops there).
bool ValidateContainerUpdates(const nlohmann::json& now, const nlohmann::json& before, const std::string& field,
                              std::vector<FieldError>& errors) {
  size_t n = now.is_array() ? now.size() : 0, o = before.is_array() ? before.size() : 0;
  if (n != o) {
    errors.push_back({"FieldValueForbidden", field, "Forbidden: pod updates may not add or remove containers"});
    return true;
  }
  for (size_t i = 0; i < n; ++i) {
    const nlohmann::json& image = Member(now[i], "image");
    std::string img = image.is_string() ? image.get<std::string>() : "";
    std::string at = absl::StrCat(field, "[", i, "].image");
    if (img.empty()) errors.push_back({"FieldValueRequired", at, "Required value"});
    else if (absl::StripAsciiWhitespace(img).size() != img.size())
      errors.push_back({"FieldValueInvalid", at,
                        absl::StrCat("Invalid value: \"", img, "\": must not have leading or trailing whitespace")});
  }
  return false;
}

}  // namespace

std::vector<FieldError> ValidatePodUpdate(const nlohmann::json& old_pod, const nlohmann::json& new_pod) {
  std::vector<FieldError> errors;
  const nlohmann::json& os = Member(old_pod, "spec");
  const nlohmann::json& ns = Member(new_pod, "spec");
  if (os == ns) return errors;  // the common update (metadata, finalizers): nothing to check
  if (ValidateContainerUpdates(Member(ns, "containers"), Member(os, "containers"), "spec.containers", errors))
    return errors;
  if (ValidateContainerUpdates(Member(ns, "initContainers"), Member(os, "initContainers"), "spec.initContainers",
                               errors))
    return errors;
  // activeDeadlineSeconds: from nil to a value, or lowered; never raised, never removed.
  const nlohmann::json& new_ads = Member(ns, "activeDeadlineSeconds");
  const nlohmann::json& old_ads = Member(os, "activeDeadlineSeconds");
  if (new_ads.is_number_integer()) {
    int64_t v = new_ads.get<int64_t>();
    if (v < 0 || v > 2147483647) {
      errors.push_back({"FieldValueInvalid", "spec.activeDeadlineSeconds",
                        absl::StrCat("Invalid value: ", v, ": must be between 0 and 2147483647, inclusive")});
      return errors;
    }
    if (old_ads.is_number_integer() && old_ads.get<int64_t>() < v) {
      errors.push_back({"FieldValueInvalid", "spec.activeDeadlineSeconds",
                        absl::StrCat("Invalid value: ", v, ": must be less than or equal to previous value")});
      return errors;
    }
  } else if (old_ads.is_number_integer()) {
    errors.push_back({"FieldValueInvalid", "spec.activeDeadlineSeconds",
                      "Invalid value: \"null\": must not update from a positive integer to nil value"});
  }
  // tolerations: every existing one is still there (its tolerationSeconds may change).
  const nlohmann::json& new_tol = Member(ns, "tolerations");
  const nlohmann::json& old_tol = Member(os, "tolerations");
  if (old_tol.is_array()) {
    for (const auto& o : old_tol) {
      nlohmann::json want = Normalized(o);
      want.erase("tolerationSeconds");
      bool found = false;
      if (new_tol.is_array())
        for (const auto& t : new_tol) {
          nlohmann::json have = Normalized(t);
          have.erase("tolerationSeconds");
          if (have == want) { found = true; break; }
        }
      if (!found) {
        errors.push_back({"FieldValueForbidden", "spec.tolerations",
                          "Forbidden: existing toleration can not be modified except its tolerationSeconds"});
        break;
      }
    }
  }
  // schedulingGates: removals only.
  const nlohmann::json& new_gates = Member(ns, "schedulingGates");
  const nlohmann::json& old_gates = Member(os, "schedulingGates");
  if (new_gates.is_array())
    for (const auto& g : new_gates) {
      bool known = false;
      if (old_gates.is_array())
        for (const auto& o : old_gates) known = known || Member(o, "name") == Member(g, "name");
      if (!known) {
        errors.push_back({"FieldValueForbidden", "spec.schedulingGates",
                          absl::StrCat("Forbidden: only deletion is allowed, but found new scheduling gate '",
                                       Member(g, "name").is_string() ? Member(g, "name").get<std::string>() : "",
                                       "'")});
        break;
      }
    }
  // Everything else must be unchanged: take the mutable fields from the old spec and compare.
  nlohmann::json munged = ns.is_object() ? ns : nlohmann::json::object();
  for (const char* list : {"containers", "initContainers"}) {
    const nlohmann::json& old_list = Member(os, list);
    if (!munged.contains(list) || !munged[list].is_array() || !old_list.is_array()) continue;
    for (size_t i = 0; i < munged[list].size() && i < old_list.size(); ++i) {
      if (!munged[list][i].is_object()) continue;
      const nlohmann::json& img = Member(old_list[i], "image");
      if (img.is_null()) munged[list][i].erase("image");
      else munged[list][i]["image"] = img;
    }
  }
  for (const char* f : {"activeDeadlineSeconds", "schedulingGates", "tolerations"}) {
    if (Member(os, f).is_null()) munged.erase(f);
    else munged[f] = os[f];
  }
  const nlohmann::json& old_grace = Member(os, "terminationGracePeriodSeconds");
  if (old_grace.is_number_integer() && old_grace.get<int64_t>() < 0 && Member(munged, "terminationGracePeriodSeconds") == 1)
    munged["terminationGracePeriodSeconds"] = old_grace;
  // A binding: nodeName set where it was empty.
  if (Member(os, "nodeName").is_null() || Member(os, "nodeName") == "") munged.erase("nodeName");
  nlohmann::json before = Normalized(os.is_object() ? os : nlohmann::json::object());
  if (Member(os, "nodeName").is_null() || Member(os, "nodeName") == "") before.erase("nodeName");
  nlohmann::json after = Normalized(munged);
  if (before != after) {
    std::vector<std::string> changed;
    DiffPaths(before, after, "spec", changed, 5);
    errors.push_back(
        {"FieldValueForbidden", "spec",
         absl::StrCat("Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                      "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
                      "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set "
                      "to 1 if it was previously negative) (changed: ",
                      absl::StrJoin(changed, ", "), ")")});
  }
  return errors;
}

nlohmann::json SemanticForm(const nlohmann::json& v) { return Normalized(v); }

std::string QualifiedName(const ResourceType& type, std::string_view name) {
  return absl::StrCat(type.Id(), " \"", std::string(name), "\"");
}

}  // namespace cloneset::devcluster
