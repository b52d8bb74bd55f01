#include "agent/puller.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace cloneset::agent {

absl::Duration Backoff(int failed_attempts) {
  absl::Duration d = absl::Seconds(1);
  for (int i = 1; i < failed_attempts && d < absl::Seconds(30); ++i) d *= 2;
  return std::min(d, absl::Seconds(30));
}

PullResult PullWithRetries(ImageService& cri, const std::string& image, const std::optional<RegistryAuth>& auth,
                           absl::Duration timeout, const base::Clock& clock,
                           const std::function<bool(absl::Duration)>& sleep) {
  PullResult r;
  const absl::Time deadline = clock.Now() + timeout;
  auto present = cri.ImageStatus(image);
  if (present.ok() && present->has_value()) {
    r.ok = r.already_present = true;
    r.image_id = (*present)->id;
    r.size = (*present)->size;
    return r;
  }
  absl::Status last = present.ok() ? absl::OkStatus() : present.status();
  while (true) {
    const absl::Duration remaining = deadline - clock.Now();
    if (remaining <= absl::ZeroDuration()) break;
    ++r.attempts;
    auto ref = cri.PullImage(image, auth, remaining);
    if (ref.ok()) {
      r.ok = true;
      r.image_id = *ref;
      // The size comes from ImageStatus; a failure here does not make the pull fail.
      if (auto st = cri.ImageStatus(image); st.ok() && st->has_value()) {
        if (!(*st)->id.empty()) r.image_id = (*st)->id;
        r.size = (*st)->size;
      }
      return r;
    }
    last = ref.status();
    const absl::Duration delay = Backoff(r.attempts);
    if (clock.Now() + delay >= deadline) break;
    if (!sleep(delay)) {
      r.message = "agent shutting down";
      return r;
    }
  }
  r.message = absl::StrCat("pull of ", image, " did not finish within ", absl::FormatDuration(timeout), " (",
                           r.attempts, " attempts)", last.ok() ? "" : absl::StrCat(": ", last.message()));
  return r;
}

}  // namespace cloneset::agent
