#pragma once
// The results schema: the core keys every results.json has, simulated ("source": "simulation") or
// measured on the host ("source": "host"), and their consistency (docs/results-format.md). compare,
// sweep, report and twin rely on these; a host run whose results fail the check is a failed run.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace uringsim::analysis {

// Every problem found, one message each ("/window/seconds: expected a number > 0, got 0"); empty
// when the document is well-formed.
std::vector<std::string> check_results(const nlohmann::json& results);

}  // namespace uringsim::analysis
