// Structured logs: one JSON object per line, {"ts","level","msg",...}, so log pipelines need no parsing rules.
// Every binary logs through this one writer. The planner's lines nest their fields under "fields" (its format
// since the start, docs/architecture.md "Base library"); the other processes put them beside ts/level/msg, where
// the tests and tools that read the embedded cluster's request log look for them ("method", "fault").
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "base/clock.h"

namespace cloneset::base {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

// "debug", "info", "warn" or "error"; false for anything else.
bool ParseLogLevel(std::string_view text, LogLevel* out);

using LogValue = std::variant<std::string, int64_t, double, bool>;
using LogFields = std::vector<std::pair<std::string, LogValue>>;

struct LogOptions {
  std::ostream* out = nullptr;  // std::cerr when null; must outlive the logger
  LogLevel min_level = LogLevel::kInfo;
  bool nested_fields = false;   // {"fields":{...}} instead of the fields beside ts/level/msg
  std::string component;        // written as "component" after msg when not empty
  const Clock* clock = nullptr; // RealClock when null; tests inject one for stable timestamps
};

class JsonLogger {
 public:
  explicit JsonLogger(LogOptions options = {});

  void Log(LogLevel level, std::string_view msg, const LogFields& fields = {});
  void Debug(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kDebug, msg, fields); }
  void Info(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kInfo, msg, fields); }
  void Warn(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kWarn, msg, fields); }
  void Error(std::string_view msg, const LogFields& fields = {}) { Log(LogLevel::kError, msg, fields); }
  bool Enabled(LogLevel level) const { return level >= options_.min_level; }

 private:
  LogOptions options_;
  absl::Mutex mu_;  // whole lines only, even from many threads
};

// The process's logger, for library code that has none injected (the agent's pull manager, the pre-download
// coordinator, the embedded cluster): stderr, info and above, until a main sets its own with SetProcessLogger.
JsonLogger& ProcessLogger();
// `logger` must outlive every later call of ProcessLogger(); nullptr restores the default.
void SetProcessLogger(JsonLogger* logger);

}  // namespace cloneset::base
