#ifndef CLONESET_KUBE_TESTING_TEST_CERTS_H_
#define CLONESET_KUBE_TESTING_TEST_CERTS_H_

#include <openssl/x509.h>

#include <memory>
#include <string>

namespace httplib {
class SSLServer;
}

namespace cloneset::kube::testing {

// A throw-away PKI generated in memory with OpenSSL (EC P-256, valid one
// day): a CA, a server certificate for the SANs DNS:localhost and
// IP:127.0.0.1 (or only `server_dns` when given), and a client certificate
// (CN=test-user, O=system:masters). `other_ca_pem` is an unrelated CA for
// negative tests.
struct TestPki {
  std::string ca_pem;
  std::string server_cert_pem;
  std::string server_key_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string other_ca_pem;
};
TestPki GenerateTestPki(const std::string& server_dns = "");

// A certificate store holding the PEM certificates of `ca_pem`, for httplib's set_ca_cert_store (which owns it).
X509_STORE* NewCaStore(const std::string& ca_pem);

// cpp-httplib's TLS server with the PKI's server certificate and key (no client certificates asked for).
std::unique_ptr<httplib::SSLServer> NewTlsServer(const TestPki& pki);

}  // namespace cloneset::kube::testing

#endif  // CLONESET_KUBE_TESTING_TEST_CERTS_H_
