#include "clonesetctl/render.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace cloneset::clonesetctl {
namespace {

nlohmann::json CountsJson(const PodCounts& c) {
  return {{"desired", c.desired}, {"pods", c.pods},     {"ready", c.ready},
          {"available", c.available}, {"updated", c.updated}, {"unavailable", c.unavailable},
          {"surge", c.surge}};
}

std::string PodsColumn(const TimelineStep& s) {
  std::vector<std::string> parts;
  for (const auto& n : s.created) parts.push_back("+" + n);
  for (const auto& n : s.deleted) parts.push_back("-" + n);
  for (const auto& n : s.updated_in_place) parts.push_back("~" + n);
  if (!s.lifecycle.empty()) {
    parts.push_back(s.lifecycle.size() == 1 ? absl::StrCat("(", s.lifecycle[0], ")")
                                            : absl::StrCat("(lifecycle of ", s.lifecycle.size(), " pods)"));
  }
  return absl::StrJoin(parts, " ");
}

}  // namespace

std::string FormatOffset(absl::Duration d) {
  if (d <= absl::ZeroDuration()) return "+0s";
  return absl::StrCat("+", absl::FormatDuration(absl::Trunc(d, absl::Milliseconds(100))));
}

std::string SimulationTable(const SimulateResult& r, const SimOptions& o) {
  std::string out = absl::StrFormat("CloneSet %s/%s\n", r.namespace_, r.name);
  if (r.changes.empty()) {
    absl::StrAppend(&out, "Change:   none (creation from zero pods)\n");
  } else {
    absl::StrAppend(&out, "Change:   ", absl::StrJoin(r.changes, ", "), "\n");
  }
  absl::StrAppend(&out, "Strategy: ", r.strategy, "\n");
  if (!r.from_revision.empty() || !r.to_revision.empty()) {
    absl::StrAppend(&out, "Revision: ", r.from_revision.empty() ? "-" : r.from_revision, " -> ", r.to_revision,
                    "\n");
  }
  absl::StrAppend(&out, absl::StrFormat("Model:    container start %s, ready %s later, start failure rate %g, seed %d\n\n",
                                        absl::FormatDuration(o.start_delay), absl::FormatDuration(o.ready_after),
                                        o.fail_rate, o.seed));
  absl::StrAppend(&out, absl::StrFormat("%-8s %-16s %7s %7s %8s %11s %5s %7s %5s %7s  %s\n", "TIME", "PHASE",
                                        "CREATED", "DELETED", "IN-PLACE", "UNAVAILABLE", "SURGE", "UPDATED",
                                        "READY", "DESIRED", "PODS (+created -deleted ~in-place)"));
  for (const TimelineStep& s : r.steps) {
    absl::StrAppend(&out, absl::StrFormat("%-8s %-16s %7d %7d %8d %11d %5d %7d %5d %7d  %s\n", FormatOffset(s.at),
                                          s.phase, s.created.size(), s.deleted.size(), s.updated_in_place.size(),
                                          s.counts.unavailable, s.counts.surge, s.counts.updated, s.counts.ready,
                                          s.counts.desired, PodsColumn(s)));
  }
  if (r.steps.empty()) absl::StrAppend(&out, "(no pod changes)\n");
  absl::StrAppend(&out, "\n");
  const PodCounts& c = r.final_counts;
  if (r.outcome == "complete") {
    absl::StrAppend(&out, absl::StrFormat("Result:   complete in %s: %d/%d pods updated and available\n",
                                          absl::FormatDuration(r.duration), c.updated, c.desired));
  } else if (r.outcome == "partition") {
    absl::StrAppend(&out, absl::StrFormat("Result:   stops at the partition after %s: %d/%d pods updated\n",
                                          absl::FormatDuration(r.duration), c.updated, c.desired));
  } else {
    absl::StrAppend(&out, absl::StrFormat("Result:   STALLS after %s: %d/%d updated, %d/%d available\n",
                                          absl::FormatDuration(r.duration), c.updated, c.desired, c.available,
                                          c.desired));
  }
  for (const std::string& why : r.reasons) absl::StrAppend(&out, "          because ", why, "\n");
  absl::StrAppend(&out, absl::StrFormat("Peak:     %d unavailable, %d surge; %d API writes\n", r.peak_unavailable,
                                        r.peak_surge, r.writes));
  for (const std::string& w : r.warnings) absl::StrAppend(&out, "Warning:  ", w, "\n");
  return out;
}

nlohmann::json SimulationJson(const SimulateResult& r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const TimelineStep& s : r.steps) {
    steps.push_back({{"atSeconds", absl::ToDoubleSeconds(s.at)},
                     {"phase", s.phase},
                     {"created", s.created},
                     {"deleted", s.deleted},
                     {"updatedInPlace", s.updated_in_place},
                     {"lifecycle", s.lifecycle},
                     {"counts", CountsJson(s.counts)}});
  }
  return {{"name", r.name},
          {"namespace", r.namespace_},
          {"changes", r.changes},
          {"strategy", r.strategy},
          {"fromRevision", r.from_revision},
          {"toRevision", r.to_revision},
          {"steps", steps},
          {"outcome", r.outcome},
          {"finished", r.finished()},
          {"reasons", r.reasons},
          {"warnings", r.warnings},
          {"durationSeconds", absl::ToDoubleSeconds(r.duration)},
          {"peakUnavailable", r.peak_unavailable},
          {"peakSurge", r.peak_surge},
          {"apiWrites", r.writes},
          {"final", CountsJson(r.final_counts)}};
}

}  // namespace cloneset::clonesetctl
