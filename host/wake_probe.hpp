#pragma once
// How long a wake-up of an idle CPU takes right now: a few futex wake-ups from one CPU to another
// that idled 100 us first, timed from the waker's call to the woken thread running (shared
// clock), as calibrate times machine.wake_idle_ns. On a VM this is the vCPU's wake from halt, which
// the host's other tenants slow by several times for a while; the CPU speed probe
// (host/speed_probe.hpp) does not see that, since it times a core's adds. Recorded around every
// host run, so that a twin can say which runs a slow wake-up phase disturbed.
#include <optional>

#include <nlohmann/json.hpp>

#include "host/guard.hpp"

namespace uringsim::host {

struct WakeProbe {
  double one_way_ns = 0;  // median of the samples
  double min_ns = 0, max_ns = 0;
  int samples = 0;
  nlohmann::json to_json() const;
};

// 15 wake-ups from the first CPU this process may use to the second (~2 ms). nullopt with one CPU,
// or when a stop is requested meanwhile (the caller's guard then says why).
std::optional<WakeProbe> probe_idle_wake(const RunGuard& guard);

// The probe as run_info keeps it: null when there is none.
nlohmann::json wake_probe_json(const std::optional<WakeProbe>& p);

}  // namespace uringsim::host
