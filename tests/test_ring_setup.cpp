// The ring's setup flags are read and checked as io_uring_setup checks them (models/uring/ring_setup.hpp).
#include <catch2/catch.hpp>

#include <string>

#include "config/input_error.hpp"
#include "config/scenario.hpp"
#include "models/uring/kernel_config.hpp"
#include "models/uring/ring_setup.hpp"

using namespace uringsim;

namespace {
config::Scenario echo_with(const std::string& flags, const std::string& era = "6.x") {
  return config::load_scenario_text(
      R"({"name": "s", "kernel": {"era": ")" + era +
          R"("}, "workload": {"type": "echo", "connections": 1, "wait_nr": 4, "setup_flags": )" + flags +
          "}}",
      "s.json");
}
models::RingSetup setup_of(const config::Scenario& s, bool sqpoll = false) {
  return models::RingSetup::from(s, models::KernelConfig::from(s), sqpoll);
}
std::string refusal(const config::Scenario& s, bool sqpoll = false) {
  try {
    setup_of(s, sqpoll);
  } catch (const config::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("ring setup: the flags pick the task_work design, wait_nr is read") {
  CHECK(setup_of(echo_with("[]")).tw_mode() == models::TwMode::Signal);
  CHECK(setup_of(echo_with(R"(["coop_taskrun", "taskrun_flag"])")).tw_mode() == models::TwMode::Coop);
  const auto d = setup_of(echo_with(R"(["single_issuer", "defer_taskrun"])"));
  CHECK(d.tw_mode() == models::TwMode::Defer);
  CHECK(d.single_issuer);
  CHECK(d.wait_nr == 4);
}

TEST_CASE("ring setup: combinations the kernel refuses are errors naming the field") {
  CHECK_THAT(refusal(echo_with(R"(["defer_taskrun"])")),
             Catch::Contains("s.json: /workload/setup_flags") && Catch::Contains("needs \"single_issuer\""));
  CHECK_THAT(refusal(echo_with(R"(["taskrun_flag"])")), Catch::Contains("needs \"coop_taskrun\" or"));
  CHECK_THAT(refusal(echo_with(R"(["coop_taskrun"])"), true), Catch::Contains("SQPOLL ring refuses"));
  CHECK(refusal(echo_with(R"(["single_issuer"])"), true).empty());  // SQPOLL may be single-issuer
  CHECK_THAT(refusal(echo_with(R"(["coop_taskrun"])", "5.18")), Catch::Contains("era 5.18 has no"));
  CHECK_THAT(refusal(echo_with(R"(["single_issuer", "defer_taskrun"])", "5.16")),
             Catch::Contains("(6.0 / 6.1)"));
}

TEST_CASE("ring setup: a flag named twice is a schema error") {
  CHECK_THROWS_WITH(echo_with(R"(["coop_taskrun", "coop_taskrun"])"),
                    Catch::Contains("/workload/setup_flags/1") && Catch::Contains("expected each item once"));
}
