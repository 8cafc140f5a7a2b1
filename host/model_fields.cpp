#include "host/model_fields.hpp"

#include <fmt/format.h>

#include <initializer_list>
#include <stdexcept>
#include <string_view>

#include "config/cost_table.hpp"
#include "config/input_error.hpp"
#include "config/schema.hpp"

namespace uringsim::host {
namespace {

// The spec of a field below the root, by field names (objects only).
const config::Spec& spec_at(std::initializer_list<std::string_view> names) {
  const config::Spec* s = &config::Schema::get().root();
  for (const auto name : names) {
    const config::Field* f = s->field(name);
    if (!f) throw std::logic_error(fmt::format("schema has no field \"{}\"", name));
    s = f->spec.get();
  }
  return *s;
}

nlohmann::json default_of(const config::Spec& spec) {
  if (!spec.default_value) throw std::logic_error("schema field without a default");
  return nlohmann::json::parse(spec.default_value->dump());
}

}  // namespace

std::vector<ModelField> model_only_fields(const config::Scenario& s, const MachineInfo& m) {
  std::vector<ModelField> out;
  const std::string own_kernel = fmt::format("it runs its own kernel, {}", m.kernel_release);
  auto add = [&](const std::string& path, std::string why) {
    out.push_back({path, s.at(path), std::move(why)});
  };
  // A knob that must keep its schema default.
  auto at_default = [&](std::initializer_list<std::string_view> names, const std::string& why) {
    std::string path;
    for (const auto n : names) path.append("/").append(n);
    if (s.at(path) != default_of(spec_at(names))) add(path, why);
  };

  const std::string era = s.at("/kernel/era").get<std::string>();
  if (era != "6.x" || m.kernel_major < 6) add("/kernel/era", own_kernel);
  const std::string async_mode = s.at("/kernel/async_mode").get<std::string>();
  if (async_mode != "auto" && async_mode != "hybrid")
    add("/kernel/async_mode",
        own_kernel + ", whose io-wq workers try non-blocking and then arm poll (hybrid)");
  if (s.at("/kernel/forced_reissue").get<std::string>() != "auto")
    add("/kernel/forced_reissue",
        own_kernel + ", which decides where a poll-woken IOSQE_ASYNC request is re-issued");
  if (s.at("/kernel/epoll_wake").get<std::string>() != "auto")
    add("/kernel/epoll_wake", own_kernel + ", whose epoll decides how a socket's data wakes a sleeper");
  if (s.at("/kernel/apoll_ready").get<std::string>() != "auto")
    add("/kernel/apoll_ready", own_kernel + ", which decides how a ready poll is re-issued");
  if (s.at("/kernel/iowq/lock").get<std::string>() != "auto")
    add("/kernel/iowq/lock", own_kernel + ", with its own io-wq locking");
  at_default({"kernel", "iowq", "idle_timeout_ms"}, own_kernel + ": its io-wq idle timeout is compiled in");
  at_default({"kernel", "iowq", "create_errors"}, "worker-creation fault injection exists only in the model");
  at_default({"kernel", "sqpoll", "deputy"}, "the SQPOLL deputy (IORING_ENTER_SQ_DEPUTY) was never merged");
  at_default({"kernel", "sqpoll", "deputy_under_iopoll"},
             "the SQPOLL deputy (IORING_ENTER_SQ_DEPUTY) was never merged");
  at_default({"kernel", "sqpoll", "submit_cap"},
             own_kernel + ": IORING_SQPOLL_CAP_ENTRIES_VALUE is compiled in");
  at_default({"kernel", "sqpoll", "tw_cap"}, own_kernel + ": IORING_TW_CAP_ENTRIES_VALUE is compiled in");

  const auto defaults = config::CostTable::defaults();
  for (const auto& [key, value] : s.at("/costs").items())
    if (value.get<double>() != defaults.get(key))
      add("/costs/" + key, "the cost table drives the model only; the host's costs are its own");

  for (const auto& f : spec_at({"device"}).fields)
    if (s.at("/device/" + f.name) != default_of(*f.spec))
      add("/device/" + f.name, "the simulated NVMe drive is the model's; the host uses real hardware");

  if (s.at("/machine/cores").get<int>() != m.nproc)
    add("/machine/cores", fmt::format("this machine has {} online CPUs", m.nproc));

  const auto& w = s.at("/workload");
  if (w.at("type") == "echo" && w.at("client_placement") == "remote")
    add("/workload/client_placement", "host clients are local threads on this machine");
  return out;
}

nlohmann::json check_model_fields(const config::Scenario& s, const MachineInfo& m, bool ignore) {
  return check_model_fields(s, model_only_fields(s, m), ignore);
}

nlohmann::json check_model_fields(const config::Scenario& s, const std::vector<ModelField>& fields,
                                  bool ignore) {
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& f : fields) listed.push_back({{"path", f.path}, {"value", f.value}, {"why", f.why}});
  if (ignore || fields.empty()) return listed;
  std::string msg;
  for (const auto& f : fields)
    msg += fmt::format("{}{}: {}: {} is a model-only field the host cannot honour ({})",
                       msg.empty() ? "" : "\n", s.source, f.path, f.value.dump(), f.why);
  msg += fields.size() == 1 ? "; --ignore-model-fields runs anyway and lists it in run_info.json"
                            : "; --ignore-model-fields runs anyway and lists them in run_info.json";
  throw config::InputError(msg);
}

}  // namespace uringsim::host
