#include "devcluster/nodes/kubelet.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "base/json_read.h"
#include "base/time_format.h"
#include "common/resources.h"
#include "devcluster/nodes/scheduler.h"

namespace cloneset::devcluster::nodes {
namespace {

const nlohmann::json& Field(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

using base::json_read::Str;

Duration Backoff(const KubeletTiming& t, int attempt) {
  Duration d = t.crash_backoff;
  for (int i = 1; i < attempt && d < t.crash_backoff_max; ++i) d *= 2;
  return std::min(d, t.crash_backoff_max);
}

std::string ContainerId(const nlohmann::json& pod, const std::string& name, int restarts) {
  return absl::StrCat("containerd://",
                      Sha256Hex(absl::StrCat(Str(Field(pod, "metadata"), "uid"), "/", name, "/", restarts)));
}

void StartPull(ContainerProgress& p, const PodFaults& faults, const KubeletTiming& timing, TimePoint now,
               const ImagePuller& pull) {
  ++p.pull_attempts;
  p.image_id = ImageIdFor(p.image);
  ImageView view;
  if (faults.image_pull_failure) {
    view.error = absl::NotFoundError(absl::StrCat("failed to pull and unpack image \"", NormalizeImage(p.image),
                                                  "\": simulated pull failure (pod annotation ",
                                                  kFaultAnnotation, ")"));
  } else {
    view = pull(p.image);
  }
  if (!view.error.ok()) {
    p.pull_error = std::string(view.error.message());
    p.retry_at = now + Backoff(timing, p.pull_attempts);
    return;
  }
  p.pull_error.clear();
  p.pull_ready_at = view.present ? now : std::max(view.ready_at, now);
  p.running_at = p.pull_ready_at + timing.start_delay;
  p.ready_at = p.running_at + timing.ready_delay;
}

}  // namespace

PodFaults ParsePodFaults(const nlohmann::json& pod) {
  PodFaults f;
  const auto& v = Field(Field(Field(pod, "metadata"), "annotations"), kFaultAnnotation);
  if (!v.is_string()) return f;
  for (absl::string_view entry : absl::StrSplit(v.get<std::string>(), ',', absl::SkipWhitespace())) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry == "image-pull-failure") {
      f.image_pull_failure = true;
    } else if (entry == "crash-loop") {
      f.crash_loop = true;
    } else if (entry == "never-ready") {
      f.never_ready = true;
    } else if (entry == "resize-deferred") {
      f.resize.outcome = "Deferred";
    } else if (entry == "resize-infeasible") {
      f.resize.outcome = "Infeasible";
    } else if (absl::ConsumePrefix(&entry, "slow-start=")) {
      absl::Duration d;
      if (absl::ParseDuration(entry, &d) && d >= absl::ZeroDuration()) {
        f.slow_start = absl::ToChronoNanoseconds(d);
      } else {
        f.error = absl::StrCat("slow-start: \"", entry, "\" is not a duration");
      }
    } else {
      f.error = absl::StrCat("unknown fault \"", entry, "\"");
    }
  }
  return f;
}

KubeletDecision DecidePod(const nlohmann::json& pod, PodProgress& progress, const NodeContext& node,
                          const std::string& pod_ip, const KubeletTiming& timing, TimePoint now,
                          const ImagePuller& pull, const NeverReadyDraw& never_ready) {
  KubeletDecision d;
  const std::string now_s = base::FormatTime(absl::FromChrono(now));
  const auto& meta = Field(pod, "metadata");
  const auto& spec = Field(pod, "spec");
  const nlohmann::json status = Field(pod, "status").is_object() ? pod["status"] : nlohmann::json::object();

  if (Field(meta, "deletionTimestamp").is_string()) {
    if (!progress.terminating_since) progress.terminating_since = now;
    const auto& g = Field(meta, "deletionGracePeriodSeconds");
    const auto& sg = Field(spec, "terminationGracePeriodSeconds");
    int64_t grace = g.is_number_integer() ? g.get<int64_t>() : sg.is_number_integer() ? sg.get<int64_t>() : 30;
    Duration wait = std::min<Duration>(std::chrono::seconds(std::max<int64_t>(grace, 0)), timing.max_grace);
    TimePoint remove_at = *progress.terminating_since + std::chrono::duration_cast<TimePoint::duration>(wait);
    if (now >= remove_at) {
      d.remove = true;
    } else {
      d.wake_at = remove_at;
      d.keep_progress = true;
    }
    return d;
  }

  nlohmann::json out = status;
  if (!node.ready) {
    // The kubelet is gone; the node lifecycle controller marks the pod not ready and nothing else moves.
    SetPodCondition(out, "Ready", "False", "NodeNotReady", "the node's kubelet stopped posting status", now_s);
    if (out != status) d.status = std::move(out);
    d.keep_progress = !progress.containers.empty();
    return d;
  }

  const PodFaults faults = ParsePodFaults(pod);
  // A new attempt of container `p`: whether it will ever be ready is settled now, then its image is pulled.
  auto start = [&](ContainerProgress& p) {
    p.never_ready = faults.never_ready || (never_ready && never_ready(p.name));
    StartPull(p, faults, timing, now, pull);
  };
  const nlohmann::json& containers = Field(spec, "containers").is_array() ? spec["containers"] : nlohmann::json::array();
  std::optional<TimePoint> wake;
  auto consider = [&](TimePoint t) {
    if (t > now && (!wake || t < *wake)) wake = t;
  };

  out["hostIP"] = node.host_ip;
  out["hostIPs"] = nlohmann::json::array({{{"ip", node.host_ip}}});
  if (!pod_ip.empty()) {
    out["podIP"] = pod_ip;
    out["podIPs"] = nlohmann::json::array({{{"ip", pod_ip}}});
  }
  if (!out.contains("startTime")) out["startTime"] = now_s;
  // The API server sets it when the pod is created; it never changes (a resize keeps the class).
  if (!out.contains("qosClass")) out["qosClass"] = std::string(common::QosClassName(common::PodQosClass(spec)));
  SetPodCondition(out, "PodScheduled", "True", "", "", now_s);
  SetPodCondition(out, "Initialized", "True", "", "", now_s);

  std::map<std::string, const nlohmann::json*> old_statuses;
  if (const auto& cs = Field(status, "containerStatuses"); cs.is_array()) {
    for (const auto& c : cs) old_statuses[Str(c, "name")] = &c;
  }

  std::vector<ContainerProgress> still_moving;
  nlohmann::json statuses = nlohmann::json::array();
  std::vector<std::string> unready;
  bool all_started = true;
  for (const auto& c : containers) {
    const std::string name = Str(c, "name"), image = Str(c, "image");
    const nlohmann::json* old = old_statuses.count(name) ? old_statuses[name] : nullptr;
    auto pit = std::find_if(progress.containers.begin(), progress.containers.end(),
                            [&](const ContainerProgress& p) { return p.name == name; });
    std::optional<ContainerProgress> p;
    if (pit != progress.containers.end()) p = *pit;
    if (p && p->image != image) {
      // The spec changed again mid-transition: restart towards the newest image.
      if (p->running_at <= now && p->pull_error.empty()) {
        p->last_state = {{"terminated",
                          {{"exitCode", 0}, {"reason", "Completed"}, {"startedAt", base::FormatTime(absl::FromChrono(p->running_at))},
                           {"finishedAt", now_s}, {"containerID", ContainerId(pod, name, p->restarts)}}}};
        ++p->restarts;
      }
      p->image = image;
      p->pull_attempts = 0;
      start(*p);
    }
    bool old_running = old != nullptr && Field(*old, "state").contains("running");
    if (!p && old != nullptr && Str(*old, "image") == image && old_running && !faults.crash_loop) {
      if (Field(*old, "ready") == true) {
        statuses.push_back(*old);  // steady: nothing to remember
        continue;
      }
      // Running but not ready and no memory of when it started (simulator restart): ready after ready_delay.
      p = ContainerProgress();
      p->name = name;
      p->image = image;
      p->image_id = Str(*old, "imageID");
      p->pull_ready_at = p->running_at = now;
      p->ready_at = now + timing.ready_delay;
      p->never_ready = faults.never_ready;
      const auto& rc = Field(*old, "restartCount");
      p->restarts = rc.is_number_integer() ? rc.get<int>() : 0;
      p->last_state = Field(*old, "lastState");
    }
    if (!p) {
      p = ContainerProgress();
      p->name = name;
      p->image = image;
      if (old != nullptr) {
        const auto& rc = Field(*old, "restartCount");
        p->restarts = rc.is_number_integer() ? rc.get<int>() : 0;
        p->last_state = Field(*old, "lastState");
        if (Str(*old, "image") != image && old_running) {
          p->previous_image = Str(*old, "image");
          p->previous_image_id = Str(*old, "imageID");
          const auto& running = Field(*old, "state")["running"];
          p->last_state = {{"terminated",
                            {{"exitCode", 0}, {"reason", "Completed"}, {"startedAt", Field(running, "startedAt")},
                             {"finishedAt", now_s}, {"containerID", Field(*old, "containerID")}}}};
          ++p->restarts;
        }
      }
      start(*p);
    }
    if (!p->pull_error.empty() && now >= p->retry_at) StartPull(*p, faults, timing, now, pull);

    nlohmann::json cs = {{"name", name}, {"image", image}, {"imageID", ""}, {"restartCount", p->restarts},
                         {"started", false}, {"ready", false}};
    cs["lastState"] = p->last_state.is_object() ? p->last_state : nlohmann::json::object();
    if (!p->previous_image_id.empty()) {  // replaced below once the new container runs
      cs["image"] = p->previous_image;
      cs["imageID"] = p->previous_image_id;
    }
    bool ready = false;
    // The kubelet's getPhase counts a waiting container that ran before (lastState terminated) as stopped, not
    // waiting: with restartPolicy Always the pod stays Running through an in-place restart.
    const bool ran_before = cs["lastState"].contains("terminated");
    if (!p->pull_error.empty()) {
      cs["state"] = {{"waiting", {{"reason", p->pull_attempts > 1 ? "ImagePullBackOff" : "ErrImagePull"},
                                  {"message", p->pull_error}}}};
      consider(p->retry_at);
      if (!ran_before) all_started = false;
    } else if (now < p->running_at + faults.slow_start) {
      cs["state"] = {{"waiting", {{"reason", "ContainerCreating"}}}};
      consider(p->running_at + faults.slow_start);
      if (!ran_before) all_started = false;
    } else if (faults.crash_loop) {
      TimePoint t = p->running_at + faults.slow_start;
      int crashes = 0;
      cs["image"] = image;
      cs["imageID"] = p->image_id;
      while (true) {
        TimePoint run_end = t + timing.crash_run;
        if (now < run_end) {
          cs["state"] = {{"running", {{"startedAt", base::FormatTime(absl::FromChrono(t))}}}};
          cs["started"] = true;
          consider(run_end);
          break;
        }
        cs["lastState"] = {{"terminated",
                            {{"exitCode", 1}, {"reason", "Error"}, {"startedAt", base::FormatTime(absl::FromChrono(t))},
                             {"finishedAt", base::FormatTime(absl::FromChrono(run_end))},
                             {"containerID", ContainerId(pod, name, p->restarts + crashes)}}}};
        Duration backoff = Backoff(timing, crashes + 1);
        ++crashes;
        TimePoint next = run_end + backoff;
        if (now < next) {
          cs["state"] = {{"waiting",
                          {{"reason", "CrashLoopBackOff"},
                           {"message", absl::StrCat("back-off ", absl::FormatDuration(absl::FromChrono(backoff)),
                                                    " restarting failed container=", name, " pod=",
                                                    Str(meta, "name"), "_", Str(meta, "namespace"))}}}};
          consider(next);
          break;
        }
        t = next;
      }
      cs["restartCount"] = p->restarts + crashes;
      cs["containerID"] = ContainerId(pod, name, p->restarts + crashes);
    } else {
      TimePoint started = p->running_at + faults.slow_start;
      TimePoint ready_at = p->ready_at + faults.slow_start;
      cs["image"] = image;
      cs["imageID"] = p->image_id;
      cs["containerID"] = ContainerId(pod, name, p->restarts);
      cs["state"] = {{"running", {{"startedAt", base::FormatTime(absl::FromChrono(started))}}}};
      cs["started"] = true;
      ready = !p->never_ready && now >= ready_at;
      cs["ready"] = ready;
      if (!p->never_ready) consider(ready_at);
    }
    if (!ready) unready.push_back(name);
    if (!ready || faults.crash_loop || !p->pull_error.empty()) still_moving.push_back(*p);
    statuses.push_back(std::move(cs));
  }
  out["containerStatuses"] = std::move(statuses);
  out["phase"] = all_started && !containers.empty() ? "Running" : "Pending";
  // In-place resizes, from the stored status (the containers' resources before this decision).
  const ResizeDecision resize = DecideResize(pod, node.resize, faults.resize, timing.resize, now);
  const auto& generation = Field(meta, "generation");
  ApplyResize(resize, generation.is_number_integer() ? generation.get<int64_t>() : 1, now_s, out);
  if (resize.wake_at) consider(*resize.wake_at);
  d.resize_accepted = resize.accepted;

  const bool containers_ready = unready.empty() && !containers.empty();
  const std::string unready_msg = absl::StrCat("containers with unready status: [", absl::StrJoin(unready, " "), "]");
  SetPodCondition(out, "ContainersReady", containers_ready ? "True" : "False",
                  containers_ready ? "" : "ContainersNotReady", containers_ready ? "" : unready_msg, now_s);
  std::string gate_problem;
  if (const auto& gates = Field(spec, "readinessGates"); gates.is_array()) {
    for (const auto& g : gates) {
      const std::string type = Str(g, "conditionType");
      const nlohmann::json* cond = nullptr;
      for (const auto& c : out["conditions"]) {
        if (Str(c, "type") == type) cond = &c;
      }
      if (cond == nullptr) {
        gate_problem = absl::StrCat("corresponding condition of pod readiness gate \"", type, "\" does not exist.");
        break;
      }
      if (Str(*cond, "status") != "True") {
        gate_problem = absl::StrCat("the status of pod readiness gate \"", type, "\" is not \"True\", but ",
                                    Str(*cond, "status"));
        break;
      }
    }
  }
  if (!containers_ready) {
    SetPodCondition(out, "Ready", "False", "ContainersNotReady", unready_msg, now_s);
  } else if (!gate_problem.empty()) {
    SetPodCondition(out, "Ready", "False", "ReadinessGatesNotReady", gate_problem, now_s);
  } else {
    SetPodCondition(out, "Ready", "True", "", "", now_s);
  }

  progress.containers = std::move(still_moving);
  d.keep_progress = !progress.containers.empty();
  d.wake_at = wake;
  if (out != status) d.status = std::move(out);
  return d;
}

}  // namespace cloneset::devcluster::nodes
