// fio job files and command lines into per-job option lists; fio's size and time syntax.
// fio's own rules (parse.c, init.c) are followed where the docs name them: kb_base 1024 by default,
// IEC suffixes in the opposite base, runtime in seconds unless suffixed.
#include "tools/app/fio_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "config/input_error.hpp"

namespace uringsim::app::fio {
namespace {

using config::InputError;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_option_name(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// The unsigned integer at the start of s (decimal, or hex after 0x); returns the digits consumed, 0 if
// none. InputError if it does not fit in 64 bits.
std::size_t leading_uint(std::string_view s, std::uint64_t& out, const std::string& what) {
  unsigned base = 10;
  std::size_t i = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    i = 2;
  }
  const std::size_t start = i;
  out = 0;
  for (; i < s.size(); ++i) {
    const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s[i])));
    unsigned d;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else
      break;
    if (out > (std::numeric_limits<std::uint64_t>::max() - d) / base)
      throw InputError(fmt::format("{}: number too large: \"{}\"", what, s));
    out = out * base + d;
  }
  return i == start ? 0 : i;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view text, const std::string& what) {
  if (b != 0 && a > std::numeric_limits<std::uint64_t>::max() / b)
    throw InputError(fmt::format("{}: number too large: \"{}\"", what, text));
  return a * b;
}

// A new job for a section or --name; the globals in force are copied in first.
Job start_job(std::string name, std::string where, const std::vector<Option>& globals) {
  Job j;
  j.name = std::move(name);
  j.where = std::move(where);
  j.options = globals;
  return j;
}

std::string basename(const std::string& s) {
  const auto slash = s.rfind('/');
  return slash == std::string::npos ? s : s.substr(slash + 1);
}

}  // namespace

std::string substitute_vars(std::string_view text, const Vars& vars, const std::string& where) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
      const auto close = text.find('}', i + 2);
      if (close == std::string_view::npos)
        throw InputError(fmt::format("{}: unterminated placeholder \"{}\"", where, text.substr(i)));
      const std::string name(text.substr(i + 2, close - i - 2));
      const auto it = vars.find(name);
      if (it == vars.end())
        throw InputError(
            fmt::format("{}: placeholder ${{{}}} has no value; substitute it, or pass --var {}=VALUE", where,
                        name, name));
      out += it->second;
      i = close + 1;
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::vector<Job> parse_job_file(std::string_view text, const std::string& source, const Vars& vars) {
  std::vector<Job> jobs;
  std::vector<Option> globals;
  enum class In { nothing, global, job } in = In::nothing;
  std::size_t line_no = 0, pos = 0;
  while (pos < text.size()) {
    auto eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view raw = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    const std::string where = fmt::format("{}:{}", source, line_no);
    // A binary file (or a NUL-padded one) stops here rather than being echoed in a later message.
    const auto control = std::find_if(raw.begin(), raw.end(), [](char c) {
      const auto u = static_cast<unsigned char>(c);
      return (u < 0x20 && !std::isspace(u)) || u == 0x7f;
    });
    if (control != raw.end())
      throw InputError(
          fmt::format("{}: line {} is not text (control character 0x{:02x} in column {}); expected a "
                      "fio job file",
                      where, line_no, static_cast<unsigned char>(*control), control - raw.begin() + 1));
    // fio drops everything from the first ; or # (parse.c strip_blank_end), so trailing comments go too.
    const auto comment = raw.find_first_of(";#");
    if (comment != std::string_view::npos) raw = raw.substr(0, comment);
    const std::string line = substitute_vars(trim(raw), vars, where);
    if (line.empty()) continue;

    if (line.front() == '[') {
      if (line.back() != ']' || trim(std::string_view(line).substr(1, line.size() - 2)).empty())
        throw InputError(fmt::format("{}: malformed section header \"{}\" (expected [NAME])", where, line));
      const std::string name(trim(std::string_view(line).substr(1, line.size() - 2)));
      if (name == "global") {
        in = In::global;
      } else {
        jobs.push_back(start_job(name, where, globals));
        in = In::job;
      }
      continue;
    }

    if (line.rfind("include ", 0) == 0)
      throw InputError(fmt::format("{}: include directives are not supported; paste the file in", where));
    Option opt;
    opt.where = where;
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      if (!is_option_name(line))
        throw InputError(fmt::format(
            "{}: malformed line \"{}\" (expected [section], key=value, key, a comment or a blank line)",
            where, line));
      opt.key = line;
    } else {
      opt.key = std::string(trim(std::string_view(line).substr(0, eq)));
      const auto value = trim(std::string_view(line).substr(eq + 1));
      if (!is_option_name(opt.key))
        throw InputError(fmt::format("{}: malformed line \"{}\" (bad option name before '=')", where, line));
      if (value.empty())
        throw InputError(fmt::format("{}: option {} has no value after '='", where, opt.key));
      opt.value = std::string(value);
    }
    switch (in) {
      case In::nothing:
        throw InputError(fmt::format(
            "{}: option {} comes before any section (start with [global] or [JOBNAME])", where, opt.key));
      case In::global:
        globals.push_back(std::move(opt));
        break;
      case In::job:
        jobs.back().options.push_back(std::move(opt));
        break;
    }
  }
  return jobs;
}

std::vector<std::string> split_shell_words(std::string_view text) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  std::size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\\') {
      if (i + 1 >= text.size()) throw InputError("--cmdline: trailing backslash with nothing after it");
      if (text[i + 1] != '\n') {  // backslash-newline is a line continuation: dropped
        cur += text[i + 1];
        in_word = true;
      }
      i += 2;
    } else if (c == '\'') {
      const auto close = text.find('\'', i + 1);
      if (close == std::string_view::npos)
        throw InputError(fmt::format("--cmdline: unterminated single quote in \"{}\"", text.substr(i)));
      cur.append(text.substr(i + 1, close - i - 1));
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      ++i;
      for (;;) {
        if (i >= text.size()) throw InputError("--cmdline: unterminated double quote");
        if (text[i] == '"') break;
        if (text[i] == '\\' && i + 1 < text.size() &&
            std::string_view("\"\\$`\n").find(text[i + 1]) != std::string_view::npos) {
          if (text[i + 1] != '\n') cur += text[i + 1];
          i += 2;
        } else {
          cur += text[i++];
        }
      }
      in_word = true;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(cur));
      cur.clear();
      in_word = false;
      ++i;
    } else {
      cur += c;
      in_word = true;
      ++i;
    }
  }
  if (in_word) words.push_back(std::move(cur));
  return words;
}

std::vector<Job> parse_command_line(std::string_view text, const Vars& vars) {
  const auto words = split_shell_words(text);
  std::size_t i = 0;
  // Skip the launcher: everything up to and including the `fio` word before the first option.
  const auto first_opt =
      std::find_if(words.begin(), words.end(), [](const std::string& w) { return w.rfind("-", 0) == 0; });
  const auto fio_word =
      std::find_if(words.begin(), first_opt, [](const std::string& w) { return basename(w) == "fio"; });
  if (fio_word != first_opt)
    i = static_cast<std::size_t>(fio_word - words.begin()) + 1;
  else if (first_opt != words.begin())
    throw InputError(
        fmt::format("--cmdline: unexpected argument \"{}\" before the options (job files: use `uringsim "
                    "import-fio FILE`)",
                    words.front()));

  std::vector<Job> jobs;
  std::vector<Option> globals;
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("--", 0) != 0 || w.size() == 2)
      throw InputError(
          fmt::format("--cmdline: unexpected argument \"{}\" (expected --option=value; job files: use "
                      "`uringsim import-fio FILE`)",
                      w));
    Option opt;
    const auto eq = w.find('=');
    opt.key = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    opt.where = "--cmdline option --" + opt.key;
    opt.from_cmdline = true;
    if (!is_option_name(opt.key)) throw InputError(fmt::format("--cmdline: malformed option \"{}\"", w));
    if (eq != std::string::npos) {
      opt.value = w.substr(eq + 1);
    } else if (i + 1 < words.size() && words[i + 1].rfind("-", 0) != 0) {
      opt.value = words[++i];  // `--key value`, which fio's getopt accepts too
    }
    if (opt.value) {
      if (opt.value->empty()) throw InputError(fmt::format("{}: no value after '='", opt.where));
      opt.value = substitute_vars(*opt.value, vars, opt.where);
    }
    if (opt.key == "name") {
      if (!opt.value) throw InputError(fmt::format("{}: needs a value", opt.where));
      jobs.push_back(start_job(*opt.value, opt.where, globals));
    } else if (jobs.empty()) {
      globals.push_back(std::move(opt));
    } else {
      jobs.back().options.push_back(std::move(opt));
    }
  }
  // No --name: the options form one unnamed job.
  if (jobs.empty()) jobs.push_back(start_job("", "--cmdline", globals));
  return jobs;
}

std::uint64_t parse_size(std::string_view text, unsigned kb_base, const std::string& what) {
  const auto s = trim(text);
  std::uint64_t n = 0;
  const auto digits = leading_uint(s, n, what);
  if (digits == 0)
    throw InputError(fmt::format("{}: expected a size such as 4096, 4k or 1m, got \"{}\"", what, text));
  const std::string suffix = lower(s.substr(digits));
  const unsigned other_base = kb_base == 1024 ? 1000 : 1024;
  static const char* const kPowers[] = {"k", "m", "g", "t", "p"};
  for (int p = 0; p < 5; ++p) {
    const std::string si = kPowers[p], iec = si + "ib";
    unsigned base = 0;
    if (suffix == si || suffix == si + "b")
      base = kb_base;
    else if (suffix == iec)
      base = other_base;
    if (base == 0) continue;
    std::uint64_t mult = 1;
    for (int k = 0; k <= p; ++k) mult = checked_mul(mult, base, text, what);
    return checked_mul(n, mult, text, what);
  }
  if (!suffix.empty())
    throw InputError(
        fmt::format("{}: unknown size suffix \"{}\" in \"{}\" (k, m, g, t, p, optionally with b or ib)", what,
                    s.substr(digits), text));
  return n;
}

double parse_time_us(std::string_view text, double default_unit_us, const std::string& what) {
  const auto s = trim(text);
  std::uint64_t n = 0;
  const auto digits = s.rfind("0x", 0) == 0 ? 0 : leading_uint(s, n, what);
  if (digits == 0)
    throw InputError(
        fmt::format("{}: expected a time such as 300, 300s, 5m or 500ms, got \"{}\"", what, text));
  const std::string suffix = lower(s.substr(digits));
  double unit;
  if (suffix.empty())
    unit = default_unit_us;
  else if (suffix == "us" || suffix == "usec")
    unit = 1;
  else if (suffix == "ms" || suffix == "msec")
    unit = 1e3;
  else if (suffix == "s")
    unit = 1e6;
  else if (suffix == "m")
    unit = 60e6;
  else if (suffix == "h")
    unit = 3600e6;
  else if (suffix == "d")
    unit = 86400e6;
  else
    throw InputError(fmt::format("{}: unknown time suffix \"{}\" in \"{}\" (us, ms, s, m, h, d)", what,
                                 s.substr(digits), text));
  return static_cast<double>(n) * unit;
}

std::string printable(std::string_view text) {
  std::string out;
  std::size_t i = 0;
  auto escape = [&](unsigned char c) { out += fmt::format("\\x{:02x}", c); };
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
        escape(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    // A well-formed UTF-8 sequence (2 to 4 bytes, no overlong lead bytes) is kept as it is.
    const std::size_t len = c >= 0xc2 && c <= 0xdf   ? 2
                            : c >= 0xe0 && c <= 0xef ? 3
                            : c >= 0xf0 && c <= 0xf4 ? 4
                                                     : 0;
    bool ok = len > 0 && i + len <= text.size();
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      escape(c);
      ++i;
    }
  }
  return out;
}

std::int64_t parse_int(std::string_view text, const std::string& what) {
  auto s = trim(text);
  const bool neg = !s.empty() && s.front() == '-';
  if (neg) s.remove_prefix(1);
  std::uint64_t n = 0;
  const auto digits = s.rfind("0x", 0) == 0 ? 0 : leading_uint(s, n, what);
  if (digits == 0 || digits != s.size() ||
      n > static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max()))
    throw InputError(fmt::format("{}: expected an integer, got \"{}\"", what, text));
  return neg ? -static_cast<std::int64_t>(n) : static_cast<std::int64_t>(n);
}

}  // namespace uringsim::app::fio
