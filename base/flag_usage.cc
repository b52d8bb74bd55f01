#include "base/flag_usage.h"

#include <algorithm>
#include <iostream>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace cloneset::base {

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

bool IsOwnFlagFile(absl::string_view file, const std::vector<std::string>& dirs) {
  // absl's own (--flagfile, --fromenv, --help...) are never the program's.
  if (absl::StrContains(file, "absl/")) return false;
  if (dirs.empty()) return true;
  // A folder matches at a path component's start: "executor/" must not match "imagepull_executor/".
  const std::string path = absl::StrCat("/", file);
  return std::any_of(dirs.begin(), dirs.end(),
                     [&](const std::string& dir) { return absl::StrContains(path, absl::StrCat("/", dir)); });
}

std::string HelpText(absl::string_view usage, std::vector<const absl::CommandLineFlag*> flags) {
  std::string out = absl::StrCat(std::string(usage), "\n\nFlags:\n");
  std::sort(flags.begin(), flags.end(),
            [](const absl::CommandLineFlag* a, const absl::CommandLineFlag* b) { return a->Name() < b->Name(); });
  for (const absl::CommandLineFlag* f : flags) {
    absl::StrAppend(&out, "  --", f->Name(), "=", f->CurrentValue(), "\n      ", f->Help(), "\n");
  }
  return out;
}

std::vector<const absl::CommandLineFlag*> OwnFlags(const std::vector<std::string>& dirs) {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsOwnFlagFile(flag->Filename(), dirs)) flags.push_back(flag);
  }
  return flags;
}

bool PrintHelpIfAsked(int argc, char** argv, absl::string_view usage, const std::vector<std::string>& dirs) {
  if (!AsksForHelp(argc, argv)) return false;
  std::cout << HelpText(usage, OwnFlags(dirs)) << std::flush;
  return true;
}

}  // namespace cloneset::base
