// Flag-guarded fault injection for fault tests of clients: 409 Conflicts and 500s on writes,
// watches cut mid-stream and delayed requests. Off unless a rate, a drop interval or a delay is set; limited to one
// client (its user_agent label) so the test's own kubectl and the simulated nodes see a healthy cluster.
// The one decision of which request gets which fault, for both places that inject them: the embedded cluster's
// HTTP front (devcluster/http_server.cc) and the fault proxy in front of a real kube-apiserver
// (tests/fault_proxy/fault_proxy.h). Its own small library (devcluster_faults), so the proxy links nothing else.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

namespace cloneset::devcluster {

struct FaultOptions {
  double conflict_rate = 0;  // share of writes answered 409 Conflict without being applied
  double error_rate = 0;     // share of writes answered 500; half of them after the write was applied
  std::chrono::milliseconds watch_drop_after{0};  // cut each watch after uniform[d/2, d]; 0 = never
  std::chrono::milliseconds max_delay{0};  // delay each request by uniform[0, max_delay]; 0 = never
  std::string user_agent;    // only this client (user_agent label, e.g. "cloneset-executor"); empty = all
  uint64_t seed = 1;
};

enum class WriteFault { kNone, kConflict, kErrorBeforeCommit, kErrorAfterCommit };

// The Status answered instead of the API server's for an injected write fault (not kNone).
struct FaultStatus {
  int code;
  std::string reason;   // metav1.Status reason
  std::string message;
};
FaultStatus FaultStatusOf(WriteFault f);

// Thread-safe; every decision draws from one seeded generator, so a run's faults follow from its seed (up to the
// order in which concurrent requests arrive).
class FaultInjector {
 public:
  explicit FaultInjector(FaultOptions options);
  bool enabled() const;
  // For a request with HTTP `method` from the client labelled `user_agent`.
  WriteFault ForRequest(std::string_view method, std::string_view user_agent);
  // How long a watch from `user_agent` may run before it is cut; nullopt = not cut.
  std::optional<std::chrono::milliseconds> WatchDropAfter(std::string_view user_agent);
  // How long to hold a request from `user_agent` before serving it; nullopt = not delayed.
  std::optional<std::chrono::milliseconds> DelayFor(std::string_view user_agent);

 private:
  bool Applies(std::string_view user_agent) const;
  const FaultOptions options_;
  std::mutex mu_;
  std::mt19937_64 rng_;
};

std::string_view WriteFaultName(WriteFault f);

// The user_agent label of a client: the product token of a User-Agent ("kubectl/v1.32.4 (linux/amd64)" ->
// "kubectl"), "unknown" when empty, at most 64 characters.
std::string UserAgentLabel(const std::string& user_agent);

}  // namespace cloneset::devcluster
