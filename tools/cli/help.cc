#include "tools/cli/help.h"

#include <algorithm>
#include <iostream>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cloneset::cli {

bool AsksForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--") return false;
    if (a == "-h" || a == "--help" || a == "-help" || a == "--helpfull" || a == "-helpfull" || a == "--helpshort" ||
        a == "-helpshort") {
      return true;
    }
  }
  return false;
}

std::string HelpText(absl::string_view usage) {
  std::string out = absl::StrCat(std::string(usage), "\n\nFlags:\n");
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    // absl's own (--flagfile, --fromenv, --help...) and those of libraries built with absl flags are not ours.
    if (absl::StrContains(flag->Filename(), "absl/")) continue;
    flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const absl::CommandLineFlag* a, const absl::CommandLineFlag* b) { return a->Name() < b->Name(); });
  for (const absl::CommandLineFlag* f : flags) {
    absl::StrAppend(&out, "  --", f->Name(), "=", f->DefaultValue(), "\n      ", f->Help(), "\n");
  }
  return out;
}

bool PrintHelpIfAsked(int argc, char** argv, absl::string_view usage) {
  if (!AsksForHelp(argc, argv)) return false;
  std::cout << HelpText(usage) << std::flush;
  return true;
}

}  // namespace cloneset::cli
