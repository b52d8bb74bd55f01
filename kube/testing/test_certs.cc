#include "kube/testing/test_certs.h"

#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <memory>

#include "httplib.h"

namespace cloneset::kube::testing {
namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr NewKey() { return KeyPtr(EVP_EC_gen("P-256"), &EVP_PKEY_free); }

void AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) std::abort();  // constant inputs: a programming error
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

CertPtr NewCert(EVP_PKEY* key, const char* cn, const char* org, X509* issuer, EVP_PKEY* issuer_key,
                long serial) {
  CertPtr cert(X509_new(), &X509_free);
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1,
                             -1, 0);
  if (org != nullptr) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(org),
                               -1, -1, 0);
  }
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  return cert;
}

std::string CertPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<size_t>(n));
  BIO_free(bio);
  return out;
}

struct Ca {
  KeyPtr key{nullptr, &EVP_PKEY_free};
  CertPtr cert{nullptr, &X509_free};
};

Ca NewCa(const char* cn) {
  Ca ca;
  ca.key = NewKey();
  ca.cert = NewCert(ca.key.get(), cn, nullptr, nullptr, nullptr, 1);
  AddExt(ca.cert.get(), ca.cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  AddExt(ca.cert.get(), ca.cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  X509_sign(ca.cert.get(), ca.key.get(), EVP_sha256());
  return ca;
}

}  // namespace

TestPki GenerateTestPki(const std::string& server_dns) {
  TestPki pki;
  Ca ca = NewCa("test-ca");
  Ca other = NewCa("other-ca");
  pki.ca_pem = CertPem(ca.cert.get());
  pki.other_ca_pem = CertPem(other.cert.get());

  KeyPtr server_key = NewKey();
  CertPtr server = NewCert(server_key.get(), "kube-apiserver", nullptr, ca.cert.get(), ca.key.get(), 2);
  const std::string san =
      server_dns.empty() ? "DNS:localhost,IP:127.0.0.1" : "DNS:" + server_dns;
  AddExt(server.get(), ca.cert.get(), NID_subject_alt_name, san.c_str());
  AddExt(server.get(), ca.cert.get(), NID_ext_key_usage, "serverAuth");
  X509_sign(server.get(), ca.key.get(), EVP_sha256());
  pki.server_cert_pem = CertPem(server.get());
  pki.server_key_pem = KeyPem(server_key.get());

  KeyPtr client_key = NewKey();
  CertPtr client = NewCert(client_key.get(), "test-user", "system:masters", ca.cert.get(), ca.key.get(), 3);
  AddExt(client.get(), ca.cert.get(), NID_ext_key_usage, "clientAuth");
  X509_sign(client.get(), ca.key.get(), EVP_sha256());
  pki.client_cert_pem = CertPem(client.get());
  pki.client_key_pem = KeyPem(client_key.get());
  return pki;
}

X509_STORE* NewCaStore(const std::string& ca_pem) {
  X509_STORE* store = X509_STORE_new();
  BIO* bio = BIO_new_mem_buf(ca_pem.data(), static_cast<int>(ca_pem.size()));
  while (X509* ca = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    X509_STORE_add_cert(store, ca);
    X509_free(ca);
  }
  BIO_free(bio);
  return store;
}

std::unique_ptr<httplib::SSLServer> NewTlsServer(const TestPki& pki) {
  BIO* cb = BIO_new_mem_buf(pki.server_cert_pem.data(), static_cast<int>(pki.server_cert_pem.size()));
  BIO* kb = BIO_new_mem_buf(pki.server_key_pem.data(), static_cast<int>(pki.server_key_pem.size()));
  X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(kb, nullptr, nullptr, nullptr);
  auto server = std::make_unique<httplib::SSLServer>(cert, key);
  X509_free(cert);
  EVP_PKEY_free(key);
  BIO_free(cb);
  BIO_free(kb);
  return server;
}

}  // namespace cloneset::kube::testing
