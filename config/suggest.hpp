#pragma once
// "did you mean" suggestions for misspelt keys, paths and names.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace uringsim::config {

// Optimal-string-alignment distance: Levenshtein plus adjacent transpositions, the commonest typo.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The closest candidate if it is close enough to be a plausible typo of word (first one on ties).
std::optional<std::string> closest(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace uringsim::config
