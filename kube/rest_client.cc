#include "kube/rest_client.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

std::string_view PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kJson:
      return "application/json-patch+json";
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kApply:
      return "application/apply-patch+yaml";
  }
  return "application/merge-patch+json";
}

std::string HttpResponse::Header(std::string_view lower_name) const {
  auto it = headers.find(std::string(lower_name));
  return it == headers.end() ? std::string() : it->second;
}

std::string WithListOptions(std::string_view path, const ListOptions& o) {
  std::string out(path);
  char sep = out.find('?') == std::string::npos ? '?' : '&';
  auto add = [&](std::string_view key, std::string_view value) {
    if (value.empty()) return;
    out.push_back(sep);
    out.append(key).append("=").append(UrlEncode(value));
    sep = '&';
  };
  add("labelSelector", o.label_selector);
  add("fieldSelector", o.field_selector);
  add("resourceVersion", o.resource_version);
  if (o.limit > 0) add("limit", absl::StrCat(o.limit));
  add("continue", o.continue_token);
  return out;
}

void CancelToken::Cancel() {
  // The abort runs under mu_ so that ClearOnCancel() cannot return while it
  // is still running: it points into the watch's httplib client, which the
  // watch thread frees right after ClearOnCancel(). Calling it outside the
  // lock let a stream that ended at that moment free the client under a
  // concurrent client->stop() (a use-after-free when an informer stopped
  // just as its watch reconnected). No deadlock: the abort (client->stop())
  // only takes httplib's socket mutex, which is never held while httplib
  // calls back into the watch's handlers that consult this token.
  absl::MutexLock l(&mu_);
  cancelled_ = true;
  if (abort_) abort_();
}

bool CancelToken::cancelled() const {
  absl::MutexLock l(&mu_);
  return cancelled_;
}

bool CancelToken::OnCancel(std::function<void()> abort) {
  absl::MutexLock l(&mu_);
  if (cancelled_) return false;
  abort_ = std::move(abort);
  return true;
}

void CancelToken::ClearOnCancel() {
  absl::MutexLock l(&mu_);  // waits for a running abort (see Cancel)
  abort_ = nullptr;
}

absl::StatusOr<std::string> RestClient::Call(std::string_view method, std::string_view path,
                                             std::string_view body,
                                             std::string_view content_type) {
  auto resp = Do(method, path, body, content_type);
  if (!resp.ok()) return resp.status();
  if (resp->status < 200 || resp->status >= 300) {
    return StatusFromHttp(resp->status, resp->body);
  }
  return std::move(resp->body);
}

absl::StatusOr<std::string> RestClient::Get(std::string_view path) {
  return Call("GET", path, "", "");
}
absl::StatusOr<std::string> RestClient::List(std::string_view path, const ListOptions& opts) {
  return Call("GET", WithListOptions(path, opts), "", "");
}
absl::StatusOr<std::string> RestClient::Create(std::string_view path, std::string_view body) {
  return Call("POST", path, body, "application/json");
}
absl::StatusOr<std::string> RestClient::Update(std::string_view path, std::string_view body) {
  return Call("PUT", path, body, "application/json");
}
absl::StatusOr<std::string> RestClient::Patch(std::string_view path, PatchType type,
                                              std::string_view body) {
  return Call("PATCH", path, body, PatchContentType(type));
}
absl::StatusOr<std::string> RestClient::Delete(std::string_view path, std::string_view body) {
  return Call("DELETE", path, body, body.empty() ? "" : "application/json");
}

absl::StatusOr<bool> ServesResource(RestClient& client, std::string_view group_version_path,
                                    std::string_view resource) {
  absl::StatusOr<std::string> body = client.Get(group_version_path);
  if (!body.ok()) return body.status();
  const nlohmann::json list = nlohmann::json::parse(*body, nullptr, /*allow_exceptions=*/false);
  if (!list.is_object() || !list.contains("resources") || !list["resources"].is_array()) {
    return absl::InternalError(absl::StrCat("GET ", std::string(group_version_path), ": not an APIResourceList"));
  }
  for (const nlohmann::json& r : list["resources"]) {
    if (r.is_object() && r.value("name", "") == resource) return true;
  }
  return false;
}

}  // namespace cloneset::kube
