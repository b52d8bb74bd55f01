// Durability of the embedded cluster (--data-dir): a write-ahead log appended and fdatasync'ed on
// every commit, plus a periodic snapshot that lets the log be truncated. On start-up the snapshot
// and the log are replayed into the Store, so a restarted cluster serves the same objects with the
// same resourceVersions (and the RV counter continues from where it stopped).
//
// Files in the directory: snapshot.json (line 1: {"rv":N}; then {"r":<resource>,"o":<object>} per
// object), wal.log (one {"op":"put"|"del","r":..,"rv":..,"o":..} line per commit) and, while a
// snapshot is being written, wal.old.<rv> (the rotated log, replayed too if the snapshot never finished). A torn last line (crash mid-append) is ignored.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "devcluster/store.h"

namespace cloneset::devcluster {

struct WalOptions {
  size_t snapshot_every = 20000;  // records appended before a background snapshot
  bool sync = true;               // fdatasync each append (off only for benchmarks)
};

class WriteAheadLog final : public Journal {
 public:
  // Replays dir into store (Store::Restore), then attaches itself as the store's journal.
  static absl::StatusOr<std::unique_ptr<WriteAheadLog>> Open(const std::string& dir, Store* store,
                                                             WalOptions options = {});
  ~WriteAheadLog() override;

  absl::Status Append(const JournalRecord& record) override;
  // Writes a snapshot now and truncates the log.
  absl::Status Snapshot();
  uint64_t records_since_snapshot() const { return appended_; }

 private:
  WriteAheadLog(std::string dir, Store* store, WalOptions options);
  absl::Status Load(std::vector<JournalRecord>* records, int64_t* rv);
  absl::Status OpenLog();

  std::string dir_;
  Store* store_;
  WalOptions options_;
  int fd_ = -1;  // wal.log, guarded by the store lock (Append runs under it)
  std::atomic<uint64_t> appended_{0};
  std::mutex snapshot_mu_;
  std::mutex wake_mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread snapshotter_;
};

}  // namespace cloneset::devcluster
