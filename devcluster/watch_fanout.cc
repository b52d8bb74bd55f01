#include "devcluster/watch_fanout.h"

#include <dirent.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace cloneset::devcluster {

struct WatchFanout::Conn {
  WatchStream* stream = nullptr;
  std::string resource;
  Writer* writer = nullptr;
  int fd = -1;
  bool raw = false;  // `queued` holds framed chunks written to fd directly; else payloads for `write`
  const Write* write = nullptr;

  std::mutex mu;  // held by the writer thread while it polls the stream or writes
  std::condition_variable cv;
  std::string queued;          // bytes waiting for the connection thread to write them
  bool owner_writing = false;  // the connection thread is writing (without the lock)
  bool paused = false;         // the writer stopped polling until `queued` is written
  bool ending = false;         // no more events: the connection thread ends once `queued` is written
  std::atomic<bool> closed{false};  // Serve returned or is returning: stream and write are gone
  WatchEnd end = WatchEnd::kDone;
};

namespace {

constexpr int kMaxEventsPerRound = 64;  // per connection, so one busy stream cannot starve the others

bool PeerGone(int fd) {
  pollfd p{fd, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

std::optional<std::pair<std::string, int>> NumericAddress(const sockaddr_storage& a, socklen_t len) {
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<const sockaddr*>(&a), len, host, sizeof host, port, sizeof port,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return std::nullopt;
  return std::make_pair(std::string(host), std::atoi(port));
}

// Sends all of `data` on a socket, waiting up to `timeout` each time it takes nothing.
bool SendAll(int fd, std::string_view data, std::chrono::milliseconds timeout) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0 || (p.revents & (POLLERR | POLLHUP | POLLNVAL)))
      return false;
  }
  return true;
}

}  // namespace

std::string ChunkFrame(std::string_view data) {
  return absl::StrCat(absl::Hex(data.size()), "\r\n", absl::string_view(data.data(), data.size()), "\r\n");
}

std::optional<SendQueue> SendQueueOf(int fd) {
  SendQueue q;
  socklen_t len = sizeof q.buffer;
  if (::ioctl(fd, SIOCOUTQ, &q.queued) != 0) return std::nullopt;
  if (::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &q.buffer, &len) != 0) return std::nullopt;
  return q;
}

int FindConnectionSocket(const std::string& local_ip, int local_port, const std::string& remote_ip, int remote_port) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  int found = -1;
  while (dirent* e = ::readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == ::dirfd(dir)) continue;
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&a), &len) != 0) continue;
    if (a.ss_family != AF_INET && a.ss_family != AF_INET6) continue;
    auto local = NumericAddress(a, len);
    if (!local || local->second != local_port || local->first != local_ip) continue;
    len = sizeof a;
    if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&a), &len) != 0) continue;
    auto remote = NumericAddress(a, len);
    if (remote && remote->second == remote_port && remote->first == remote_ip) {
      found = static_cast<int>(fd);
      break;
    }
  }
  ::closedir(dir);
  return found;
}

WatchFanout::WatchFanout(ApiServer* api, Store* store, WatchFanoutOptions options)
    : api_(api), store_(store), options_(options) {
  for (int i = 0; i < std::max(1, options_.writers); ++i) writers_.push_back(std::make_unique<Writer>());
  listener_ = store_->AddCommitListener([this](const std::string& resource) {
    for (auto& w : writers_) {
      std::lock_guard<std::mutex> l(w->mu);
      if (!w->watched.contains(resource)) continue;
      w->dirty.insert(resource);
      w->cv.notify_one();
    }
  });
  for (auto& w : writers_) w->thread = std::thread([this, w = w.get()] { Run(*w); });
}

WatchFanout::~WatchFanout() {
  Shutdown();
  store_->RemoveCommitListener(listener_);
}

size_t WatchFanout::open_streams() const {
  size_t n = 0;
  for (const auto& w : writers_) {
    std::lock_guard<std::mutex> l(w->mu);
    n += w->open;
  }
  return n;
}

void WatchFanout::Shutdown() {
  shutdown_ = true;
  std::vector<std::shared_ptr<Conn>> all;
  for (auto& w : writers_) {
    {
      std::lock_guard<std::mutex> l(w->mu);
      w->cv.notify_one();
      all.insert(all.end(), w->conns.begin(), w->conns.end());
      all.insert(all.end(), w->pending.begin(), w->pending.end());
    }
    if (w->thread.joinable()) w->thread.join();
  }
  for (const auto& c : all) {
    std::lock_guard<std::mutex> l(c->mu);
    if (!c->ending) c->end = WatchEnd::kShutdown;
    c->ending = true;
    c->queued.clear();
    c->cv.notify_one();
  }
}

WatchEnd WatchFanout::Serve(WatchStream& stream, const Write& write, int fd, bool raw_chunks,
                            std::optional<std::chrono::steady_clock::time_point> cut_at) {
  auto c = std::make_shared<Conn>();
  c->stream = &stream;
  c->resource = stream.type.Id();
  c->fd = fd;
  c->raw = raw_chunks && fd >= 0;
  c->write = &write;
  // The writer with the fewest streams takes it.
  Writer* w = writers_.front().get();
  for (auto& cand : writers_) {
    std::lock_guard<std::mutex> l(cand->mu);
    if (cand->open < w->open) w = cand.get();
  }
  c->writer = w;
  {
    std::lock_guard<std::mutex> l(w->mu);
    // Checked under the writer's lock: Shutdown sets the flag before it collects the writers' connections.
    if (shutdown_) return WatchEnd::kShutdown;
    ++w->open;
    ++w->watched[c->resource];
    w->pending.push_back(c);
    w->cv.notify_one();
  }
  std::unique_lock<std::mutex> l(c->mu);
  for (;;) {
    if (!c->queued.empty()) {
      if (!WriteQueued(*c, l)) {
        c->end = WatchEnd::kBroken;
        break;
      }
      if (c->queued.empty() && c->paused && !c->ending) {
        c->paused = false;
        RequestDrain(c);  // lock order: a connection's lock, then its writer's
      }
      continue;
    }
    if (c->ending) break;
    auto wake = std::chrono::steady_clock::now() + options_.liveness;
    if (cut_at) wake = std::min(wake, *cut_at);
    if (c->cv.wait_until(l, wake) == std::cv_status::timeout) {
      if (cut_at && std::chrono::steady_clock::now() >= *cut_at) {
        c->end = WatchEnd::kCut;
        break;
      }
      if (fd >= 0 && PeerGone(fd)) {
        c->end = WatchEnd::kBroken;
        break;
      }
    }
  }
  c->closed = true;  // under c->mu: the writer is not inside Drain, and will not touch the stream again
  const WatchEnd end = c->end;
  l.unlock();
  std::lock_guard<std::mutex> g(w->mu);
  --w->open;
  if (auto it = w->watched.find(c->resource); it != w->watched.end() && --it->second == 0) w->watched.erase(it);
  return end;
}

// On the connection thread, with l (c.mu) held on entry and exit; writes without it.
bool WatchFanout::WriteQueued(Conn& c, std::unique_lock<std::mutex>& l) {
  std::string out;
  out.swap(c.queued);
  c.owner_writing = true;
  l.unlock();
  const bool ok = c.raw ? SendAll(c.fd, out, options_.write_timeout) : (*c.write)(out);
  l.lock();
  c.owner_writing = false;
  return ok;
}

void WatchFanout::RequestDrain(const std::shared_ptr<Conn>& c) {
  std::lock_guard<std::mutex> l(c->writer->mu);
  c->writer->pending.push_back(c);
  c->writer->cv.notify_one();
}

void WatchFanout::Run(Writer& w) {
  std::unique_lock<std::mutex> l(w.mu);
  auto next_tick = std::chrono::steady_clock::now() + options_.tick;
  std::vector<std::shared_ptr<Conn>> work;
  absl::flat_hash_set<std::string> more;
  for (;;) {
    w.cv.wait_until(l, next_tick, [&] { return shutdown_ || !w.dirty.empty() || !w.pending.empty(); });
    if (shutdown_) return;
    const auto now = std::chrono::steady_clock::now();
    const bool tick = now >= next_tick;
    if (tick) next_tick = now + options_.tick;
    w.conns.erase(std::remove_if(w.conns.begin(), w.conns.end(), [](const auto& c) { return c->closed.load(); }),
                  w.conns.end());
    work.clear();
    for (const auto& c : w.conns)
      if (tick || w.dirty.contains(c->resource)) work.push_back(c);
    for (auto& c : w.pending) {
      if (std::find(w.conns.begin(), w.conns.end(), c) == w.conns.end()) w.conns.push_back(c);
      if (std::find(work.begin(), work.end(), c) == work.end()) work.push_back(c);
    }
    w.pending.clear();
    w.dirty.clear();
    l.unlock();
    more.clear();
    for (const auto& c : work)
      if (Drain(*c, tick)) more.insert(c->resource);
    l.lock();
    for (auto& r : more) w.dirty.insert(r);
  }
}

bool WatchFanout::Drain(Conn& c, bool tick) {
  std::lock_guard<std::mutex> l(c.mu);
  if (c.closed || c.ending || c.paused) return false;
  std::string chunk;
  for (int i = 0; i < kMaxEventsPerRound; ++i) {
    chunk.clear();
    switch (api_->PollWatchChunk(*c.stream, &chunk, tick && i == 0)) {
      case ApiServer::StreamStep::kIdle:
        return false;
      case ApiServer::StreamStep::kEnd:
        c.ending = true;
        c.cv.notify_one();
        return false;
      case ApiServer::StreamStep::kData:
        if (!Deliver(c, chunk)) return false;
        break;
    }
  }
  return true;
}

// With c.mu held. False when the writer should stop polling this connection for now.
bool WatchFanout::Deliver(Conn& c, std::string& chunk) {
  auto broken = [&c] {  // a write failed: the connection thread ends the stream; stop polling it
    c.end = WatchEnd::kBroken;
    c.ending = true;
    c.cv.notify_one();
    return false;
  };
  const bool direct = c.queued.empty() && !c.owner_writing && c.fd >= 0;
  if (c.raw) {
    std::string framed = ChunkFrame(chunk);
    size_t sent = 0;
    if (direct) {
      ssize_t n = ::send(c.fd, framed.data(), framed.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return broken();
      sent = n > 0 ? static_cast<size_t>(n) : 0;
      if (sent == framed.size()) return true;
    }
    c.queued.append(framed, sent, std::string::npos);  // the rest of a chunk must follow it unframed
  } else {
    if (direct && chunk.size() <= options_.direct_write_max_bytes) {
      // Write here only if the send cannot block: the socket's queue stays well inside its buffer (a blocking
      // send waits only once the queued bytes, with per-segment overhead, exceed the buffer).
      auto q = SendQueueOf(c.fd);
      if (q && static_cast<size_t>(q->queued) + chunk.size() <= static_cast<size_t>(q->buffer) / 4)
        return (*c.write)(chunk) || broken();
    }
    c.queued += chunk;
  }
  c.cv.notify_one();
  if (c.queued.size() < options_.max_queued_bytes) return true;
  c.paused = true;
  return false;
}

}  // namespace cloneset::devcluster
