#include "kube/api_status.h"

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

constexpr char kCodeUrl[] = "k8s.io/http-code";
constexpr char kReasonUrl[] = "k8s.io/reason";

absl::StatusCode CodeFor(int http, std::string_view reason) {
  switch (http) {
    case 400:
    case 415:
    case 422:
      return absl::StatusCode::kInvalidArgument;
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    case 409:
      return reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                       : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kOutOfRange;
    case 429:
      return absl::StatusCode::kUnavailable;
    default:
      break;
  }
  if (http >= 500) return absl::StatusCode::kUnavailable;
  return absl::StatusCode::kUnknown;
}

}  // namespace

absl::Status StatusFromHttp(int http_code, std::string_view body) {
  if (http_code >= 200 && http_code < 300) return absl::OkStatus();
  std::string reason, message;
  auto parsed = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.value("kind", "") == "Status") {
    if (auto it = parsed.find("reason"); it != parsed.end() && it->is_string()) reason = *it;
    if (auto it = parsed.find("message"); it != parsed.end() && it->is_string()) message = *it;
  }
  if (message.empty()) {
    message = absl::StrCat("HTTP ", http_code, ": ", std::string(body.substr(0, 512)));
  }
  absl::Status s(CodeFor(http_code, reason), message);
  s.SetPayload(kCodeUrl, absl::Cord(absl::StrCat(http_code)));
  if (!reason.empty()) s.SetPayload(kReasonUrl, absl::Cord(reason));
  return s;
}

std::optional<int> HttpCode(const absl::Status& s) {
  auto p = s.GetPayload(kCodeUrl);
  int code = 0;
  if (!p || !absl::SimpleAtoi(std::string(*p), &code)) return std::nullopt;
  return code;
}

std::string K8sReason(const absl::Status& s) {
  auto p = s.GetPayload(kReasonUrl);
  return p ? std::string(*p) : std::string();
}

bool IsConflict(const absl::Status& s) { return HttpCode(s) == 409 && absl::IsAborted(s); }
bool IsGone(const absl::Status& s) { return HttpCode(s) == 410; }

}  // namespace cloneset::kube
