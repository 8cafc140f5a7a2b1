// The parts of a markdown page docs_check reads: fenced code blocks, tables, HTML-comment markers
// and the numbers in a piece of text. Everything carries byte offsets into the page so that
// `--update` can rewrite a number in place.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace docs_check {

struct CodeBlock {
  std::string lang;                // the info string's first word ("sh", "json", "")
  std::string text;                // the lines between the fences
  std::size_t begin = 0, end = 0;  // offsets of the opening fence and of the end of the closing one
};

struct Cell {
  std::size_t begin = 0, end = 0;  // offsets of the cell's text (between the pipes)
};

struct Table {
  std::size_t begin = 0, end = 0;
  std::size_t line = 0;                 // 1-based line of the header row
  std::vector<std::vector<Cell>> rows;  // data rows only (header and separator dropped)
  std::vector<Cell> header;
};

struct Comment {
  std::string body;  // text between "<!--" and "-->"
  std::size_t begin = 0, end = 0;
};

// A number as the page shows it: "67 200", "−0.14", "3.73". A lone dash ("–", "-") in a table
// cell is a placeholder for "none" and comes back with `placeholder` set.
struct Number {
  std::size_t begin = 0, end = 0;
  double value = 0;
  int decimals = 0;
  bool grouped = false;  // thousands separated by spaces
  bool placeholder = false;
  char sign = 0;  // '-', '+', 'm' (U+2212) as shown, 0 for none
};

class Page {
 public:
  explicit Page(std::string text);
  const std::string& text() const { return text_; }
  const std::vector<CodeBlock>& code_blocks() const { return blocks_; }
  const std::vector<Table>& tables() const { return tables_; }
  const std::vector<Comment>& comments() const { return comments_; }
  std::size_t line_of(std::size_t offset) const;
  // The numbers in [begin, end), skipping code spans and HTML comments.
  std::vector<Number> numbers(std::size_t begin, std::size_t end, bool placeholders) const;
  // First table / paragraph that starts at or after `offset`.
  const Table* table_after(std::size_t offset) const;
  std::pair<std::size_t, std::size_t> paragraph_after(std::size_t offset) const;
  const CodeBlock* block_after(std::size_t offset) const;

 private:
  bool in_code(std::size_t offset) const;
  std::string text_;
  std::vector<CodeBlock> blocks_;
  std::vector<Table> tables_;
  std::vector<Comment> comments_;
  std::vector<std::size_t> line_starts_;
};

// Shell commands of the page's sh blocks that start with `program` (e.g. "bench/"): continuation
// lines joined, comments dropped, and for "a && b" chains the part that runs it.
std::vector<std::string> shown_commands(const Page& page, const std::string& program);
// The same for "build/tools/uringsim ".
std::vector<std::string> uringsim_commands(const Page& page);

// How many trailing zeros of a shown integer are rounding ("67 200": 2; one zero, as in "6460", is
// not), keeping at least three significant digits, so "2000" is read as 2000 ± 5.
int rounded_zeros(const Number& shown);
// `fresh` written the way `shown` is: same decimals, rounding, grouping and sign style.
std::string format_like(const Number& shown, double fresh);

}  // namespace docs_check
