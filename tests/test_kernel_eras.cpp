// The era table (models/uring/era.hpp) is the one place where eras differ: the schema's era
// names are its rows, the page that explains it shows it as it is, a scenario's `auto` knobs
// follow it, and tests build their kernels from it.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "config/scenario.hpp"
#include "models/uring/era.hpp"
#include "models/uring/kernel_config.hpp"

namespace fs = std::filesystem;
using namespace uringsim;
using testing::slurp;

TEST_CASE("eras: the schema's era names are the era table's rows, in order") {
  const auto schema =
      nlohmann::json::parse(slurp(fs::path(URINGSIM_SOURCE_DIR) / "scenarios" / "schema.json"));
  const auto names = schema.at(nlohmann::json::json_pointer("/root/fields/kernel/fields/era/enum"));
  REQUIRE(names.size() == models::eras().size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(names[i].get<std::string>() == models::eras()[i].name);
  CHECK_THROWS_AS(models::era("6.1"), std::invalid_argument);
}

TEST_CASE("eras: docs/models/kernel-eras.md shows the era table as it is") {
  const std::string page = slurp(fs::path(URINGSIM_SOURCE_DIR) / "docs" / "models" / "kernel-eras.md");
  INFO("paste models::eras_markdown() into the page in place of its era table:\n" << models::eras_markdown());
  CHECK(page.find(models::eras_markdown()) != std::string::npos);
}

TEST_CASE("eras: a scenario's auto knobs follow its era's row, a knob it sets wins") {
  for (const auto& row : models::eras()) {
    INFO(row.name);
    const auto s = config::load_scenario_text(
        std::string(R"({"name": "e", "workload": {"type": "nop"}, "kernel": {"era": ")") + row.name +
            R"("}})",
        "test");
    const auto k = models::KernelConfig::from(s);
    const auto t = models::KernelConfig::for_era(row.name);
    CHECK(k.async_mode == row.async_mode);
    CHECK(k.apoll_ready == row.apoll_ready);
    CHECK(k.iowq_lock == row.iowq_lock);
    CHECK(k.iowq_rcu_wake == row.iowq_rcu_wake);
    CHECK(k.tw_on_enter == row.tw_on_enter);
    CHECK(k.poll_once == row.poll_once);
    CHECK(k.forced_reissue_iowq == row.forced_reissue_iowq);
    CHECK(k.workers_inherit_affinity == row.workers_inherit_affinity);
    CHECK(k.issue_flags_split == row.unlocked_flag);
    CHECK((k.sq_idle_jiffies > 0) == row.sq_idle_in_jiffies);
    CHECK(k.epoll_wake_sync == row.epoll_wake_sync);
    CHECK(t.async_mode == k.async_mode);
    CHECK(t.iowq_lock == k.iowq_lock);
  }
  const auto set = config::load_scenario_text(
      R"({"name": "e", "workload": {"type": "nop"}, "kernel": {"era": "5.15", "async_mode": "hybrid", "iowq": {"lock": "split"}, "epoll_wake": "sync"}})",
      "test");
  const auto k = models::KernelConfig::from(set);
  CHECK(k.async_mode == models::AsyncMode::Hybrid);
  CHECK(k.issue_flags_split);  // the merged hybrid mode brought IO_URING_F_UNLOCKED with it
  CHECK(k.iowq_lock == models::IoWqLock::Split);
  CHECK(k.epoll_wake_sync);
  CHECK(k.apoll_ready == models::ApollReady::Inline);  // not set: still 5.15's
}
