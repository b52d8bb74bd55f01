#include "devcluster/nodes/images.h"

#include <openssl/sha.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace cloneset::devcluster::nodes {

std::string Sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : digest) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string ImageIdFor(std::string_view image) { return "sha256:" + Sha256Hex(NormalizeImage(image)); }

Duration ImagePolicy::PullTimeFor(std::string_view image) const {
  std::string given(image);
  std::string norm = NormalizeImage(image);
  for (const auto& rule : pull_times) {
    if (std::regex_search(given, rule.regex) || std::regex_search(norm, rule.regex)) return rule.duration;
  }
  return default_pull_time;
}

bool ImagePolicy::PullFails(std::string_view image) const {
  if (!fail_pulls) return false;
  std::string given(image);
  return std::regex_search(given, *fail_pulls) || std::regex_search(NormalizeImage(image), *fail_pulls);
}

absl::StatusOr<std::vector<PullTimeRule>> ParsePullTimeRules(std::string_view spec, std::string_view flag_name) {
  std::vector<PullTimeRule> rules;
  for (absl::string_view entry_view : absl::StrSplit(absl::string_view(spec.data(), spec.size()), ',',
                                                     absl::SkipWhitespace())) {
    std::string entry(absl::StripAsciiWhitespace(entry_view));
    auto eq = entry.rfind('=');
    if (eq == std::string_view::npos || eq == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", std::string(flag_name), ": entry \"", entry, "\" is not <regex>=<duration>"));
    }
    absl::Duration d;
    std::string dur = entry.substr(eq + 1);
    if (!absl::ParseDuration(dur, &d) || d < absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", std::string(flag_name), ": \"", dur, "\" in \"", entry, "\" is not a duration like 2s or 500ms"));
    }
    PullTimeRule rule;
    rule.pattern = std::string(entry.substr(0, eq));
    try {
      rule.regex = std::regex(rule.pattern);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", std::string(flag_name), ": bad regex \"", rule.pattern, "\": ", e.what()));
    }
    rule.duration = absl::ToChronoNanoseconds(d);
    rules.push_back(std::move(rule));
  }
  return rules;
}

CriMetrics::CriMetrics(prometheus::Registry* registry) {
  if (registry == nullptr) return;
  in_flight = &prometheus::BuildGauge()
                   .Name("devcluster_cri_pulls_in_flight")
                   .Help("Image pulls currently running in the simulated container runtime of a node")
                   .Register(*registry);
  max_in_flight = &prometheus::BuildGauge()
                       .Name("devcluster_cri_pulls_in_flight_max")
                       .Help("Highest number of concurrent image pulls observed on a node since start")
                       .Register(*registry);
  pulls_total = &prometheus::BuildCounter()
                     .Name("devcluster_cri_pulls_total")
                     .Help("Image pulls finished by the simulated container runtime, by node and result")
                     .Register(*registry);
}

ImageStore::ImageStore(std::string node, const ImagePolicy* policy, CriMetrics* metrics)
    : node_(std::move(node)), policy_(policy), metrics_(metrics) {
  if (metrics_ != nullptr && metrics_->in_flight != nullptr) {
    in_flight_gauge_ = &metrics_->in_flight->Add({{"node", node_}});
    max_gauge_ = &metrics_->max_in_flight->Add({{"node", node_}});
  }
}

void ImageStore::CountLocked(const char* result) {
  ++totals_[result];
  if (metrics_ != nullptr && metrics_->pulls_total != nullptr) {
    metrics_->pulls_total->Add({{"node", node_}, {"result", result}}).Increment();
  }
  if (in_flight_gauge_ != nullptr) in_flight_gauge_->Set(in_flight_);
}

void ImageStore::SettleLocked(TimePoint now) {
  for (auto& [ref, rec] : images_) {
    if (!rec.present && rec.done_at <= now) {
      rec.present = true;
      --in_flight_;
      CountLocked("success");
    }
  }
}

ImageView ImageStore::EnsurePull(std::string_view image, TimePoint now) {
  std::lock_guard<std::mutex> l(mu_);
  SettleLocked(now);
  std::string ref = NormalizeImage(image);
  auto it = images_.find(ref);
  if (it != images_.end()) return ImageView{.present = it->second.present, .ready_at = it->second.done_at, .error = absl::OkStatus()};
  if (policy_ != nullptr && policy_->PullFails(image)) {
    CountLocked("failure");
    return ImageView{.present = false, .ready_at = {}, .error = absl::NotFoundError(absl::StrCat("failed to pull and unpack image \"", ref,
                                                               "\": simulated pull failure (--fault-image-pull-"
                                                               "failure=",
                                                               policy_->fail_pattern, ")"))};
  }
  Duration pull = policy_ != nullptr ? policy_->PullTimeFor(image) : Duration::zero();
  ImageRecord rec{.ref = ref,
                  .id = ImageIdFor(ref),
                  .size = 1'000'000 + (std::hash<std::string>{}(ref) % 100'000'000),
                  .present = false,
                  .done_at = now + std::chrono::duration_cast<TimePoint::duration>(pull),
                  .pull_generation = ++generation_};
  ++in_flight_;
  max_in_flight_ = std::max(max_in_flight_, in_flight_);
  if (in_flight_gauge_ != nullptr) {
    in_flight_gauge_->Set(in_flight_);
    max_gauge_->Set(max_in_flight_);
  }
  ImageView view{.present = false, .ready_at = rec.done_at, .error = absl::OkStatus()};
  if (pull <= Duration::zero()) {
    rec.present = true;
    --in_flight_;
    CountLocked("success");
    view.present = true;
  }
  images_.emplace(ref, std::move(rec));
  return view;
}

std::optional<ImageRecord> ImageStore::Status(std::string_view image, TimePoint now) {
  std::lock_guard<std::mutex> l(mu_);
  SettleLocked(now);
  auto it = images_.find(NormalizeImage(image));
  if (it == images_.end()) return std::nullopt;
  return it->second;
}

std::vector<ImageRecord> ImageStore::List(TimePoint now) {
  std::lock_guard<std::mutex> l(mu_);
  SettleLocked(now);
  std::vector<ImageRecord> out;
  for (const auto& [ref, rec] : images_) {
    if (rec.present) out.push_back(rec);
  }
  return out;
}

bool ImageStore::Remove(std::string_view image, TimePoint now) {
  std::lock_guard<std::mutex> l(mu_);
  SettleLocked(now);
  auto it = images_.find(NormalizeImage(image));
  if (it == images_.end() || !it->second.present) return false;
  images_.erase(it);
  return true;
}

void ImageStore::CancelPull(std::string_view image, uint64_t generation, TimePoint now) {
  std::lock_guard<std::mutex> l(mu_);
  SettleLocked(now);
  auto it = images_.find(NormalizeImage(image));
  if (it == images_.end() || it->second.present || it->second.pull_generation != generation) return;
  images_.erase(it);
  --in_flight_;
  CountLocked("cancelled");
}

std::optional<TimePoint> ImageStore::Settle(TimePoint now) {
  std::lock_guard<std::mutex> l(mu_);
  SettleLocked(now);
  std::optional<TimePoint> next;
  for (const auto& [ref, rec] : images_) {
    if (!rec.present && (!next || rec.done_at < *next)) next = rec.done_at;
  }
  return next;
}

void ImageStore::Preload(std::string_view image) {
  std::lock_guard<std::mutex> l(mu_);
  std::string ref = NormalizeImage(image);
  images_[ref] = ImageRecord{.ref = ref, .id = ImageIdFor(ref), .size = 1'000'000, .present = true};
}

void ImageStore::RecordAuth(RecordedAuth auth) {
  std::lock_guard<std::mutex> l(mu_);
  auths_.push_back(std::move(auth));
}

std::vector<RecordedAuth> ImageStore::Auths() const {
  std::lock_guard<std::mutex> l(mu_);
  return auths_;
}

int ImageStore::MaxInFlight() const {
  std::lock_guard<std::mutex> l(mu_);
  return max_in_flight_;
}

int ImageStore::InFlight() const {
  std::lock_guard<std::mutex> l(mu_);
  return in_flight_;
}

uint64_t ImageStore::PullsTotal(std::string_view result) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = totals_.find(result);
  return it == totals_.end() ? 0 : it->second;
}

}  // namespace cloneset::devcluster::nodes
