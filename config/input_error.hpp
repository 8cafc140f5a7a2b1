#pragma once
// The one exception type for problems in user input (scenario files, --set, --variant).
#include <stdexcept>

namespace uringsim::config {

// what() is the complete message for the user; the CLI prints it and exits with status 2.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace uringsim::config
