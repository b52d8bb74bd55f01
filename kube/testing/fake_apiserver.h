#ifndef CLONESET_KUBE_TESTING_FAKE_APISERVER_H_
#define CLONESET_KUBE_TESTING_FAKE_APISERVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "kube/testing/test_certs.h"

namespace cloneset::kube::testing {

// A small in-memory Kubernetes API server for tests (cpp-httplib on
// 127.0.0.1:0): GET/LIST (labelSelector equality terms, limit/continue),
// POST, PUT and PATCH (merge, strategic treated as merge, JSON patch) with
// resourceVersion preconditions, DELETE, and WATCH streams with bookmarks,
// timeoutSeconds and 410 Expired for compacted resourceVersions. Faults are
// injectable per method and path prefix. Not a conformance target: just
// enough semantics to test kube/.
//
// Paths: /api/v1[/namespaces/NS]/RES[/NAME] and /apis/G/V[/namespaces/NS]/RES[/NAME].
class FakeApiServer {
 public:
  struct Options {
    bool tls = false;
    const TestPki* pki = nullptr;  // required for tls
    bool require_client_cert = false;
    std::string token;  // when set, requests need "Authorization: Bearer <token>"
  };
  struct Fault {
    std::string method;       // "" = any
    std::string path_prefix;  // matched against the path without query
    std::string query_contains;
    int status = 500;
    std::string reason = "InternalError";
    std::string retry_after;  // Retry-After header value, "" = none
    int count = 1;            // how many requests it hits
  };

  explicit FakeApiServer(Options options);
  FakeApiServer() : FakeApiServer(Options{}) {}
  ~FakeApiServer();
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  absl::Status Start();
  void Stop();
  std::string url() const;  // http(s)://127.0.0.1:PORT

  // Direct store access (emits watch events like an API write would).
  // `collection` is e.g. "/api/v1/namespaces/ns/pods"; returns the new rv.
  int64_t Upsert(const std::string& collection, const std::string& object_json);
  void Remove(const std::string& collection, const std::string& name);
  std::string GetObject(const std::string& collection, const std::string& name);  // "" if absent

  void InjectFault(Fault fault);
  void ClearFaults();
  void set_token(const std::string& token);
  // Forget history up to the current rv: watches from an older rv get 410.
  void Compact();
  // Sends a BOOKMARK with the current rv to watches that allow bookmarks.
  void SendBookmarks();
  // Ends every open watch stream (a dropped connection from the client's view).
  void CloseWatches();
  // Cuts every open watch connection mid-stream, without the final chunk (a broken network).
  void DropWatches();
  int64_t resource_version() const;
  int open_watches() const;
  // "METHOD /path?k=v&k2=v2" (params sorted) for every request, in order.
  std::vector<std::string> requests() const;
  void clear_requests();

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace cloneset::kube::testing

#endif  // CLONESET_KUBE_TESTING_FAKE_APISERVER_H_
