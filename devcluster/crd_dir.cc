#include "devcluster/crd_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "devcluster/codec.h"

namespace cloneset::devcluster {

absl::StatusOr<std::vector<std::string>> ApplyCrdDir(ApiServer& api, const std::string& token, const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::InvalidArgumentError(absl::StrCat("--crd_dir: \"", dir, "\" is not a directory"));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml")) files.push_back(entry.path());
  }
  if (ec) return absl::UnavailableError(absl::StrCat("--crd_dir: cannot list \"", dir, "\": ", ec.message()));
  std::sort(files.begin(), files.end());
  std::vector<std::string> applied;
  for (const fs::path& file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return absl::UnavailableError(absl::StrCat("--crd_dir: cannot read ", file.string()));
    auto doc = ParseYaml(text.str());
    if (!doc.ok()) return absl::InvalidArgumentError(absl::StrCat("--crd_dir: ", file.string(), ": ", doc.status().message()));
    const std::string kind = doc->is_object() ? doc->value("kind", "") : "";
    if (kind != "CustomResourceDefinition")
      return absl::InvalidArgumentError(
          absl::StrCat("--crd_dir: ", file.string(), ": kind is \"", kind, "\", expected CustomResourceDefinition"));
    const nlohmann::json::json_pointer name_path("/metadata/name");
    if (!doc->contains(name_path) || !(*doc)[name_path].is_string())
      return absl::InvalidArgumentError(absl::StrCat("--crd_dir: ", file.string(), ": metadata.name is missing"));
    const std::string crd = (*doc)[name_path].get<std::string>();
    ApiRequest req;
    req.method = "PATCH";
    req.path = absl::StrCat("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/", crd);
    req.query = {{"fieldManager", "cloneset-devcluster"}, {"force", "true"}};
    req.headers["content-type"] = "application/apply-patch+yaml";
    req.headers["accept"] = "application/json";
    if (!token.empty()) req.headers["authorization"] = absl::StrCat("Bearer ", token);
    req.body = text.str();
    ApiResponse r = api.Handle(req);
    if (r.status >= 300) {
      std::string message = r.body;
      if (auto status = nlohmann::json::parse(r.body, nullptr, false); status.is_object() && status.contains("message"))
        message = status["message"].is_string() ? status["message"].get<std::string>() : status["message"].dump();
      return absl::InvalidArgumentError(
          absl::StrCat("--crd_dir: applying ", file.string(), " (", crd, ") failed with HTTP ", r.status, ": ", message));
    }
    applied.push_back(crd);
  }
  return applied;
}

}  // namespace cloneset::devcluster
