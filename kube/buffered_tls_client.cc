#include "kube/buffered_tls_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

namespace cloneset::kube {
namespace {

int TimeoutMs(time_t sec, time_t usec) {
  const long long ms = static_cast<long long>(sec) * 1000 + static_cast<long long>(usec) / 1000;
  return static_cast<int>(std::clamp<long long>(ms, 0, INT_MAX));
}

// True when `sock` has one of `events` (or an error or hang-up, which the next SSL call reports) within the timeout.
bool Poll(int sock, short events, int timeout_ms) {
  pollfd p{.fd = sock, .events = events, .revents = 0};
  int r;
  do {
    r = ::poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0;
}

void Address(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(addr);
    inet_ntop(AF_INET, &a.sin_addr, text, sizeof(text));
    port = ntohs(a.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(addr);
    inet_ntop(AF_INET6, &a.sin6_addr, text, sizeof(text));
    port = ntohs(a.sin6_port);
  }
  ip = text;
}

}  // namespace

BufferedTlsStream::BufferedTlsStream(int sock, SSL* ssl, time_t read_timeout_sec, time_t read_timeout_usec,
                                     time_t write_timeout_sec, time_t write_timeout_usec)
    : sock_(sock),
      ssl_(ssl),
      read_sec_(read_timeout_sec),
      read_usec_(read_timeout_usec),
      write_sec_(write_timeout_sec),
      write_usec_(write_timeout_usec),
      in_(new char[kBufferSize]) {
  // As httplib's own TLS stream: a record without application data (a TLS 1.3 session ticket) makes SSL_read
  // return WANT_READ instead of blocking inside OpenSSL past our poll timeout.
  SSL_clear_mode(ssl, SSL_MODE_AUTO_RETRY);
}

BufferedTlsStream::~BufferedTlsStream() { Flush(); }

bool BufferedTlsStream::WaitReadable() const { return Poll(sock_, POLLIN, TimeoutMs(read_sec_, read_usec_)); }
bool BufferedTlsStream::WaitWritable() const { return Poll(sock_, POLLOUT, TimeoutMs(write_sec_, write_usec_)); }

bool BufferedTlsStream::is_readable() const {
  return in_begin_ < in_end_ || SSL_pending(ssl_) > 0 || WaitReadable();
}

bool BufferedTlsStream::is_writable() const { return !failed_ && WaitWritable(); }

ssize_t BufferedTlsStream::ReadRecord(char* ptr, size_t size) {
  const int want = static_cast<int>(std::min<size_t>(size, INT_MAX));
  for (;;) {
    if (SSL_pending(ssl_) <= 0 && !WaitReadable()) return -1;  // read timeout
    const int n = SSL_read(ssl_, ptr, want);
    if (n > 0) return n;
    switch (SSL_get_error(ssl_, n)) {
      case SSL_ERROR_WANT_READ:  // a record that carried no application data, or half a record: wait again
        continue;
      case SSL_ERROR_WANT_WRITE:  // OpenSSL must send first (a key update)
        if (!WaitWritable()) return -1;
        continue;
      case SSL_ERROR_ZERO_RETURN:  // the peer closed the connection
        return 0;
      default:
        return -1;
    }
  }
}

ssize_t BufferedTlsStream::read(char* ptr, size_t size) {
  if (size == 0) return 0;
  if (!Flush()) return -1;  // the request must be out before its response can come
  if (in_begin_ == in_end_) {
    in_begin_ = in_end_ = 0;
    // A body read (httplib asks for 4 KiB at a time) goes straight to the caller, with no copy; only the short
    // reads of lines (one byte at a time) are served from the buffer.
    if (size >= kDirectRead) return ReadRecord(ptr, size);
    const ssize_t n = ReadRecord(in_.get(), kBufferSize);
    if (n <= 0) return n;
    in_end_ = static_cast<size_t>(n);
  }
  const size_t n = std::min(size, in_end_ - in_begin_);
  std::memcpy(ptr, in_.get() + in_begin_, n);
  in_begin_ += n;
  return static_cast<ssize_t>(n);
}

ssize_t BufferedTlsStream::write(const char* ptr, size_t size) {
  if (failed_) return -1;
  if (out_.size() + size > kBufferSize && !Flush()) return -1;
  if (size > kBufferSize) {  // larger than a record: sent as it is, after what was held
    out_.assign(ptr, size);
    if (!Flush()) return -1;
    return static_cast<ssize_t>(size);
  }
  out_.append(ptr, size);
  return static_cast<ssize_t>(size);
}

bool BufferedTlsStream::Flush() {
  if (failed_) return false;
  size_t sent = 0;
  while (sent < out_.size()) {
    if (!WaitWritable()) {
      failed_ = true;
      break;
    }
    const int chunk = static_cast<int>(std::min<size_t>(out_.size() - sent, INT_MAX));
    const int n = SSL_write(ssl_, out_.data() + sent, chunk);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    const int err = SSL_get_error(ssl_, n);
    if (err == SSL_ERROR_WANT_WRITE) continue;
    if (err == SSL_ERROR_WANT_READ && WaitReadable()) continue;
    failed_ = true;
    break;
  }
  out_.clear();
  return !failed_;
}

void BufferedTlsStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getpeername(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Address(addr, ip, port);
}

void BufferedTlsStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(sock_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) Address(addr, ip, port);
}

bool BufferedSslClient::process_socket(const Socket& socket, std::function<bool(httplib::Stream& strm)> callback) {
  if (socket.ssl == nullptr) return false;
  BufferedTlsStream strm(socket.sock, socket.ssl, read_timeout_sec_, read_timeout_usec_, write_timeout_sec_,
                         write_timeout_usec_);
  const bool ok = callback(strm);
  return strm.Flush() && ok;
}

}  // namespace cloneset::kube
