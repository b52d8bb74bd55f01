// What the refusal suites share (e2e_refusal_test.cc on both backends, e2e_real_refusal_test.cc on the real control
// plane only): the executor at a 2 s back-off cap (--retry_backoff_max) so that recovery is quick, its metrics
// scraped over a window, and the bound of docs/reliability.md "Refusals that last" on what a refusal may cost.
#pragma once

#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "e2e_fixture.h"

namespace cloneset::testing {

constexpr absl::Duration kBackoffCap = absl::Seconds(2);
// While the refusal lasts, once the back-off has reached its cap, a retry comes every 1.6-2 s (the cap less up to
// 20 % jitter): in a window of T seconds at most T / 1.6 + 1 refused creates (38.5 a minute), each with one GET of
// the CloneSet before it. Every other request of the executor (watches, the shard Lease's renewals, the image
// pre-download coordinator) is its baseline, measured before the refusal; what the refusal adds on top is at most two
// requests per attempt and a few for the condition write and the events. The hot loop this suite guards against
// made thousands a minute.
const absl::Duration kMinRetryInterval = kBackoffCap * 4 / 5;
constexpr double kExtraRequestsPerAttempt = 2;
constexpr double kExtraRequestsSlack = 8;

class RefusalFixture : public E2eTest {
 public:
  // The executor flags of the refusal suites: the short back-off cap the bounds above follow from.
  static std::vector<std::string> ExecutorFlags() {
    return {absl::StrCat("--retry_backoff_max=", absl::FormatDuration(kBackoffCap)), "--retry-backoff-base=50ms"};
  }
  static void SetUpTestSuite() { StartCluster({.executor_flags = ExecutorFlags(), .crds = {}}); }

 protected:
  // The executor's Prometheus text (its log names the address: "metrics on http://...").
  std::string ScrapeExecutor() {
    static const std::regex kAddress("metrics on http://([0-9.]+:[0-9]+)");
    std::smatch m;
    const std::string log = cluster_->ExecutorLog();
    if (!std::regex_search(log, m, kAddress)) return "";
    return RunCommand({"curl", "-sf", "http://" + m[1].str() + "/metrics"}, {}).output;
  }
  // The sum of the samples of `metric` whose labels contain every one of `labels` ("key=\"value\"").
  double Sum(const std::string& text, const std::string& metric, const std::vector<std::string>& labels = {}) {
    double total = 0;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(metric, 0) != 0 || (line.size() > metric.size() && line[metric.size()] != '{' &&
                                         line[metric.size()] != ' ')) {
        continue;
      }
      bool match = true;
      for (const std::string& l : labels) match = match && line.find(l) != std::string::npos;
      double v = 0;
      if (match && absl::SimpleAtod(line.substr(line.rfind(' ') + 1), &v)) total += v;
    }
    return total;
  }
  const json* Condition(const json& cs, const std::string& type) {
    // A CloneSet the executor has not written a status for yet has none (operator[] on a const json must not be
    // asked for a missing key).
    for (const auto& c : cs.value("status", json::object()).value("conditions", json::array())) {
      if (c.value("type", "") == type) {
        condition_ = c;
        return &condition_;
      }
    }
    return nullptr;
  }
  int EventsWithReason(const std::string& reason) {
    int n = 0;
    for (const auto& [r, _] : Events()) n += r == reason;
    return n;
  }

  struct Window {
    double refused_creates = 0, requests = 0;
    absl::Duration length;
    std::string by_method;  // the requests by method, for the log
  };
  // What the executor did over `length`: refused creates of `reason` (none for the baseline) and all its requests.
  Window Measure(const std::string& reason, absl::Duration length) {
    const std::vector<std::string> labels = {R"(verb="create")", R"(resource="pods")", "reason=\"" + reason + "\""};
    const std::string before = ScrapeExecutor();
    absl::SleepFor(length);
    const std::string after = ScrapeExecutor();
    Window w{Sum(after, "cloneset_executor_refused_writes_total", labels) -
                 Sum(before, "cloneset_executor_refused_writes_total", labels),
             Sum(after, "rest_client_requests_total") - Sum(before, "rest_client_requests_total"), length, ""};
    for (const char* m : {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
      const std::vector<std::string> method = {absl::StrCat("method=\"", m, "\"")};
      absl::StrAppend(&w.by_method, " ", m, "=",
                      Sum(after, "rest_client_requests_total", method) - Sum(before, "rest_client_requests_total", method));
    }
    return w;
  }
  // The back-off doubles from its base to its cap; the delays before the cap add up to less than twice the cap (with
  // the jitter too), so once two caps have passed since the first refusal every retry waits the capped delay. The bound below is for that
  // steady state: measuring during the ramp counted one refused create more than it allows (14 in 20 s).
  static void WaitForCappedBackoff() { absl::SleepFor(2 * kBackoffCap); }

  void ExpectBounded(const Window& baseline, const Window& w) {
    const double max_attempts = w.length / kMinRetryInterval + 1;
    const double extra = w.requests - baseline.requests * (w.length / baseline.length);
    std::cerr << "baseline: " << baseline.requests << " requests in " << absl::FormatDuration(baseline.length) << " ("
              << baseline.by_method << "); refusal: " << w.refused_creates << " refused creates, " << w.requests
              << " requests in " << absl::FormatDuration(w.length) << " (" << w.by_method << "), " << extra
              << " above the baseline\n";
    EXPECT_GE(w.refused_creates, 1) << "the refusal was retried";
    EXPECT_LE(w.refused_creates, max_attempts);
    EXPECT_LE(extra, kExtraRequestsPerAttempt * max_attempts + kExtraRequestsSlack);
  }

  json condition_;
};

}  // namespace cloneset::testing
