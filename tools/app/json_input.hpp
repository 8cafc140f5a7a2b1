#pragma once
// Reading JSON files that commands take as input (sweep specs, compare.json, results.json): any
// problem is a config::InputError (exit 2) naming the file, and the line and column or the key.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace uringsim::app {

// The parsed file: "FILE: cannot read ..." (a directory, missing, unreadable),
// "FILE:LINE:COLUMN: malformed JSON: ..." (syntax, or nesting deeper than config::kMaxJsonNesting).
nlohmann::json read_json_file(const std::filesystem::path& path);

// A value inside a document read from `file`, at a JSON pointer. Typed reads fail with
// "FILE: POINTER: expected TYPE, got VALUE" or "FILE: POINTER: missing", never with the JSON
// library's own text, which names no key.
class JsonIn {
 public:
  JsonIn(const nlohmann::json& value, std::string file, std::string pointer = "");

  const nlohmann::json& raw() const { return *value_; }
  const std::string& file() const { return file_; }
  const std::string& pointer() const { return pointer_; }
  [[noreturn]] void fail(const std::string& problem) const;  // "FILE: POINTER: problem"

  JsonIn operator[](const std::string& key) const;           // a required key of an object
  std::optional<JsonIn> find(const std::string& key) const;  // an optional one (the value must be an object)
  JsonIn operator[](std::size_t index) const;                // an element of an array (index < size())
  std::size_t size() const;                                  // of an array (the value must be one)
  std::vector<std::string> keys() const;                     // of an object (the value must be one), sorted

  std::string string() const;
  double number() const;
  std::int64_t integer() const;
  std::uint64_t unsigned_integer() const;
  bool boolean() const;
  double number_or_nan() const;  // null (how results write NaN and infinities) reads as NaN

 private:
  const nlohmann::json* value_;
  std::string file_, pointer_;
  void require(bool ok, const char* what) const;
};

}  // namespace uringsim::app
