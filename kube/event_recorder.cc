#include "kube/event_recorder.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/time_format.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

// Invalid UTF-8 in a message (it can quote a user's value) is replaced by U+FFFD instead of making dump() throw:
// an event is best-effort and must never take the process down.
std::string Dump(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string FormatEventTime(absl::Time t) {
  return base::FormatTime(t);
}

EventRecorder::EventRecorder(RestClient& client, EventRecorderOptions options)
    : client_(client),
      opts_(std::move(options)),
      clock_(opts_.clock ? *opts_.clock : base::RealClock::Get()),
      series_(opts_.max_entries),
      spam_buckets_(opts_.max_entries) {}

size_t EventRecorder::cache_size() const {
  absl::MutexLock l(&mu_);
  return series_.size();
}

int64_t EventRecorder::dropped() const {
  absl::MutexLock l(&mu_);
  return dropped_;
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
  if (opts_.spam_burst > 0) {
    // client-go's spam key: the source and the involved object, not the reason or the message.
    const std::string spam_key = absl::StrCat(opts_.component, "\x1f", opts_.host, "\x1f", object.kind, "\x1f",
                                              object.namespace_, "\x1f", object.name, "\x1f", object.uid, "\x1f",
                                              object.api_version);
    std::unique_ptr<TokenBucket>* bucket = spam_buckets_.Find(spam_key);
    if (bucket == nullptr) {
      const double qps = 1.0 / std::max(absl::ToDoubleSeconds(opts_.spam_refill), 1e-9);
      bucket = &spam_buckets_.Insert(spam_key, std::make_unique<TokenBucket>(qps, opts_.spam_burst, now));
    }
    if (!(*bucket)->TryTake(now)) {
      ++dropped_;
      return absl::OkStatus();  // best-effort, as client-go: a dropped event is not an error
    }
  }
  Series* series = series_.Find(key);
  if (series != nullptr && now - series->last < opts_.aggregation_window) {
    Series& e = *series;
    const nlohmann::json patch = {{"count", e.count + 1}, {"lastTimestamp", FormatEventTime(now)}};
    auto r = client_.Patch(absl::StrCat("/api/v1/namespaces/", e.event_namespace, "/events/", e.event_name),
                           PatchType::kMerge, Dump(patch));
    if (r.ok()) {
      e.count += 1;
      e.last = now;
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
  nlohmann::json involved = {{"apiVersion", object.api_version}, {"kind", object.kind},
                             {"namespace", object.namespace_},    {"name", object.name},
                             {"uid", object.uid}};
  if (!object.resource_version.empty()) involved["resourceVersion"] = object.resource_version;
  const nlohmann::json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"involvedObject", involved},
      {"type", std::string(type)},
      {"reason", std::string(reason)},
      {"message", std::string(message)},
      {"count", 1},
      {"firstTimestamp", time},
      {"lastTimestamp", time},
      {"source", {{"component", opts_.component}, {"host", opts_.host}}},
      {"reportingComponent", opts_.component},
      {"reportingInstance", opts_.host},
  };
  auto r = client_.Create(absl::StrCat("/api/v1/namespaces/", ns, "/events"), Dump(event));
  if (!r.ok()) return r.status();
  series_.Insert(key, Series{ns, name, 1, now, now});
  return absl::OkStatus();
}

}  // namespace cloneset::kube
