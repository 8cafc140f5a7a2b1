#pragma once
// How a task_work kick lands right now: a few TWA_SIGNAL kicks from one CPU to a ring's task
// spinning in user space on the other, as calibrate times costs.ipi_delivery_ns (the task's spin
// loop stops this long after the sender's send() began, less a plain send()). On this project's
// VM that delivery drifts between about 9 and 10.5 us from one minute to the next, and an echo
// server's kicks per request follow it across a threshold (docs/validation.md, session 38); no
// other probe sees it. Recorded before every host run, so that a twin can say which runs it
// selected.
#include <optional>

#include <nlohmann/json.hpp>

#include "host/guard.hpp"

namespace uringsim::host {

struct KickProbe {
  double delivery_ns = 0;  // median over the kicks of (onset - plain send)
  double min_ns = 0, max_ns = 0;
  double send_extra_ns = 0;  // median of the sender's send() with the kick less without
  int samples = 0;
  nlohmann::json to_json() const;
};

// 30 kicks after 10 unrecorded ones (a few milliseconds). nullopt with one CPU, when the kernel
// refuses the ring, or when a stop is requested meanwhile (the caller's guard then says why).
std::optional<KickProbe> probe_kick(const RunGuard& guard);

// The probe as run_info keeps it: null when there is none.
nlohmann::json kick_probe_json(const std::optional<KickProbe>& p);

}  // namespace uringsim::host
