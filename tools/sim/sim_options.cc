// SPDX-License-Identifier: MIT
#include "sim_options.h"

#include "atomic_file.h"
#include "cli.h"

namespace jitprov::sim {

void addOptions(CLI::App& cli, Options& o) {
  cli.add_option("--methods", o.methods, "methods to register")->check(CLI::Range(uint64_t{1}, uint64_t{10000000}));
  cli.add_option("--modules", o.modules, "modules they spread over")->check(CLI::Range(1u, 100000u));
  cli.add_option("--jit-threads", o.jit_threads, "application threads that call and JIT")->check(CLI::Range(0u, 64u));
  cli.add_option("--duration", o.duration, "seconds to run; 0 = until SIGINT/SIGTERM")
      ->check(jitprov::tools::finiteIn(1e9));
  cli.add_option("--rundown", o.rundown, "rundown mode: lockfree, locked, per-method; a comma list takes them in turn");
  cli.add_option("--rundown-trigger", o.triggers, "comma list of session, signal, exit, at:SEC, every:SEC, or none");
  cli.add_option("--seed", o.seed, "random seed")->check(jitprov::tools::uint64Whole());
  // Refused at start-up unless a regular file or nothing is there (never a device or a
  // symlink), in an existing, writable directory (atomic_file.h).
  const CLI::Validator output([](std::string& p) { return jitprov::tools::checkOutputPath(p); }, "FILE");
  cli.add_option("--stats-json", o.stats_json, "write in-process figures here at exit (and on SIGUSR1)")->check(output);
  cli.add_option("--ready-file", o.ready_file, "write the pid here once methods are registered and JIT threads run")
      ->check(output);
  cli.add_option("--tier-up-threshold", o.threshold, "calls before tier-up")->check(CLI::Range(1u, 1000000u));
  cli.add_option("--warm", o.warm, "fraction of methods compiled at tier 0 before ready")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--hot", o.hot, "fraction of warm methods also at tier 1 before ready")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--tier0-us", o.tier0_us, "simulated tier-0 compile time (outside the lock)")
      ->check(CLI::Range(0u, 1000000u));
  cli.add_option("--tier1-us", o.tier1_us, "simulated tier-1/OSR/ReJIT compile time (outside the lock)")
      ->check(CLI::Range(0u, 1000000u));
  cli.add_option("--osr-rate", o.osr_rate, "OSR compiles per call")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--rejit-rate", o.rejit_rate, "ReJIT requests per call")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--unload-rate", o.unload_rate, "collectible module unloads per second")
      ->check(jitprov::tools::finiteIn(1e6));
  cli.add_option("--collectible", o.collectible, "fraction of collectible modules")->check(CLI::Range(0.0, 1.0));
  cli.add_option("--retire-replaced", o.retire_replaced,
                 "probability that code replaced by a tier-up or ReJIT is retired (per-version retirement)")
      ->check(CLI::Range(0.0, 1.0));
  cli.add_flag_function(
      "--no-lock-stats", [&o](int64_t) { o.lock_stats = false; },
      "no in-process lock statistics (the runtime then times lock acquisitions only while a tracer is "
      "attached to jitprov:lock_released)");
  cli.add_option("--rundown-rate", o.rundown_rate,
                 "cap on lock-free rundown events per second (0 = unpaced; docs/tracing.md)")
      ->check(jitprov::tools::uint64Whole());
  auto* delay = cli.add_option("--jit-delay", o.jit_delay,
                               "seconds after ready before JIT threads and unloads start (time to attach a tracer)")
                    ->check(jitprov::tools::finiteIn(1e9));
  cli.add_option("--jit-after", o.jit_after,
                 "the application (JIT threads, unloads and the rundown thread's triggers) starts once FILE "
                 "exists, so that a tracer attaches first however long that takes; --duration then counts "
                 "from that moment")
      ->check(CLI::Validator([](std::string& s) { return s.empty() ? std::string("an empty file name") : ""; }, "FILE"))
      ->excludes(delay);
#ifdef JITPROV_SIM_FAULTS
  cli.add_option("--inject-fault", o.fault,
                 "break every rundown on purpose: duplicate, torn, torn-name, skip, no-end, begin-twice, end-twice");
#endif
  cli.add_option("--calls-per-ms", o.calls_per_ms, "calls per JIT thread per millisecond")
      ->check(CLI::Range(1u, 100000u));
}

}  // namespace jitprov::sim
