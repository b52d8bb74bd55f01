// Upstream's spellings of flags, accepted beside ours: Kubernetes and Kruise name flags with dashes
// (--feature-gates), absl flags cannot (--feature_gates). The command line is rewritten before absl parses it.
#pragma once

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cloneset::base {

// A flag name as upstream spells it and the absl flag it stands for, both without leading dashes:
// {"feature-gates", "feature_gates"}.
struct FlagAlias {
  absl::string_view from;
  absl::string_view to;
};

// `arg` with an alias's name replaced, in each form absl and Go's flag package accept: -name, --name, -name=value
// and --name=value. Anything else (a value, another flag, a longer name that starts the same) is returned as it is.
std::string RewriteFlagAlias(absl::string_view arg, const std::vector<FlagAlias>& aliases);

// argv with RewriteFlagAlias applied to every argument before a "--" (which ends the flags), argv[0] included as it
// is.
std::vector<std::string> RewriteFlagAliases(int argc, char** argv, const std::vector<FlagAlias>& aliases);

}  // namespace cloneset::base
