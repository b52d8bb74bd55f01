// The Kubernetes REST API over the Store, independent of sockets: Handle() maps one HTTP request to
// one response (or a watch stream), so unit tests and the fuzzer drive it directly. http_server.h
// puts it behind cpp-httplib.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "devcluster/resources.h"
#include "devcluster/store.h"

namespace cloneset::devcluster {

struct ApiRequest {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string path;    // without query
  std::map<std::string, std::string> query;    // decoded
  std::map<std::string, std::string> headers;  // keys lower-case
  std::string body;

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
  std::string Query(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? "" : it->second;
  }
};

struct WatchStream {
  std::unique_ptr<Watcher> watcher;
  ResourceType type;
  bool table = false;
  bool events_v1 = false;  // core events watched through events.k8s.io/v1: re-expressed per event
  bool sent_columns = false;
  bool ended = false;
  std::chrono::steady_clock::time_point deadline;
  std::chrono::steady_clock::time_point last_bookmark;
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::unique_ptr<WatchStream> watch;  // watch requests: stream this instead of body
  std::vector<std::string> warnings;   // sent as "Warning: 299 - ..." headers (unknown fields, unevaluated rules)
  // For metrics and logs.
  std::string verb;      // get, list, watch, create, update, patch, delete, deletecollection, or ""
  std::string resource;  // resource id ("pods", "clonesets.apps.kruise.io"), or the path class
};

struct ApiServerOptions {
  std::string token;           // required bearer token; empty = no authentication
  std::string server_address;  // host:port for /api serverAddressByClientCIDRs
  std::string version_minor = "32";
  size_t max_body_bytes = 3 * 1024 * 1024;
};

class ApiServer {
 public:
  ApiServer(Store* store, ApiServerOptions options);
  ApiResponse Handle(const ApiRequest& request);

  enum class StreamStep { kData, kIdle, kEnd };
  // Produces the next chunk of a watch stream (one JSON event plus '\n'), waiting up to `poll`.
  StreamStep NextWatchChunk(WatchStream& stream, std::string* out, std::chrono::milliseconds poll);
  // The non-blocking form for a fan-out writer: the next ready chunk, else (offer_bookmark and the client asked for
  // bookmarks) a BOOKMARK at most once a second, else kIdle; kEnd once the stream is over (deadline, 410, stop).
  StreamStep PollWatchChunk(WatchStream& stream, std::string* out, bool offer_bookmark);

  void set_server_address(std::string address) { options_.server_address = std::move(address); }

  struct Route {
    std::string group, version;
    std::string ns;  // namespace from the URL
    std::string resource;
    std::string name;
    std::string subresource;
    ResourceType type;
  };

 private:
  ApiResponse Dispatch(const ApiRequest& request);
  // events.k8s.io/v1 events: the core events through the other group's shape (events_v1.h).
  ApiResponse HandleEventsV1(const ApiRequest& request);
  // What discovery lists: the store's types plus the views and virtual kinds served here (events.k8s.io/v1 Event,
  // authorization.k8s.io/v1 SelfSubjectAccessReview and SelfSubjectRulesReview).
  std::vector<ResourceType> DiscoveryTypes() const;
  ApiResponse HandleResource(const ApiRequest& request, Route& route);
  ApiResponse List(const ApiRequest& request, const Route& route);
  ApiResponse Watch(const ApiRequest& request, const Route& route);
  ApiResponse Get(const ApiRequest& request, const Route& route);
  ApiResponse Create(const ApiRequest& request, const Route& route);
  ApiResponse Update(const ApiRequest& request, const Route& route);
  ApiResponse Patch(const ApiRequest& request, const Route& route);
  ApiResponse Delete(const ApiRequest& request, const Route& route);
  ApiResponse DeleteCollection(const ApiRequest& request, const Route& route);
  ApiResponse Bind(const ApiRequest& request, const Route& route);
  StreamStep FormatWatchEvent(WatchStream& stream, const WatchEvent& event, std::chrono::steady_clock::time_point now,
                              std::string* out);

  Store* store_;
  ApiServerOptions options_;
};

// A boolean query parameter as kube-apiserver reads it: absent, "0" or "false" (any case) is false, anything else
// true ("True" from the Python client, "1", "t").
bool QueryBool(const ApiRequest& request, const std::string& name);
// An answer with `body` serialized as JSON.
ApiResponse JsonResponse(int status, const nlohmann::json& body);
// A Status error object (kind Status, as kube-apiserver answers an error).
ApiResponse StatusError(int code, const std::string& reason, const std::string& message,
                        const nlohmann::json& details = nullptr);
// The autoscaling/v1 Scale view of an object with a scale subresource.
nlohmann::json ScaleOf(const ResourceType& type, const nlohmann::json& object);
// Maps a store error to the matching Status (NotFound 404, Aborted 409 Conflict, ...).
ApiResponse FromStatus(const absl::Status& status, const ResourceType* type, const std::string& name);

}  // namespace cloneset::devcluster
