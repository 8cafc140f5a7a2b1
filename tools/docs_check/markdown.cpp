#include "markdown.hpp"

#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace docs_check {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_word(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
         static_cast<unsigned char>(c) >= 0x80;
}
constexpr std::string_view kMinus = "\xE2\x88\x92";   // U+2212, the typographic minus
constexpr std::string_view kEnDash = "\xE2\x80\x93";  // U+2013, "no value" in tables

std::string trim(std::string_view s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string_view::npos) return {};
  const auto b = s.find_last_not_of(" \t");
  return std::string(s.substr(a, b - a + 1));
}

}  // namespace

Page::Page(std::string text) : text_(std::move(text)) {
  line_starts_.push_back(0);
  for (std::size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  // Walk line by line: fences, then tables outside fences.
  const std::size_t nlines = line_starts_.size();
  auto line = [&](std::size_t k) {
    const std::size_t a = line_starts_[k];
    const std::size_t b = k + 1 < nlines ? line_starts_[k + 1] - 1 : text_.size();
    return std::string_view(text_).substr(a, b - a);
  };
  for (std::size_t k = 0; k < nlines; ++k) {
    const auto l = line(k);
    const auto t = trim(l);
    if (t.rfind("```", 0) == 0) {
      CodeBlock b;
      b.begin = line_starts_[k];
      const auto info = trim(t.substr(3));
      b.lang = info.substr(0, info.find(' '));
      std::size_t j = k + 1;
      for (; j < nlines && trim(line(j)).rfind("```", 0) != 0; ++j) b.text += std::string(line(j)) + "\n";
      b.end = j < nlines ? line_starts_[j] + line(j).size() : text_.size();
      blocks_.push_back(std::move(b));
      k = j;
      continue;
    }
    if (!t.empty() && t[0] == '|') {
      Table tb;
      tb.begin = line_starts_[k];
      tb.line = k + 1;
      std::size_t j = k;
      for (; j < nlines && !trim(line(j)).empty() && trim(line(j))[0] == '|'; ++j) {
        std::vector<Cell> cells;
        const std::size_t base = line_starts_[j];
        const auto lj = line(j);
        std::size_t start = lj.find('|') + 1;
        bool code = false;
        for (std::size_t i = start; i < lj.size(); ++i) {
          if (lj[i] == '`') code = !code;
          if (lj[i] == '|' && !code && (i == 0 || lj[i - 1] != '\\')) {
            cells.push_back({base + start, base + i});
            start = i + 1;
          }
        }
        if (j == k)
          tb.header = cells;
        else if (j > k + 1)
          tb.rows.push_back(cells);
      }
      tb.end = j < nlines ? line_starts_[j] : text_.size();
      tables_.push_back(std::move(tb));
      k = j - 1;
    }
  }
  for (std::size_t p = text_.find("<!--"); p != std::string::npos; p = text_.find("<!--", p + 4)) {
    if (in_code(p)) continue;
    // inside a code span: an example of a marker, not a marker (an odd number of backticks before it)
    const auto bol = text_.rfind('\n', p);
    const std::size_t from = bol == std::string::npos ? 0 : bol + 1;
    if (std::count(text_.begin() + from, text_.begin() + p, '`') % 2 == 1) continue;
    const auto e = text_.find("-->", p + 4);
    if (e == std::string::npos) break;
    comments_.push_back({text_.substr(p + 4, e - p - 4), p, e + 3});
    p = e;
  }
}

bool Page::in_code(std::size_t offset) const {
  return std::any_of(blocks_.begin(), blocks_.end(),
                     [&](const CodeBlock& b) { return offset >= b.begin && offset < b.end; });
}

std::size_t Page::line_of(std::size_t offset) const {
  return static_cast<std::size_t>(std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) -
                                  line_starts_.begin());
}

std::vector<Number> Page::numbers(std::size_t begin, std::size_t end, bool placeholders) const {
  std::vector<Number> out;
  const std::string_view s(text_);
  bool code = false;
  for (std::size_t i = begin; i < end; ++i) {
    if (s.substr(i, 4) == "<!--") {
      const auto e = s.find("-->", i);
      i = e == std::string_view::npos ? end : e + 2;
      continue;
    }
    if (s[i] == '`') code = !code;
    if (code) continue;
    if (placeholders && (s.substr(i, 3) == kEnDash || s[i] == '-')) {
      const std::size_t w = s[i] == '-' ? 1 : 3;
      auto sep = [&](std::size_t k, bool before) {
        if (before ? k <= begin : k >= end) return true;
        return !is_word(s[before ? k - 1 : k]);
      };
      if (sep(i, true) && sep(i + w, false)) {
        out.push_back({i, i + w, 0, 0, false, true, 0});
        i += w - 1;
        continue;
      }
    }
    if (!is_digit(s[i])) continue;
    const bool after_minus = i >= begin + 3 && s.substr(i - 3, 3) == kMinus;
    if (i > begin && !after_minus && (is_word(s[i - 1]) || s[i - 1] == '.')) {
      while (i + 1 < end && (is_digit(s[i + 1]) || s[i + 1] == '.')) ++i;  // "x86", "v1.2": not a figure
      continue;
    }
    std::size_t a = i;
    bool negative = false;
    char sign = 0;
    if (a >= begin + 1 && (s[a - 1] == '-' || s[a - 1] == '+') && (a < begin + 2 || !is_word(s[a - 2]))) {
      negative = s[a - 1] == '-';
      sign = s[a - 1];
      --a;
    } else if (after_minus) {
      negative = true;
      sign = 'm';
      a -= 3;
    }
    std::size_t j = i;
    while (j < end && is_digit(s[j])) ++j;
    bool grouped = false;
    if (j - i <= 3) {
      while (j + 3 < end && s[j] == ' ' && is_digit(s[j + 1]) && is_digit(s[j + 2]) && is_digit(s[j + 3]) &&
             (j + 4 >= end || !is_word(s[j + 4]))) {
        j += 4;
        grouped = true;
      }
    }
    int decimals = 0;
    if (j + 1 < end && s[j] == '.' && is_digit(s[j + 1])) {
      ++j;
      while (j < end && is_digit(s[j])) ++j, ++decimals;
    }
    if (j < end && (is_word(s[j]) && s.substr(j, 2) != "\xC2\xB5" && s.substr(j, 2) != "\xC3\x97")) {
      i = j;  // "5k", "2nd", "x86": not a figure
      continue;
    }
    std::string digits;
    for (std::size_t k = i; k < j; ++k)
      if (s[k] != ' ') digits += s[k];
    const double v = std::strtod(digits.c_str(), nullptr);
    out.push_back({a, j, negative ? -v : v, decimals, grouped, false, sign});
    i = j - 1;
  }
  return out;
}

const Table* Page::table_after(std::size_t offset) const {
  for (const auto& t : tables_)
    if (t.begin >= offset) return &t;
  return nullptr;
}

const CodeBlock* Page::block_after(std::size_t offset) const {
  for (const auto& b : blocks_)
    if (b.begin >= offset) return &b;
  return nullptr;
}

std::pair<std::size_t, std::size_t> Page::paragraph_after(std::size_t offset) const {
  std::size_t a = offset;
  while (a < text_.size() && (text_[a] == '\n' || text_[a] == ' ')) ++a;
  auto e = text_.find("\n\n", a);
  return {a, e == std::string::npos ? text_.size() : e};
}

std::vector<std::string> shown_commands(const Page& page, const std::string& program) {
  std::vector<std::string> out;
  for (const auto& b : page.code_blocks()) {
    if (b.lang != "sh" && b.lang != "bash") continue;
    std::string joined;
    std::vector<std::string> lines;
    std::size_t p = 0;
    while (p < b.text.size()) {
      auto e = b.text.find('\n', p);
      std::string l = b.text.substr(p, e - p);
      p = e == std::string::npos ? b.text.size() : e + 1;
      const bool more = !l.empty() && l.back() == '\\';
      if (more) l.pop_back();
      joined += (joined.empty() ? "" : " ") + trim(l);
      if (!more) {
        lines.push_back(joined);
        joined.clear();
      }
    }
    for (auto l : lines) {
      // "cmd   # comment": a '#' after a blank, outside quotes, starts a comment.
      bool sq = false, dq = false;
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (l[i] == '\'' && !dq) sq = !sq;
        if (l[i] == '"' && !sq) dq = !dq;
        if (l[i] == '#' && !sq && !dq && i > 0 && l[i - 1] == ' ') {
          l = trim(l.substr(0, i));
          break;
        }
      }
      const auto at = l.find(program);
      if (at == std::string::npos) continue;
      if (at != 0 && l.substr(0, at).find("&& ") == std::string::npos) continue;
      std::string cmd = l.substr(at);
      // collapse runs of blanks so commands compare as the reader sees them
      std::string c;
      for (char ch : cmd)
        if (!(ch == ' ' && !c.empty() && c.back() == ' ')) c += ch;
      out.push_back(trim(c));
    }
  }
  return out;
}

std::vector<std::string> uringsim_commands(const Page& page) {
  return shown_commands(page, "build/tools/uringsim ");
}

int rounded_zeros(const Number& n) {
  if (n.decimals > 0 || n.value == 0) return 0;
  int zeros = 0, digits = 0;
  for (double x = std::fabs(n.value); x >= 1; x = std::floor(x / 10)) ++digits;
  for (double x = std::fabs(n.value); x >= 10 && std::fmod(x, 10.0) == 0; x /= 10) ++zeros;
  if (zeros < 2) return 0;  // "6460" is more likely a count than a rounding; "67 200" a rounding
  return std::max(0, std::min(zeros, digits - 3));
}

std::string format_like(const Number& shown, double fresh) {
  if (shown.placeholder) return std::string(kEnDash);
  double v = fresh;
  if (const int z = rounded_zeros(shown); z > 0) v = std::round(v / std::pow(10.0, z)) * std::pow(10.0, z);
  std::string s = fmt::format("{:.{}f}", std::fabs(v), shown.decimals);
  if (shown.grouped) {
    const auto dot = s.find('.');
    std::string ip = s.substr(0, dot), rest = dot == std::string::npos ? "" : s.substr(dot);
    std::string g;
    for (std::size_t k = 0; k < ip.size(); ++k) {
      if (k > 0 && (ip.size() - k) % 3 == 0) g += ' ';
      g += ip[k];
    }
    s = g + rest;
  }
  if (v < 0 && s.find_first_not_of("0. ") != std::string::npos)
    s = (shown.sign == '-' ? "-" : "\xE2\x88\x92") + s;
  if (v >= 0 && shown.sign == '+') s = "+" + s;
  return s;
}

}  // namespace docs_check
