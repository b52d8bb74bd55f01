// PodFromJson / PodListFromJson with simdjson On-Demand: one forward pass, fields in any order, only the fields
// of pb::Pod are copied. Error paths are built only when an error happens.
#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"
#include "simdjson.h"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kBarrierEnv = "KRUISE_CONTAINER_BARRIER";
constexpr std::string_view kPriorityEnv = "KRUISE_CONTAINER_PRIORITY";

// Where in the document we are: the list item prefix plus a dotted path, joined lazily for messages.
absl::Status Fail(std::string_view base, std::string_view path, std::string_view what) {
  return absl::InvalidArgumentError(internal::Cat(internal::Path(base, path), ": ", what));
}

absl::Status TypeFail(std::string_view base, std::string_view path, std::string_view expected,
                      simdjson::error_code e) {
  if (e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_OUT_OF_RANGE) {
    return Fail(base, path, internal::Cat("expected ", expected));
  }
  return Fail(base, path, internal::Cat("malformed JSON (", simdjson::error_message(e), ")"));
}

// Calls fn(key, value) for every non-null member of `v`, which must be an object.
template <typename Fn>
absl::Status ForEachField(od::value v, std::string_view base, std::string_view path, Fn&& fn) {
  od::object obj;
  if (auto e = v.get_object().get(obj)) return TypeFail(base, path, "object", e);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return TypeFail(base, path, "object", e);
    od::value value;
    if (auto e = field.value().get(value)) return TypeFail(base, path, "object", e);
    od::json_type type;
    if (auto e = value.type().get(type)) return TypeFail(base, internal::Path(path, key), "a value", e);
    if (type == od::json_type::null) continue;
    SNAPSHOT_RETURN_IF_ERROR(fn(key, value));
  }
  return absl::OkStatus();
}

// Calls fn(index, value) for every element of `v`, which must be an array.
template <typename Fn>
absl::Status ForEachElement(od::value v, std::string_view base, std::string_view path, Fn&& fn) {
  od::array arr;
  if (auto e = v.get_array().get(arr)) return TypeFail(base, path, "array", e);
  size_t i = 0;
  for (auto element : arr) {
    od::value value;
    if (auto e = element.get(value)) return TypeFail(base, internal::Index(path, i), "a value", e);
    SNAPSHOT_RETURN_IF_ERROR(fn(i, value));
    ++i;
  }
  return absl::OkStatus();
}

absl::Status GetString(od::value v, std::string_view base, std::string_view path, std::string* out) {
  std::string_view s;
  if (auto e = v.get_string().get(s)) return TypeFail(base, path, "string", e);
  out->assign(s);
  return absl::OkStatus();
}

absl::Status GetBool(od::value v, std::string_view base, std::string_view path, bool* out) {
  if (auto e = v.get_bool().get(*out)) return TypeFail(base, path, "boolean", e);
  return absl::OkStatus();
}

absl::Status GetInt64(od::value v, std::string_view base, std::string_view path, int64_t* out) {
  if (auto e = v.get_int64().get(*out)) return TypeFail(base, path, "integer", e);
  return absl::OkStatus();
}

absl::Status GetTime(od::value v, std::string_view base, std::string_view path, google::protobuf::Timestamp* out) {
  std::string_view s;
  if (auto e = v.get_string().get(s)) return TypeFail(base, path, "RFC3339 string", e);
  return internal::ParseTime(s, internal::Path(base, path), out);
}

absl::Status GetStringMap(od::value v, std::string_view base, std::string_view path,
                          google::protobuf::Map<std::string, std::string>* out) {
  return ForEachField(v, base, path, [&](std::string_view key, od::value value) {
    std::string_view s;
    if (auto e = value.get_string().get(s)) return TypeFail(base, internal::Path(path, key), "string", e);
    (*out)[std::string(key)] = std::string(s);
    return absl::OkStatus();
  });
}

absl::Status GetOwnerReference(od::value v, std::string_view base, const std::string& path, pb::OwnerReference* out) {
  return ForEachField(v, base, path, [&](std::string_view key, od::value value) {
    const std::string_view p = path;  // full member paths only on error
    if (key == "apiVersion") return GetString(value, base, internal::Path(p, key), out->mutable_api_version());
    if (key == "kind") return GetString(value, base, internal::Path(p, key), out->mutable_kind());
    if (key == "name") return GetString(value, base, internal::Path(p, key), out->mutable_name());
    if (key == "uid") return GetString(value, base, internal::Path(p, key), out->mutable_uid());
    bool b = false;
    if (key == "controller") {
      SNAPSHOT_RETURN_IF_ERROR(GetBool(value, base, internal::Path(p, key), &b));
      out->set_controller(b);
    } else if (key == "blockOwnerDeletion") {
      SNAPSHOT_RETURN_IF_ERROR(GetBool(value, base, internal::Path(p, key), &b));
      out->set_block_owner_deletion(b);
    }
    return absl::OkStatus();
  });
}

absl::Status GetMeta(od::value v, std::string_view base, pb::ObjectMeta* out) {
  return ForEachField(v, base, "metadata", [&](std::string_view key, od::value value) -> absl::Status {
    const std::string path = internal::Cat("metadata.", key);
    if (key == "name") return GetString(value, base, path, out->mutable_name());
    if (key == "namespace") return GetString(value, base, path, out->mutable_namespace_());
    if (key == "uid") return GetString(value, base, path, out->mutable_uid());
    if (key == "resourceVersion") return GetString(value, base, path, out->mutable_resource_version());
    if (key == "generation") {
      int64_t g = 0;
      SNAPSHOT_RETURN_IF_ERROR(GetInt64(value, base, path, &g));
      out->set_generation(g);
      return absl::OkStatus();
    }
    if (key == "labels") return GetStringMap(value, base, path, out->mutable_labels());
    if (key == "annotations") return GetStringMap(value, base, path, out->mutable_annotations());
    if (key == "creationTimestamp") return GetTime(value, base, path, out->mutable_creation_timestamp());
    if (key == "deletionTimestamp") return GetTime(value, base, path, out->mutable_deletion_timestamp());
    if (key == "finalizers") {
      return ForEachElement(value, base, path, [&](size_t i, od::value f) {
        return GetString(f, base, internal::Index(path, i), out->add_finalizers());
      });
    }
    if (key == "ownerReferences") {
      return ForEachElement(value, base, path, [&](size_t i, od::value r) {
        return GetOwnerReference(r, base, internal::Index(path, i), out->add_owner_references());
      });
    }
    return absl::OkStatus();
  });
}

// Launch priority of a container (upstream GetContainerPriority): env KRUISE_CONTAINER_PRIORITY's value, or the
// number in env KRUISE_CONTAINER_BARRIER's configMapKeyRef key "p_<n>". Unparsable numbers count as 0, as upstream.
int32_t ParsePriority(std::string_view text) {
  if (text.substr(0, 2) == "p_") text.remove_prefix(2);
  int32_t n = 0;
  std::from_chars(text.data(), text.data() + text.size(), n);
  return n;
}

absl::Status GetEnvPriority(od::value env, std::string_view base, const std::string& path, pb::Container* out) {
  return ForEachElement(env, base, path, [&](size_t i, od::value item) {
    const std::string ip = internal::Index(path, i);
    std::string name, value, key;
    SNAPSHOT_RETURN_IF_ERROR(ForEachField(item, base, ip, [&](std::string_view k, od::value v) -> absl::Status {
      if (k == "name") return GetString(v, base, internal::Path(ip, k), &name);
      if (k == "value") return GetString(v, base, internal::Path(ip, k), &value);
      if (k != "valueFrom") return absl::OkStatus();
      const std::string vp = internal::Path(ip, "valueFrom");
      return ForEachField(v, base, vp, [&](std::string_view k2, od::value ref) -> absl::Status {
        if (k2 != "configMapKeyRef") return absl::OkStatus();
        const std::string rp = internal::Path(vp, k2);
        return ForEachField(ref, base, rp, [&](std::string_view k3, od::value kv) -> absl::Status {
          if (k3 == "key") return GetString(kv, base, internal::Path(rp, k3), &key);
          return absl::OkStatus();
        });
      });
    }));
    if (!out->has_launch_priority()) {
      if (name == kPriorityEnv) out->set_launch_priority(ParsePriority(value));
      if (name == kBarrierEnv && !key.empty()) out->set_launch_priority(ParsePriority(key));
    }
    return absl::OkStatus();
  });
}

absl::Status GetSpec(od::value v, std::string_view base, pb::Pod* pod) {
  return ForEachField(v, base, "spec", [&](std::string_view key, od::value value) -> absl::Status {
    if (key == "nodeName") return GetString(value, base, "spec.nodeName", pod->mutable_node_name());
    if (key == "readinessGates") {
      return ForEachElement(value, base, "spec.readinessGates", [&](size_t i, od::value gate) {
        const std::string gp = internal::Index("spec.readinessGates", i);
        return ForEachField(gate, base, gp, [&](std::string_view k, od::value g) -> absl::Status {
          if (k == "conditionType") return GetString(g, base, internal::Path(gp, k), pod->add_readiness_gates());
          return absl::OkStatus();
        });
      });
    }
    if (key == "containers") {
      return ForEachElement(value, base, "spec.containers", [&](size_t i, od::value c) {
        const std::string cp = internal::Index("spec.containers", i);
        pb::Container* container = pod->add_containers();
        return ForEachField(c, base, cp, [&](std::string_view k, od::value f) -> absl::Status {
          if (k == "name") return GetString(f, base, internal::Path(cp, k), container->mutable_name());
          if (k == "image") return GetString(f, base, internal::Path(cp, k), container->mutable_image());
          if (k == "env") return GetEnvPriority(f, base, internal::Path(cp, k), container);
          return absl::OkStatus();
        });
      });
    }
    return absl::OkStatus();
  });
}

absl::Status GetCondition(od::value v, std::string_view base, const std::string& path, pb::Condition* out) {
  return ForEachField(v, base, path, [&](std::string_view k, od::value f) -> absl::Status {
    if (k == "type") return GetString(f, base, internal::Path(path, k), out->mutable_type());
    if (k == "status") return GetString(f, base, internal::Path(path, k), out->mutable_status());
    if (k == "reason") return GetString(f, base, internal::Path(path, k), out->mutable_reason());
    if (k == "message") return GetString(f, base, internal::Path(path, k), out->mutable_message());
    if (k == "lastTransitionTime") return GetTime(f, base, internal::Path(path, k), out->mutable_last_transition_time());
    return absl::OkStatus();
  });
}

absl::Status GetContainerStatus(od::value v, std::string_view base, const std::string& path, pb::ContainerStatus* out) {
  return ForEachField(v, base, path, [&](std::string_view k, od::value f) -> absl::Status {
    if (k == "name") return GetString(f, base, internal::Path(path, k), out->mutable_name());
    if (k == "image") return GetString(f, base, internal::Path(path, k), out->mutable_image());
    if (k == "imageID") return GetString(f, base, internal::Path(path, k), out->mutable_image_id());
    if (k == "containerID") return GetString(f, base, internal::Path(path, k), out->mutable_container_id());
    if (k == "ready") {
      bool b = false;
      SNAPSHOT_RETURN_IF_ERROR(GetBool(f, base, internal::Path(path, k), &b));
      out->set_ready(b);
    } else if (k == "restartCount") {
      int64_t n = 0;
      SNAPSHOT_RETURN_IF_ERROR(GetInt64(f, base, internal::Path(path, k), &n));
      if (n < 0 || n > INT32_MAX) return Fail(base, internal::Path(path, k), "out of range");
      out->set_restart_count(static_cast<int32_t>(n));
    }
    return absl::OkStatus();
  });
}

absl::Status GetStatus(od::value v, std::string_view base, pb::Pod* pod) {
  return ForEachField(v, base, "status", [&](std::string_view key, od::value value) -> absl::Status {
    if (key == "phase") return GetString(value, base, "status.phase", pod->mutable_phase());
    if (key == "conditions") {
      return ForEachElement(value, base, "status.conditions", [&](size_t i, od::value c) {
        return GetCondition(c, base, internal::Index("status.conditions", i), pod->add_conditions());
      });
    }
    if (key == "containerStatuses") {
      return ForEachElement(value, base, "status.containerStatuses", [&](size_t i, od::value c) {
        return GetContainerStatus(c, base, internal::Index("status.containerStatuses", i),
                                  pod->add_container_statuses());
      });
    }
    return absl::OkStatus();
  });
}

absl::Status DecodePod(od::value v, std::string_view base, pb::Pod* pod) {
  return ForEachField(v, base, "", [&](std::string_view key, od::value value) -> absl::Status {
    if (key == "metadata") return GetMeta(value, base, pod->mutable_metadata());
    if (key == "spec") return GetSpec(value, base, pod);
    if (key == "status") return GetStatus(value, base, pod);
    return absl::OkStatus();
  });
}

absl::Status WithPrefix(std::string_view what, const absl::Status& st) {
  const std::string_view message(st.message().data(), st.message().size());
  return absl::InvalidArgumentError(internal::Cat(what, message.starts_with(':') ? "" : " ", message));
}

// The parser keeps its buffers between calls; one per thread because the executor decodes on several workers.
od::parser& ThreadParser() {
  thread_local od::parser parser;
  return parser;
}

absl::Status Iterate(std::string_view json, std::string_view what, const simdjson::padded_string& padded,
                     od::document* doc) {
  if (auto e = ThreadParser().iterate(padded).get(*doc)) {
    return absl::InvalidArgumentError(internal::Cat(what, ": malformed JSON (", simdjson::error_message(e), ")"));
  }
  return absl::OkStatus();
}

absl::Status DocumentValue(od::document& doc, std::string_view what, od::value* out) {
  // A document is not a value; its root object is reached through get_value (fails on scalars at the root).
  if (auto e = doc.get_value().get(*out)) {
    return absl::InvalidArgumentError(internal::Cat(what, ": expected a JSON object (", simdjson::error_message(e), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<pb::Pod> PodFromJson(std::string_view json) {
  const simdjson::padded_string padded(json);
  od::document doc;
  SNAPSHOT_RETURN_IF_ERROR(Iterate(json, "Pod", padded, &doc));
  od::value root;
  SNAPSHOT_RETURN_IF_ERROR(DocumentValue(doc, "Pod", &root));
  pb::Pod pod;
  if (absl::Status st = DecodePod(root, "", &pod); !st.ok()) {
    return WithPrefix("Pod", st);
  }
  return pod;
}

absl::StatusOr<std::vector<pb::Pod>> PodListFromJson(std::string_view json) {
  const simdjson::padded_string padded(json);
  od::document doc;
  SNAPSHOT_RETURN_IF_ERROR(Iterate(json, "PodList", padded, &doc));
  od::value root;
  SNAPSHOT_RETURN_IF_ERROR(DocumentValue(doc, "PodList", &root));
  std::vector<pb::Pod> pods;
  absl::Status st = ForEachField(root, "", "", [&](std::string_view key, od::value value) -> absl::Status {
    if (key != "items") return absl::OkStatus();
    return ForEachElement(value, "", "items", [&](size_t i, od::value item) {
      pods.emplace_back();
      return DecodePod(item, internal::Index("items", i), &pods.back());
    });
  });
  if (!st.ok()) return WithPrefix("PodList", st);
  return pods;
}

}  // namespace cloneset::snapshot
