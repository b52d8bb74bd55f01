// clonesetctl's usage texts and shell completion (pure: the words typed so far in, candidates out).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace cloneset::clonesetctl {

// The whole usage (every command) for "" or an unknown command; else the usage of `command` ("rollout" lists
// its verbs).
std::string UsageText(const std::string& command);

// True when `args` (argv without the program) asks for help: -h, --help, -help, --helpfull, --helpshort
// anywhere, or the command "help". `command` is then the command it asks about ("" for all).
bool WantsHelp(const std::vector<std::string>& args, std::string* command);

// `clonesetctl completion bash|zsh`: a script that completes clonesetctl and kubectl-cloneset by calling
// `clonesetctl __complete WORDS...`. nullopt for another shell.
std::optional<std::string> CompletionScript(const std::string& shell);

// The candidates for the last of `words` (the words after the program name; the last one is being typed and may
// be ""). `names` are the CloneSet names offered where a NAME goes (the caller lists them; empty offline).
// Only candidates starting with the typed prefix.
std::vector<std::string> CompleteWords(const std::vector<std::string>& words, const std::vector<std::string>& names);
// True when the last word is at a NAME position (so the caller should list CloneSets).
bool CompletesName(const std::vector<std::string>& words);

}  // namespace cloneset::clonesetctl
