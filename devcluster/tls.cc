#include "devcluster/tls.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace cloneset::devcluster {
namespace {

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
template <typename T>
using Ptr = std::unique_ptr<T, Free>;

absl::StatusOr<Ptr<EVP_PKEY>> NewKey() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  if (!key) return absl::InternalError("EVP_EC_gen failed");
  return Ptr<EVP_PKEY>(key);
}

bool AddExt(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  Ptr<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

absl::StatusOr<Ptr<X509>> NewCert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key, bool ca,
                                  long serial) {
  Ptr<X509> cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn), -1, -1, 0);
  X509* iss = issuer ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(iss));
  bool ok = ca ? AddExt(cert.get(), iss, NID_basic_constraints, "critical,CA:TRUE") &&
                     AddExt(cert.get(), iss, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature")
               : AddExt(cert.get(), iss, NID_basic_constraints, "critical,CA:FALSE") &&
                     AddExt(cert.get(), iss, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
                     AddExt(cert.get(), iss, NID_ext_key_usage, "serverAuth") &&
                     AddExt(cert.get(), iss, NID_subject_alt_name,
                            "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default");
  if (!ok) return absl::InternalError("adding X509 extensions failed");
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0)
    return absl::InternalError("X509_sign failed");
  return cert;
}

std::string ToPem(X509* cert) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n);
}

std::string KeyToPem(EVP_PKEY* key) {
  Ptr<BIO> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, n);
}

absl::Status WriteFile(const std::string& path, const std::string& content, bool secret) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  out << content;
  out.close();
  if (secret) std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return out ? absl::OkStatus() : absl::UnavailableError(absl::StrCat("cannot write ", path));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

absl::StatusOr<ServingCertificates> EnsureServingCertificates(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  ServingCertificates c{dir + "/ca.crt", dir + "/server.crt", dir + "/server.key", ""};
  if (!std::filesystem::exists(c.ca_cert_path) || !std::filesystem::exists(c.cert_path) ||
      !std::filesystem::exists(c.key_path)) {
    auto ca_key = NewKey();
    if (!ca_key.ok()) return ca_key.status();
    auto ca = NewCert(ca_key->get(), "cloneset-devcluster-ca", nullptr, nullptr, true, 1);
    if (!ca.ok()) return ca.status();
    auto key = NewKey();
    if (!key.ok()) return key.status();
    auto cert = NewCert(key->get(), "cloneset-devcluster", ca->get(), ca_key->get(), false, 2);
    if (!cert.ok()) return cert.status();
    for (auto [path, content, secret] : {std::tuple{c.ca_cert_path, ToPem(ca->get()), false},
                                         std::tuple{c.cert_path, ToPem(cert->get()), false},
                                         std::tuple{c.key_path, KeyToPem(key->get()), true}}) {
      if (absl::Status s = WriteFile(path, content, secret); !s.ok()) return s;
    }
  }
  c.ca_pem = ReadFile(c.ca_cert_path);
  if (c.ca_pem.empty()) return absl::DataLossError(absl::StrCat(c.ca_cert_path, " is empty"));
  return c;
}

absl::Status WriteKubeconfig(const std::string& path, const std::string& server_url, const std::string& ca_pem,
                             const std::string& token) {
  std::string cluster = ca_pem.empty()
                            ? absl::StrCat("    server: ", server_url, "\n")
                            : absl::StrCat("    certificate-authority-data: ", absl::Base64Escape(ca_pem),
                                           "\n    server: ", server_url, "\n");
  std::string user = token.empty() ? "  user: {}\n" : absl::StrCat("  user:\n    token: ", token, "\n");
  std::string text = absl::StrCat("apiVersion: v1\nkind: Config\nclusters:\n- name: devcluster\n  cluster:\n", cluster,
                                  "contexts:\n- name: devcluster\n  context:\n    cluster: devcluster\n"
                                  "    user: devcluster\n    namespace: default\n"
                                  "current-context: devcluster\nusers:\n- name: devcluster\n",
                                  user);
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::string tmp = path + ".tmp";
  if (absl::Status s = WriteFile(tmp, text, true); !s.ok()) return s;
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("cannot write ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace cloneset::devcluster
