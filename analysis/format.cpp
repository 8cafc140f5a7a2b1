#include "analysis/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace uringsim::analysis {

namespace {

std::size_t display_width(const std::string& s) {
  // Count code points: every byte that is not a UTF-8 continuation byte starts one.
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool looks_numeric(const std::string& s) {
  if (s == "nan" || s == "inf" || s == "-inf" || s == "-") return true;
  const char* begin = s.c_str();
  char* end = nullptr;
  std::strtod(begin, &end);
  // A trailing '%' or 'x' (ratios) still reads as a number to a person scanning the column.
  return end != begin && (*end == '\0' || (end[1] == '\0' && (*end == '%' || *end == 'x')));
}

void pad(std::string& out, std::size_t n) {
  out.append(n, ' ');
}

}  // namespace

std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
  std::size_t ncols = header.size();
  for (const auto& r : rows) ncols = std::max(ncols, r.size());
  if (ncols == 0) return {};

  static const std::string kEmpty;
  auto cell = [](const std::vector<std::string>& r, std::size_t c) -> const std::string& {
    return c < r.size() ? r[c] : kEmpty;
  };

  std::vector<std::size_t> width(ncols, 0);
  std::vector<bool> right(ncols, true);
  std::vector<bool> any_body(ncols, false);
  for (std::size_t c = 0; c < ncols; ++c) width[c] = display_width(cell(header, c));
  for (const auto& r : rows) {
    for (std::size_t c = 0; c < ncols; ++c) {
      const std::string& s = cell(r, c);
      width[c] = std::max(width[c], display_width(s));
      if (s.empty()) continue;
      any_body[c] = true;
      if (!looks_numeric(s)) right[c] = false;
    }
  }
  for (std::size_t c = 0; c < ncols; ++c) right[c] = right[c] && any_body[c];

  std::string out;
  auto emit = [&](const std::vector<std::string>& r) {
    std::string line;
    for (std::size_t c = 0; c < ncols; ++c) {
      const std::string& s = cell(r, c);
      const std::size_t gap = width[c] - display_width(s);
      if (c > 0) pad(line, 2);
      if (right[c]) pad(line, gap);
      line += s;
      if (!right[c]) pad(line, gap);
    }
    // Left-aligned last columns leave padding that only clutters diffs of captured output.
    line.erase(line.find_last_not_of(' ') + 1);
    out += line;
    out += '\n';
  };

  if (!header.empty()) {  // an empty header gives a plain key/value listing
    emit(header);
    std::vector<std::string> rule;
    rule.reserve(ncols);
    for (std::size_t w : width) rule.emplace_back(w, '-');
    emit(rule);
  }
  for (const auto& r : rows) emit(r);
  return out;
}

std::string format_number(double value, int decimals) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{:.{}f}", value, std::max(decimals, 0));
}

}  // namespace uringsim::analysis
