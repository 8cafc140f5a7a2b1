#pragma once
// Strict JSON parsing of user files: line/column on syntax errors, duplicate keys rejected,
// key order kept so that errors are reported in document order.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace uringsim::config {

// Throws InputError "<source>:<line>:<column>: invalid JSON: <reason>" or
// "<source>: <pointer>: duplicate key".
nlohmann::ordered_json parse_json_text(std::string_view text, const std::string& source);

// A user's input file, whole; InputError "<path>: cannot read: <why>" (missing, a directory, I/O).
std::string read_input_file(const std::string& path);

// JSON pointer helpers for messages.
std::string pointer_append(const std::string& pointer, std::string_view token);  // escapes ~ and /
std::string show_pointer(const std::string& pointer);                            // "" -> "(top level)"
// A value as compact JSON, shortened when long so messages stay one readable line.
std::string show_value(const nlohmann::ordered_json& value);

}  // namespace uringsim::config
