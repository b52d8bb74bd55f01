#include "base/flag_aliases.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cloneset::base {

std::string RewriteFlagAlias(absl::string_view arg, const std::vector<FlagAlias>& aliases) {
  absl::string_view dashes;
  if (absl::StartsWith(arg, "--")) {
    dashes = "--";
  } else if (absl::StartsWith(arg, "-")) {
    dashes = "-";
  } else {
    return std::string(arg);
  }
  const absl::string_view body = arg.substr(dashes.size());
  const absl::string_view name = body.substr(0, body.find('='));
  for (const FlagAlias& a : aliases) {
    if (name == a.from) return absl::StrCat(dashes, a.to, body.substr(name.size()));
  }
  return std::string(arg);
}

std::vector<std::string> RewriteFlagAliases(int argc, char** argv, const std::vector<FlagAlias>& aliases) {
  std::vector<std::string> out;
  bool flags = true;
  for (int i = 0; i < argc; ++i) {
    const absl::string_view a = argv[i];
    if (a == "--") flags = false;
    out.push_back(i > 0 && flags ? RewriteFlagAlias(a, aliases) : std::string(a));
  }
  return out;
}

}  // namespace cloneset::base
