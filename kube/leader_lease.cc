#include "kube/leader_lease.h"

#include "absl/strings/str_cat.h"
#include "base/time_format.h"
#include "kube/api_status.h"
#include "nlohmann/json.hpp"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"

namespace cloneset::kube {

std::string FormatMicroTime(absl::Time t) {
  return base::FormatMicroTime(t);
}

absl::StatusOr<absl::Time> ParseMicroTime(const std::string& s) {
  return base::ParseTime(s);
}

absl::StatusOr<LeaseRecord> ParseLease(std::string_view json) {
  auto j = nlohmann::json::parse(json, nullptr, false);
  if (!j.is_object()) return absl::InvalidArgumentError("lease: not a JSON object");
  LeaseRecord r;
  try {
    if (j.contains("metadata")) r.resource_version = j["metadata"].value("resourceVersion", "");
    if (!j.contains("spec") || j["spec"].is_null()) return r;
    const auto& spec = j["spec"];
    if (spec.contains("holderIdentity") && !spec["holderIdentity"].is_null()) {
      r.holder = spec["holderIdentity"].get<std::string>();
    }
    if (spec.contains("leaseDurationSeconds") && !spec["leaseDurationSeconds"].is_null()) {
      r.lease_duration_seconds = spec["leaseDurationSeconds"].get<int>();
    }
    if (spec.contains("leaseTransitions") && !spec["leaseTransitions"].is_null()) {
      r.transitions = spec["leaseTransitions"].get<int>();
    }
    for (auto [field, out] : {std::pair{"acquireTime", &r.acquire_time}, std::pair{"renewTime", &r.renew_time}}) {
      if (!spec.contains(field) || spec[field].is_null()) continue;
      auto t = ParseMicroTime(spec[field].get<std::string>());
      if (!t.ok()) return absl::InvalidArgumentError(absl::StrCat("lease: spec.", field, ": ", t.status().message()));
      *out = *t;
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("lease: ", e.what()));
  }
  return r;
}

std::string LeaseJson(const std::string& ns, const std::string& name, const LeaseRecord& r) {
  nlohmann::json j = {{"apiVersion", "coordination.k8s.io/v1"},
                      {"kind", "Lease"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"spec",
                       {{"holderIdentity", r.holder},
                        {"leaseDurationSeconds", r.lease_duration_seconds},
                        {"acquireTime", FormatMicroTime(r.acquire_time)},
                        {"renewTime", FormatMicroTime(r.renew_time)},
                        {"leaseTransitions", r.transitions}}}};
  if (!r.resource_version.empty()) j["metadata"]["resourceVersion"] = r.resource_version;
  return j.dump();
}

LeaseDecision DecideLease(const std::optional<LeaseRecord>& lease, absl::Time observed_at,
                          std::string_view me, absl::Duration lease_duration, absl::Time now) {
  const int seconds = static_cast<int>(absl::ToInt64Seconds(lease_duration));
  if (!lease) {
    return {LeaseAction::kAcquire, LeaseRecord{std::string(me), seconds, now, now, 0, ""}};
  }
  if (lease->holder == me) {
    LeaseRecord next = *lease;
    next.lease_duration_seconds = seconds;
    next.renew_time = now;
    return {LeaseAction::kRenew, next};
  }
  const bool expired = observed_at + absl::Seconds(lease->lease_duration_seconds) <= now;
  if (lease->holder.empty() || expired) {
    return {LeaseAction::kAcquire,
            LeaseRecord{std::string(me), seconds, now, now, lease->transitions + 1, lease->resource_version}};
  }
  return {LeaseAction::kWait, *lease};
}

LeaderElector::LeaderElector(RestClient& client, LeaderElectionConfig config)
    : client_(client), cfg_(std::move(config)), clock_(cfg_.clock ? *cfg_.clock : base::RealClock::Get()) {
  if (cfg_.registry != nullptr) {
    gauge_ = &prometheus::BuildGauge()
                  .Name("leader_election_master_status")
                  .Help("Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                        "backup, 1 indicates master. 'name' is the string used to identify the lease.")
                  .Register(*cfg_.registry)
                  .Add({{"name", cfg_.lease_name}});
    gauge_->Set(0);
  }
}

LeaderElector::~LeaderElector() { Stop(/*release=*/false); }

std::string LeaderElector::Path(bool item) const {
  std::string p = absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/", cfg_.lease_namespace, "/leases");
  if (item) absl::StrAppend(&p, "/", cfg_.lease_name);
  return p;
}

void LeaderElector::SetLeader(bool leader) {
  leader_ = leader;
  if (gauge_ != nullptr) gauge_->Set(leader ? 1 : 0);
}

absl::StatusOr<bool> LeaderElector::TryAcquireOrRenew() {
  if (RenewOptimistically()) return true;
  std::optional<LeaseRecord> current;
  auto body = client_.Get(Path(true));
  if (body.ok()) {
    auto parsed = ParseLease(*body);
    if (!parsed.ok()) return parsed.status();
    current = *std::move(parsed);
  } else if (!absl::IsNotFound(body.status())) {
    return body.status();
  }
  const absl::Time now = clock_.Now();
  absl::MutexLock l(&mu_);
  // Only a change of the record restarts the expiry clock.
  if (current.has_value() != observed_.has_value() ||
      (current && current->resource_version != observed_->resource_version)) {
    observed_ = current;
    observed_at_ = now;
  }
  LeaseDecision d = DecideLease(current, observed_at_, cfg_.identity, cfg_.lease_duration, now);
  if (d.action == LeaseAction::kWait) {
    SetLeader(false);
    return false;
  }
  mu_.Unlock();
  const std::string json = LeaseJson(cfg_.lease_namespace, cfg_.lease_name, d.next);
  auto written = current ? client_.Update(Path(true), json) : client_.Create(Path(false), json);
  mu_.Lock();
  if (!written.ok()) {
    // Someone else wrote first: not ours this round.
    if (IsConflict(written.status()) || absl::IsAlreadyExists(written.status())) return false;
    return written.status();
  }
  auto stored = ParseLease(*written);
  if (!stored.ok()) return stored.status();
  observed_ = *std::move(stored);
  observed_at_ = now;
  last_renew_ = now;
  SetLeader(true);
  return true;
}

bool LeaderElector::RenewOptimistically() {
  LeaseRecord next;
  const absl::Time now = clock_.Now();
  {
    absl::MutexLock l(&mu_);
    // Only a leader whose last renewal is within the renew deadline, on the record its own write returned.
    if (!leader_ || !observed_ || observed_->holder != cfg_.identity || now - last_renew_ >= cfg_.renew_deadline) {
      return false;
    }
    next = *observed_;
  }
  next.lease_duration_seconds = static_cast<int>(absl::ToInt64Seconds(cfg_.lease_duration));
  next.renew_time = now;
  auto written = client_.Update(Path(true), LeaseJson(cfg_.lease_namespace, cfg_.lease_name, next));
  if (!written.ok()) return false;  // a newer version (409) or an error: the read-decide-write round follows
  auto stored = ParseLease(*written);
  if (!stored.ok()) return false;
  absl::MutexLock l(&mu_);
  observed_ = *std::move(stored);
  observed_at_ = now;
  last_renew_ = now;
  SetLeader(true);
  return true;
}

absl::Status LeaderElector::Release() {
  LeaseRecord r;
  {
    absl::MutexLock l(&mu_);
    if (!leader_ || !observed_ || observed_->holder != cfg_.identity) return absl::OkStatus();
    r = *observed_;
    SetLeader(false);
  }
  const absl::Time now = clock_.Now();
  r.holder = "";
  r.lease_duration_seconds = 1;
  r.renew_time = now;
  auto written = client_.Update(Path(true), LeaseJson(cfg_.lease_namespace, cfg_.lease_name, r));
  if (!written.ok()) return written.status();
  absl::MutexLock l(&mu_);
  if (auto stored = ParseLease(*written); stored.ok()) observed_ = *std::move(stored);
  return absl::OkStatus();
}

bool LeaderElector::IsLeader() const {
  absl::MutexLock l(&mu_);
  return leader_ && clock_.Now() - last_renew_ < cfg_.renew_deadline;
}

void LeaderElector::Start(std::function<void()> on_started, std::function<void()> on_stopped) {
  thread_ = std::thread([this, on_started = std::move(on_started), on_stopped = std::move(on_stopped)] {
    bool leading = false;
    for (;;) {
      (void)TryAcquireOrRenew();  // errors: retry next period; IsLeader() ages out
      const bool now_leading = IsLeader();
      if (now_leading != leading) {
        leading = now_leading;
        if (leading && on_started) on_started();
        if (!leading && on_stopped) on_stopped();
      }
      absl::MutexLock l(&mu_);
      // On the injected clock, so a test drives the period; Stop ends the wait at once.
      if (clock_.AwaitWithTimeout(&mu_, absl::Condition(&stopping_), cfg_.retry_period)) break;
    }
    if (leading && on_stopped) on_stopped();
  });
}

void LeaderElector::Stop(bool release) {
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;  // ends the loop's wait: its condition is re-evaluated on unlock
  }
  if (thread_.joinable()) thread_.join();
  if (release) (void)Release();
}

}  // namespace cloneset::kube
