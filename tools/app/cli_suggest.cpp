#include "tools/app/cli_suggest.hpp"

#include <algorithm>
#include <vector>

#include "config/suggest.hpp"

namespace uringsim::app {
namespace {

// Every spelling of the options of `cmd` (and --help), with their dashes.
std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : cmd.get_options()) {
    for (const auto& l : opt->get_lnames()) names.push_back("--" + l);
    for (const auto& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// "error: run: --varient: unknown option (did you mean --variant?)" for option `arg` of `cmd`.
std::string unknown_option(const CLI::App& cmd, const std::string& arg) {
  const std::string flag = arg.substr(0, arg.find('='));  // --varient=x
  const std::string where = cmd.get_parent() ? cmd.get_name() + ": " : "";
  std::string msg = "error: " + where + flag + ": unknown option";
  if (const auto best = config::closest(flag, option_names(cmd))) msg += " (did you mean " + *best + "?)";
  return msg + "\n";
}

// The unknown options `cmd` was given (its other extra words are in CLI11's message).
std::string suggestions(const CLI::App& cmd) {
  std::string out;
  for (const auto& arg : cmd.remaining(false))
    if (arg.size() >= 2 && arg[0] == '-') out += unknown_option(cmd, arg);
  return out;
}

}  // namespace

std::optional<std::string> first_word_error(CLI::App& app, int argc, const char* const* argv) {
  if (argc < 2) return std::nullopt;
  const std::string word = argv[1];
  if (word.empty()) return std::nullopt;
  if (word[0] == '-') {  // an option of the tool itself: --help, --version
    const auto names = option_names(app);
    if (std::find(names.begin(), names.end(), word.substr(0, word.find('='))) != names.end())
      return std::nullopt;
    return unknown_option(app, word) + "Run with --help for more information.\n";
  }
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->check_name(word)) return std::nullopt;
    names.push_back(sub->get_name());
  }
  std::string msg = "error: '" + word + "' is not a subcommand";
  if (const auto best = config::closest(word, names)) {
    msg += " (did you mean '" + *best + "'?)";
  } else {
    msg += "; subcommands:";
    for (const auto& n : names) msg += " " + n;
  }
  return msg + "\nRun with --help for more information.\n";
}

std::string extras_error(const CLI::App& app, const CLI::ExtrasError& e) {
  std::string out = suggestions(app);
  for (const CLI::App* sub : app.get_subcommands()) out += suggestions(*sub);
  if (out.empty()) out = std::string("error: ") + e.what() + "\n";  // e.g. a second scenario file
  return out + "Run with --help for more information.\n";
}

}  // namespace uringsim::app
