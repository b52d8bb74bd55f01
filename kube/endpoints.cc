#include "kube/endpoints.h"

#include <exception>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace cloneset::kube {

bool SplitHostPort(const std::string& addr, std::string* host, int* port) {
  const auto colon = addr.rfind(':');
  if (colon == std::string::npos) return false;
  *host = addr.substr(0, colon);
  if (host->size() > 1 && host->front() == '[') *host = host->substr(1, host->size() - 2);
  return absl::SimpleAtoi(addr.substr(colon + 1), port);
}

absl::StatusOr<std::unique_ptr<prometheus::Exposer>> ServeMetrics(const std::string& listen,
                                                                  std::shared_ptr<prometheus::Registry> registry) {
  std::unique_ptr<prometheus::Exposer> exposer;
  try {  // civetweb reports a bind failure by throwing
    exposer = std::make_unique<prometheus::Exposer>(listen);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
  }
  exposer->RegisterCollectable(registry);
  std::string host;
  int port = 0;
  SplitHostPort(listen, &host, &port);
  const auto ports = exposer->GetListeningPorts();
  std::cerr << "metrics on http://" << host << ":" << (ports.empty() ? 0 : ports.front()) << std::endl;
  return exposer;
}

}  // namespace cloneset::kube
