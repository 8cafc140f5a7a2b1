#include "tools/app/json_input.hpp"

#include <cmath>
#include <limits>

#include "config/input_error.hpp"
#include "config/json_text.hpp"
#include "tools/app/read_file.hpp"

namespace uringsim::app {

using nlohmann::json;

nlohmann::json read_json_file(const std::filesystem::path& path) {
  const std::string text = read_text_file(path);
  const std::string name = path.string();
  if (auto at = config::nesting_too_deep_at(text))
    throw config::InputError(name + ":" + *at + ": malformed JSON: " + config::nesting_too_deep_reason());
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    // e.byte is 1-based and points just past the offending character.
    const std::size_t at = e.byte > 0 ? std::min<std::size_t>(e.byte - 1, text.size()) : 0;
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw config::InputError(name + ":" + std::to_string(line) + ":" + std::to_string(col) +
                             ": malformed JSON: " + config::parse_error_reason(e.what()));
  }
}

JsonIn::JsonIn(const json& value, std::string file, std::string pointer)
    : value_(&value), file_(std::move(file)), pointer_(std::move(pointer)) {}

void JsonIn::fail(const std::string& problem) const {
  throw config::InputError(file_ + ": " + config::show_pointer(pointer_) + ": " + problem);
}

void JsonIn::require(bool ok, const char* what) const {
  if (!ok) fail(std::string("expected ") + what + ", got " + config::show_value(*value_));
}

JsonIn JsonIn::operator[](const std::string& key) const {
  auto found = find(key);
  if (!found) JsonIn(json(), file_, config::pointer_append(pointer_, key)).fail("missing");
  return *found;
}

std::optional<JsonIn> JsonIn::find(const std::string& key) const {
  require(value_->is_object(), "an object");
  const auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return JsonIn(*it, file_, config::pointer_append(pointer_, key));
}

JsonIn JsonIn::operator[](std::size_t index) const {
  require(value_->is_array() && index < value_->size(), "an array");
  return JsonIn((*value_)[index], file_, config::pointer_append(pointer_, std::to_string(index)));
}

std::size_t JsonIn::size() const {
  require(value_->is_array(), "an array");
  return value_->size();
}

std::vector<std::string> JsonIn::keys() const {
  require(value_->is_object(), "an object");
  std::vector<std::string> out;
  for (const auto& [k, _] : value_->items()) out.push_back(k);
  return out;
}

std::string JsonIn::string() const {
  require(value_->is_string(), "a string");
  return value_->get<std::string>();
}

double JsonIn::number() const {
  require(value_->is_number(), "a number");
  return value_->get<double>();
}

std::int64_t JsonIn::integer() const {
  require(value_->is_number_integer(), "an integer");
  if (value_->is_number_unsigned())
    require(
        value_->get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()),
        "an integer below 2^63");
  return value_->get<std::int64_t>();
}

std::uint64_t JsonIn::unsigned_integer() const {
  require(value_->is_number_unsigned() || (value_->is_number_integer() && value_->get<std::int64_t>() >= 0),
          "an integer >= 0");
  return value_->get<std::uint64_t>();
}

bool JsonIn::boolean() const {
  require(value_->is_boolean(), "true or false");
  return value_->get<bool>();
}

double JsonIn::number_or_nan() const {
  if (value_->is_null()) return std::numeric_limits<double>::quiet_NaN();
  return number();
}

}  // namespace uringsim::app
