#ifndef CLONESET_KUBE_API_STATUS_H_
#define CLONESET_KUBE_API_STATUS_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace cloneset::kube {

// Maps an HTTP status code plus a Kubernetes `Status` body (kind Status, as
// kube-apiserver answers errors) to an absl::Status. The Status `message` becomes the absl message;
// the HTTP code and the `reason` are kept as payloads so callers can tell a
// Conflict from an AlreadyExists or detect 410 Gone without string matching.
//   404 -> kNotFound          409 AlreadyExists -> kAlreadyExists
//   409 (other) -> kAborted   410 -> kOutOfRange (IsGone)
//   400/415/422 -> kInvalidArgument            401 -> kUnauthenticated
//   403 -> kPermissionDenied  429, 5xx -> kUnavailable
// A body that is not a Status (text/plain) yields "HTTP <code>: <body>".
absl::Status StatusFromHttp(int http_code, std::string_view body);

// The HTTP code an error came from, if it came from the API server.
std::optional<int> HttpCode(const absl::Status& s);
// The Kubernetes reason (e.g. "Conflict", "Expired", "AlreadyExists").
std::string K8sReason(const absl::Status& s);

// NotFound and AlreadyExists: absl::IsNotFound / absl::IsAlreadyExists.
bool IsConflict(const absl::Status& s);  // 409 with a reason other than AlreadyExists
bool IsGone(const absl::Status& s);      // 410, or a watch ERROR with code 410

}  // namespace cloneset::kube

#endif  // CLONESET_KUBE_API_STATUS_H_
