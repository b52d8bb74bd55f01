// The stored objects of `clonesetctl simulate` (sim_cluster.h): the API server's side of a write (the request's
// preconditions, its body applied by content type, the executor's decoders over the stored document). Internal to
// clonesetctl.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cloneset/planner/v1/planner.pb.h"
#include "nlohmann/json.hpp"
#include "snapshot/patch.h"

namespace cloneset::clonesetctl::sim {

namespace pb = ::cloneset::planner::v1;
using Json = nlohmann::json;

// A timestamp the simulation writes itself (creation, deletion, the kubelet's conditions), with the simulated
// clock's fraction of a second kept.
std::string SimTime(absl::Time t);
// A request body or a POSTed object: a JSON object, or InvalidArgument naming `what`.
absl::StatusOr<Json> ParseObject(std::string_view text, std::string_view what);

// Which precondition of a write fails, checked as the API server checks them: `body[field]` holds the uid and
// resourceVersion the request asks for (a patch's metadata, DeleteOptions' preconditions); absent or "" is any.
enum class Failed { kNone, kUid, kVersion };
Failed CheckPreconditions(const Json& body, const char* field, const Json& stored);
// `stored` with the request's body applied as its content type says (kind: the object's, for the strategic merge).
absl::StatusOr<Json> ApplyRequest(const snapshot::ApiRequest& req, const Json& body, const Json& stored,
                                  std::string_view kind);

// The executor's decoders over a stored document.
absl::Status Decode(const Json& doc, pb::Pod* out);
absl::Status Decode(const Json& doc, pb::PersistentVolumeClaim* out);
absl::Status Decode(const Json& doc, pb::ControllerRevision* out);
absl::Status Decode(const Json& doc, pb::CloneSet* out);

}  // namespace cloneset::clonesetctl::sim
