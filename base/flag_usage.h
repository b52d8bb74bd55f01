// --help for every binary of the project: the usage and the program's own flags on stdout, exit code 0. absl's
// --help exits 1 and, when no flag is defined in a file named like the binary, prints only "No flags matched".
// A program's own flags are those defined in its source folders: the libraries it links may define flags of
// their own (absl's --flagfile, --fromenv...), which are not the program's to document.
#pragma once

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/strings/string_view.h"

namespace cloneset::base {

// True when argv holds -h, --help, -help, --helpfull or --helpshort (before a "--").
bool AsksForHelp(int argc, char** argv);

// Whether a flag defined in `file` (a path as the compiler saw it) is the program's own: it lies in one of
// `dirs` (folders relative to the source root, "planner/service", "base/daemon_main.cc"), or, when `dirs` is
// empty, anywhere outside absl.
bool IsOwnFlagFile(absl::string_view file, const std::vector<std::string>& dirs);

// `usage`, then `flags`: "  --name=<value>  help", sorted by name. The value is the flag's current one: help is
// printed before the command line is parsed, when it is the default the program set (a daemon's own default of a
// shared flag, base/daemon_main.h).
std::string HelpText(absl::string_view usage, std::vector<const absl::CommandLineFlag*> flags);

// Every registered flag whose file IsOwnFlagFile(dirs).
std::vector<const absl::CommandLineFlag*> OwnFlags(const std::vector<std::string>& dirs);

// When argv asks for help, prints HelpText(usage, OwnFlags(dirs)) on stdout and returns true: the caller returns 0
// from main.
bool PrintHelpIfAsked(int argc, char** argv, absl::string_view usage, const std::vector<std::string>& dirs = {});

}  // namespace cloneset::base
