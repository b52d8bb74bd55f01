// Request bodies in the Kubernetes protobuf encoding (Content-Type application/vnd.kubernetes.protobuf),
// which kubectl >= 1.32 uses for its imperative `create namespace|configmap|secret|serviceaccount|
// service|deployment|pdb|role|clusterrole|rolebinding|clusterrolebinding` commands. The body is the magic "k8s\0" followed by a runtime.Unknown envelope whose
// raw bytes hold the object; it is turned into the same JSON object a JSON client would have sent,
// so everything after decoding (defaults, validation, storage) is shared with the JSON path.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace cloneset::devcluster {

inline constexpr char kKubernetesProtobufMediaType[] = "application/vnd.kubernetes.protobuf";

// The apiVersion/kind pairs DecodeKubernetesProtobuf understands, e.g. {"v1", "ConfigMap"}.
std::vector<std::pair<std::string, std::string>> ProtobufDecodableKinds();

// The object as Kubernetes JSON (apiVersion and kind from the envelope; bytes as base64; times as
// RFC 3339). Errors:
//   InvalidArgument: the body is not a well-formed protobuf object (no magic, truncated, bad
//     UTF-8, times out of range); the message names what failed. Answer 400.
//   Unimplemented: well formed, but a kind, encoding or field this server does not decode; the
//     message says what is supported. Answer 415 so that the client can send JSON instead.
absl::StatusOr<nlohmann::json> DecodeKubernetesProtobuf(std::string_view body);

}  // namespace cloneset::devcluster
