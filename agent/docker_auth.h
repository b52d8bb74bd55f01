// Registry credentials from a pod's imagePullSecrets, as the kubelet reads them: kubernetes.io/dockerconfigjson
// ({"auths": {registry: {...}}}) and legacy kubernetes.io/dockercfg ({registry: {...}}).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "agent/cri_client.h"

namespace cloneset::agent {

// The credentials in `secret_json` (a v1 Secret) for `image`'s registry (common::ImageRegistry), or nullopt when the secret has none for
// it. Keys may carry a scheme and path ("https://index.docker.io/v1/"). Errors name the secret and the field.
absl::StatusOr<std::optional<RegistryAuth>> AuthFromSecret(std::string_view secret_json, std::string_view image);

}  // namespace cloneset::agent
