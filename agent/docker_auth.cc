#include "agent/docker_auth.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/json_read.h"
#include "common/image_ref.h"
#include "nlohmann/json.hpp"

namespace cloneset::agent {
namespace {

using Json = nlohmann::json;

std::string HostOfKey(std::string_view key) {
  if (auto p = key.find("://"); p != std::string_view::npos) key.remove_prefix(p + 3);
  if (auto p = key.find('/'); p != std::string_view::npos) key = key.substr(0, p);
  if (key == "index.docker.io" || key == "registry-1.docker.io") return "docker.io";
  return std::string(key);
}

using base::json_read::Str;

}  // namespace

absl::StatusOr<std::optional<RegistryAuth>> AuthFromSecret(std::string_view secret_json, std::string_view image) {
  Json secret = Json::parse(secret_json, nullptr, false);
  if (!secret.is_object()) return absl::InvalidArgumentError("pull secret: not a JSON object");
  const std::string name = secret.value("metadata", Json::object()).value("name", "");
  const Json data = secret.value("data", Json::object());
  if (!data.is_object()) return absl::InvalidArgumentError(absl::StrCat("pull secret ", name, " data: not an object"));
  std::string field = ".dockerconfigjson";
  if (!data.contains(field)) field = ".dockercfg";
  if (!data.contains(field) || !data[field].is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pull secret ", name, ": data[.dockerconfigjson] (or legacy data[.dockercfg]) is missing"));
  }
  std::string decoded;
  if (!absl::Base64Unescape(data[field].get<std::string>(), &decoded)) {
    return absl::InvalidArgumentError(absl::StrCat("pull secret ", name, " data[", field, "]: not base64"));
  }
  Json config = Json::parse(decoded, nullptr, false);
  if (!config.is_object()) return absl::InvalidArgumentError(absl::StrCat("pull secret ", name, " data[", field, "]: not JSON"));
  const Json auths = field == ".dockerconfigjson" ? config.value("auths", Json::object()) : config;
  if (!auths.is_object()) return absl::InvalidArgumentError(absl::StrCat("pull secret ", name, " auths: not an object"));
  const std::string host(common::ImageRegistry(image));
  for (auto it = auths.begin(); it != auths.end(); ++it) {
    if (HostOfKey(it.key()) != host || !it->is_object()) continue;
    RegistryAuth a{.username = Str(*it, "username"), .password = Str(*it, "password"), .auth = Str(*it, "auth"),
                   .server_address = host, .identity_token = Str(*it, "identitytoken"),
                   .registry_token = Str(*it, "registrytoken")};
    // Only "auth" (base64 user:password) given: split it, as the kubelet does.
    if (a.username.empty() && !a.auth.empty()) {
      std::string up;
      if (absl::Base64Unescape(a.auth, &up)) {
        std::pair<std::string, std::string> parts = absl::StrSplit(up, absl::MaxSplits(':', 1));
        a.username = parts.first;
        a.password = parts.second;
      }
    }
    return std::optional<RegistryAuth>(std::move(a));
  }
  return std::optional<RegistryAuth>();
}

}  // namespace cloneset::agent
