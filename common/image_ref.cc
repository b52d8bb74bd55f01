#include "common/image_ref.h"

namespace cloneset::common {
namespace {

constexpr std::string_view kDockerHub = "docker.io";

// The first path component when it names a host, else "".
std::string_view HostPart(std::string_view image) {
  const size_t slash = image.find('/');
  if (slash == std::string_view::npos) return {};
  const std::string_view first = image.substr(0, slash);
  if (first.find('.') != std::string_view::npos || first.find(':') != std::string_view::npos ||
      first == "localhost") {
    return first;
  }
  return {};
}

}  // namespace

std::string_view ImageRegistry(std::string_view image) {
  const std::string_view host = HostPart(image);
  if (host.empty() || host == "index.docker.io") return kDockerHub;
  return host;
}

std::string NormalizeImage(std::string_view image) {
  if (image.empty()) return {};
  std::string_view ref = image;
  std::string_view digest;
  if (const size_t at = ref.find('@'); at != std::string_view::npos) {
    digest = ref.substr(at);
    ref = ref.substr(0, at);
  }
  const std::string_view host = HostPart(ref);
  std::string_view rest = host.empty() ? ref : ref.substr(host.size() + 1);
  const std::string_view domain = ImageRegistry(ref);
  const bool official = domain == kDockerHub && rest.find('/') == std::string_view::npos;
  // Only a ':' after the last '/' separates a tag (one before it belongs to the registry's port).
  const size_t last_slash = rest.rfind('/');
  const bool has_tag = rest.find(':', last_slash == std::string_view::npos ? 0 : last_slash) != std::string_view::npos;
  std::string out;
  out.reserve(domain.size() + rest.size() + digest.size() + 16);
  out.append(domain).append(official ? "/library/" : "/").append(rest);
  if (!has_tag && digest.empty()) out.append(":latest");
  out.append(digest);
  return out;
}

bool SameImage(std::string_view a, std::string_view b) { return a == b || NormalizeImage(a) == NormalizeImage(b); }

}  // namespace cloneset::common
