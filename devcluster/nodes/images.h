// The simulated container runtime's image store, one per node. Both the node's CRI ImageService (used by the
// node agent to pre-pull) and the kubelet simulator (pulling for pods) go through it, so a pod starts fast when
// its image was pre-pulled. Pulls complete lazily: a pull records when it will be done, and Settle(now) turns
// finished pulls into present images, which keeps the store free of timers and threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/image_ref.h"

namespace prometheus {
class Registry;
class Gauge;
class Counter;
template <typename T>
class Family;
}  // namespace prometheus

namespace cloneset::devcluster::nodes {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::nanoseconds;

// Docker reference normalisation as containerd reports repo tags: "nginx" -> "docker.io/library/nginx:latest"
// (the rule the planner and the agent compare images with).
using common::NormalizeImage;

// Lowercase hex sha256 of `data`.
std::string Sha256Hex(std::string_view data);

// Deterministic image id: "sha256:" + hex sha256 of the normalised reference. A changed image always changes id.
std::string ImageIdFor(std::string_view image);

// Pull time per image: the first rule whose regex is found in the given or the normalised reference wins
// (unanchored, like grep; anchor with ^...$).
struct PullTimeRule {
  std::string pattern;
  std::regex regex;
  Duration duration{};
};
struct ImagePolicy {
  std::vector<PullTimeRule> pull_times;
  Duration default_pull_time = std::chrono::milliseconds(0);
  std::optional<std::regex> fail_pulls;  // images matching (unanchored) fail with NotFound (ErrImagePull)
  std::string fail_pattern;

  Duration PullTimeFor(std::string_view image) const;
  bool PullFails(std::string_view image) const;
};

// Parses "regex=duration,regex=duration" (durations as absl: "2s", "500ms"). Error names the flag and the entry.
absl::StatusOr<std::vector<PullTimeRule>> ParsePullTimeRules(std::string_view spec, std::string_view flag_name);

// Shared metric families; one instance per simulator (registry may be null: no metrics).
struct CriMetrics {
  explicit CriMetrics(prometheus::Registry* registry);
  prometheus::Family<prometheus::Gauge>* in_flight = nullptr;
  prometheus::Family<prometheus::Gauge>* max_in_flight = nullptr;
  prometheus::Family<prometheus::Counter>* pulls_total = nullptr;
};

struct ImageRecord {
  std::string ref;  // normalised
  std::string id;
  uint64_t size = 0;
  bool present = false;
  TimePoint done_at{};  // while pulling
  uint64_t pull_generation = 0;
};

// What the kubelet sees for one image at `now`.
struct ImageView {
  bool present = false;
  TimePoint ready_at{};  // present: when it became usable; pulling: when it will be
  absl::Status error;    // pull failure
};

// Credentials seen by PullImage, kept so tests can assert which secret the agent used.
struct RecordedAuth {
  std::string image;
  std::string username;
  std::string password;
  std::string auth;
  std::string server_address;
};

class ImageStore {
 public:
  ImageStore(std::string node, const ImagePolicy* policy, CriMetrics* metrics);

  // Starts (or joins) a pull. Present -> ready now; pulling -> the running pull's done time; failing image -> error.
  ImageView EnsurePull(std::string_view image, TimePoint now);
  // Presence without pulling.
  std::optional<ImageRecord> Status(std::string_view image, TimePoint now);
  std::vector<ImageRecord> List(TimePoint now);
  bool Remove(std::string_view image, TimePoint now);
  // Abandons a pull a cancelled CRI client started (as containerd does when its only client goes away).
  void CancelPull(std::string_view image, uint64_t generation, TimePoint now);
  // Marks finished pulls present; returns the earliest still-running pull's done time, if any.
  std::optional<TimePoint> Settle(TimePoint now);
  // Preloads an image as present (for tests and pre-seeded nodes).
  void Preload(std::string_view image);

  void RecordAuth(RecordedAuth auth);
  std::vector<RecordedAuth> Auths() const;
  int MaxInFlight() const;
  int InFlight() const;
  uint64_t PullsTotal(std::string_view result) const;
  const std::string& node() const { return node_; }

 private:
  void SettleLocked(TimePoint now);
  void CountLocked(const char* result);

  const std::string node_;
  const ImagePolicy* policy_;
  mutable std::mutex mu_;
  std::map<std::string, ImageRecord, std::less<>> images_;
  std::vector<RecordedAuth> auths_;
  int in_flight_ = 0;
  int max_in_flight_ = 0;
  uint64_t generation_ = 0;
  std::map<std::string, uint64_t, std::less<>> totals_;
  prometheus::Gauge* in_flight_gauge_ = nullptr;
  prometheus::Gauge* max_gauge_ = nullptr;
  CriMetrics* metrics_;
};

}  // namespace cloneset::devcluster::nodes
