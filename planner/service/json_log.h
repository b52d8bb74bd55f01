// Structured logs: one JSON object per line ({"ts","level","msg","fields"}) so log pipelines need no parsing rules.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace cloneset::planner::service {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// "debug", "info", "warn" or "error"; false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* out);

using LogValue = std::variant<std::string, int64_t, double, bool>;
using LogFields = std::vector<std::pair<std::string, LogValue>>;

class JsonLogger {
 public:
  // `out` must outlive the logger; `clock` is injected so tests get stable timestamps.
  JsonLogger(std::ostream* out, LogLevel min_level, std::function<absl::Time()> clock = absl::Now);

  void Log(LogLevel level, std::string_view msg, const LogFields& fields = {});
  void Debug(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kDebug, msg, fields); }
  void Info(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kInfo, msg, fields); }
  void Warn(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kWarn, msg, fields); }
  void Error(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kError, msg, fields); }
  bool Enabled(LogLevel level) const { return level >= min_level_; }

 private:
  std::ostream* out_;
  LogLevel min_level_;
  std::function<absl::Time()> clock_;
  std::mutex mu_;  // whole lines only, even from many gRPC threads
};

}  // namespace cloneset::planner::service
