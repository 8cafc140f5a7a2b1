#include "config/cost_table.hpp"

#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "uringsim_data.hpp"

namespace uringsim::config {

namespace {

// Reads one entry strictly: a malformed cost table is a bug in the repository, not user input.
template <typename T>
T entry_field(const nlohmann::json& entry, const std::string& key, const char* field) {
  auto it = entry.find(field);
  bool ok = it != entry.end() && (std::is_same_v<T, double> ? it->is_number() : it->is_string());
  if (!ok)
    throw std::logic_error(fmt::format("models/costs.json: entry \"{}\": bad or missing \"{}\"", key, field));
  return it->get<T>();
}

}  // namespace

CostTable::CostTable() : CostTable(defaults()) {}

CostTable CostTable::defaults() {
  // Parsed once: every scenario load starts from a copy of it.
  static const CostTable table = [] {
    CostTable t{nullptr};
    auto text = nlohmann::json::parse(data::costs());
    if (!text.contains("entries") || !text["entries"].is_object())
      throw std::logic_error("models/costs.json: no \"entries\" object");
    for (const auto& [key, entry] : text["entries"].items()) {
      double def = entry_field<double>(entry, key, "default");
      t.entries_.emplace(key, Entry{def, def, entry_field<std::string>(entry, key, "unit"),
                                    entry_field<std::string>(entry, key, "doc"),
                                    entry_field<std::string>(entry, key, "source")});
    }
    return t;
  }();
  return table;
}

double CostTable::get(std::string_view key) const {
  auto it = entries_.find(key);
  if (it == entries_.end()) throw std::logic_error(fmt::format("cost table has no entry \"{}\"", key));
  return it->second.value;
}

nlohmann::json CostTable::values() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, e] : entries_) out[key] = e.value;
  return out;
}

nlohmann::json CostTable::describe() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, e] : entries_)
    out[key] = {{"value", e.value},
                {"default", e.default_value},
                {"unit", e.unit},
                {"doc", e.doc},
                {"source", e.source}};
  return out;
}

std::vector<std::string> CostTable::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : entries_) out.push_back(entry.first);
  return out;
}

void CostTable::set(const std::string& key, double value) {
  auto it = entries_.find(key);
  if (it == entries_.end()) throw std::logic_error(fmt::format("cost table has no entry \"{}\"", key));
  it->second.value = value;
}

}  // namespace uringsim::config
