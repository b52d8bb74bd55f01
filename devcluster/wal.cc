#include "devcluster/wal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "devcluster/object_meta.h"
#include "devcluster/stored_object.h"

namespace cloneset::devcluster {
namespace {

absl::Status Errno(const std::string& what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

absl::Status WriteAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("write");
    }
    off += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::string RecordLine(const JournalRecord& r) {
  return absl::StrCat(R"({"op":")", r.deleted ? "del" : "put", R"(","r":")", r.resource, R"(","rv":)",
                      r.resource_version, R"(,"o":)", r.object->json, "}\n");
}

// Logs rotated out by snapshots that did not complete, oldest first.
std::vector<std::pair<int64_t, std::string>> OldLogs(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind("wal.old.", 0) != 0) continue;
    out.emplace_back(std::strtoll(name.c_str() + 8, nullptr, 10), e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

using State = std::map<std::pair<std::string, std::string>, ObjectPtr>;

// Applies the lines of one file; returns false on the first unreadable line (torn tail).
void Replay(const std::string& path, int64_t snapshot_rv, State* state, int64_t* rv) {
  std::ifstream in(path);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("o") || !j.contains("r") || !j.contains("rv")) {
      base::ProcessLogger().Warn("ignoring unreadable write-ahead log tail",
                                 {{"file", path}, {"line", static_cast<int64_t>(n)}});
      return;
    }
    int64_t record_rv = j["rv"].get<int64_t>();
    if (record_rv <= snapshot_rv) continue;
    std::string resource = j["r"];
    ObjectPtr obj = MakeStoredObject(j["o"], resource);
    auto key = std::make_pair(resource, obj->ns + "/" + obj->name);
    if (j.value("op", "put") == "del") state->erase(key);
    else (*state)[key] = obj;
    *rv = std::max(*rv, record_rv);
  }
}

}  // namespace

WriteAheadLog::WriteAheadLog(std::string dir, Store* store, WalOptions options)
    : dir_(std::move(dir)), store_(store), options_(options) {}

absl::StatusOr<std::unique_ptr<WriteAheadLog>> WriteAheadLog::Open(const std::string& dir, Store* store,
                                                                   WalOptions options) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::unique_ptr<WriteAheadLog> wal(new WriteAheadLog(dir, store, options));
  std::vector<JournalRecord> records;
  int64_t rv = 0;
  if (absl::Status s = wal->Load(&records, &rv); !s.ok()) return s;
  if (!records.empty() || rv > 0) {
    if (absl::Status s = store->Restore(records, rv); !s.ok()) return s;
  }
  // Fold whatever was replayed (or the fresh bootstrap state) into a snapshot, then start a new log.
  if (absl::Status s = wal->Snapshot(); !s.ok()) return s;
  store->SetJournal(wal.get());
  wal->snapshotter_ = std::thread([w = wal.get()] {
    std::unique_lock<std::mutex> l(w->wake_mu_);
    while (!w->stopping_) {
      w->wake_.wait_for(l, std::chrono::seconds(1));
      if (w->stopping_) break;
      if (w->appended_ >= w->options_.snapshot_every) {
        l.unlock();
        if (absl::Status s = w->Snapshot(); !s.ok()) {
          base::ProcessLogger().Error("snapshot failed", {{"error", s.ToString()}});
        }
        l.lock();
      }
    }
  });
  return wal;
}

WriteAheadLog::~WriteAheadLog() {
  {
    std::lock_guard<std::mutex> l(wake_mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (snapshotter_.joinable()) snapshotter_.join();
  store_->SetJournal(nullptr);
  if (fd_ >= 0) ::close(fd_);
}

absl::Status WriteAheadLog::Load(std::vector<JournalRecord>* records, int64_t* rv) {
  State state;
  int64_t snapshot_rv = 0;
  std::string snap = dir_ + "/snapshot.json";
  if (std::filesystem::exists(snap)) {
    std::ifstream in(snap);
    std::string line;
    if (!std::getline(in, line)) return absl::DataLossError(absl::StrCat(snap, ": empty"));
    auto head = nlohmann::json::parse(line, nullptr, false);
    if (head.is_discarded() || !head.contains("rv")) return absl::DataLossError(absl::StrCat(snap, ": bad header"));
    snapshot_rv = head["rv"].get<int64_t>();
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.contains("r") || !j.contains("o"))
        return absl::DataLossError(absl::StrCat(snap, ": unreadable object line"));
      std::string resource = j["r"];
      ObjectPtr obj = MakeStoredObject(j["o"], resource);
      state[{resource, obj->ns + "/" + obj->name}] = obj;
    }
  }
  *rv = snapshot_rv;
  for (const auto& old : OldLogs(dir_)) Replay(old.second, snapshot_rv, &state, rv);
  Replay(dir_ + "/wal.log", snapshot_rv, &state, rv);
  for (const auto& [key, obj] : state) records->push_back({false, key.first, obj, obj->resource_version});
  return absl::OkStatus();
}

absl::Status WriteAheadLog::OpenLog() {
  fd_ = ::open((dir_ + "/wal.log").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) return Errno(dir_ + "/wal.log");
  return absl::OkStatus();
}

absl::Status WriteAheadLog::Append(const JournalRecord& record) {
  if (fd_ < 0) return absl::FailedPreconditionError("write-ahead log is closed");
  if (absl::Status s = WriteAll(fd_, RecordLine(record)); !s.ok()) return s;
  if (options_.sync && ::fdatasync(fd_) != 0) return Errno("fdatasync wal.log");
  if (++appended_ == options_.snapshot_every) wake_.notify_all();
  return absl::OkStatus();
}

absl::Status WriteAheadLog::Snapshot() {
  std::lock_guard<std::mutex> snap_lock(snapshot_mu_);
  std::vector<std::pair<std::string, ObjectPtr>> objects;
  int64_t rv = 0;
  absl::Status rotate;
  store_->ConsistentView([&](const std::vector<std::pair<std::string, ObjectPtr>>& all, int64_t current) {
    // Under the store lock: no Append can run, so wal.log holds exactly the changes up to `current`.
    objects = all;
    rv = current;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::error_code ec;
    if (std::filesystem::exists(dir_ + "/wal.log"))
      std::filesystem::rename(dir_ + "/wal.log", absl::StrCat(dir_, "/wal.old.", current), ec);
    rotate = OpenLog();
    appended_ = 0;
  });
  if (!rotate.ok()) return rotate;
  std::string tmp = dir_ + "/snapshot.tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Errno(tmp);
  std::string buf = absl::StrCat(R"({"rv":)", rv, "}\n");
  for (const auto& [resource, obj] : objects) {
    absl::StrAppend(&buf, R"({"r":")", resource, R"(","o":)", obj->json, "}\n");
    if (buf.size() > (1 << 20)) {
      if (absl::Status s = WriteAll(fd, buf); !s.ok()) return ::close(fd), s;
      buf.clear();
    }
  }
  absl::Status s = WriteAll(fd, buf);
  if (s.ok() && ::fsync(fd) != 0) s = Errno("fsync snapshot");
  ::close(fd);
  if (!s.ok()) return s;
  std::error_code ec;
  std::filesystem::rename(tmp, dir_ + "/snapshot.json", ec);
  if (ec) return absl::UnavailableError(absl::StrCat("rename snapshot: ", ec.message()));
  int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  for (const auto& old : OldLogs(dir_))
    if (old.first <= rv) std::filesystem::remove(old.second, ec);
  return absl::OkStatus();
}

}  // namespace cloneset::devcluster
