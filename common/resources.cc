#include "common/resources.h"

#include <array>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace cloneset::common {
namespace {

using Json = nlohmann::json;
using Int128 = __int128;

// Past this a value is refused (an int128 holds 1.7 * 10^38; 10^36 leaves room for one more factor of 100).
constexpr Int128 kLimit = static_cast<Int128>(1000000000000000000LL) * 1000000000000000000LL;  // 10^36

Int128 Pow10(int n) {
  Int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

absl::Status NotAQuantity(std::string_view text, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("quantity \"", std::string(text), "\": ", why));
}

// Multiplies `v` by `factor` (positive), failing past kLimit.
bool Scale(Int128& v, Int128 factor) {
  if (v != 0 && v > kLimit / factor) return false;
  v *= factor;
  return true;
}

// Divides `v` by `divisor` (positive), rounding away from zero: resource.Quantity rounds up to its finest scale.
Int128 DivideUp(Int128 v, Int128 divisor) { return (v + divisor - 1) / divisor; }

// The mantissa's factor for a suffix: 10^decimal * 1024^binary.
struct Suffix {
  int decimal = 0;
  int binary = 0;
};

bool ReadSuffix(std::string_view s, Suffix* out) {
  static constexpr std::array<std::pair<std::string_view, int>, 10> kDecimal = {
      {{"n", -9}, {"u", -6}, {"m", -3}, {"", 0}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}}};
  static constexpr std::array<std::pair<std::string_view, int>, 6> kBinary = {
      {{"Ki", 1}, {"Mi", 2}, {"Gi", 3}, {"Ti", 4}, {"Pi", 5}, {"Ei", 6}}};
  for (const auto& [name, exponent] : kDecimal) {
    if (s == name) {
      out->decimal = exponent;
      return true;
    }
  }
  for (const auto& [name, power] : kBinary) {
    if (s == name) {
      out->binary = power;
      return true;
    }
  }
  if (s.size() >= 2 && (s[0] == 'e' || s[0] == 'E')) {
    int exponent = 0;
    const std::string_view digits = s.substr(1);
    if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), &exponent) || s[1] == ' ') return false;
    if (exponent > 100 || exponent < -100) return false;
    out->decimal = exponent;
    return true;
  }
  return false;
}

}  // namespace

absl::StatusOr<__int128> QuantityNanos(std::string_view text) {
  if (text.empty()) return NotAQuantity(text, "empty");
  size_t i = 0;
  bool negative = false;
  if (text[i] == '+' || text[i] == '-') {
    negative = text[i] == '-';
    ++i;
  }
  Int128 mantissa = 0;
  int fraction_digits = 0;
  int digits = 0;
  bool point = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '.' && !point) {
      point = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    ++digits;
    if (point) ++fraction_digits;
    if (!Scale(mantissa, 10)) return NotAQuantity(text, "too large");
    mantissa += c - '0';
  }
  if (digits == 0) return NotAQuantity(text, "no digits");
  Suffix suffix;
  if (!ReadSuffix(text.substr(i), &suffix)) {
    return NotAQuantity(text, absl::StrCat("unknown suffix \"", std::string(text.substr(i)), "\""));
  }
  Int128 value = mantissa;
  for (int b = 0; b < suffix.binary; ++b) {
    if (!Scale(value, 1024)) return NotAQuantity(text, "too large");
  }
  const int exponent = 9 - fraction_digits + suffix.decimal;
  if (exponent >= 0) {
    if (exponent > 36 || !Scale(value, Pow10(exponent))) {
      if (value != 0) return NotAQuantity(text, "too large");
    }
  } else {
    value = -exponent > 36 ? (value == 0 ? 0 : 1) : DivideUp(value, Pow10(-exponent));
  }
  return negative ? -value : value;
}

absl::StatusOr<__int128> JsonQuantityNanos(const Json& value) {
  if (value.is_string()) return QuantityNanos(std::string_view(value.get_ref<const std::string&>()));
  if (value.is_number()) return QuantityNanos(std::string_view(value.dump()));
  return absl::InvalidArgumentError(absl::StrCat("quantity ", value.dump(), ": not a string or a number"));
}

bool SameQuantity(std::string_view a, std::string_view b) {
  if (a == b) return true;
  const absl::StatusOr<Int128> x = QuantityNanos(a);
  const absl::StatusOr<Int128> y = QuantityNanos(b);
  return x.ok() && y.ok() && *x == *y;
}

const char* QosClassName(QosClass qos) {
  switch (qos) {
    case QosClass::kBestEffort: return "BestEffort";
    case QosClass::kBurstable: return "Burstable";
    case QosClass::kGuaranteed: return "Guaranteed";
  }
  return "Unknown";
}

QosClass PodQosClass(const Json& pod_spec) {
  // name -> summed value; a value of zero does not count (ComputePodQOS's quantity.Cmp(zero) == 1).
  std::array<std::pair<bool, Int128>, 2> requests{};  // [0] cpu, [1] memory
  std::array<std::pair<bool, Int128>, 2> limits{};
  bool guaranteed = true;
  const auto add = [](std::array<std::pair<bool, Int128>, 2>& sums, const Json& list, bool* cpu, bool* memory) {
    if (!list.is_object()) return;
    for (const auto& [name, quantity] : list.items()) {
      if (!ResizableResource(name)) continue;
      const absl::StatusOr<Int128> v = JsonQuantityNanos(quantity);
      if (!v.ok() || *v <= 0) continue;
      auto& sum = sums[name == "cpu" ? 0 : 1];
      sum.first = true;
      sum.second += *v;
      (name == "cpu" ? *cpu : *memory) = true;
    }
  };
  if (pod_spec.is_object()) {
    for (const char* list : {"containers", "initContainers"}) {
      const auto it = pod_spec.find(list);
      if (it == pod_spec.end() || !it->is_array()) continue;
      for (const Json& container : *it) {
        if (!container.is_object()) continue;
        const auto resources = container.find("resources");
        const Json empty = Json::object();
        const Json& r = resources != container.end() && resources->is_object() ? *resources : empty;
        bool cpu = false;
        bool memory = false;
        add(requests, r.value("requests", Json::object()), &cpu, &memory);
        bool limit_cpu = false;
        bool limit_memory = false;
        add(limits, r.value("limits", Json::object()), &limit_cpu, &limit_memory);
        if (!limit_cpu || !limit_memory) guaranteed = false;
      }
    }
  }
  const auto count = [](const std::array<std::pair<bool, Int128>, 2>& sums) {
    return static_cast<int>(sums[0].first) + static_cast<int>(sums[1].first);
  };
  if (count(requests) == 0 && count(limits) == 0) return QosClass::kBestEffort;
  if (guaranteed) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (!requests[i].first) continue;
      if (!limits[i].first || limits[i].second != requests[i].second) guaranteed = false;
    }
  }
  return guaranteed && count(requests) == count(limits) ? QosClass::kGuaranteed : QosClass::kBurstable;
}

void DefaultRequestsFromLimits(Json& pod_spec) {
  if (!pod_spec.is_object()) return;
  for (const char* list : {"containers", "initContainers"}) {
    const auto it = pod_spec.find(list);
    if (it == pod_spec.end() || !it->is_array()) continue;
    for (Json& container : *it) {
      if (!container.is_object()) continue;
      const auto resources = container.find("resources");
      if (resources == container.end() || !resources->is_object()) continue;
      const auto limits = resources->find("limits");
      if (limits == resources->end() || !limits->is_object()) continue;
      Json& requests = (*resources)["requests"];
      if (!requests.is_object()) requests = Json::object();
      for (const auto& [name, quantity] : limits->items()) {
        if (!requests.contains(name)) requests[name] = quantity;
      }
    }
  }
}

namespace {

const ::cloneset::planner::v1::Condition* TrueCondition(const ::cloneset::planner::v1::Pod& pod,
                                                        std::string_view type) {
  const ::cloneset::planner::v1::Condition* found = nullptr;  // the last one: a merge by type leaves one
  for (const auto& c : pod.conditions()) {
    if (c.type() == type) found = &c;
  }
  return found != nullptr && found->status() == "True" ? found : nullptr;
}

// Every cpu/memory entry of `spec` has an equal quantity in `status`.
bool Carried(const google::protobuf::Map<std::string, std::string>& spec,
             const google::protobuf::Map<std::string, std::string>& status) {
  for (const auto& [name, quantity] : spec) {
    if (!ResizableResource(name)) continue;
    const auto it = status.find(name);
    if (it == status.end() || !SameQuantity(quantity, it->second)) return false;
  }
  return true;
}

}  // namespace

ResizeProgress PodResizeProgress(const ::cloneset::planner::v1::Pod& pod) {
  ResizeProgress p;
  for (const auto& [type, state] : {std::pair{kPodResizePending, ResizeState::kPending},
                                    std::pair{kPodResizeInProgress, ResizeState::kInProgress}}) {
    if (const auto* c = TrueCondition(pod, type)) {
      p.state = state;
      p.reason = c->reason();
      p.message = c->message();
      return p;
    }
  }
  for (const auto& container : pod.containers()) {
    const ::cloneset::planner::v1::ContainerStatus* status = nullptr;
    for (const auto& s : pod.container_statuses()) {
      if (s.name() == container.name()) {
        status = &s;
        break;
      }
    }
    if (status == nullptr) {
      p.state = ResizeState::kNoStatus;
      p.container = container.name();
      return p;
    }
    if (!Carried(container.resource_requests(), status->resource_requests()) ||
        !Carried(container.resource_limits(), status->resource_limits())) {
      p.state = ResizeState::kNotApplied;
      p.container = container.name();
      return p;
    }
  }
  return p;
}

std::string DescribeResize(const ResizeProgress& p) {
  switch (p.state) {
    case ResizeState::kDone: return "resized";
    case ResizeState::kPending:
      return absl::StrCat("resize ", p.reason.empty() ? "pending" : p.reason, p.message.empty() ? "" : ": ", p.message);
    case ResizeState::kInProgress:
      return absl::StrCat("resize in progress", p.reason.empty() ? "" : " (", p.reason, p.reason.empty() ? "" : ")",
                          p.message.empty() ? "" : ": ", p.message);
    case ResizeState::kNoStatus: return absl::StrCat("container ", p.container, " has no status");
    case ResizeState::kNotApplied:
      return absl::StrCat("container ", p.container, " does not report its new resources yet");
  }
  return "unknown";
}

}  // namespace cloneset::common
