// PodFromJson / PodListFromJson with simdjson On-Demand: one forward pass, fields in any order, only the fields
// of pb::Pod are copied (managedFields, volumes, probes, ... are skipped unread). The executor decodes every pod
// watch event and every status write's returned pod with it, so the pass allocates nothing it does not keep: a
// field's path is text only when an error names it (Where), the input is copied into one padded buffer per thread,
// and a caller that decodes pod after pod passes the same message (cleared here, so its strings and repeated
// entries keep their capacity).
#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "simdjson.h"
#include "snapshot/json_fields.h"
#include "snapshot/snapshot.h"

namespace cloneset::snapshot {
namespace {

namespace od = simdjson::ondemand;

constexpr std::string_view kBarrierEnv = "KRUISE_CONTAINER_BARRIER";
constexpr std::string_view kPriorityEnv = "KRUISE_CONTAINER_PRIORITY";

// Where in the document a value is: a chain of keys and indexes on the decoder's stack, joined into the dotted
// path ("items[1].metadata.uid") only for an error message.
class Where {
 public:
  Where() = default;
  Where(const Where& parent, std::string_view key) : parent_(&parent), key_(key) {}
  Where(const Where& parent, size_t index) : parent_(&parent), index_(index), is_index_(true) {}
  std::string Text() const {
    if (parent_ == nullptr) return std::string();
    const std::string parent = parent_->Text();
    return is_index_ ? internal::Index(parent, index_) : internal::Path(parent, key_);
  }

 private:
  const Where* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool is_index_ = false;
};

absl::Status Fail(const Where& where, std::string_view what) {
  return absl::InvalidArgumentError(internal::Cat(where.Text(), ": ", what));
}

absl::Status TypeFail(const Where& where, std::string_view expected, simdjson::error_code e) {
  if (e == simdjson::INCORRECT_TYPE || e == simdjson::NUMBER_OUT_OF_RANGE) {
    return Fail(where, internal::Cat("expected ", expected));
  }
  return Fail(where, internal::Cat("malformed JSON (", simdjson::error_message(e), ")"));
}

// Calls fn(key, value) for every non-null member of `v`, which must be an object.
template <typename Fn>
absl::Status ForEachField(od::value v, const Where& where, Fn&& fn) {
  od::object obj;
  if (auto e = v.get_object().get(obj)) return TypeFail(where, "object", e);
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return TypeFail(where, "object", e);
    od::value value;
    if (auto e = field.value().get(value)) return TypeFail(where, "object", e);
    od::json_type type;
    if (auto e = value.type().get(type)) return TypeFail(Where(where, key), "a value", e);
    if (type == od::json_type::null) continue;
    SNAPSHOT_RETURN_IF_ERROR(fn(key, value));
  }
  return absl::OkStatus();
}

// Calls fn(element, value) for every element of `v`, which must be an array; `element` is the element's place.
template <typename Fn>
absl::Status ForEachElement(od::value v, const Where& where, Fn&& fn) {
  od::array arr;
  if (auto e = v.get_array().get(arr)) return TypeFail(where, "array", e);
  size_t i = 0;
  for (auto element : arr) {
    const Where at(where, i);
    od::value value;
    if (auto e = element.get(value)) return TypeFail(at, "a value", e);
    SNAPSHOT_RETURN_IF_ERROR(fn(at, value));
    ++i;
  }
  return absl::OkStatus();
}

absl::Status GetString(od::value v, const Where& where, std::string* out) {
  std::string_view s;
  if (auto e = v.get_string().get(s)) return TypeFail(where, "string", e);
  out->assign(s);
  return absl::OkStatus();
}

absl::Status GetBool(od::value v, const Where& where, bool* out) {
  if (auto e = v.get_bool().get(*out)) return TypeFail(where, "boolean", e);
  return absl::OkStatus();
}

absl::Status GetInt64(od::value v, const Where& where, int64_t* out) {
  if (auto e = v.get_int64().get(*out)) return TypeFail(where, "integer", e);
  return absl::OkStatus();
}

absl::Status GetTime(od::value v, const Where& where, google::protobuf::Timestamp* out) {
  std::string_view s;
  if (auto e = v.get_string().get(s)) return TypeFail(where, "RFC3339 string", e);
  absl::StatusOr<absl::Time> t = base::ParseTime(s);
  if (!t.ok()) return internal::TimeError(where.Text(), s);  // the path is built only for the error
  internal::SetTimestamp(*t, out);
  return absl::OkStatus();
}

absl::Status GetStringMap(od::value v, const Where& where, google::protobuf::Map<std::string, std::string>* out) {
  return ForEachField(v, where, [&](std::string_view key, od::value value) {
    std::string_view s;
    if (auto e = value.get_string().get(s)) return TypeFail(Where(where, key), "string", e);
    (*out)[std::string(key)].assign(s);
    return absl::OkStatus();
  });
}

absl::Status GetOwnerReference(od::value v, const Where& where, pb::OwnerReference* out) {
  return ForEachField(v, where, [&](std::string_view key, od::value value) {
    const Where at(where, key);
    if (key == "apiVersion") return GetString(value, at, out->mutable_api_version());
    if (key == "kind") return GetString(value, at, out->mutable_kind());
    if (key == "name") return GetString(value, at, out->mutable_name());
    if (key == "uid") return GetString(value, at, out->mutable_uid());
    bool b = false;
    if (key == "controller") {
      SNAPSHOT_RETURN_IF_ERROR(GetBool(value, at, &b));
      out->set_controller(b);
    } else if (key == "blockOwnerDeletion") {
      SNAPSHOT_RETURN_IF_ERROR(GetBool(value, at, &b));
      out->set_block_owner_deletion(b);
    }
    return absl::OkStatus();
  });
}

absl::Status GetMeta(od::value v, const Where& where, pb::ObjectMeta* out) {
  return ForEachField(v, where, [&](std::string_view key, od::value value) -> absl::Status {
    const Where at(where, key);
    if (key == "name") return GetString(value, at, out->mutable_name());
    if (key == "namespace") return GetString(value, at, out->mutable_namespace_());
    if (key == "uid") return GetString(value, at, out->mutable_uid());
    if (key == "resourceVersion") return GetString(value, at, out->mutable_resource_version());
    if (key == "generation") {
      int64_t g = 0;
      SNAPSHOT_RETURN_IF_ERROR(GetInt64(value, at, &g));
      out->set_generation(g);
      return absl::OkStatus();
    }
    if (key == "labels") return GetStringMap(value, at, out->mutable_labels());
    if (key == "annotations") return GetStringMap(value, at, out->mutable_annotations());
    if (key == "creationTimestamp") return GetTime(value, at, out->mutable_creation_timestamp());
    if (key == "deletionTimestamp") return GetTime(value, at, out->mutable_deletion_timestamp());
    if (key == "finalizers") {
      return ForEachElement(value, at, [&](const Where& f_at, od::value f) {
        return GetString(f, f_at, out->add_finalizers());
      });
    }
    if (key == "ownerReferences") {
      return ForEachElement(value, at, [&](const Where& r_at, od::value r) {
        return GetOwnerReference(r, r_at, out->add_owner_references());
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

absl::Status GetEnvPriority(od::value env, const Where& where, pb::Container* out) {
  return ForEachElement(env, where, [&](const Where& item_at, od::value item) {
    // Views into the parser's string buffer, valid for the whole document.
    std::string_view name, value, key;
    const auto view = [](od::value v, const Where& at, std::string_view* s) -> absl::Status {
      if (auto e = v.get_string().get(*s)) return TypeFail(at, "string", e);
      return absl::OkStatus();
    };
    SNAPSHOT_RETURN_IF_ERROR(ForEachField(item, item_at, [&](std::string_view k, od::value v) -> absl::Status {
      const Where at(item_at, k);
      if (k == "name") return view(v, at, &name);
      if (k == "value") return view(v, at, &value);
      if (k != "valueFrom") return absl::OkStatus();
      return ForEachField(v, at, [&](std::string_view k2, od::value ref) -> absl::Status {
        if (k2 != "configMapKeyRef") return absl::OkStatus();
        const Where ref_at(at, k2);
        return ForEachField(ref, ref_at, [&](std::string_view k3, od::value kv) -> absl::Status {
          if (k3 == "key") return view(kv, Where(ref_at, k3), &key);
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

// resources.requests/limits: the cpu and memory quantities (the resources an in-place resize reads), each a string
// or a number (resource.Quantity reads both; a number is kept as its literal).
absl::Status GetResourceList(od::value v, const Where& where, google::protobuf::Map<std::string, std::string>* out) {
  return ForEachField(v, where, [&](std::string_view name, od::value q) -> absl::Status {
    if (name != "cpu" && name != "memory") return absl::OkStatus();
    const Where at(where, name);
    od::json_type type;
    if (auto e = q.type().get(type)) return TypeFail(at, "quantity", e);
    if (type == od::json_type::number) {
      std::string_view literal = q.raw_json_token();
      while (!literal.empty() && (literal.back() == ' ' || literal.back() == '\n' || literal.back() == '\t' ||
                                  literal.back() == '\r')) {
        literal.remove_suffix(1);
      }
      (*out)[std::string(name)].assign(literal);
      return absl::OkStatus();
    }
    return GetString(q, at, &(*out)[std::string(name)]);
  });
}

absl::Status GetResources(od::value v, const Where& where, google::protobuf::Map<std::string, std::string>* requests,
                          google::protobuf::Map<std::string, std::string>* limits) {
  return ForEachField(v, where, [&](std::string_view k, od::value list) -> absl::Status {
    if (k == "requests") return GetResourceList(list, Where(where, k), requests);
    if (k == "limits") return GetResourceList(list, Where(where, k), limits);
    return absl::OkStatus();
  });
}

// resizePolicy: [{resourceName, restartPolicy}]; the resources whose policy is RestartContainer.
absl::Status GetResizePolicy(od::value v, const Where& where, pb::Container* container) {
  return ForEachElement(v, where, [&](const Where& at, od::value item) -> absl::Status {
    std::string_view resource, policy;
    SNAPSHOT_RETURN_IF_ERROR(ForEachField(item, at, [&](std::string_view k, od::value f) -> absl::Status {
      std::string_view* into = k == "resourceName" ? &resource : k == "restartPolicy" ? &policy : nullptr;
      if (into == nullptr) return absl::OkStatus();
      if (auto e = f.get_string().get(*into)) return TypeFail(Where(at, k), "string", e);
      return absl::OkStatus();
    }));
    if (policy == "RestartContainer" && !resource.empty()) container->add_restart_on_resize(std::string(resource));
    return absl::OkStatus();
  });
}

absl::Status GetSpec(od::value v, const Where& where, pb::Pod* pod) {
  return ForEachField(v, where, [&](std::string_view key, od::value value) -> absl::Status {
    const Where at(where, key);
    if (key == "nodeName") return GetString(value, at, pod->mutable_node_name());
    if (key == "readinessGates") {
      return ForEachElement(value, at, [&](const Where& gate_at, od::value gate) {
        return ForEachField(gate, gate_at, [&](std::string_view k, od::value g) -> absl::Status {
          if (k == "conditionType") return GetString(g, Where(gate_at, k), pod->add_readiness_gates());
          return absl::OkStatus();
        });
      });
    }
    if (key == "containers") {
      return ForEachElement(value, at, [&](const Where& c_at, od::value c) {
        pb::Container* container = pod->add_containers();
        return ForEachField(c, c_at, [&](std::string_view k, od::value f) -> absl::Status {
          if (k == "name") return GetString(f, Where(c_at, k), container->mutable_name());
          if (k == "image") return GetString(f, Where(c_at, k), container->mutable_image());
          if (k == "env") return GetEnvPriority(f, Where(c_at, k), container);
          if (k == "resources") {
            return GetResources(f, Where(c_at, k), container->mutable_resource_requests(),
                                container->mutable_resource_limits());
          }
          if (k == "resizePolicy") return GetResizePolicy(f, Where(c_at, k), container);
          return absl::OkStatus();
        });
      });
    }
    return absl::OkStatus();
  });
}

absl::Status GetCondition(od::value v, const Where& where, pb::Condition* out) {
  return ForEachField(v, where, [&](std::string_view k, od::value f) -> absl::Status {
    const Where at(where, k);
    if (k == "type") return GetString(f, at, out->mutable_type());
    if (k == "status") return GetString(f, at, out->mutable_status());
    if (k == "reason") return GetString(f, at, out->mutable_reason());
    if (k == "message") return GetString(f, at, out->mutable_message());
    if (k == "lastTransitionTime") return GetTime(f, at, out->mutable_last_transition_time());
    return absl::OkStatus();
  });
}

absl::Status GetContainerStatus(od::value v, const Where& where, pb::ContainerStatus* out) {
  return ForEachField(v, where, [&](std::string_view k, od::value f) -> absl::Status {
    const Where at(where, k);
    if (k == "name") return GetString(f, at, out->mutable_name());
    if (k == "image") return GetString(f, at, out->mutable_image());
    if (k == "imageID") return GetString(f, at, out->mutable_image_id());
    if (k == "containerID") return GetString(f, at, out->mutable_container_id());
    if (k == "resources") return GetResources(f, at, out->mutable_resource_requests(), out->mutable_resource_limits());
    if (k == "ready") {
      bool b = false;
      SNAPSHOT_RETURN_IF_ERROR(GetBool(f, at, &b));
      out->set_ready(b);
    } else if (k == "restartCount") {
      int64_t n = 0;
      SNAPSHOT_RETURN_IF_ERROR(GetInt64(f, at, &n));
      if (n < 0 || n > INT32_MAX) return Fail(at, "out of range");
      out->set_restart_count(static_cast<int32_t>(n));
    }
    return absl::OkStatus();
  });
}

absl::Status GetStatus(od::value v, const Where& where, pb::Pod* pod) {
  return ForEachField(v, where, [&](std::string_view key, od::value value) -> absl::Status {
    const Where at(where, key);
    if (key == "phase") return GetString(value, at, pod->mutable_phase());
    if (key == "conditions") {
      return ForEachElement(value, at, [&](const Where& c_at, od::value c) {
        return GetCondition(c, c_at, pod->add_conditions());
      });
    }
    if (key == "containerStatuses") {
      return ForEachElement(value, at, [&](const Where& c_at, od::value c) {
        return GetContainerStatus(c, c_at, pod->add_container_statuses());
      });
    }
    return absl::OkStatus();
  });
}

absl::Status DecodePod(od::value v, const Where& where, PodParts parts, pb::Pod* pod) {
  return ForEachField(v, where, [&](std::string_view key, od::value value) -> absl::Status {
    if (key == "metadata") return GetMeta(value, Where(where, key), pod->mutable_metadata());
    if (key == "spec") return GetSpec(value, Where(where, key), pod);
    if (key == "status" && parts == PodParts::kAll) return GetStatus(value, Where(where, key), pod);
    return absl::OkStatus();
  });
}

absl::Status WithPrefix(std::string_view what, const absl::Status& st) {
  const std::string_view message(st.message().data(), st.message().size());
  return absl::InvalidArgumentError(internal::Cat(what, message.starts_with(':') ? "" : " ", message));
}

// The parser keeps its buffers between calls, and so does the padded copy of the input it reads; one of each per
// thread because the executor decodes on several threads (the watch, the apply workers).
od::parser& ThreadParser() {
  thread_local od::parser parser;
  return parser;
}

// The input with the padding simdjson reads past its end: in the thread's buffer for a pod (no allocation per
// event), in `large` for a document too big to keep a buffer of its size per thread (a LIST of many pods).
simdjson::padded_string_view Padded(std::string_view json, simdjson::padded_string& large) {
  constexpr size_t kKeptBufferMax = 64 * 1024;
  if (json.size() > kKeptBufferMax) {
    large = simdjson::padded_string(json);
    return simdjson::padded_string_view(large.data(), large.size(), large.size() + simdjson::SIMDJSON_PADDING);
  }
  thread_local std::string buffer;
  buffer.reserve(kKeptBufferMax + simdjson::SIMDJSON_PADDING);
  buffer.assign(json);
  return simdjson::padded_string_view(buffer.data(), buffer.size(), buffer.capacity());
}

absl::Status Iterate(std::string_view what, simdjson::padded_string_view padded, od::document* doc) {
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

absl::Status PodFromJson(std::string_view json, pb::Pod* out, PodParts parts) {
  out->Clear();
  simdjson::padded_string large;
  od::document doc;
  SNAPSHOT_RETURN_IF_ERROR(Iterate("Pod", Padded(json, large), &doc));
  od::value root;
  SNAPSHOT_RETURN_IF_ERROR(DocumentValue(doc, "Pod", &root));
  if (absl::Status st = DecodePod(root, Where(), parts, out); !st.ok()) return WithPrefix("Pod", st);
  return absl::OkStatus();
}

absl::StatusOr<pb::Pod> PodFromJson(std::string_view json) {
  pb::Pod pod;
  SNAPSHOT_RETURN_IF_ERROR(PodFromJson(json, &pod));
  return pod;
}

absl::StatusOr<std::vector<pb::Pod>> PodListFromJson(std::string_view json) {
  simdjson::padded_string large;
  od::document doc;
  SNAPSHOT_RETURN_IF_ERROR(Iterate("PodList", Padded(json, large), &doc));
  od::value root;
  SNAPSHOT_RETURN_IF_ERROR(DocumentValue(doc, "PodList", &root));
  std::vector<pb::Pod> pods;
  const Where top;
  absl::Status st = ForEachField(root, top, [&](std::string_view key, od::value value) -> absl::Status {
    if (key != "items") return absl::OkStatus();
    return ForEachElement(value, Where(top, key), [&](const Where& item_at, od::value item) {
      pods.emplace_back();
      return DecodePod(item, item_at, PodParts::kAll, &pods.back());
    });
  });
  if (!st.ok()) return WithPrefix("PodList", st);
  return pods;
}

}  // namespace cloneset::snapshot
