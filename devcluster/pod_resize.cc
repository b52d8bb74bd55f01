#include "devcluster/pod_resize.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/resources.h"
#include "devcluster/object_meta.h"

namespace cloneset::devcluster {
namespace {

using Json = nlohmann::json;

const Json& Member(const Json& obj, const char* key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

const Json& List(const Json& spec, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& list = Member(spec, key);
  return list.is_array() ? list : kEmpty;
}

std::string Text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// A sidecar: an init container with restartPolicy Always.
bool Restartable(const Json& container) { return Member(container, "restartPolicy") == "Always"; }

bool SameNames(const Json& a, const Json& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Member(a[i], "name") != Member(b[i], "name")) return false;
  }
  return true;
}

// Requests or limits of a container, with cpu and memory taken from `old_list` (dropCPUMemoryUpdates): null when
// the old container had none.
Json DropCpuMemoryUpdates(const Json& list, const Json& old_list) {
  if (!old_list.is_object()) return Json();
  Json out = list.is_object() ? list : Json::object();
  for (const char* name : {"cpu", "memory"}) {
    out.erase(name);
    if (old_list.contains(name)) out[name] = old_list[name];
  }
  return out;
}

// The container with the cpu/memory changes of a resize undone (dropCPUMemoryResourcesFromContainer).
Json DropCpuMemoryResources(Json container, const Json& old_container) {
  const Json& resources = Member(container, "resources");
  const Json& old_resources = Member(old_container, "resources");
  Json out = Json::object();
  const Json limits = DropCpuMemoryUpdates(Member(resources, "limits"), Member(old_resources, "limits"));
  const Json requests = DropCpuMemoryUpdates(Member(resources, "requests"), Member(old_resources, "requests"));
  if (!limits.is_null()) out["limits"] = limits;
  if (!requests.is_null()) out["requests"] = requests;
  if (container.is_object()) container["resources"] = std::move(out);
  return container;
}

bool Removed(const Json& list, const Json& old_list) {
  if (!old_list.is_object()) return false;
  for (const auto& [name, value] : old_list.items()) {
    if (!list.is_object() || !list.contains(name)) return true;
  }
  return false;
}

// The requests and limits of one container as validateResourceRequirements checks them: values not negative,
// requests not above limits.
void ValidateRequirements(const Json& container, const std::string& path, std::vector<FieldError>& errors) {
  const Json& resources = Member(container, "resources");
  const Json& limits = Member(resources, "limits");
  const Json& requests = Member(resources, "requests");
  for (const auto& [list, values] : {std::pair{"limits", &limits}, std::pair{"requests", &requests}}) {
    if (!values->is_object()) continue;
    for (const auto& [name, quantity] : values->items()) {
      const absl::StatusOr<__int128> v = common::JsonQuantityNanos(quantity);
      if (v.ok() && *v < 0) {
        errors.push_back({"FieldValueInvalid", absl::StrCat(path, ".", list, "[", name, "]"),
                          absl::StrCat("Invalid value: \"", Text(quantity), "\": must be greater than or equal to 0")});
      }
    }
  }
  if (!requests.is_object() || !limits.is_object()) return;
  for (const auto& [name, quantity] : requests.items()) {
    if (!limits.contains(name)) continue;
    const absl::StatusOr<__int128> request = common::JsonQuantityNanos(quantity);
    const absl::StatusOr<__int128> limit = common::JsonQuantityNanos(limits[name]);
    if (request.ok() && limit.ok() && *request > *limit) {
      errors.push_back({"FieldValueInvalid", path + ".requests",
                        absl::StrCat("Invalid value: \"", Text(quantity), "\": must be less than or equal to ", name,
                                     " limit of ", Text(limits[name]))});
    }
  }
}

bool HasPodLevelResources(const Json& spec) {
  const Json& resources = Member(spec, "resources");
  for (const char* list : {"requests", "limits"}) {
    const Json& values = Member(resources, list);
    if (values.is_object() && !values.empty()) return true;
  }
  return false;
}

// isPodResizeRequestSupported: the first running container decides whether its node reports resources.
bool NodeResizes(const Json& pod) {
  for (const Json& status : List(Member(pod, "status"), "containerStatuses")) {
    if (Member(Member(status, "state"), "running").is_object()) return Member(status, "resources").is_object();
  }
  return true;
}

}  // namespace

Json MergePodResize(const Json& prev, const Json& incoming) {
  Json next = prev;
  const Json& in_spec = Member(incoming, "spec");
  Json& spec = next["spec"];
  for (const char* key : {"containers", "initContainers"}) {
    const Json& in = List(in_spec, key);
    const Json& old = List(spec, key);
    if (!SameNames(in, old)) {
      // Added, removed, renamed or reordered: left as sent, for the validation to refuse.
      spec[key] = in;
      continue;
    }
    for (size_t i = 0; i < in.size(); ++i) {
      for (const char* field : {"resources", "resizePolicy"}) {
        const Json& value = Member(in[i], field);
        if (value.is_null()) {
          spec[key][i].erase(field);
        } else {
          spec[key][i][field] = value;
        }
      }
    }
  }
  return next;
}

std::vector<FieldError> ValidatePodResize(const Json& old_pod, const Json& new_pod) {
  std::vector<FieldError> errors;
  const Json& old_spec = Member(old_pod, "spec");
  const Json& new_spec = Member(new_pod, "spec");
  if (HasPodLevelResources(old_spec) || HasPodLevelResources(new_spec)) {
    return {{"FieldValueForbidden", "", "Forbidden: pods with pod-level resources cannot be resized"}};
  }
  if (Member(Member(Member(old_pod, "metadata"), "annotations"), "kubernetes.io/config.mirror").is_string()) {
    return {{"FieldValueForbidden", "", "Forbidden: static pods cannot be resized"}};
  }
  if (Member(Member(old_spec, "os"), "name") == "windows") {
    return {{"FieldValueForbidden", "", "Forbidden: windows pods cannot be resized"}};
  }
  // The new pod's spec, as every pod write validates it (the resource part of it).
  for (const char* key : {"containers", "initContainers"}) {
    const Json& list = List(new_spec, key);
    for (size_t i = 0; i < list.size(); ++i) {
      ValidateRequirements(list[i], absl::StrCat("spec.", key, "[", i, "].resources"), errors);
    }
  }
  const Json& old_status = Member(old_pod, "status");
  const Json& stored_qos = Member(old_status, "qosClass");
  const std::string old_qos = stored_qos.is_string() ? stored_qos.get<std::string>()
                                                     : std::string(common::QosClassName(common::PodQosClass(old_spec)));
  if (old_qos != common::QosClassName(common::PodQosClass(new_spec))) {
    // The value is the new pod's status.qosClass: the stored one, as a resize keeps the status.
    errors.push_back({"FieldValueInvalid", "spec",
                      absl::StrCat("Invalid value: \"", stored_qos.is_string() ? stored_qos.get<std::string>() : "",
                                   "\": Pod QOS Class may not change as a result of resizing")});
  }
  if (!NodeResizes(old_pod)) {
    errors.push_back({"FieldValueForbidden", "spec", "Forbidden: Pod running on node without support for resize"});
  }
  bool reordered = false;
  for (const auto& [key, what] : {std::pair{"containers", "containers"}, std::pair{"initContainers", "initContainers"}}) {
    const Json& now = List(new_spec, key);
    const Json& before = List(old_spec, key);
    if (now.size() != before.size()) {
      errors.push_back({"FieldValueForbidden", absl::StrCat("spec.", key),
                        absl::StrCat("Forbidden: ", what, " may not be added or removed on resize")});
      reordered = true;
      continue;
    }
    for (size_t i = 0; i < now.size(); ++i) {
      if (Member(now[i], "name") != Member(before[i], "name")) {
        errors.push_back({"FieldValueForbidden", absl::StrCat("spec.", key, "[", i, "].name"),
                          absl::StrCat("Forbidden: ", what, " may not be renamed or reordered on resize")});
        reordered = true;
      }
    }
  }
  if (reordered) return errors;
  const Json& init = List(old_spec, "initContainers");
  const Json& containers = List(old_spec, "containers");
  const auto removal = [&](const char* key, size_t i) {
    const Json& now = Member(List(new_spec, key)[i], "resources");
    const Json& before = Member(List(old_spec, key)[i], "resources");
    const std::string path = absl::StrCat("spec.", key, "[", i, "].resources");
    if (Removed(Member(now, "requests"), Member(before, "requests"))) {
      errors.push_back({"FieldValueForbidden", path + ".requests", "Forbidden: resource requests cannot be removed"});
    }
    if (Removed(Member(now, "limits"), Member(before, "limits"))) {
      errors.push_back({"FieldValueForbidden", path + ".limits", "Forbidden: resource limits cannot be removed"});
    }
  };
  for (size_t i = 0; i < init.size(); ++i) {
    if (Restartable(init[i])) removal("initContainers", i);
  }
  for (size_t i = 0; i < containers.size(); ++i) removal("containers", i);
  Json munged = new_spec;
  for (size_t i = 0; i < containers.size(); ++i) {
    munged["containers"][i] = DropCpuMemoryResources(munged["containers"][i], containers[i]);
    if (SemanticForm(munged["containers"][i]) != SemanticForm(containers[i])) {
      errors.push_back({"FieldValueForbidden", "spec", "Forbidden: only cpu and memory resources are mutable"});
    }
  }
  for (size_t i = 0; i < init.size(); ++i) {
    if (Restartable(init[i])) {
      munged["initContainers"][i] = DropCpuMemoryResources(munged["initContainers"][i], init[i]);
      if (SemanticForm(munged["initContainers"][i]) != SemanticForm(init[i])) {
        errors.push_back({"FieldValueForbidden", "spec",
                          "Forbidden: only cpu and memory resources for sidecar containers are mutable"});
      }
    } else if (SemanticForm(munged["initContainers"][i]) != SemanticForm(init[i])) {
      errors.push_back(
          {"FieldValueForbidden", "spec", "Forbidden: resources for non-sidecar init containers are immutable"});
    }
  }
  if (!errors.empty()) return errors;
  if (SemanticForm(munged) != SemanticForm(old_spec)) {
    errors.push_back({"FieldValueForbidden", "spec", "Forbidden: only cpu and memory resources are mutable"});
  }
  return errors;
}

}  // namespace cloneset::devcluster
