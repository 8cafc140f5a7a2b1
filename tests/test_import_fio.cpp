// `uringsim import-fio`: fio job files and command lines into scenarios (docs/import-fio.md).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "cli_helpers.hpp"
#include "config/scenario.hpp"
#include "models/model.hpp"
#include "tools/app/fio_options.hpp"
#include "tools/app/fio_to_scenario.hpp"

using namespace uringsim::app::fio;
using Catch::Matchers::Contains;
using uringsim::config::InputError;
namespace fs = std::filesystem;

namespace {

// Seed 001's fio line as the patch mail writes it, placeholders included.
const std::string kSeedLine = R"(./run_fio.sh
fio \
--ioengine=io_uring --sqthread_poll=1 --hipri=1 --thread=1 --bs=4k \
--direct=1 --rw=randread --time_based=1 --runtime=300 \
--group_reporting=1 --filename=/dev/nvme1n1 --sqthread_poll_cpu=30 \
--randrepeat=0 --cpus_allowed=35 --iodepth=128 --rate_iops=${1} \
--io_sq_thread_idle=${2}
)";

Imported import_file(const std::string& text, ImportOptions o = {}) {
  if (o.source.empty()) o.source = "job.fio";
  return to_scenario(parse_job_file(text, o.source), o);
}

Imported import_cmdline(const std::string& text, const Vars& vars = {}, ImportOptions o = {}) {
  o.source = "--cmdline";
  return to_scenario(parse_command_line(text, vars), o);
}

// The message of the InputError that f throws ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("import-fio: the seed's command line gives the sqpoll-deputy workload") {
  const auto im = import_cmdline(kSeedLine, {{"1", "2000"}, {"2", "110"}});
  CHECK(im.warnings.empty());
  const auto& s = im.scenario;
  const nlohmann::ordered_json expected = {
      {"type", "fio"},         {"rw", "randread"},        {"rwmixread", 50},    {"bs_bytes", 4096},
      {"iodepth", 128},        {"rate_iops", 2000},       {"direct", true},     {"hipri", true},
      {"sqthread_poll", true}, {"sqthread_poll_cpu", 30}, {"cpus_allowed", 35}, {"numjobs", 1}};
  CHECK(s["workload"] == expected);
  CHECK(s["kernel"]["sqpoll"]["idle_us"] == 110);  // the patched option is in microseconds
  CHECK(s["duration_ms"] == 300000);               // runtime=300 is seconds
  CHECK(s["duration_ms"].is_number_integer());     // written 300000, not 300000.0
  CHECK(s["machine"]["cores"] == 36);              // CPUs 30 and 35 exist
  CHECK(s["name"] == "fio");
  CHECK_THAT(s["description"].get<std::string>(), Contains("filename=/dev/nvme1n1"));
  // And it is a valid scenario for run/validate.
  const auto loaded = uringsim::config::load_scenario_text(s.dump(), "imported");
  CHECK(loaded.at("/workload/iodepth") == 128);
  CHECK(loaded.at("/kernel/sqpoll/idle_us") == 110);
}

TEST_CASE("import-fio: a placeholder without --var is an error telling how to fill it") {
  const auto msg = error_of([] { import_cmdline(kSeedLine, {{"1", "2000"}}); });
  CHECK_THAT(msg, Contains("--io_sq_thread_idle"));
  CHECK_THAT(msg, Contains("${2}"));
  CHECK_THAT(msg, Contains("--var 2=VALUE"));
}

TEST_CASE("import-fio: job file with [global], a job overriding it, comments and units") {
  const std::string text =
      "; fio job for the simulator\n"
      "# a second comment style\n"
      "[global]\n"
      "ioengine=io_uring\n"
      "bs=4k\n"
      "iodepth = 32   ; trailing comment\n"
      "direct=1\n"
      "runtime=2m\n"
      "ramp_time=500ms\n"
      "\n"
      "[reader]\n"
      "iodepth=8\n"
      "rw=randrw\n"
      "rwmixwrite=30\n"
      "hipri\n";
  const auto im = import_file(text);
  const auto& w = im.scenario["workload"];
  CHECK(w["iodepth"] == 8);  // the job's value wins over [global]
  CHECK(w["bs_bytes"] == 4096);
  CHECK(w["direct"] == true);
  CHECK(w["rw"] == "randrw");
  CHECK(w["rwmixread"] == 70);
  CHECK(w["hipri"] == true);  // a bare flag means on
  CHECK(w["sqthread_poll"] == false);
  CHECK(w["numjobs"] == 1);
  CHECK(im.scenario["duration_ms"] == 120000);
  CHECK(im.scenario["warmup_ms"] == 500);
  CHECK(im.scenario["name"] == "reader");
  CHECK(im.scenario["machine"]["cores"] == 4);
  CHECK_FALSE(im.scenario.contains("kernel"));
  uringsim::config::load_scenario_text(im.scenario.dump(), "imported");
}

TEST_CASE("import-fio: a later [global] only applies to the jobs after it") {
  const auto jobs = parse_job_file("[global]\nbs=4k\n[a]\n[global]\nbs=8k\n[b]\n", "f.fio");
  REQUIRE(jobs.size() == 2);
  REQUIRE(jobs[0].options.size() == 1);
  CHECK(*jobs[0].options[0].value == "4k");
  REQUIRE(jobs[1].options.size() == 2);
  CHECK(*jobs[1].options[1].value == "8k");
  CHECK(jobs[1].options[1].where == "f.fio:5");
}

TEST_CASE("import-fio: sizes follow fio (kb_base 1024 by default, IEC suffixes the other way)") {
  CHECK(parse_size("512", 1024, "bs") == 512);
  CHECK(parse_size("4k", 1024, "bs") == 4096);
  CHECK(parse_size("4K", 1024, "bs") == 4096);
  CHECK(parse_size("4kb", 1024, "bs") == 4096);
  CHECK(parse_size("1m", 1024, "bs") == 1048576);
  CHECK(parse_size("2G", 1024, "bs") == 2147483648ull);
  CHECK(parse_size("0x10", 1024, "bs") == 16);
  CHECK(parse_size("4KiB", 1024, "bs") == 4000);  // fio's compatibility mode
  CHECK(parse_size("4KiB", 1000, "bs") == 4096);
  CHECK(parse_size("4k", 1000, "bs") == 4000);
  CHECK_THAT(error_of([] { parse_size("4q", 1024, "job.fio:3: bs"); }), Contains("job.fio:3: bs"));
  CHECK_THAT(error_of([] { parse_size("k", 1024, "bs"); }), Contains("expected a size"));
  CHECK_THAT(error_of([] { parse_size("-4k", 1024, "bs"); }), Contains("expected a size"));
  CHECK_THAT(error_of([] { parse_size("99999999999p", 1024, "bs"); }), Contains("too large"));

  // kb_base in the job changes how bs is read.
  const auto im = import_file("[j]\nioengine=io_uring\nkb_base=1000\nbs=4KiB\n");
  CHECK(im.scenario["workload"]["bs_bytes"] == 4096);
}

TEST_CASE("import-fio: times follow fio (runtime in seconds unless suffixed)") {
  CHECK(parse_time_us("300", 1e6, "runtime") == 300e6);
  CHECK(parse_time_us("300s", 1e6, "runtime") == 300e6);
  CHECK(parse_time_us("5m", 1e6, "runtime") == 300e6);
  CHECK(parse_time_us("2h", 1e6, "runtime") == 7200e6);
  CHECK(parse_time_us("1d", 1e6, "runtime") == 86400e6);
  CHECK(parse_time_us("500ms", 1e6, "runtime") == 500e3);
  CHECK(parse_time_us("500msec", 1e6, "runtime") == 500e3);
  CHECK(parse_time_us("10us", 1e6, "runtime") == 10);
  CHECK(parse_time_us("10", 1, "idle") == 10);
  CHECK_THAT(error_of([] { parse_time_us("10sec", 1e6, "runtime"); }), Contains("unknown time suffix"));
  CHECK_THAT(error_of([] { parse_time_us("1.5s", 1e6, "runtime"); }), Contains("unknown time suffix"));
  CHECK_THAT(error_of([] { parse_time_us("soon", 1e6, "runtime"); }), Contains("expected a time"));
}

TEST_CASE("import-fio: command lines are split like a shell") {
  CHECK(split_shell_words("fio --a='x y' --b=\"p \\\"q\\\"\" c\\ d \\\n--e") ==
        std::vector<std::string>{"fio", "--a=x y", "--b=p \"q\"", "c d", "--e"});
  CHECK_THAT(error_of([] { split_shell_words("fio --name='oops"); }), Contains("unterminated single quote"));
  CHECK_THAT(error_of([] { split_shell_words("fio --name=\"oops"); }), Contains("unterminated double quote"));
  CHECK_THAT(error_of([] { split_shell_words("fio --bs=4k \\"); }), Contains("trailing backslash"));
}

TEST_CASE("import-fio: command line jobs: globals before --name, `--key value`, launcher words skipped") {
  const auto jobs = parse_command_line("sudo /usr/bin/fio --bs 8k --name=a --iodepth=4 --name=b --hipri");
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].name == "a");
  REQUIRE(jobs[0].options.size() == 2);
  CHECK(jobs[0].options[0].key == "bs");
  CHECK(*jobs[0].options[0].value == "8k");
  CHECK(jobs[0].options[1].key == "iodepth");
  REQUIRE(jobs[1].options.size() == 2);
  CHECK(jobs[1].options[1].key == "hipri");
  CHECK_FALSE(jobs[1].options[1].value);
  CHECK_THAT(error_of([] { parse_command_line("job.fio --bs=4k"); }),
             Contains("unexpected argument \"job.fio\""));
  CHECK_THAT(error_of([] { parse_command_line("fio --bs=4k stray"); }),
             Contains("unexpected argument \"stray\""));
  CHECK_THAT(error_of([] { parse_command_line("fio --bs="); }), Contains("--cmdline option --bs: no value"));
}

TEST_CASE("import-fio: an unsupported option is an error naming it and its line") {
  const std::string text = "[global]\nioengine=io_uring\n[j]\nfsync=1\nbs=4k\nverify=crc32c\n";
  const auto msg = error_of([&] { import_file(text); });
  CHECK_THAT(msg, Contains("fsync (job.fio:4)"));
  CHECK_THAT(msg, Contains("verify (job.fio:6)"));
  CHECK_THAT(msg, Contains("--lenient"));
  // Real fio has no sqthread_poll_idle; it is not silently taken for io_sq_thread_idle.
  CHECK_THAT(error_of([] { import_cmdline("fio --ioengine=io_uring --sqthread_poll_idle=10"); }),
             Contains("sqthread_poll_idle (--cmdline option --sqthread_poll_idle)"));
}

TEST_CASE("import-fio: --lenient warns about every ignored option and still imports") {
  ImportOptions o;
  o.lenient = true;
  const auto im = import_file("[global]\nioengine=io_uring\nfsync=1\n[j]\nbs=8k\nverify=crc32c\n", o);
  REQUIRE(im.warnings.size() == 2);
  CHECK_THAT(im.warnings[0], Contains("fsync (job.fio:3)"));
  CHECK_THAT(im.warnings[1], Contains("verify (job.fio:6)"));
  CHECK(im.scenario["workload"]["bs_bytes"] == 8192);
  CHECK_THAT(im.scenario["description"].get<std::string>(), Contains("2 fio option(s) ignored"));
}

TEST_CASE("import-fio: malformed job files name the line") {
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\nbs 4k\n"); }),
             Contains("job.fio:3: malformed line \"bs 4k\""));
  CHECK_THAT(error_of([] { import_file("[j\nioengine=io_uring\n"); }),
             Contains("job.fio:1: malformed section"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\nbs=\n"); }),
             Contains("job.fio:3: option bs has no value"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\niodepth=deep\n"); }),
             Contains("job.fio:3: iodepth: expected a size"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\nruntime\n"); }),
             Contains("job.fio:3: option runtime needs a value"));
  CHECK_THAT(error_of([] { import_file("bs=4k\n[j]\n"); }),
             Contains("job.fio:1: option bs comes before any section"));
  CHECK_THAT(error_of([] { import_file("[global]\nioengine=io_uring\n"); }), Contains("no jobs defined"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\ndirect=2\n"); }),
             Contains("job.fio:3: direct: expected 0 or 1"));
}

TEST_CASE("import-fio: engines and values the simulator does not model are errors") {
  CHECK_THAT(error_of([] { import_file("[j]\nbs=4k\n"); }), Contains("no ioengine"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=libaio\n"); }),
             Contains("ioengine=libaio is not simulated"));
  ImportOptions lenient;
  lenient.lenient = true;  // lenient ignores unknown options, never another engine
  CHECK_THAT(error_of([&] { import_file("[j]\nioengine=libaio\n", lenient); }), Contains("libaio"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\nrw=rw\n"); }),
             Contains("\"rw\" is not modelled"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\ncpus_allowed=0-3\n"); }),
             Contains("CPU lists and ranges"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\nbs=4k,8k\n"); }),
             Contains("separate read/write values"));
  CHECK(import_file("[j]\nioengine=io_uring\nbs=4k,4k\n").scenario["workload"]["bs_bytes"] == 4096);
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\nrw=randrw\nrate_iops=100\n"); }),
             Contains("job.fio:4"));
}

TEST_CASE("import-fio: several jobs: identical ones add up, different ones need --job") {
  const std::string same = "[global]\nioengine=io_uring\nrw=randread\n[a]\nnumjobs=2\n[b]\nname=other\n";
  CHECK(import_file(same).scenario["workload"]["numjobs"] == 3);

  const std::string diff = "[global]\nioengine=io_uring\n[a]\nbs=4k\n[b]\nbs=64k\n";
  const auto msg = error_of([&] { import_file(diff); });
  CHECK_THAT(msg, Contains("--job NAME"));
  CHECK_THAT(msg, Contains("jobs: a, b"));
  ImportOptions pick;
  pick.job = "b";
  const auto im = import_file(diff, pick);
  CHECK(im.scenario["workload"]["bs_bytes"] == 65536);
  CHECK(im.scenario["name"] == "b");
  pick.job = "c";
  CHECK_THAT(error_of([&] { import_file(diff, pick); }), Contains("no job named \"c\""));
}

TEST_CASE("import-fio: the CLI writes a loadable file, or nothing and exit 2") {
  using testing::run_cli;
  const auto dir = testing::fresh_dir("import-fio");
  {
    std::ofstream f(dir / "seed.fio");
    f << "[global]\nioengine=io_uring\nsqthread_poll=1\nsqthread_poll_cpu=7\nio_sq_thread_idle=50\n"
         "[seed]\nrw=randread\nbs=4k\niodepth=16\nruntime=20ms\n";
  }
  const auto out = dir / "out.json";
  auto r = run_cli("import-fio " + (dir / "seed.fio").string() + " -o " + out.string() + " --name mine");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto sc = uringsim::config::load_scenario_file(out.string());
  CHECK(sc.at("/name") == "mine");
  CHECK(sc.at("/machine/cores") == 8);
  CHECK(sc.at("/duration_ms") == 20);
  CHECK(sc.at("/workload/sqthread_poll_cpu") == 7);
  CHECK(sc.at("/kernel/sqpoll/idle_us") == 50);

  // The seed line through --cmdline and --var, to standard output.
  r = testing::run_shell(
      std::string(URINGSIM_EXE) + " import-fio --var 1=2000 --var 2=110 --cmdline '" + kSeedLine + "'",
      /*with_stderr=*/false);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.output)["workload"]["rate_iops"] == 2000);

  // Errors: exit 2, a message naming the line, and no file.
  {
    std::ofstream f(dir / "bad.fio");
    f << "[j]\nioengine=io_uring\nfsync=1\n";
  }
  const auto bad_out = dir / "bad.json";
  r = run_cli("import-fio " + (dir / "bad.fio").string() + " -o " + bad_out.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("bad.fio:3"));
  CHECK_FALSE(fs::exists(bad_out));
  r = run_cli("import-fio " + (dir / "bad.fio").string() + " --lenient -o " + bad_out.string());
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.output, Contains("warning: ignored fio option fsync"));
  CHECK(fs::exists(bad_out));
  r = run_cli("import-fio --cmdline 'fio --bs=4k' -o " + (dir / "none.json").string());
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(dir / "none.json"));
  CHECK(run_cli("import-fio " + (dir / "missing.fio").string()).exit_code == 2);
  CHECK(run_cli("import-fio").exit_code == 2);
}

TEST_CASE("import-fio: iodepth beyond the default ring sizes the ring, up to the kernel's maximum") {
  // fio passes iodepth to io_uring_setup, so the ring grows with it.
  const auto im = import_cmdline("fio --ioengine=io_uring --iodepth=8192");
  CHECK(im.scenario["kernel"]["ring"]["sq_entries"] == 8192);
  CHECK(im.origin.at("/kernel/ring/sq_entries") == "--iodepth=8192");
  const auto sc = uringsim::config::load_scenario_text(im.scenario.dump(), "imported");
  CHECK(uringsim::models::make_model(sc) != nullptr);  // the model's iodepth <= sq_entries check passes
  // At or below the default nothing is added.
  CHECK_FALSE(import_cmdline("fio --ioengine=io_uring --iodepth=4096").scenario.contains("kernel"));
  // Beyond 32768 entries (IORING_MAX_ENTRIES) the ring cannot exist: the error names the option.
  const auto msg = error_of([] { import_file("[j]\nioengine=io_uring\niodepth=40000\n"); });
  CHECK_THAT(msg, Contains("job.fio:3: iodepth=40000: "));
  CHECK_THAT(msg, Contains("at most 32768"));
}

TEST_CASE("import-fio: loader and model messages are restated with the fio option that set the field") {
  const auto im = import_file("[j]\nioengine=io_uring\nnumjobs=2000\nbs=8k\n");
  CHECK(im.origin.at("/workload/numjobs") == "job.fio:3: numjobs=2000");
  CHECK(explain_rejection("imported scenario: /workload/numjobs: expected integer in [1, 1024], got 2000",
                          "imported scenario", im) ==
        "job.fio:3: numjobs=2000: /workload/numjobs: expected integer in [1, 1024], got 2000");
  // A field no option set keeps the label; other messages are unchanged.
  CHECK(explain_rejection("imported scenario: /seed: bad", "imported scenario", im) ==
        "imported scenario: /seed: bad");
  CHECK(explain_rejection("something else", "imported scenario", im) == "something else");
  // An unlisted block size says how to give the device one.
  const auto bs = explain_rejection(
      "imported scenario: /workload/bs_bytes: no read service time for bs_bytes 8192 in /device/read "
      "(listed: "
      "4096)",
      "imported scenario", im);
  CHECK_THAT(bs, Contains("job.fio:4: bs=8k: /workload/bs_bytes: no read service time"));
  CHECK_THAT(bs, Contains("default device model has no service time for 8192-byte I/O"));
  CHECK_THAT(bs, Contains("`device.read`/`device.write`"));
  CHECK_THAT(bs, Contains("docs/models/nvme.md"));
  // The machine's size comes from the largest CPU named.
  CHECK(import_cmdline("fio --ioengine=io_uring --cpus_allowed=9 --sqthread_poll_cpu=3")
            .origin.at("/machine/cores") == "--cpus_allowed=9");
}

TEST_CASE("import-fio: binary input is refused without echoing its bytes") {
  const std::string bin(
      "[j]\nioengine=io_uring\n\x7f"
      "ELF\x02\x01\x01\x00\xff\xfe",
      30);
  CHECK_THAT(error_of([&] { import_file(bin); }),
             Contains("job.fio:3: line 3 is not text (control character 0x7f"));
  CHECK(printable("a\x01\tb\n\xff\xc3\xa9") == "a\\x01\tb\n\\xff\xc3\xa9");  // é (UTF-8) is kept
}

TEST_CASE("import-fio: the CLI refuses what run would refuse, naming the fio option (exit 2, no file)") {
  using testing::run_cli;
  const auto dir = testing::fresh_dir("import-fio-model");
  const auto out = dir / "out.json";
  const std::string o = " -o " + out.string();
  // (a) a block size the default device does not list.
  auto r = run_cli("import-fio --cmdline 'fio --ioengine=io_uring --bs=8k'" + o);
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output,
             Contains("error: --bs=8k: /workload/bs_bytes: no read service time for bs_bytes 8192"));
  CHECK_THAT(r.output, Contains("`device.read`/`device.write` entries"));
  CHECK_FALSE(fs::exists(out));
  // (b) hipri without direct.
  r = run_cli("import-fio --cmdline 'fio --ioengine=io_uring --hipri=1 --direct=0'" + o);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output,
             Contains("error: --hipri=1: /workload/hipri: hipri (IORING_SETUP_IOPOLL) requires direct"));
  CHECK_FALSE(fs::exists(out));
  // A loader bound, from a job file: the line is named.
  {
    std::ofstream f(dir / "many.fio");
    f << "[j]\nioengine=io_uring\nnumjobs=2000\n";
  }
  r = run_cli("import-fio " + (dir / "many.fio").string() + o);
  CHECK(r.exit_code == 2);
  CHECK_THAT(
      r.output,
      Contains("many.fio:3: numjobs=2000: /workload/numjobs: expected integer in [1, 1024], got 2000"));
  CHECK_FALSE(fs::exists(out));
  // A directory, and a binary file.
  r = run_cli("import-fio " + dir.string() + o);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("cannot read " + dir.string() + ": is a directory"));
  {
    std::ofstream f(dir / "prog.bin", std::ios::binary);
    f << std::string(
        "\x7f"
        "ELF\x02\x01\x01\x00\x00\x00\xff\xfe\n",
        13);
  }
  r = run_cli("import-fio " + (dir / "prog.bin").string() + o);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.output, Contains("prog.bin:1: line 1 is not text"));
  CHECK(r.output.find('\x7f') == std::string::npos);
  CHECK(r.output.find('\xff') == std::string::npos);
  CHECK_FALSE(fs::exists(out));
  // (c) a deep queue: written with a ring that large, and it loads and builds.
  r = run_cli("import-fio --cmdline 'fio --ioengine=io_uring --iodepth=8192'" + o);
  REQUIRE(r.exit_code == 0);
  const auto sc = uringsim::config::load_scenario_file(out.string());
  CHECK(sc.at("/kernel/ring/sq_entries") == 8192);
  CHECK(uringsim::models::make_model(sc) != nullptr);
}

TEST_CASE(
    "import-fio: percentile_list sets measure.percentiles, and size and lat_percentiles have no effect") {
  const auto im =
      import_file("[j]\nioengine=io_uring\npercentile_list=50:99.9:99.99\nsize=1g\nlat_percentiles=1\n");
  CHECK(im.scenario["measure"]["percentiles"] == nlohmann::ordered_json({50, 99.9, 99.99}));
  CHECK_THAT(im.scenario["description"].get<std::string>(), Contains("size=1g, lat_percentiles=1"));
  CHECK_FALSE(import_file("[j]\nioengine=io_uring\n").scenario.contains("measure"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\npercentile_list=50,99\n"); }),
             Contains("job.fio:3: percentile_list: expected percentages separated by ':'"));
  CHECK_THAT(error_of([] { import_file("[j]\nioengine=io_uring\npercentile_list=50::99\n"); }),
             Contains("separated by ':'"));
  std::string many = "1";
  for (int i = 2; i <= 21; ++i) many.append(":").append(std::to_string(i));
  CHECK_THAT(error_of([&] { import_file("[j]\nioengine=io_uring\npercentile_list=" + many + "\n"); }),
             Contains("at most 20 percentiles, got 21"));
}
