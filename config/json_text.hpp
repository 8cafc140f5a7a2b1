#pragma once
// Strict JSON parsing of user files: line/column on syntax errors, duplicate keys rejected,
// key order kept so that errors are reported in document order.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace uringsim::config {

// Arrays and objects nested more deeply are refused before parsing: the deepest scenario needs
// under 10 levels, and a value nested tens of thousands deep would exhaust the stack of anything
// that walks it recursively (checking, copying, printing).
constexpr std::size_t kMaxJsonNesting = 64;

// Where `text` opens its (kMaxJsonNesting + 1)-th nested array or object, as "<line>:<column>"
// (strings are skipped; the text need not be valid JSON); nullopt if it nests no deeper than that.
std::optional<std::string> nesting_too_deep_at(std::string_view text);
// The message of that error, after "<source>:<line>:<column>: ".
std::string nesting_too_deep_reason();

// The reason in a parse error of the JSON library, without its own position and echo of the text.
std::string parse_error_reason(std::string what);

// Throws InputError "<source>:<line>:<column>: invalid JSON: <reason>" or
// "<source>: <pointer>: duplicate key".
nlohmann::ordered_json parse_json_text(std::string_view text, const std::string& source);

// A user's input file, whole; InputError "<path>: cannot read: <why>" (missing, a directory, I/O).
std::string read_input_file(const std::string& path);

// JSON pointer helpers for messages.
std::string pointer_append(const std::string& pointer, std::string_view token);  // escapes ~ and /
std::string show_pointer(const std::string& pointer);                            // "" -> "(top level)"
// A value as compact JSON, shortened when long so messages stay one readable line. Only the shown
// part is serialised, so a huge value costs no more than a small one.
std::string show_value(const nlohmann::ordered_json& value);
std::string show_value(const nlohmann::json& value);

}  // namespace uringsim::config
