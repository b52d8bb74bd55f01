#include "base/log.h"

#include <atomic>
#include <iostream>

#include "nlohmann/json.hpp"

namespace cloneset::base {

bool ParseLogLevel(std::string_view text, LogLevel* out) {
  if (text == "debug") *out = LogLevel::kDebug;
  else if (text == "info") *out = LogLevel::kInfo;
  else if (text == "warn") *out = LogLevel::kWarn;
  else if (text == "error") *out = LogLevel::kError;
  else return false;
  return true;
}

JsonLogger::JsonLogger(LogOptions options) : options_(std::move(options)) {
  if (options_.out == nullptr) options_.out = &std::cerr;
  if (options_.clock == nullptr) options_.clock = &RealClock::Get();
}

void JsonLogger::Log(LogLevel level, std::string_view msg, const LogFields& fields) {
  if (!Enabled(level)) return;
  static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
  nlohmann::ordered_json line;
  line["ts"] = absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", options_.clock->Now(), absl::UTCTimeZone());
  line["level"] = kNames[static_cast<int>(level)];
  line["msg"] = msg;
  if (!options_.component.empty()) line["component"] = options_.component;
  nlohmann::ordered_json nested = nlohmann::ordered_json::object();
  nlohmann::ordered_json& target = options_.nested_fields ? nested : line;
  // Not a structured binding: clang (the fuzz builds) does not let a lambda capture one before C++20's P1091.
  for (const auto& field : fields) {
    const auto& key = field.first;
    std::visit([&](const auto& v) { target[key] = v; }, field.second);
  }
  if (options_.nested_fields) line["fields"] = std::move(nested);
  // Invalid UTF-8 in a field (e.g. from a request) must not throw: replace it.
  const std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  absl::MutexLock lock(&mu_);
  *options_.out << text << '\n';
  options_.out->flush();
}

namespace {
std::atomic<JsonLogger*> process_logger{nullptr};
}  // namespace

JsonLogger& ProcessLogger() {
  if (JsonLogger* set = process_logger.load(std::memory_order_acquire)) return *set;
  static JsonLogger fallback;
  return fallback;
}

void SetProcessLogger(JsonLogger* logger) { process_logger.store(logger, std::memory_order_release); }

}  // namespace cloneset::base
