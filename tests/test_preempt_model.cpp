// The kernel's preemption model as calibrate reads it (host/preempt_model.hpp) and as a calibration
// file carries it to a scenario's machine.preempt (config/calibration.hpp).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "config/calibration.hpp"
#include "config/input_error.hpp"
#include "host/preempt_model.hpp"

using namespace uringsim;

TEST_CASE("preempt model: debugfs names the live choice in parentheses") {
  CHECK(host::parse_debugfs_preempt("none voluntary (full) lazy\n") == "full");
  CHECK(host::parse_debugfs_preempt("(none) voluntary full\n") == "none");
  CHECK(host::parse_debugfs_preempt("none voluntary full\n").empty());
}

TEST_CASE("preempt model: preempt= on the command line, only as a whole word") {
  CHECK(host::parse_cmdline_preempt("quiet preempt=voluntary panic=1") == "voluntary");
  CHECK(host::parse_cmdline_preempt("preempt=none") == "none");
  CHECK(host::parse_cmdline_preempt("quiet nopreempt=full").empty());
  CHECK(host::parse_cmdline_preempt("preempt=sometimes").empty());
}

TEST_CASE("preempt model: the kernel config's choice, and whether preempt= can override it") {
  bool dynamic = false;
  CHECK(host::parse_config_preempt(
            "CONFIG_PREEMPT_NONE=y\n# CONFIG_PREEMPT is not set\nCONFIG_PREEMPT_DYNAMIC=y\n", &dynamic) ==
        "none");
  CHECK(dynamic);
  CHECK(host::parse_config_preempt("CONFIG_PREEMPT_VOLUNTARY=y\n", &dynamic) == "voluntary");
  CHECK(!dynamic);
  CHECK(host::parse_config_preempt("CONFIG_PREEMPT=y\nCONFIG_PREEMPT_COUNT=y\n") == "full");
  CHECK(host::parse_config_preempt("CONFIG_PREEMPT_RT=y\nCONFIG_PREEMPT=y\n") == "full");
  CHECK(host::parse_config_preempt("# CONFIG_PREEMPT_NONE is not set\n").empty());
}

namespace {
std::string calibration_with(const nlohmann::json& preempt) {
  nlohmann::json c = {{"format", "uringsim-calibration/1"},
                      {"kernel_release", "6.18.0-test"},
                      {"cpu_model", "Test CPU"},
                      {"date", "2025-01-31T12:00:00Z"},
                      {"quick", false},
                      {"machine",
                       {{"cores", 2},
                        {"ghz", 2.0},
                        {"ghz_source", "cpu MHz"},
                        {"wake_idle_ns", nullptr},
                        {"wake_busy_ns", nullptr},
                        {"idle_exit_ns", nullptr},
                        {"halt_poll_ns", nullptr}}},
                      {"costs", nlohmann::json::object()},
                      {"defaults_kept", nlohmann::json::array()}};
  if (!preempt.is_discarded()) c["machine"]["preempt"] = preempt;
  return c.dump();
}
}  // namespace

TEST_CASE(
    "preempt model: a calibration carries it, an older one without it still loads, a bad one is refused") {
  CHECK(*config::parse_calibration_text(calibration_with("none"), "cal.json").machine.preempt == "none");
  CHECK(!config::parse_calibration_text(calibration_with(nlohmann::json::value_t::discarded), "cal.json")
             .machine.preempt);
  CHECK(!config::parse_calibration_text(calibration_with(nullptr), "cal.json").machine.preempt);
  try {
    config::parse_calibration_text(calibration_with("lazy"), "cal.json");
    FAIL("a model the simulator lacks was accepted");
  } catch (const config::InputError& e) {
    CHECK_THAT(e.what(), Catch::Contains("/machine/preempt"));
  }
}
