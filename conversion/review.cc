#include "conversion/review.h"

#include <utility>

#include "conversion/cloneset.h"
#include "nlohmann/json.hpp"

namespace cloneset::conversion {
namespace {

using Json = nlohmann::json;

ReviewOutcome Fail(ReviewOutcome out, const std::string& api_version, const std::string& uid, std::string message) {
  out.success = false;
  out.objects = 0;
  out.message = std::move(message);
  Json response = {{"uid", uid}, {"result", {{"status", "Failure"}, {"message", out.message}}}};
  out.body = Json{{"apiVersion", api_version}, {"kind", "ConversionReview"}, {"response", std::move(response)}}.dump();
  return out;
}

// "ns/name" or "name" of an object, for messages; "" when it has none.
std::string ObjectName(const Json& o) {
  if (!o.is_object()) return "";
  const auto meta = o.find("metadata");
  if (meta == o.end() || !meta->is_object()) return "";
  std::string name, ns;
  if (auto n = meta->find("name"); n != meta->end() && n->is_string()) name = n->get<std::string>();
  if (auto n = meta->find("namespace"); n != meta->end() && n->is_string()) ns = n->get<std::string>();
  return ns.empty() ? name : ns + "/" + name;
}

}  // namespace

ReviewOutcome HandleConversionReview(std::string_view body) {
  ReviewOutcome out;
  const Json review = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  std::string api_version = "apiextensions.k8s.io/v1";
  auto bad_request = [&](const std::string& why) {
    ReviewOutcome r = Fail(out, api_version, "", why);
    r.http_status = 400;
    return r;
  };
  if (review.is_discarded()) return bad_request("the body is not JSON");
  if (!review.is_object()) return bad_request("the body is not a JSON object");
  if (auto v = review.find("apiVersion"); v != review.end()) {
    if (!v->is_string() || (*v != "apiextensions.k8s.io/v1" && *v != "apiextensions.k8s.io/v1beta1")) {
      return bad_request("apiVersion: " + v->dump() +
                         " is not \"apiextensions.k8s.io/v1\" or \"apiextensions.k8s.io/v1beta1\"");
    }
    api_version = v->get<std::string>();
  }
  if (auto k = review.find("kind"); k != review.end() && *k != "ConversionReview") {
    return bad_request("kind: " + k->dump() + " is not \"ConversionReview\"");
  }
  const auto request = review.find("request");
  if (request == review.end() || !request->is_object()) return bad_request("request: must be an object");
  const auto uid = request->find("uid");
  if (uid == request->end() || !uid->is_string() || uid->get_ref<const std::string&>().empty()) {
    return bad_request("request.uid: must be a non-empty string");
  }
  const std::string id = uid->get<std::string>();
  const auto desired = request->find("desiredAPIVersion");
  if (desired == request->end() || !desired->is_string()) {
    return Fail(out, api_version, id, "request.desiredAPIVersion: must be a string");
  }
  out.desired_api_version = desired->get<std::string>();
  const auto objects = request->find("objects");
  if (objects == request->end() || !objects->is_array()) {
    return Fail(out, api_version, id, "request.objects: must be an array");
  }
  Json converted = Json::array();
  for (size_t i = 0; i < objects->size(); ++i) {
    const Json& o = (*objects)[i];
    absl::StatusOr<Json> c = ConvertCloneSet(o, out.desired_api_version);
    if (!c.ok()) {
      const std::string name = ObjectName(o);
      return Fail(out, api_version, id,
                  "converting request.objects[" + std::to_string(i) + "]" + (name.empty() ? "" : " (" + name + ")") +
                      " to " + out.desired_api_version + ": " + std::string(c.status().message()));
    }
    converted.push_back(*std::move(c));
  }
  out.success = true;
  out.objects = static_cast<int>(converted.size());
  Json response = {{"uid", id}, {"convertedObjects", std::move(converted)}, {"result", {{"status", "Success"}}}};
  out.body = Json{{"apiVersion", api_version}, {"kind", "ConversionReview"}, {"response", std::move(response)}}.dump();
  return out;
}

}  // namespace cloneset::conversion
