#include "clonesetctl/sim_objects.h"


#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/time_format.h"
#include "kube/object_patch.h"
#include "snapshot/snapshot.h"

namespace cloneset::clonesetctl::sim {

// A timestamp the simulation writes itself (creation, deletion, the kubelet's conditions). metav1.Time has whole
// seconds, but the simulated clock moves in fractions of one (a 200ms start delay, availability 1ms after
// minReadySeconds) and the timeline has always been computed at that resolution, so the fraction is kept:
// base::ParseTime, hence the executor's decoders, read it.
std::string SimTime(absl::Time t) {
  const absl::Time whole = absl::FromUnixSeconds(absl::ToUnixSeconds(t));
  const int64_t nanos = absl::ToInt64Nanoseconds(t - whole);
  std::string text = base::FormatTime(whole);
  if (nanos == 0 || text.empty() || text.back() != 'Z') return text;
  text.pop_back();
  return absl::StrCat(text, absl::StrFormat(".%09d", nanos), "Z");
}

absl::StatusOr<Json> ParseObject(std::string_view text, std::string_view what) {
  Json doc = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": malformed JSON"));
  if (!doc.is_object()) return absl::InvalidArgumentError(absl::StrCat(std::string(what), ": expected a JSON object"));
  return doc;
}

Failed CheckPreconditions(const Json& body, const char* field, const Json& stored) {
  const auto want = body.find(field);
  if (want == body.end() || !want->is_object()) return Failed::kNone;
  const auto meta = stored.find("metadata");
  const auto mismatch = [&](const char* key) {
    const auto w = want->find(key);
    if (w == want->end() || !w->is_string() || w->get_ref<const std::string&>().empty()) return false;
    if (meta == stored.end() || !meta->is_object()) return true;
    const auto have = meta->find(key);
    return have == meta->end() || *have != *w;
  };
  if (mismatch("uid")) return Failed::kUid;
  if (mismatch("resourceVersion")) return Failed::kVersion;
  return Failed::kNone;
}

// `stored` with the request's body applied as its content type says (kind: the object's, for the strategic merge).
absl::StatusOr<Json> ApplyRequest(const snapshot::ApiRequest& req, const Json& body, const Json& stored,
                                  std::string_view kind) {
  if (req.content_type == snapshot::kStrategicMergePatch) return kube::ApplyStrategicMergePatch(stored, body, kind);
  if (req.content_type == snapshot::kMergePatch) return kube::ApplyMergePatch(stored, body);
  return absl::InvalidArgumentError(absl::StrCat(req.path, ": unsupported content type ", req.content_type));
}

// The executor's decoders over a stored document.
namespace {
template <typename Message>
absl::Status Store(absl::StatusOr<Message> decoded, Message* out) {
  if (!decoded.ok()) return decoded.status();
  *out = *std::move(decoded);
  return absl::OkStatus();
}
}  // namespace
absl::Status Decode(const Json& doc, pb::Pod* out) { return Store(snapshot::PodFromJson(doc.dump()), out); }
absl::Status Decode(const Json& doc, pb::PersistentVolumeClaim* out) {
  return Store(snapshot::PvcFromJson(doc.dump()), out);
}
absl::Status Decode(const Json& doc, pb::ControllerRevision* out) {
  return Store(snapshot::RevisionFromJson(doc.dump()), out);
}
absl::Status Decode(const Json& doc, pb::CloneSet* out) { return Store(snapshot::CloneSetFromJson(doc.dump()), out); }

}  // namespace cloneset::clonesetctl::sim
