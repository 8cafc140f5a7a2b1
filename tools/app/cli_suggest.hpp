#pragma once
// "did you mean" for the command line: a misspelt subcommand or option gets the closest name,
// as a misspelt --set path does (config/suggest.hpp).
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace uringsim::app {

// Before parsing (CLI11 would only say a subcommand is required): the first word is neither a
// subcommand of `app` nor one of its options. The message to print (exit 2), if so.
std::optional<std::string> first_word_error(CLI::App& app, int argc, const char* const* argv);

// After CLI11 refused arguments it does not know (CLI::ExtrasError): its message, with a
// suggestion for each unknown option that is close to one of the (sub)command's options.
std::string extras_error(const CLI::App& app, const CLI::ExtrasError& e);

}  // namespace uringsim::app
