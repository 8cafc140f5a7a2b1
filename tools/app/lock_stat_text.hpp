#pragma once
// Lock statistics (results.json `locks`) in the layout of /proc/lock_stat (lock_stat version 0.4),
// so scripts written for the kernel's file read ours: one row per lock, times in µs, and each
// contended lock's top contention points (waiters' call sites) and contending points (holders').
#include <string>

#include <nlohmann/json.hpp>

namespace uringsim::app {

// Call sites have no address: the [<...>] column holds zeros, the symbol column the site's name.
std::string lock_stat_text(const nlohmann::json& locks);

}  // namespace uringsim::app
