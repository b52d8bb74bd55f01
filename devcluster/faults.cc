#include "devcluster/faults.h"

namespace cloneset::devcluster {

FaultInjector::FaultInjector(FaultOptions options) : options_(std::move(options)), rng_(options_.seed) {}

bool FaultInjector::enabled() const {
  return options_.conflict_rate > 0 || options_.error_rate > 0 || options_.watch_drop_after.count() > 0 ||
         options_.max_delay.count() > 0;
}

bool FaultInjector::Applies(std::string_view user_agent) const {
  return options_.user_agent.empty() || user_agent == options_.user_agent;
}

WriteFault FaultInjector::ForRequest(std::string_view method, std::string_view user_agent) {
  const bool write = method == "POST" || method == "PUT" || method == "PATCH" || method == "DELETE";
  if (!write || !Applies(user_agent) || (options_.conflict_rate <= 0 && options_.error_rate <= 0)) {
    return WriteFault::kNone;
  }
  std::lock_guard<std::mutex> l(mu_);
  const double x = std::uniform_real_distribution<double>(0, 1)(rng_);
  if (x < options_.conflict_rate) return WriteFault::kConflict;
  if (x < options_.conflict_rate + options_.error_rate) {
    return std::bernoulli_distribution(0.5)(rng_) ? WriteFault::kErrorAfterCommit : WriteFault::kErrorBeforeCommit;
  }
  return WriteFault::kNone;
}

std::optional<std::chrono::milliseconds> FaultInjector::WatchDropAfter(std::string_view user_agent) {
  const auto d = options_.watch_drop_after;
  if (d.count() <= 0 || !Applies(user_agent)) return std::nullopt;
  std::lock_guard<std::mutex> l(mu_);
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(d.count() / 2, d.count())(rng_));
}

std::optional<std::chrono::milliseconds> FaultInjector::DelayFor(std::string_view user_agent) {
  const auto d = options_.max_delay;
  if (d.count() <= 0 || !Applies(user_agent)) return std::nullopt;
  std::lock_guard<std::mutex> l(mu_);
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, d.count())(rng_));
}

FaultStatus FaultStatusOf(WriteFault f) {
  switch (f) {
    case WriteFault::kConflict:
      return {409, "Conflict",
              "Operation cannot be fulfilled: the object has been modified; please apply your changes to the latest "
              "version and try again (injected fault)"};
    case WriteFault::kErrorBeforeCommit:
      return {500, "InternalError", "Internal error occurred: injected fault before commit"};
    case WriteFault::kErrorAfterCommit:
      return {500, "InternalError", "Internal error occurred: injected fault after commit"};
    case WriteFault::kNone: break;
  }
  return {200, "", ""};
}

std::string UserAgentLabel(const std::string& ua) {
  std::string token = ua.substr(0, ua.find_first_of("/ "));
  if (token.empty()) return "unknown";
  if (token.size() > 64) token.resize(64);
  return token;
}

std::string_view WriteFaultName(WriteFault f) {
  switch (f) {
    case WriteFault::kNone: return "none";
    case WriteFault::kConflict: return "conflict";
    case WriteFault::kErrorBeforeCommit: return "error_before_commit";
    case WriteFault::kErrorAfterCommit: return "error_after_commit";
  }
  return "none";
}

}  // namespace cloneset::devcluster
