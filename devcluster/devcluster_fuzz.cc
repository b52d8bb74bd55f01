// libFuzzer target for the embedded cluster's request path: method, path, content type and body go through
// ApiServer::Handle (no sockets) against an in-memory store. Input: byte 0 picks the method, then
// "<path>[?query]\n<content-type>\n<body>".
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_split.h"
#include "base/testing/fake_clock.h"
#include "devcluster/api_server.h"

namespace cd = cloneset::devcluster;

namespace {

const char kCrd[] = R"({"metadata":{"name":"clonesets.apps.kruise.io"},"spec":{"group":"apps.kruise.io",
 "scope":"Namespaced","names":{"plural":"clonesets","kind":"CloneSet","shortNames":["clone"]},
 "versions":[{"name":"v1alpha1","served":true,"storage":true,"subresources":{"status":{},"scale":{
 "specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas","labelSelectorPath":".status.labelSelector"}},
 "additionalPrinterColumns":[{"name":"DESIRED","type":"integer","jsonPath":".spec.replicas"},
 {"name":"IMAGES","type":"string","jsonPath":".spec.template.spec.containers[*].image"}]}]}})";

struct World {
  cloneset::base::testing::FakeClock clock{cloneset::base::testing::FakeClock::k2026};
  cd::Store store{&clock, cd::StoreOptions{.watch_history = 64}};
  cd::ApiServer api{&store, cd::ApiServerOptions{}};
  World() { (void)store.Create(cd::kCustomResourceDefinitions, nlohmann::json::parse(kCrd)); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::unique_ptr<World> world;
  static int runs = 0;
  if (!world || ++runs % 2000 == 0) world = std::make_unique<World>();  // bound the store's growth
  if (size < 1) return 0;
  static const char* kMethods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
  cd::ApiRequest req;
  req.method = kMethods[data[0] % 5];
  std::string rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::vector<std::string> parts = absl::StrSplit(rest, absl::MaxSplits('\n', 2));
  std::string target = parts.size() > 0 ? parts[0] : "";
  req.headers["content-type"] = parts.size() > 1 ? parts[1] : "";
  req.body = parts.size() > 2 ? parts[2] : "";
  size_t q = target.find('?');
  req.path = target.substr(0, q);
  if (q != std::string::npos) {
    for (absl::string_view kv : absl::StrSplit(target.substr(q + 1), '&')) {
      std::pair<std::string, std::string> p = absl::StrSplit(kv, absl::MaxSplits('=', 1));
      req.query[p.first] = p.second;
    }
  }
  if (data[0] & 0x80) req.headers["accept"] = "application/json;as=Table;v=v1;g=meta.k8s.io";
  cd::ApiResponse resp = world->api.Handle(req);
  if (resp.watch) {
    std::string chunk;
    for (int i = 0; i < 4; ++i)
      if (world->api.NextWatchChunk(*resp.watch, &chunk, std::chrono::milliseconds(0)) ==
          cd::ApiServer::StreamStep::kEnd)
        break;
  }
  if (resp.status < 100 || resp.status > 599) __builtin_trap();
  return 0;
}
