#pragma once
// The cost table: every CPU cost and latency the models use, keyed by name (models/costs.json).
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace uringsim::config {

class CostTable {
 public:
  // The same as defaults(), so a default-constructed Scenario has a usable table.
  CostTable();

  // The entries of the embedded models/costs.json, each at its default.
  static CostTable defaults();

  // std::logic_error on an unknown key: keys come from code, so that is a programming error.
  double get(std::string_view key) const;
  nlohmann::json values() const;    // {key: value}, keys sorted
  nlohmann::json describe() const;  // {key: {value, default, unit, doc, source}}
  std::vector<std::string> keys() const;
  // std::logic_error on an unknown key; the loader checks user keys before calling this.
  void set(const std::string& key, double value);

 private:
  explicit CostTable(std::nullptr_t) {}  // empty; only defaults() builds from it

  struct Entry {
    double value;
    double default_value;
    std::string unit, doc, source;
  };
  // Sorted map: values() and keys() come out in a stable order.
  std::map<std::string, Entry, std::less<>> entries_;
};

}  // namespace uringsim::config
