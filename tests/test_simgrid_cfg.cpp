// URINGSIM_SIMGRID_CFG: extra SimGrid options for the engine (sim/engine.cpp), e.g. another context
// factory for sanitizer runs. Results must not depend on how SimGrid switches between actors.
#include <catch2/catch.hpp>

#include "cli_helpers.hpp"

using namespace testing;
namespace fs = std::filesystem;

namespace {

const std::string kMm1 =
    source_path("scenarios/validation/mm1.json") + " --set duration_ms=20 --set warmup_ms=1";

}  // namespace

TEST_CASE("simgrid cfg: every context factory gives byte-identical results") {
  const auto dir = fresh_dir("simgrid-cfg-factories");
  std::string first;
  for (const char* factory : {"raw", "ucontext", "thread"}) {
    const auto out = dir / factory;
    const auto r = run_shell(std::string("URINGSIM_SIMGRID_CFG='contexts/factory:") + factory + "' " +
                             URINGSIM_EXE + " run " + kMm1 + " --quiet --out " + out.string());
    INFO(factory << ": " << r.output);
    REQUIRE(r.exit_code == 0);
    const std::string results = slurp(out / "results.json");
    REQUIRE_FALSE(results.empty());
    if (first.empty())
      first = results;
    else
      CHECK(results == first);
  }
}

TEST_CASE("simgrid cfg: a malformed item or an unknown factory is refused by name, writing nothing") {
  const auto dir = fresh_dir("simgrid-cfg-bad");
  const std::pair<const char*, const char*> cases[] = {
      {"contexts/factory", "is not NAME:VALUE"},
      {"contexts/factory:fibers", "unknown context factory \"fibers\""},
      {"no/such-option:1", "URINGSIM_SIMGRID_CFG"}};
  for (const auto& [value, needle] : cases) {
    const auto out = dir / "out";
    const auto r = run_shell(std::string("URINGSIM_SIMGRID_CFG='") + value + "' " + URINGSIM_EXE + " run " +
                             kMm1 + " --quiet --out " + out.string());
    INFO(value << ": " << r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find(needle) != std::string::npos);
    CHECK_FALSE(fs::exists(out / "results.json"));
  }
}
