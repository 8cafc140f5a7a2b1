// Catch's runner, then the test directories' clean-up: a passing run leaves nothing in the
// temporary directory; a failing one keeps its outputs to look at.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <system_error>

#include "cli_helpers.hpp"

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed == 0) {
    std::error_code ec;  // a directory a test removed itself is not an error
    for (const auto& d : testing::scratch_dirs()) std::filesystem::remove_all(d, ec);
  }
  return failed;
}
