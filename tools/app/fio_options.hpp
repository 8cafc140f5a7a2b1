#pragma once
// Reading fio jobs, as job files or command lines, into lists of options per job, and fio's number
// syntax (sizes, times). Pure functions: no I/O, errors are config::InputError with the line or
// option named. The meaning of the options is tools/app/fio_to_scenario.* (docs/import-fio.md).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringsim::app::fio {

struct Option {
  std::string key;
  std::optional<std::string> value;  // absent for a bare flag (`hipri`, `--hipri`)
  std::string where;                 // for messages: "job.fio:12" or "--cmdline option --bs"
  bool from_cmdline = false;         // written `--key=value` on a command line
};

struct Job {
  std::string name;             // section name, or --name=; "" for a command line without --name
  std::string where;            // where the job starts, for messages
  std::vector<Option> options;  // the [global] options in force, then the job's own, in order
};

// Values for ${NAME} placeholders (--var NAME=VALUE); a placeholder without one is an error.
using Vars = std::map<std::string, std::string>;

// An ini-style fio job file: `[section]`, `key=value`, `key`, comments starting with ; or #
// (whole line or trailing), blank lines. `[global]` options apply to the jobs defined after them.
// source names the file in messages.
std::vector<Job> parse_job_file(std::string_view text, const std::string& source, const Vars& vars = {});

// A fio command line, as the seeds write it: tokens split like a POSIX shell (quotes, backslash,
// backslash-newline continuations). Everything up to and including a `fio` token (e.g. a
// `./run_fio.sh` line and `fio`) is skipped. `--key=value`, `--key value` or `--key`; options before
// the first --name are global, each --name starts a job (fio's rule).
std::vector<Job> parse_command_line(std::string_view text, const Vars& vars = {});

// Shell-like splitting; InputError on an unterminated quote or a trailing backslash.
std::vector<std::string> split_shell_words(std::string_view text);

// Replaces every ${NAME} by vars[NAME]; InputError naming `where` and the placeholder otherwise.
std::string substitute_vars(std::string_view text, const Vars& vars, const std::string& where);

// fio sizes: an integer (or 0x hex) with an optional suffix k/m/g/t/p (optionally followed by b),
// case-insensitive, multiplied by kb_base (fio's default 1024); the IEC suffixes KiB, MiB, ... use
// the other base (1000 when kb_base is 1024: fio's compatibility mode). InputError on anything else.
std::uint64_t parse_size(std::string_view text, unsigned kb_base, const std::string& what);

// fio times, returned in microseconds: an integer with an optional suffix us/usec, ms/msec, s, m
// (minutes), h, d; without a suffix the value is in `default_unit_us` (1000000 for runtime).
double parse_time_us(std::string_view text, double default_unit_us, const std::string& what);

// text safe to print in a message: control characters (but newline and tab), DEL and bytes that are
// not UTF-8 become \xNN, so a binary file's bytes are never echoed raw.
std::string printable(std::string_view text);

// A plain (possibly negative) decimal integer.
std::int64_t parse_int(std::string_view text, const std::string& what);

}  // namespace uringsim::app::fio
