#include "config/json_text.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "config/input_error.hpp"

namespace uringsim::config {

namespace {

using ojson = nlohmann::ordered_json;

// SAX handler building an ordered_json, so that it can refuse a duplicate key (the DOM parser
// silently keeps the last one) and report syntax errors with our own line/column format.
class Builder {
 public:
  ojson root;
  std::optional<std::string> duplicate;  // pointer of the first duplicate key
  std::optional<std::size_t> error_position;
  std::string error_reason;

  bool null() { return put(ojson(nullptr)); }
  bool boolean(bool v) { return put(ojson(v)); }
  bool number_integer(ojson::number_integer_t v) { return put(ojson(v)); }
  bool number_unsigned(ojson::number_unsigned_t v) { return put(ojson(v)); }
  bool number_float(ojson::number_float_t v, const ojson::string_t&) { return put(ojson(v)); }
  bool string(ojson::string_t& v) { return put(ojson(std::move(v))); }
  bool binary(ojson::binary_t&) { return false; }  // JSON text has no binary values
  bool start_object(std::size_t) { return open(ojson::object()); }
  bool start_array(std::size_t) { return open(ojson::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(ojson::string_t& k) {
    if (stack_.back().node->contains(k)) {
      duplicate = pointer_append(parent_pointer(), k);
      return false;
    }
    stack_.back().key = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) {
    error_position = position;
    error_reason = ex.what();
    return false;
  }

 private:
  struct Level {
    ojson* node;  // stable: only the innermost container grows while it is open
    std::string key;
  };
  std::vector<Level> stack_;

  ojson* insert(ojson v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    ojson& parent = *stack_.back().node;
    if (parent.is_object()) return &(parent[stack_.back().key] = std::move(v));
    parent.push_back(std::move(v));
    return &parent.back();
  }
  bool put(ojson v) {
    insert(std::move(v));
    return true;
  }
  bool open(ojson v) {
    stack_.push_back({insert(std::move(v)), {}});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }
  // Pointer of the innermost open container.
  std::string parent_pointer() const {
    std::string p;
    for (std::size_t i = 0; i + 1 < stack_.size(); ++i) {
      const ojson& node = *stack_[i].node;
      p = node.is_object() ? pointer_append(p, stack_[i].key)
                           : pointer_append(p, std::to_string(node.size() - 1));
    }
    return p;
  }
};

// Appends the compact JSON text of v to out, stopping once out is longer than `limit`: the
// recursion is then at most `limit` levels deep, whatever the value.
template <typename Json>
void show_prefix(const Json& v, std::string& out, std::size_t limit) {
  if (out.size() > limit) return;
  auto text = [](const Json& x) { return x.dump(-1, ' ', false, Json::error_handler_t::replace); };
  if (v.is_object() || v.is_array()) {
    out += v.is_object() ? '{' : '[';
    bool first = true;
    for (auto it = v.begin(); it != v.end() && out.size() <= limit; ++it) {
      if (!first) out += ',';
      first = false;
      if (v.is_object()) out += text(Json(it.key())) + ':';
      show_prefix(it.value(), out, limit);
    }
    out += v.is_object() ? '}' : ']';
  } else if (v.is_string()) {
    // Escaping only lengthens a string: a prefix one byte longer than the room left shows the same.
    const auto& str = v.template get_ref<const std::string&>();
    out += text(Json(str.substr(0, limit + 1 - std::min(limit, out.size()))));
  } else {
    out += text(v);
  }
}

}  // namespace

std::optional<std::string> nesting_too_deep_at(std::string_view text) {
  std::size_t depth = 0, line = 1, line_start = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonNesting) return fmt::format("{}:{}", line, i - line_start + 1);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if (c == '\n') ++line, line_start = i + 1;
  }
  return std::nullopt;
}

std::string nesting_too_deep_reason() {
  return fmt::format("arrays and objects nested more than {} levels deep", kMaxJsonNesting);
}

// nlohmann's message is "[json.exception.parse_error.101] parse error at line L, column C: REASON";
// we print our own position, and drop its "last read: '...'" echo, which can span lines.
std::string parse_error_reason(std::string what) {
  if (auto column = what.find(", column "); column != std::string::npos)
    if (auto colon = what.find(": ", column); colon != std::string::npos) what = what.substr(colon + 2);
  if (auto start = what.find("; last read: '"); start != std::string::npos) {
    auto end = what.find("'; expected", start);
    what.erase(start, end == std::string::npos ? std::string::npos : end + 1 - start);
  }
  return what;
}

ojson parse_json_text(std::string_view text, const std::string& source) {
  if (auto at = nesting_too_deep_at(text))
    throw InputError(fmt::format("{}:{}: invalid JSON: {}", source, *at, nesting_too_deep_reason()));
  Builder b;
  bool ok = ojson::sax_parse(text, &b);
  if (ok) return std::move(b.root);
  if (b.duplicate) throw InputError(fmt::format("{}: {}: duplicate key", source, show_pointer(*b.duplicate)));
  // Position counts bytes read, up to and including the offending one.
  std::size_t pos = std::min(b.error_position.value_or(0), text.size());
  std::size_t line = 1, line_start = 0;
  for (std::size_t i = 0; i + 1 < pos; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  std::size_t column = pos > line_start ? pos - line_start : 1;
  throw InputError(
      fmt::format("{}:{}:{}: invalid JSON: {}", source, line, column, parse_error_reason(b.error_reason)));
}

std::string pointer_append(const std::string& pointer, std::string_view token) {
  std::string out = pointer + "/";
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string read_input_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": cannot read: is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path + ": cannot read: I/O error");
  return text.str();
}

std::string show_pointer(const std::string& pointer) {
  return pointer.empty() ? "(top level)" : pointer;
}

namespace {

template <typename Json>
std::string show_any(const Json& value) {
  // replace (in show_prefix): a --set value taken from the command line need not be valid UTF-8.
  constexpr std::size_t kMax = 80;
  std::string s;
  show_prefix(value, s, kMax);
  if (s.size() > kMax) s = s.substr(0, kMax - 3) + "...";
  return s;
}

}  // namespace

std::string show_value(const ojson& value) {
  return show_any(value);
}

std::string show_value(const nlohmann::json& value) {
  return show_any(value);
}

}  // namespace uringsim::config
