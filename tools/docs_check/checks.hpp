// What a page asks docs_check to verify, read from its `<!-- docs-check ... -->` markers
// (syntax: docs/docs-check.md).
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "markdown.hpp"

namespace docs_check {

struct MarkerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Tolerance {
  double rel = 0.005;  // the default: 0.5 % of the shown value ...
  double abs = 0;      // ... or this much, whichever is larger (plus the shown rounding)
};

// One shown number and the expression that must reproduce it.
struct NumberCheck {
  Number shown;
  std::string expr;  // "RUN[/path]:/json/pointer", "ratio(A,B)", "A*100"
  Tolerance tol;
};

// Keys a machine-dependent run must produce; their values are not compared.
struct KeysCheck {
  std::size_t line = 0;
  std::string source;  // "RUN[/path]"
  std::vector<std::string> pointers;
};

struct Skipped {
  std::size_t line = 0;
  std::size_t numbers = 0;
  std::string reason;
};

struct Plan {
  std::vector<NumberCheck> numbers;
  std::vector<KeysCheck> keys;
  std::vector<Skipped> skipped;
  std::map<std::string, std::string> stdout_runs;  // run id -> command whose stdout is the JSON
};

Plan read_plan(const Page& page);

// Run ids an expression reads ("wq-515" for "wq-515:/throughput/ops_per_s").
std::vector<std::string> runs_of(const std::string& expr);
// Where the first operand of "A,B" (the inside of ratio/diff/pct) ends; npos if B is missing.
std::size_t operand_comma(const std::string& inner);

}  // namespace docs_check
