#include "devcluster/log.h"

#include <chrono>
#include <iostream>
#include <mutex>

#include "devcluster/object_meta.h"

namespace cloneset::devcluster {

void LogJson(const std::string& level, const std::string& msg, const nlohmann::json& fields) {
  nlohmann::json line = {{"ts", FormatTimestamp(std::chrono::system_clock::now())}, {"level", level}, {"msg", msg}};
  for (const auto& [k, v] : fields.items()) line[k] = v;
  static std::mutex mu;
  std::lock_guard<std::mutex> l(mu);
  std::cerr << line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

}  // namespace cloneset::devcluster
