// cpp-httplib's HTTPS client with buffered reads and coalesced writes on its TLS connection.
//
// cpp-httplib reads a response's status line, its headers and every chunk-size line of a chunked body (a watch)
// one byte per read. On a plain socket its stream serves those reads from a 4 KiB buffer; on TLS
// (httplib::SSLSocketStream, 0.11) each byte is an SSL_pending and an SSL_read call, and each read that finds
// OpenSSL's buffer empty first polls the socket: ~500 calls for kube-apiserver's ~500 header bytes per response
// (docs/performance.md, "The executor on TLS"). It also writes a request's headers and its body as two
// TLS records, two system calls.
//
// BufferedSslClient is httplib::SSLClient (its connection set-up, certificate checks, keep-alive and pooling
// unchanged) whose requests run over BufferedTlsStream: short reads are served from a 16 KiB buffer filled by one
// SSL_read (body reads of 1 KiB or more go to the caller's buffer directly), and writes are held until the next
// read or the end of the request, so the headers and a body of up to 16 KiB leave as one record. HTTP/1.1 without
// pipelining gets no byte of the next response before the next request, so nothing is left in the buffer when a
// request ends (as with httplib's own buffered plain stream).
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <ctime>
#include <functional>
#include <memory>
#include <string>

#include "httplib.h"

namespace cloneset::kube {

// One request's view of a TLS connection (the SSL object stays httplib's).
class BufferedTlsStream final : public httplib::Stream {
 public:
  static constexpr size_t kBufferSize = 16 * 1024;  // one TLS record's plaintext at most
  static constexpr size_t kDirectRead = 1024;        // reads of this size or more bypass the buffer when it is empty

  BufferedTlsStream(int sock, SSL* ssl, time_t read_timeout_sec, time_t read_timeout_usec, time_t write_timeout_sec,
                    time_t write_timeout_usec);
  ~BufferedTlsStream() override;

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  int socket() const override { return sock_; }

  // Sends what write() held back; false when the connection failed (the request then fails as an unsent one).
  bool Flush();

 private:
  bool WaitReadable() const;
  bool WaitWritable() const;
  // One SSL_read into `ptr` (at most `size` bytes), waiting for the socket when OpenSSL has nothing buffered.
  ssize_t ReadRecord(char* ptr, size_t size);

  const int sock_;
  SSL* const ssl_;
  const time_t read_sec_, read_usec_, write_sec_, write_usec_;
  std::unique_ptr<char[]> in_;  // kBufferSize bytes; read ahead and not yet handed out: [in_begin_, in_end_)
  size_t in_begin_ = 0, in_end_ = 0;
  std::string out_;      // written, not yet sent
  bool failed_ = false;  // a write failed: every later write and read fails
};

// httplib::SSLClient over BufferedTlsStream. Construct it as httplib::SSLClient.
class BufferedSslClient final : public httplib::SSLClient {
 public:
  using httplib::SSLClient::SSLClient;

 private:
  bool process_socket(const Socket& socket, std::function<bool(httplib::Stream& strm)> callback) override;
};

}  // namespace cloneset::kube
