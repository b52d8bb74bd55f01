#include "clonesetctl/rollout_io.h"

#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "kube/api_status.h"
#include "kube/watch_stream.h"
#include "snapshot/snapshot.h"
#include "clonesetctl/live.h"
#include "clonesetctl/migrate.h"
#include "clonesetctl/rollout.h"

namespace cloneset::clonesetctl {
namespace {

using Json = nlohmann::json;

std::string ObjectPath(const std::string& ns, const std::string& name) {
  return absl::StrCat("/apis/apps.kruise.io/v1alpha1/namespaces/", ns, "/clonesets/", name);
}

// The GET of one CloneSet with the errors FetchCloneSet gives (not found, unreachable cluster).
absl::StatusOr<std::string> GetCloneSet(kube::RestClient& client, const std::string& server, const std::string& ns,
                                        const std::string& name) {
  auto body = client.Get(ObjectPath(ns, name));
  if (absl::IsNotFound(body.status())) {
    return absl::NotFoundError(absl::StrCat("CloneSet ", ns, "/", name, " not found"));
  }
  if (absl::IsUnavailable(body.status()) || absl::IsDeadlineExceeded(body.status())) {
    return absl::UnavailableError(absl::StrCat("cannot reach the cluster at ", server, ": ", body.status().message()));
  }
  return body;
}

// Cancels `token` at `deadline` unless stopped first (the watch's --timeout).
class Alarm {
 public:
  Alarm(kube::CancelToken& token, absl::Time deadline) {
    if (deadline == absl::InfiniteFuture()) return;
    thread_ = std::thread([this, &token, deadline] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_until(lock, absl::ToChronoTime(deadline), [this] { return stop_; })) token.Cancel();
    });
  }
  ~Alarm() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

int Error(std::ostream& err, absl::string_view message) {
  err << "error: " << message << "\n";
  return 1;
}

}  // namespace

int RolloutStatus(kube::RestClient& client, const std::string& server, const std::string& name,
                  const RolloutOptions& o, std::ostream& out, std::ostream& err) {
  const absl::Time deadline = o.timeout > absl::ZeroDuration() ? absl::Now() + o.timeout : absl::InfiniteFuture();
  std::string last;
  // The verdict on one version of the CloneSet: an exit code when the command ends, else nullopt.
  auto judge = [&](const pb::CloneSet& cs) -> std::optional<int> {
    const RolloutVerdict v = RolloutStatusMessage(cs, o.partition_ok, o.feature_gates);
    if (v.state == RolloutState::kFailed) return Error(err, v.message);
    if (v.message != last) out << v.message << "\n" << std::flush;
    last = v.message;
    if (v.state == RolloutState::kDone || !o.watch) return 0;
    return std::nullopt;
  };
  while (true) {
    auto body = GetCloneSet(client, server, o.namespace_, name);
    if (!body.ok()) return Error(err, body.status().message());
    auto cs = snapshot::CloneSetFromJson(*body);
    if (!cs.ok()) return Error(err, cs.status().message());
    if (auto code = judge(*cs)) return *code;
    std::string rv = cs->metadata().resource_version();
    // Watch from that version until the verdict changes to done/failed, the deadline, or the stream ends (then
    // read again: the server closes watches after its timeout, and a 410 means the version is too old).
    while (true) {
      if (absl::Now() >= deadline) return Error(err, "timed out waiting for the condition");
      const int64_t server_timeout =
          std::clamp<int64_t>(absl::ToInt64Seconds(deadline - absl::Now()) + 1, 1, 300);
      const std::string path = absl::StrCat(
          "/apis/apps.kruise.io/v1alpha1/namespaces/", o.namespace_, "/clonesets?watch=1&allowWatchBookmarks=true",
          "&fieldSelector=metadata.name%3D", name, "&resourceVersion=", rv, "&timeoutSeconds=", server_timeout);
      kube::CancelToken token;
      kube::JsonObjectSplitter splitter;
      std::optional<int> result;
      bool relist = false;
      absl::Status watched;
      {
        Alarm alarm(token, deadline);
        watched = client.Watch(
            path,
            [&](std::string_view data) {
              return splitter.Feed(data, [&](std::string_view event_json) {
                auto event = kube::ParseWatchEvent(event_json);
                if (!event.ok()) return true;
                if (event->type == "ERROR") {
                  relist = true;
                  return false;
                }
                if (!event->meta.resource_version.empty()) rv = event->meta.resource_version;
                if (event->type == "DELETED") {
                  result = Error(err, absl::StrCat("CloneSet ", o.namespace_, "/", name, " was deleted"));
                  return false;
                }
                if (event->type != "ADDED" && event->type != "MODIFIED") return true;
                auto changed = snapshot::CloneSetFromJson(event->object_json);
                if (!changed.ok()) return true;
                result = judge(*changed);
                return !result.has_value();
              });
            },
            &token);
      }
      if (result.has_value()) return *result;
      if (absl::Now() >= deadline) return Error(err, "timed out waiting for the condition");
      if (!watched.ok() && !absl::IsUnavailable(watched)) relist = true;  // 410 Gone and other refusals
      if (!watched.ok() && absl::IsUnavailable(watched)) {
        return Error(err, absl::StrCat("cannot reach the cluster at ", server, ": ", watched.message()));
      }
      if (relist) break;
    }
  }
}

absl::Status UpdateCloneSet(kube::RestClient& client, const std::string& server, const std::string& ns,
                            const std::string& name, const std::function<absl::Status(Json&)>& mutate) {
  absl::Status last;
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto body = GetCloneSet(client, server, ns, name);
    if (!body.ok()) return body.status();
    Json doc = Json::parse(*body, nullptr, false);
    if (!doc.is_object()) return absl::InternalError(absl::StrCat("CloneSet ", ns, "/", name, ": not a JSON object"));
    if (auto s = mutate(doc); !s.ok()) return s;
    auto put = client.Update(ObjectPath(ns, name), doc.dump());
    if (put.ok()) return absl::OkStatus();
    last = put.status();
    if (!kube::IsConflict(last)) return last;
  }
  return last;
}

int RolloutCommand(kube::RestClient& client, const std::string& server, const std::string& verb,
                   const std::string& name, const RolloutOptions& o, std::ostream& out, std::ostream& err) {
  const std::string object = absl::StrCat("cloneset.apps.kruise.io/", name);
  if (verb == "pause" || verb == "resume") {
    const bool pause = verb == "pause";
    auto s = UpdateCloneSet(client, server, o.namespace_, name, [&](Json& cs) { return SetPaused(cs, pause); });
    if (!s.ok()) return Error(err, s.message());
    out << object << (pause ? " paused" : " resumed") << "\n";
    return 0;
  }
  if (verb == "restart") {
    const absl::Time now = absl::Now();
    auto s = UpdateCloneSet(client, server, o.namespace_, name, [&](Json& cs) { return SetRestartedAt(cs, now); });
    if (!s.ok()) return Error(err, s.message());
    out << object << " restarted\n";
    return 0;
  }
  if (verb == "next") {
    NextPartition next;
    auto s = UpdateCloneSet(client, server, o.namespace_, name, [&](Json& cs) -> absl::Status {
      auto parsed = snapshot::CloneSetFromJson(cs.dump());
      if (!parsed.ok()) return parsed.status();
      auto n = NextPartitionFor(*parsed, o.step, o.feature_gates);
      if (!n.ok()) return n.status();
      next = *n;
      cs["spec"]["updateStrategy"]["partition"] = next.to;
      return absl::OkStatus();
    });
    if (!s.ok()) return Error(err, s.message());
    out << object << " partition " << next.from << " -> " << next.to << "\n";
    return 0;
  }
  if (verb == "history" || verb == "undo") {
    auto live = FetchCloneSet(client, server, o.namespace_, name);
    if (!live.ok()) return Error(err, live.status().message());
    const std::vector<RevisionEntry> history = RevisionHistory(live->revisions);
    if (verb == "history") {
      if (o.revision == 0) {
        out << RenderHistory(name, history);
        return 0;
      }
      auto text = RenderRevision(name, history, o.revision);
      if (!text.ok()) return Error(err, text.status().message());
      out << *text;
      return 0;
    }
    auto undo = UndoTo(history, live->clone_set.spec().template_json(), o.to_revision);
    if (!undo.ok()) return Error(err, undo.status().message());
    if (undo->skip) {
      out << object << " skipped rollback (current template already matches revision " << undo->revision << ")\n";
      return 0;
    }
    const Json tmpl = Json::parse(undo->template_json, nullptr, false);
    if (!tmpl.is_object()) return Error(err, absl::StrCat("revision ", undo->revision, ": unreadable pod template"));
    auto s = UpdateCloneSet(client, server, o.namespace_, name, [&](Json& cs) {
      cs["spec"]["template"] = tmpl;
      return absl::OkStatus();
    });
    if (!s.ok()) return Error(err, s.message());
    out << object << " rolled back to revision " << undo->revision << "\n";
    return 0;
  }
  return Error(err, absl::StrCat("unknown rollout command \"", verb,
                                 "\" (status, history, undo, pause, resume, restart, next)"));
}

int Migrate(kube::RestClient& client, const std::string& server, const std::string& name, const MigrateOptions& o,
            std::ostream& out, std::ostream& err) {
  const std::string& ns = o.namespace_;
  const std::string dep_path = absl::StrCat("/apis/apps/v1/namespaces/", ns, "/deployments/", name);
  auto dep_body = client.Get(dep_path);
  if (absl::IsNotFound(dep_body.status())) return Error(err, absl::StrCat("deployment ", ns, "/", name, " not found"));
  if (!dep_body.ok()) {
    if (absl::IsUnavailable(dep_body.status()) || absl::IsDeadlineExceeded(dep_body.status())) {
      return Error(err, absl::StrCat("cannot reach the cluster at ", server, ": ", dep_body.status().message()));
    }
    return Error(err, dep_body.status().message());
  }
  const Json deployment = Json::parse(*dep_body, nullptr, false);
  auto cloneset = CloneSetForDeployment(deployment);
  if (!cloneset.ok()) return Error(err, cloneset.status().message());
  int32_t replicas = deployment["spec"].value("replicas", 1);
  int32_t moved = 0;
  bool create = true;
  auto existing = client.Get(ObjectPath(ns, name));
  if (existing.ok()) {
    // A migration run before: continue from the replicas it moved.
    const Json cs = Json::parse(*existing, nullptr, false);
    const Json annotations = cs.is_object() ? cs["metadata"].value("annotations", Json::object()) : Json::object();
    if (annotations.value(kMigratedFromAnnotation, "") != absl::StrCat("deployment/", name)) {
      return Error(err, absl::StrCat("cloneset.apps.kruise.io/", name, " already exists and is not the one a ",
                                     "migration from deployment/", name, " created"));
    }
    create = false;
    moved = cs["spec"].value("replicas", 0);
    replicas += moved;
  } else if (!absl::IsNotFound(existing.status())) {
    return Error(err, existing.status().message());
  }
  auto steps = MigrationSteps(replicas, moved, o.max_unavailable);
  if (!steps.ok()) return Error(err, steps.status().message());
  out << RenderMigration(ns, name, replicas, moved, create, *steps) << std::flush;
  if (o.dry_run) {
    out << "(dry run: nothing changed)\n";
    return 0;
  }
  if (create) {
    auto made = client.Create(absl::StrCat("/apis/apps.kruise.io/v1alpha1/namespaces/", ns, "/clonesets"),
                              cloneset->dump());
    if (!made.ok()) return Error(err, absl::StrCat("creating cloneset.apps.kruise.io/", name, ": ", made.status().message()));
    out << "cloneset.apps.kruise.io/" << name << " created\n" << std::flush;
  }
  for (const MigrationStep& step : *steps) {
    // Both scale at once: at most max_unavailable pods are missing until the new ones are available.
    auto s = UpdateCloneSet(client, server, ns, name, [&](Json& cs) {
      cs["spec"]["replicas"] = step.cloneset_replicas;
      return absl::OkStatus();
    });
    if (!s.ok()) return Error(err, absl::StrCat("scaling cloneset.apps.kruise.io/", name, ": ", s.message()));
    auto scaled = client.Patch(dep_path, kube::PatchType::kMerge,
                               Json{{"spec", {{"replicas", step.deployment_replicas}}}}.dump());
    if (!scaled.ok()) return Error(err, absl::StrCat("scaling deployment/", name, ": ", scaled.status().message()));
    const absl::Time deadline = absl::Now() + o.step_timeout;
    std::string waiting_for;
    while (true) {
      auto cs_body = client.Get(ObjectPath(ns, name));
      auto d_body = client.Get(dep_path);
      if (cs_body.ok() && d_body.ok()) {
        const Json cs = Json::parse(*cs_body, nullptr, false), d = Json::parse(*d_body, nullptr, false);
        const Json cst = cs.value("status", Json::object()), dst = d.value("status", Json::object());
        const bool cs_ready = cst.value("observedGeneration", 0) >= cs["metadata"].value("generation", 0) &&
                              cst.value("availableReplicas", 0) >= step.cloneset_replicas;
        const bool d_ready = dst.value("replicas", 0) <= step.deployment_replicas;
        if (cs_ready && d_ready) break;
        waiting_for = !cs_ready ? absl::StrCat(cst.value("availableReplicas", 0), " of ", step.cloneset_replicas,
                                               " CloneSet pods available")
                                : absl::StrCat("the Deployment still has ", dst.value("replicas", 0), " pods");
      }
      if (absl::Now() >= deadline) {
        return Error(err, absl::StrCat("timed out after ", absl::FormatDuration(o.step_timeout), " at deployment ",
                                       step.deployment_replicas, ", cloneset ", step.cloneset_replicas, ": ",
                                       waiting_for, " (run the same command again to continue)"));
      }
      absl::SleepFor(o.poll);
    }
    out << "deployment " << step.deployment_replicas << ", cloneset " << step.cloneset_replicas << " available\n"
        << std::flush;
  }
  out << "deployment/" << name << " migrated to cloneset.apps.kruise.io/" << name << " (" << replicas
      << " replicas)\n";
  return 0;
}

}  // namespace cloneset::clonesetctl
