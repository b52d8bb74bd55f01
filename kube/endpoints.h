// The HTTP endpoints every controller binary serves besides its work: Prometheus /metrics and the address
// parsing its flags need. Shared by cloneset-executor and cloneset-agent.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"

namespace cloneset::kube {

// "host:port" or "[v6]:port" -> host (brackets dropped) and port. False when there is no valid port.
bool SplitHostPort(const std::string& addr, std::string* host, int* port);

// Serves `registry` on `listen` (port 0 allowed) and prints "metrics on http://host:port" on stderr, the line
// `./run up` and the tests read to find the bound port.
absl::StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(const std::string& listen,
                                                                  std::shared_ptr<prometheus::Registry> registry);

}  // namespace cloneset::kube
