// Plain-text helpers for human-readable summaries on stdout.
#pragma once

#include <string>
#include <vector>

namespace uringsim::analysis {

// Aligned plain-text table: header, a dashed rule, then rows (no header: rows only); columns separated by two
// spaces, every line ending in '\n' with no trailing blanks. A column whose non-empty body cells all look
// numeric is right-aligned (header included), others are left-aligned. Rows may be shorter or longer than the
// header; missing cells are blank. Widths count UTF-8 code points, so "µs" is two columns wide.
std::string render_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows);

// Fixed-point text with `decimals` digits after the point; "nan", "inf" and "-inf" for non-finite values.
std::string format_number(double value, int decimals = 3);

}  // namespace uringsim::analysis
