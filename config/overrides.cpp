#include "config/overrides.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/input_error.hpp"
#include "config/json_text.hpp"
#include "config/scenario.hpp"
#include "config/suggest.hpp"

namespace uringsim::config {

namespace {

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = path.find('.', start);
    out.emplace_back(
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return out;
    start = dot + 1;
  }
}

// The first `count` segments, joined by dots.
std::string join_path(const std::vector<std::string>& segments, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += (i ? "." : "") + segments[i];
  return out;
}

// The variants section holds overrides; overriding it from an override would be circular.
bool is_variants_map(const Spec& spec) {
  return spec.type == SpecType::Map && spec.values->type == SpecType::Overrides;
}

// Text nested too deeply for JSON (config::kMaxJsonNesting) is bare text too.
template <typename Json>
Json parse_loose(std::string_view text) {
  if (nesting_too_deep_at(text)) return Json(std::string(text));
  Json value = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return Json(std::string(text));
  return value;
}

// Sets doc at pointer, creating absent objects on the way. (json_pointer would create an array
// for a token "0", but every step of an override path is an object key.)
void assign(ojson& doc, const std::string& pointer, ojson value) {
  ojson* node = &doc;
  for (std::size_t start = 1; start <= pointer.size();) {
    std::size_t end = std::min(pointer.find('/', start), pointer.size());
    std::string token;
    for (std::size_t i = start; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end) {
        token += pointer[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    node = &(*node)[token];
    start = end + 1;
  }
  *node = std::move(value);
}

}  // namespace

nlohmann::json parse_set_value(std::string_view text) {
  return parse_loose<nlohmann::json>(text);
}

OverrideTarget resolve_override_path(const Schema& schema, std::string_view path, const ojson& doc) {
  std::vector<std::string> segments = split_path(path);
  if (std::any_of(segments.begin(), segments.end(), [](const std::string& s) { return s.empty(); }))
    throw InputError("invalid path (expected field names joined by dots, e.g. machine.cores)");
  const Spec* spec = &schema.root();
  std::string pointer;
  const ojson* here = &doc;  // the document at `pointer`, nullptr once that part is absent
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const std::string& seg = segments[i];
    std::string prefix = join_path(segments, i);
    const Spec* next = nullptr;
    std::vector<std::string> candidates;
    switch (spec->type) {
      case SpecType::Object:
        if (const Field* f = spec->field(seg)) next = f->spec.get();
        for (const auto& f : spec->fields) candidates.push_back(f.name);
        break;
      case SpecType::Union: {
        if (seg == spec->tag) {
          next = spec->tag_spec.get();
          break;
        }
        // Prefer the variant the document already selects; with none, any variant's field.
        const UnionVariant* selected = nullptr;
        if (here && here->is_object())
          if (auto tag = here->find(spec->tag); tag != here->end() && tag->is_string())
            selected = spec->variant(tag->get<std::string>());
        candidates.push_back(spec->tag);
        for (const auto& v : spec->variants) {
          if (selected && &v != selected) continue;
          for (const auto& f : v.fields) {
            if (!next && f.name == seg) next = f.spec.get();
            if (std::find(candidates.begin(), candidates.end(), f.name) == candidates.end())
              candidates.push_back(f.name);
          }
        }
        break;
      }
      case SpecType::Costs:
        candidates = schema.costs().keys();
        if (std::find(candidates.begin(), candidates.end(), seg) != candidates.end())
          next = spec->values.get();
        break;
      case SpecType::Map:
        if (is_variants_map(*spec)) throw InputError(fmt::format("\"{}\" cannot be overridden", prefix));
        next = spec->values.get();
        break;
      default:
        throw InputError(fmt::format("\"{}\" is not an object (expected {}): set it as a whole", prefix,
                                     expected_text(*spec)));
    }
    if (!next) {
      auto guess = closest(seg, candidates);
      if (!guess) throw InputError("unknown field");
      // Suggest the whole path, keeping what follows the misspelt name.
      std::vector<std::string> fixed = segments;
      fixed[i] = *guess;
      throw InputError(
          fmt::format("unknown field (did you mean {}?)", ojson(join_path(fixed, fixed.size())).dump()));
    }
    pointer = pointer_append(pointer, seg);
    if (here && here->is_object()) {
      auto it = here->find(seg);
      here = it == here->end() ? nullptr : &*it;
    } else {
      here = nullptr;
    }
    spec = next;
  }
  if (is_variants_map(*spec)) throw InputError(fmt::format("\"{}\" cannot be overridden", path));
  return {spec, pointer};
}

void apply_variant(const Schema& schema, ojson& doc, const ojson& overrides, const std::string& source,
                   const std::string& variant_pointer) {
  for (const auto& [path, value] : overrides.items()) {
    std::string at = pointer_append(variant_pointer, path);
    OverrideTarget target;
    try {
      target = resolve_override_path(schema, path, doc);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}: {}", source, at, e.what()));
    }
    validate(schema, *target.spec, value, at, source);
    assign(doc, target.pointer, value);
  }
}

void apply_set(const Schema& schema, ojson& doc, const std::string& item) {
  std::size_t eq = item.find('=');
  if (eq == std::string::npos || eq == 0) throw InputError("--set " + item + ": expected dotted.path=value");
  std::string path = item.substr(0, eq);
  std::string text = item.substr(eq + 1);
  // The value as messages show it: a long one is shortened, as show_value does.
  constexpr std::size_t kShown = 80;
  std::string label =
      "--set " + path + "=" + (text.size() > kShown ? text.substr(0, kShown - 3) + "..." : text);
  OverrideTarget target;
  try {
    target = resolve_override_path(schema, path, doc);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", label, e.what()));
  }
  if (target.spec->type != SpecType::String)
    if (auto at = nesting_too_deep_at(text))
      throw InputError(
          fmt::format("{}: invalid JSON at {} of the value: {}", label, *at, nesting_too_deep_reason()));
  ojson value = parse_loose<ojson>(text);
  // kernel.era=5.15 means the string "5.15": a string field takes the text as written.
  if (target.spec->type == SpecType::String && !value.is_string()) value = text;
  validate(schema, *target.spec, value, target.pointer, label);
  assign(doc, target.pointer, std::move(value));
}

}  // namespace uringsim::config
