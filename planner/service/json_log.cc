#include "planner/service/json_log.h"

#include "nlohmann/json.hpp"

namespace cloneset::planner::service {

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  if (text == "debug") *out = LogLevel::kDebug;
  else if (text == "info") *out = LogLevel::kInfo;
  else if (text == "warn") *out = LogLevel::kWarn;
  else if (text == "error") *out = LogLevel::kError;
  else return false;
  return true;
}

JsonLogger::JsonLogger(std::ostream* out, LogLevel min_level, std::function<absl::Time()> clock)
    : out_(out), min_level_(min_level), clock_(std::move(clock)) {}

void JsonLogger::Log(LogLevel level, std::string_view msg, const LogFields& fields) {
  if (!Enabled(level)) return;
  static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
  nlohmann::ordered_json line;
  line["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", clock_(), absl::UTCTimeZone());
  line["level"] = kNames[static_cast<int>(level)];
  line["msg"] = msg;
  nlohmann::ordered_json f = nlohmann::ordered_json::object();
  for (const auto& [key, value] : fields) {
    std::visit([&](const auto& v) { f[key] = v; }, value);
  }
  line["fields"] = std::move(f);
  // Invalid UTF-8 in a field (e.g. from a request) must not throw: replace it.
  const std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::lock_guard<std::mutex> lock(mu_);
  *out_ << text << '\n';
  out_->flush();
}

}  // namespace cloneset::planner::service
