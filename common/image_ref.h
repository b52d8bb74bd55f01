// Container image references, spelled the way the container runtime reports them. One definition for everything
// that compares images or picks a registry: the in-place completion rule (kruise/inplace_completion.h), the agent's
// pull credentials and the embedded cluster's simulated runtime.
#pragma once

#include <string>
#include <string_view>

namespace cloneset::common {

// The registry of a reference: its first path component when that looks like a host (it has a '.' or a ':', or
// is "localhost"), else docker.io; "index.docker.io" is docker.io.
std::string_view ImageRegistry(std::string_view image);

// The fully qualified reference, as containerd lists repo tags: "nginx" -> "docker.io/library/nginx:latest",
// "registry:5000/app" -> "registry:5000/app:latest" (a ':' before the last '/' is a port, not a tag), a digest
// without a tag gets no ":latest". Two spellings of one reference normalize to the same string. "" stays "".
std::string NormalizeImage(std::string_view image);

// NormalizeImage(a) == NormalizeImage(b).
bool SameImage(std::string_view a, std::string_view b);

}  // namespace cloneset::common
