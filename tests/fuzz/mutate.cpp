#include "tests/fuzz/mutate.hpp"

#include <cctype>
#include <utility>

namespace uringsim::fuzz {

std::uint64_t Rng::next() {
  std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {

// Values that broke or nearly broke the tool before (issue 15) and the usual edges.
const std::vector<std::string> kNumbers = {"0",
                                           "-1",
                                           "1",
                                           "-0",
                                           "1e308",
                                           "-1e308",
                                           "1e-308",
                                           "2e8",
                                           "1e17",
                                           "65536",
                                           "40000",
                                           "4294967296",
                                           "2147483648",
                                           "9223372036854775807",
                                           "1e999",
                                           "0.5",
                                           "1.0000001",
                                           "NaN",
                                           "null",
                                           "true",
                                           "\"x\"",
                                           "[]",
                                           "{}",
                                           "18446744073709551616",
                                           "-9223372036854775809",
                                           "3.14e-5"};
const std::vector<std::string> kStrings = {
    "",         "..",    "../../x", ".",       "/",   "a/b",  "\\u0000",
    "\xff\xfe", "nan:1", "1:nan",   "0:1e308", "x=y", "${1}", std::string(300, 'a'),
    "inline",   "none",  "help"};
const std::vector<std::string> kFioValues = {"",
                                             "0",
                                             "-1",
                                             "4k",
                                             "1t",
                                             "0x10",
                                             "1e9",
                                             "18446744073709551616",
                                             "9999999999999999999k",
                                             "1s",
                                             "100d",
                                             "nan",
                                             "inf",
                                             "${X}",
                                             "4KiB",
                                             "1:2",
                                             "randrw:8",
                                             "io_uring",
                                             "libaio",
                                             "\\",
                                             "\"",
                                             "'"};
const std::vector<std::string> kFioKeys = {"ioengine",
                                           "rw",
                                           "bs",
                                           "iodepth",
                                           "size",
                                           "runtime",
                                           "ramp_time",
                                           "time_based",
                                           "numjobs",
                                           "sqthread_poll",
                                           "sqthread_poll_cpu",
                                           "hipri",
                                           "direct",
                                           "fixedbufs",
                                           "registerfiles",
                                           "rate_iops",
                                           "io_sq_thread_idle",
                                           "kb_base",
                                           "filename",
                                           "rwmixread",
                                           "iodepth_batch_submit",
                                           "iodepth_batch_complete_min",
                                           "thread",
                                           "group_reporting",
                                           "cpus_allowed",
                                           "include",
                                           "name"};

bool number_char(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.' || c == 'e' ||
         c == 'E';
}

// [begin, end) of every maximal number token (a digit run not inside a word).
std::vector<std::pair<std::size_t, std::size_t>> number_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> v;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool starts = (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '-') &&
                        (i == 0 || !(std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '.'));
    if (!starts) continue;
    std::size_t j = i;
    while (j < s.size() && number_char(s[j])) ++j;
    v.emplace_back(i, j);
    i = j;
  }
  return v;
}

// [begin, end) of the contents of every "..." string (escapes skipped).
std::vector<std::pair<std::size_t, std::size_t>> string_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> v;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '"') continue;
    std::size_t j = i + 1;
    while (j < s.size() && s[j] != '"') j += s[j] == '\\' ? 2 : 1;
    if (j >= s.size()) break;
    v.emplace_back(i + 1, j);
    i = j;
  }
  return v;
}

// [begin, end) of the value of every `key=value` line (fio job files, --set items).
std::vector<std::pair<std::size_t, std::size_t>> value_spans(const std::string& s) {
  std::vector<std::pair<std::size_t, std::size_t>> v;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=') continue;
    std::size_t j = i + 1;
    while (j < s.size() && s[j] != '\n' && s[j] != ' ') ++j;
    v.emplace_back(i + 1, j);
  }
  return v;
}

template <class T>
const T& pick(const std::vector<T>& v, Rng& rng) {
  return v[rng.below(v.size())];
}

std::string mutate_once(std::string s, Syntax syntax, const std::vector<std::string>& others, Rng& rng) {
  const std::size_t n = s.size();
  const std::size_t pos = rng.below(n + 1);
  switch (rng.below(11)) {
    case 0:  // flip one bit
      if (n) s[rng.below(n)] ^= static_cast<char>(1u << rng.below(8));
      return s;
    case 1:  // insert a byte, often a structural one
      s.insert(pos, 1, rng.chance(50) ? "{}[],:\"=\n\\#;"[rng.below(13)] : static_cast<char>(rng.below(256)));
      return s;
    case 2:  // erase a range
      if (n) s.erase(pos > 0 ? pos - 1 : 0, 1 + rng.below(rng.chance(80) ? 8 : n));
      return s;
    case 3: {  // duplicate a range (repeated keys, sections, items)
      if (!n) return s;
      const std::size_t b = rng.below(n), len = 1 + rng.below(std::min<std::size_t>(n - b, 200));
      s.insert(rng.below(n + 1), s.substr(b, len));
      return s;
    }
    case 4: {  // splice in a piece of another seed
      if (others.empty()) return s;
      const std::string& o = pick(others, rng);
      if (o.empty()) return s;
      const std::size_t b = rng.below(o.size());
      s.insert(pos, o.substr(b, 1 + rng.below(std::min<std::size_t>(o.size() - b, 400))));
      return s;
    }
    case 5:  // truncate
      s.resize(pos);
      return s;
    case 6: {  // deep nesting (the stack overflow of issue 15)
      const std::size_t depth = rng.chance(50) ? 1 + rng.below(600) : 1000 + rng.below(120000);
      const bool obj = rng.chance(30);
      std::string open, close;
      for (std::size_t i = 0; i < depth; ++i) open += obj ? "{\"a\":" : "[";
      close = std::string(depth, obj ? '}' : ']');
      s.insert(pos, open + (rng.chance(50) ? "1" : "") + close);
      return s;
    }
    default:
      break;
  }
  // Token replacements, by syntax.
  if (syntax == Syntax::Json) {
    const auto nums = number_spans(s);
    const auto strs = string_spans(s);
    if (rng.chance(60) && !nums.empty()) {
      const auto [b, e] = pick(nums, rng);
      s.replace(b, e - b, pick(kNumbers, rng));
    } else if (!strs.empty()) {
      const auto [b, e] = pick(strs, rng);
      const auto [ob, oe] = pick(strs, rng);  // or another string of the same text (a known name)
      s.replace(b, e - b, rng.chance(70) ? pick(kStrings, rng) : s.substr(ob, oe - ob));
    }
    return s;
  }
  const auto vals = value_spans(s);
  if (syntax == Syntax::FioJob && rng.chance(40)) {  // a new option line
    const std::size_t nl = s.find('\n', pos);
    const std::string line = pick(kFioKeys, rng) + (rng.chance(85) ? "=" + pick(kFioValues, rng) : "") + "\n";
    s.insert(nl == std::string::npos ? s.size() : nl + 1, line);
  } else if (!vals.empty()) {
    const auto [b, e] = pick(vals, rng);
    s.replace(b, e - b, rng.chance(50) ? pick(kFioValues, rng) : pick(kNumbers, rng));
  }
  return s;
}

}  // namespace

std::string mutate(const std::string& input, Syntax syntax, const std::vector<std::string>& others,
                   Rng& rng) {
  std::string s = input;
  const std::size_t rounds = 1 + rng.below(4);
  for (std::size_t i = 0; i < rounds; ++i) s = mutate_once(std::move(s), syntax, others, rng);
  return s;
}

}  // namespace uringsim::fuzz
