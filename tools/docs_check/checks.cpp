#include "checks.hpp"

#include <fmt/format.h>
#include <cstdlib>
#include <sstream>

namespace docs_check {

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\n");
  if (a == std::string::npos) return {};
  return s.substr(a, s.find_last_not_of(" \t\n") - a + 1);
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string x; in >> x;) w.push_back(x);
  return w;
}

// "tol=1%" -> 1 % relative; "tol=0.05" -> 0.05 absolute. Returns false if `w` is no tolerance.
bool parse_tol(const std::string& w, Tolerance& t, std::size_t line) {
  if (w.rfind("tol=", 0) != 0) return false;
  std::string v = w.substr(4);
  const bool pct = !v.empty() && v.back() == '%';
  if (pct) v.pop_back();
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || x < 0)
    throw MarkerError(fmt::format("line {}: bad tolerance '{}' (expected tol=N% or tol=N)", line, w));
  t = pct ? Tolerance{x / 100, 0} : Tolerance{0, x};
  return true;
}

// Text of a cell as a template value: no markup, no blanks.
std::string cell_key(const Page& page, const Cell& c) {
  std::string out;
  for (std::size_t i = c.begin; i < c.end; ++i) {
    const char ch = page.text()[i];
    if (ch != '`' && ch != '*' && ch != ' ') out += ch;
  }
  return out;
}

std::string expand(std::string e, const std::map<std::string, std::string>& vars, std::size_t line) {
  for (std::size_t p = e.find('{'); p != std::string::npos; p = e.find('{', p)) {
    const auto q = e.find('}', p);
    if (q == std::string::npos) throw MarkerError(fmt::format("line {}: unclosed '{{' in '{}'", line, e));
    const auto name = e.substr(p + 1, q - p - 1);
    const auto it = vars.find(name);
    if (it == vars.end())
      throw MarkerError(
          fmt::format("line {}: '{{{}}}' has no value here (known: run, h, r, r0, 1..9)", line, name));
    e.replace(p, q - p + 1, it->second);
    p += it->second.size();
  }
  return e;
}

// Pairs the numbers of one cell (or one inline mark) with their expressions, in order.
void add_cell(Plan& plan, const Page& page, std::size_t begin, std::size_t end,
              const std::vector<std::string>& exprs, const Tolerance& tol, std::size_t line) {
  if (exprs.size() == 1 && exprs[0] == "skip") return;
  const auto nums = page.numbers(begin, end, true);
  if (nums.size() != exprs.size())
    throw MarkerError(fmt::format(
        "line {}: the cell '{}' shows {} number(s) but the marker gives {} expression(s)",
        page.line_of(begin), trim(page.text().substr(begin, end - begin)), nums.size(), exprs.size()));
  for (std::size_t k = 0; k < nums.size(); ++k) plan.numbers.push_back({nums[k], exprs[k], tol});
  (void)line;
}

void read_table(Plan& plan, const Page& page, const Comment& c, const std::vector<std::string>& lines) {
  const std::size_t line = page.line_of(c.begin);
  const Table* t = page.table_after(c.end);
  if (!t) throw MarkerError(fmt::format("line {}: a table marker with no table after it", line));
  Tolerance tol;
  for (const auto& w : words(lines[0])) parse_tol(w, tol, line);
  std::vector<std::string> col_runs, row_runs;
  struct Rule {
    int row = 0, col = 0;  // 0 = every
    std::vector<std::string> exprs;
    Tolerance tol;
    std::size_t line;
  };
  std::vector<Rule> rules;
  for (std::size_t k = 1; k < lines.size(); ++k) {
    const auto l = trim(lines[k]);
    if (l.empty()) continue;
    const auto colon = l.find(':');
    if (colon == std::string::npos)
      throw MarkerError(fmt::format(
          "line {}: '{}' is not 'cols:', 'rows:', 'col N:', 'row N:' or 'cell R C:'", line + k, l));
    const auto head = words(l.substr(0, colon));
    auto rest = words(l.substr(colon + 1));
    if (head.size() == 1 && head[0] == "cols") {
      col_runs = rest;
      continue;
    }
    if (head.size() == 1 && head[0] == "rows") {
      row_runs = rest;
      continue;
    }
    Rule r{0, 0, {}, tol, line + k};
    try {
      if (head.size() == 2 && head[0] == "col")
        r.col = std::stoi(head[1]);
      else if (head.size() == 2 && head[0] == "row")
        r.row = std::stoi(head[1]);
      else if (head.size() == 3 && head[0] == "cell")
        r.row = std::stoi(head[1]), r.col = std::stoi(head[2]);
      else
        throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw MarkerError(
          fmt::format("line {}: '{}' is not 'col N', 'row N' or 'cell R C'", line + k, l.substr(0, colon)));
    }
    for (const auto& w : rest)
      if (!parse_tol(w, r.tol, line + k)) r.exprs.push_back(w);
    if (r.exprs.empty()) throw MarkerError(fmt::format("line {}: no expression after ':'", line + k));
    rules.push_back(std::move(r));
  }
  if (!row_runs.empty() && row_runs.size() != t->rows.size())
    throw MarkerError(fmt::format("line {}: 'rows:' names {} runs but the table has {} data rows", line,
                                  row_runs.size(), t->rows.size()));
  for (std::size_t r = 0; r < t->rows.size(); ++r) {
    const auto& row = t->rows[r];
    for (std::size_t col = 0; col < row.size(); ++col) {
      const Rule* match = nullptr;  // the most specific rule wins: cell, then row, then col
      int best = -1;
      for (const auto& ru : rules) {
        // a row rule covers the data columns, not the row's label in column 1
        const bool ok = (ru.row == 0 || ru.row == static_cast<int>(r + 1)) &&
                        (ru.col == 0 ? col > 0 || ru.row == 0 : ru.col == static_cast<int>(col + 1));
        const int score = (ru.row ? 2 : 0) + (ru.col ? 1 : 0);
        if (ok && score > best) match = &ru, best = score;
      }
      if (!match) continue;
      std::map<std::string, std::string> vars;
      for (std::size_t k = 0; k < row.size() && k < 9; ++k)
        vars[std::to_string(k + 1)] = cell_key(page, row[k]);
      if (col < t->header.size()) vars["h"] = cell_key(page, t->header[col]);
      vars["r"] = std::to_string(r + 1);
      vars["r0"] = std::to_string(r);
      if (!row_runs.empty()) vars["run"] = row_runs[r];
      if (!col_runs.empty() && col >= 1 && col - 1 < col_runs.size()) vars["run"] = col_runs[col - 1];
      std::vector<std::string> exprs;
      for (const auto& e : match->exprs) exprs.push_back(expand(e, vars, match->line));
      add_cell(plan, page, row[col].begin, row[col].end, exprs, match->tol, match->line);
    }
  }
}

}  // namespace

std::size_t operand_comma(const std::string& inner) {
  // A reference is RUN/path:/pointer and its path may hold commas (sweep points), its pointer not:
  // the first operand ends at the first comma, outside parentheses, after it is complete.
  int depth = 0;
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '(') ++depth;
    if (inner[i] == ')') --depth;
    if (inner[i] != ',' || depth != 0) continue;
    const auto head = inner.substr(0, i);
    if (head.find(':') != std::string::npos || head.find('(') != std::string::npos ||
        head.find_first_not_of("0123456789.-") == std::string::npos)
      return i;
  }
  return std::string::npos;
}

std::vector<std::string> runs_of(const std::string& expr) {
  for (const std::string fn : {"ratio(", "diff(", "pct("}) {
    if (expr.rfind(fn, 0) != 0) continue;
    const auto inner = expr.substr(fn.size(), expr.rfind(')') - fn.size());
    const auto comma = operand_comma(inner);
    if (comma == std::string::npos) return {};
    auto a = runs_of(inner.substr(0, comma));
    const auto b = runs_of(inner.substr(comma + 1));
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  const auto stop = expr.find_first_of("/:");
  if (stop == std::string::npos || stop == 0) return {};  // a constant
  return {expr.substr(0, stop)};
}

Plan read_plan(const Page& page) {
  Plan plan;
  for (const auto& c : page.comments()) {
    const std::size_t line = page.line_of(c.begin);
    // Inline: "67 200<!--= wq-515:/throughput/ops_per_s -->": the number right before the mark.
    if (!c.body.empty() && c.body[0] == '=') {
      Tolerance tol;
      std::vector<std::string> exprs;
      for (const auto& w : words(c.body.substr(1)))
        if (!parse_tol(w, tol, line)) exprs.push_back(w);
      if (!exprs.empty() && exprs[0] == "skip") {  // "~7 s<!--= skip wall time -->"
        std::string reason;
        for (std::size_t k = 1; k < exprs.size(); ++k) reason += (k > 1 ? " " : "") + exprs[k];
        if (reason.empty()) throw MarkerError(fmt::format("line {}: '<!--= skip' needs a reason", line));
        plan.skipped.push_back({line, 1, reason});
        continue;
      }
      const auto line_begin = page.text().rfind('\n', c.begin);
      const std::size_t from = line_begin == std::string::npos ? 0 : line_begin + 1;
      auto nums = page.numbers(from, c.begin, true);
      if (nums.empty() || exprs.size() != 1)
        throw MarkerError(
            fmt::format("line {}: '<!--=' needs one expression and a number right before it", line));
      // only blanks between the number and the mark
      if (page.text().find_first_not_of(' ', nums.back().end) != c.begin)
        throw MarkerError(fmt::format("line {}: '<!--=' must follow its number directly", line));
      plan.numbers.push_back({nums.back(), exprs[0], tol});
      continue;
    }
    const auto body = trim(c.body);
    if (body.rfind("docs-check", 0) != 0) continue;
    std::vector<std::string> lines;
    {
      std::istringstream in(body.substr(10));
      for (std::string l; std::getline(in, l);) lines.push_back(l);
      if (lines.empty()) lines.push_back("");
    }
    const auto first = words(lines[0]);
    const std::string kind = first.empty() ? "" : first[0];
    if (kind == "table") {
      read_table(plan, page, c, lines);
    } else if (kind == "skip") {
      const auto reason = trim(lines[0].substr(lines[0].find("skip") + 4));
      if (reason.empty()) throw MarkerError(fmt::format("line {}: 'skip' needs a reason", line));
      const Table* t = page.table_after(c.end);
      const auto para = page.paragraph_after(c.end);
      std::size_t n = 0;
      if (t && t->begin == para.first)
        n = page.numbers(t->begin, t->end, false).size();
      else
        n = page.numbers(para.first, para.second, false).size();
      plan.skipped.push_back({line, n, reason});
    } else if (kind == "keys") {
      // keys RUN[/path]: /a /b ...
      const auto rest = trim(body.substr(10 + lines[0].find("keys") + 4));
      const auto colon = rest.find(": ");
      if (colon == std::string::npos)
        throw MarkerError(fmt::format("line {}: expected 'keys RUN[/path]: /pointer ...'", line));
      plan.keys.push_back({line, trim(rest.substr(0, colon)), words(rest.substr(colon + 2))});
    } else if (kind == "stdout") {
      // stdout RUN: COMMAND  (the command's standard output is RUN's JSON)
      const auto rest = trim(body.substr(10 + lines[0].find("stdout") + 6));
      const auto colon = rest.find(": ");
      if (colon == std::string::npos)
        throw MarkerError(fmt::format("line {}: expected 'stdout RUN: COMMAND'", line));
      plan.stdout_runs[trim(rest.substr(0, colon))] = trim(rest.substr(colon + 2));
    } else if (kind == "file") {
      continue;  // read by the runner for every page
    } else {
      throw MarkerError(fmt::format(
          "line {}: unknown marker 'docs-check {}' (expected table, skip, keys, stdout, file)", line, kind));
    }
  }
  return plan;
}

}  // namespace docs_check
