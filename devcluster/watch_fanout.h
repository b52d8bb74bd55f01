// One writer thread for every open watch stream.
//
// cpp-httplib serves each connection on its own thread. When every watch thread waited on the store for its next
// event, one write woke all of them, each re-took the store lock behind the others, formatted its event and sent
// it: with 200 watchers, 200 wake-ups and 200 trips through a contended lock per event (docs/performance.md).
// Here a connection thread only parks in Serve(). When a change commits, the store tells the fan-out which
// resource changed; its one writer thread polls that resource's watchers without waiting and writes each event to
// every connection whose socket has room, itself, one send after another.
//
// Backpressure: a connection whose socket is backed up (or an event too large to send without blocking) gets its
// events queued, and its own thread writes them, blocking only itself. Once that queue holds max_queued_bytes the
// writer stops polling the watcher, so further events wait in the store's history like any slow watcher's: one
// that falls behind the history gets 410 Expired, and one whose client stops reading is cut by the socket write
// timeout. Nothing a slow client does delays the others.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "devcluster/api_server.h"
#include "devcluster/store.h"

namespace cloneset::devcluster {

struct WatchFanoutOptions {
  size_t max_queued_bytes = 1 << 20;         // per connection, before the writer stops polling its watcher
  size_t direct_write_max_bytes = 32 << 10;  // larger events always go through the connection's own thread
  std::chrono::milliseconds tick{500};       // deadlines, bookmarks (at most one a second per stream)
  std::chrono::milliseconds liveness{1000};  // how often a parked connection checks that its client is there
  std::chrono::milliseconds write_timeout{30000};  // raw mode: a client that takes no bytes for this long is cut
  int writers = 2;  // writer threads; connections are spread over them (one per core suits loopback clients)
};

enum class WatchEnd {
  kDone,      // the stream is over (timeoutSeconds, 410 sent, type removed): finish the response normally
  kBroken,    // a write failed or the client went away: close the connection
  kCut,       // injected fault: close the connection mid-stream
  kShutdown,  // the server is stopping
};

class WatchFanout {
 public:
  using Write = std::function<bool(std::string_view data)>;  // false = the connection broke

  WatchFanout(ApiServer* api, Store* store, WatchFanoutOptions options = {});
  ~WatchFanout();
  WatchFanout(const WatchFanout&) = delete;
  WatchFanout& operator=(const WatchFanout&) = delete;

  // Serves `stream` on the calling connection thread until it ends. `fd` is the connection's socket (-1 = unknown:
  // every write then happens on this thread through `write`). With raw_chunks (a plain-TCP connection) the writer
  // sends HTTP/1.1 chunks on the socket itself without blocking, one syscall per event; otherwise (TLS) it calls
  // `write`, which frames and sends one chunk, after checking on `fd` that the send cannot block. `write` must stay
  // valid until Serve returns; the writer thread calls it while this thread is parked.
  WatchEnd Serve(WatchStream& stream, const Write& write, int fd, bool raw_chunks,
                 std::optional<std::chrono::steady_clock::time_point> cut_at = std::nullopt);
  // Ends every stream (Serve returns kShutdown) and refuses new ones. Idempotent.
  void Shutdown();
  size_t open_streams() const;

 private:
  struct Conn;
  struct Writer {
    std::mutex mu;  // never held while taking a connection's or the store's lock
    std::condition_variable cv;
    std::vector<std::shared_ptr<Conn>> conns;
    std::vector<std::shared_ptr<Conn>> pending;  // new connections, and paused ones whose queue was written
    absl::flat_hash_set<std::string> dirty;      // resources with committed changes
    absl::flat_hash_map<std::string, int> watched;  // open streams per resource
    size_t open = 0;
    std::thread thread;
  };
  void Run(Writer& w);
  bool Drain(Conn& c, bool tick);  // true when the watcher has more ready events
  bool Deliver(Conn& c, std::string& chunk);
  void RequestDrain(const std::shared_ptr<Conn>& c);
  bool WriteQueued(Conn& c, std::unique_lock<std::mutex>& l);

  ApiServer* api_;
  Store* store_;
  const WatchFanoutOptions options_;
  int listener_ = 0;

  std::atomic<bool> shutdown_{false};
  std::vector<std::unique_ptr<Writer>> writers_;
};

// HTTP/1.1 chunk framing of one piece of a body.
std::string ChunkFrame(std::string_view data);

// The socket of this process that carries the TCP connection local -> remote (addresses as cpp-httplib reports them
// in a Request), or -1. cpp-httplib 0.11 does not hand a handler its connection's socket.
int FindConnectionSocket(const std::string& local_ip, int local_port, const std::string& remote_ip, int remote_port);

// Bytes of the socket's send queue not yet acknowledged, and its send buffer size; nullopt when not a TCP socket.
struct SendQueue {
  int queued = 0;
  int buffer = 0;
};
std::optional<SendQueue> SendQueueOf(int fd);

}  // namespace cloneset::devcluster
