#ifndef CLONESET_KUBE_TESTING_MOCK_REST_CLIENT_H_
#define CLONESET_KUBE_TESTING_MOCK_REST_CLIENT_H_

#include "gmock/gmock.h"
#include "kube/rest_client.h"

namespace cloneset::kube::testing {

// gmock RestClient. The typed helpers are mocked too, so a test can stub
// either the raw Do() or e.g. Patch() directly.
class MockRestClient : public RestClient {
 public:
  MOCK_METHOD(absl::StatusOr<HttpResponse>, Do,
              (std::string_view method, std::string_view path, std::string_view body,
               std::string_view content_type),
              (override));
  MOCK_METHOD(absl::Status, Watch,
              (std::string_view path, const std::function<bool(std::string_view)>& on_data,
               CancelToken* cancel),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, Get, (std::string_view path), (override));
  MOCK_METHOD(absl::StatusOr<std::string>, List, (std::string_view path, const ListOptions& opts),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, Create, (std::string_view path, std::string_view body),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, Update, (std::string_view path, std::string_view body),
              (override));
  MOCK_METHOD(absl::StatusOr<std::string>, Patch,
              (std::string_view path, PatchType type, std::string_view body), (override));
  MOCK_METHOD(absl::StatusOr<std::string>, Delete, (std::string_view path, std::string_view body),
              (override));
};

}  // namespace cloneset::kube::testing

#endif  // CLONESET_KUBE_TESTING_MOCK_REST_CLIENT_H_
