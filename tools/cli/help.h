// --help for every binary of the project: the usage and the program's own flags on stdout, exit code 0. absl's
// --help exits 1 and, when no flag is defined in a file named like the binary, prints only "No flags matched".
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace cloneset::cli {

// True when argv holds -h, --help, -help, --helpfull or --helpshort (before a "--").
bool AsksForHelp(int argc, char** argv);

// `usage`, then every flag defined outside absl itself: "  --name=<default>  help", sorted by name.
std::string HelpText(absl::string_view usage);

// When argv asks for help, prints HelpText(usage) on stdout and returns true: the caller returns 0 from main.
bool PrintHelpIfAsked(int argc, char** argv, absl::string_view usage);

}  // namespace cloneset::cli
