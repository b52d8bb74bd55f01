// Discovery and OpenAPI documents, computed from the registered resource types (what kubectl reads before it sends
// a request: the group/version/resource lists and the OpenAPI schemas).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "devcluster/resources.h"

namespace cloneset::devcluster {

// Each type once per version it is served in (a CRD serving v1alpha1 and v1beta1 becomes two entries, each with
// that version's schema and columns): what discovery and OpenAPI list.
std::vector<ResourceType> PerServedVersion(const std::vector<ResourceType>& types);

// GET /api: legacy APIVersions.
nlohmann::json ApiVersions(const std::string& server_address);
// GET /apis: legacy APIGroupList (every non-core group with a registered type).
nlohmann::json ApiGroupList(const std::vector<ResourceType>& types);
// GET /api/v1 or /apis/{group}/{version}: APIResourceList, nullopt when nothing is served there.
std::optional<nlohmann::json> ApiResourceList(const std::vector<ResourceType>& types, const std::string& group,
                                              const std::string& version);
// GET /openapi/v3: one serverRelativeURL per served group version ("api/v1", "apis/g/v").
nlohmann::json OpenApiV3Root(const std::vector<ResourceType>& types, const std::string& hash);
// GET /openapi/v3/{api/v1 | apis/g/v}: a PATCH operation per kind that declares fieldValidation.
std::optional<nlohmann::json> OpenApiV3Document(const std::vector<ResourceType>& types, const std::string& gv_path);
// GET /openapi/v2 (protobuf): gnostic openapi.v2.Document with one patch path per kind.
std::string OpenApiV2Protobuf(const std::vector<ResourceType>& types, const std::string& version);

// The collection path of a type: /api/v1/namespaces/{namespace}/pods, /apis/g/v/nodes...
std::string ObjectPathTemplate(const ResourceType& type);

}  // namespace cloneset::devcluster
