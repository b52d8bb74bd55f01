#include "kube/api_status.h"

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace cloneset::kube {
namespace {

std::string StatusJson(int code, const std::string& reason, const std::string& message) {
  return nlohmann::json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                        {"message", message}, {"reason", reason}, {"code", code}}
      .dump();
}

TEST(StatusFromHttpTest, MapsCodesAndKeepsReason) {
  struct Case {
    int http;
    std::string reason;
    absl::StatusCode want;
    bool conflict, gone;
  };
  const std::vector<Case> cases = {
      {400, "BadRequest", absl::StatusCode::kInvalidArgument, false, false},
      {401, "Unauthorized", absl::StatusCode::kUnauthenticated, false, false},
      {403, "Forbidden", absl::StatusCode::kPermissionDenied, false, false},
      {404, "NotFound", absl::StatusCode::kNotFound, false, false},
      {409, "AlreadyExists", absl::StatusCode::kAlreadyExists, false, false},
      {409, "Conflict", absl::StatusCode::kAborted, true, false},
      {410, "Expired", absl::StatusCode::kOutOfRange, false, true},
      {415, "UnsupportedMediaType", absl::StatusCode::kInvalidArgument, false, false},
      {422, "Invalid", absl::StatusCode::kInvalidArgument, false, false},
      {429, "TooManyRequests", absl::StatusCode::kUnavailable, false, false},
      {500, "InternalError", absl::StatusCode::kUnavailable, false, false},
      {503, "ServiceUnavailable", absl::StatusCode::kUnavailable, false, false},
  };
  for (const auto& c : cases) {
    absl::Status s = StatusFromHttp(c.http, StatusJson(c.http, c.reason, "pods \"x\" msg"));
    EXPECT_EQ(s.code(), c.want) << c.http << " " << c.reason;
    EXPECT_EQ(s.message(), "pods \"x\" msg");
    EXPECT_EQ(K8sReason(s), c.reason);
    EXPECT_EQ(HttpCode(s), c.http);
    EXPECT_EQ(IsConflict(s), c.conflict) << c.http << " " << c.reason;
    EXPECT_EQ(IsGone(s), c.gone) << c.http;
  }
}

TEST(StatusFromHttpTest, PlainTextBodyAndSuccess) {
  absl::Status s = StatusFromHttp(404, "404 page not found");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "HTTP 404: 404 page not found");
  EXPECT_EQ(K8sReason(s), "");
  EXPECT_TRUE(StatusFromHttp(200, "{}").ok());
  EXPECT_TRUE(StatusFromHttp(201, "").ok());
  EXPECT_EQ(HttpCode(absl::UnavailableError("x")), std::nullopt);
}

}  // namespace
}  // namespace cloneset::kube
