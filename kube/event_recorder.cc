#include "kube/event_recorder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/time_format.h"

namespace cloneset::kube {
namespace {

// A JSON string, escaped as nlohmann::json's dump() escapes it (the body used to be built with it: the bytes sent
// are the same). Built by hand because the nlohmann document of an Event, its allocations and its dump made the
// recorder's own CPU per event ~10 us (2.4 us now), half again the HTTP request that sends it (~20 us,
// kube/rest_client_bench.cc), once per pod in a rollout (issue 16, docs/performance.md).
void AppendJsonString(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('"');
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\b': out->append("\\b"); break;
      case '\f': out->append("\\f"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default:
        if (c < 0x20) {
          out->append("\\u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(ch);
        }
    }
  }
  out->push_back('"');
}

// `"key":"value"` (keys are ours and need no escaping), preceded by a comma unless first.
void AppendField(std::string* out, std::string_view key, std::string_view value, bool first = false) {
  if (!first) out->push_back(',');
  out->push_back('"');
  out->append(key);
  out->append("\":");
  AppendJsonString(out, value);
}

}  // namespace

std::string FormatEventTime(absl::Time t) {
  return base::FormatTime(t);
}

EventRecorder::EventRecorder(RestClient& client, EventRecorderOptions options)
    : client_(client), opts_(std::move(options)), clock_(opts_.clock ? *opts_.clock : base::RealClock::Get()) {}

size_t EventRecorder::cache_size() const {
  absl::MutexLock l(&mu_);
  return lru_.size();
}

absl::Status EventRecorder::Event(const ObjectReference& object, std::string_view type,
                                  std::string_view reason, std::string_view message) {
  // Same grouping as client-go's EventCorrelator: source, object, type,
  // reason and message.
  const std::string key = absl::StrCat(opts_.component, "\x1f", object.kind, "\x1f", object.namespace_, "\x1f",
                                       object.name, "\x1f", object.uid, "\x1f", std::string(type), "\x1f",
                                       std::string(reason), "\x1f", std::string(message));
  const absl::Time now = clock_.Now();
  absl::MutexLock l(&mu_);
  auto it = index_.find(key);
  if (it != index_.end() && now - it->second->last < opts_.aggregation_window) {
    Entry& e = *it->second;
    const std::string patch = absl::StrCat(R"({"count":)", e.count + 1, R"(,"lastTimestamp":")", FormatEventTime(now),
                                           R"("})");
    auto r = client_.Patch(absl::StrCat("/api/v1/namespaces/", e.event_namespace, "/events/", e.event_name),
                           PatchType::kMerge, patch);
    if (r.ok()) {
      e.count += 1;
      e.last = now;
      lru_.splice(lru_.begin(), lru_, it->second);
      return absl::OkStatus();
    }
    if (!absl::IsNotFound(r.status())) return r.status();
    // The Event expired on the server: start a new series below.
  }
  return Create(object, type, reason, message, key, now);
}

absl::Status EventRecorder::Create(const ObjectReference& object, std::string_view type,
                                   std::string_view reason, std::string_view message, const std::string& key,
                                   absl::Time now) {
  const std::string ns = object.namespace_.empty() ? "default" : object.namespace_;
  // client-go names events "<object>.<unix nanos in hex>"; keep them unique
  // even when the clock does not move between two events.
  last_suffix_ = std::max(last_suffix_ + 1, absl::ToUnixNanos(now));
  const std::string name = absl::StrFormat("%s.%x", object.name, last_suffix_);
  const std::string time = FormatEventTime(now);
  // The fields in the order nlohmann::json dumped them (its objects are sorted by key).
  std::string event = "{";
  event.reserve(640 + message.size());
  AppendField(&event, "apiVersion", "v1", /*first=*/true);
  absl::StrAppend(&event, R"(,"count":1)");
  AppendField(&event, "firstTimestamp", time);
  event.append(R"(,"involvedObject":{)");
  AppendField(&event, "apiVersion", object.api_version, /*first=*/true);
  AppendField(&event, "kind", object.kind);
  AppendField(&event, "name", object.name);
  AppendField(&event, "namespace", object.namespace_);
  if (!object.resource_version.empty()) AppendField(&event, "resourceVersion", object.resource_version);
  AppendField(&event, "uid", object.uid);
  event.push_back('}');
  AppendField(&event, "kind", "Event");
  AppendField(&event, "lastTimestamp", time);
  AppendField(&event, "message", message);
  event.append(R"(,"metadata":{)");
  AppendField(&event, "name", name, /*first=*/true);
  AppendField(&event, "namespace", ns);
  event.push_back('}');
  AppendField(&event, "reason", reason);
  AppendField(&event, "reportingComponent", opts_.component);
  AppendField(&event, "reportingInstance", opts_.host);
  event.append(R"(,"source":{)");
  AppendField(&event, "component", opts_.component, /*first=*/true);
  AppendField(&event, "host", opts_.host);
  event.push_back('}');
  AppendField(&event, "type", type);
  event.push_back('}');
  auto r = client_.Create(absl::StrCat("/api/v1/namespaces/", ns, "/events"), event);
  if (!r.ok()) return r.status();
  if (auto it = index_.find(key); it != index_.end()) {
    lru_.erase(it->second);
    index_.erase(it);
  }
  lru_.push_front(Entry{key, ns, name, 1, now, now});
  index_[key] = lru_.begin();
  while (lru_.size() > std::max<size_t>(1, opts_.max_entries)) {
    index_.erase(lru_.back().key);
    lru_.pop_back();
  }
  return absl::OkStatus();
}

}  // namespace cloneset::kube
