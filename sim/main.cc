// pollux-sim: trace-driven cluster simulator for the policies of libgoodput
// (pollux/policies.h; usage: doc/man/pollux-sim.1).
//
// Exit status: 0 on success, 2 for bad usage or bad input (one line naming
// the file and line), 1 when a simulation fails.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "application.h"
#include "cluster_sim.h"
#include "config.h"
#include "gpu_types.h"
#include "sia_artifact.h"
#include "study.h"
#include "input_error.h"
#include "pollux/policies.h"
#include "plot.h"
#include "report.h"
#include "sacct.h"
#include "traces_location.h"
#include "workload.h"

namespace {

using namespace pollux;
using namespace pollux::sim;

struct Args {
  SimOptions sim;
  std::string traces;
  int interval = 60;
  int restart_delay = 30;
  int jobs = 1;
  std::string search = "local";
  bool uniform_gpus = false;
  bool no_avoidance = false;
  std::string gpu_types;
  std::string sia_artifact;
  bool type_agnostic = false;
  std::string json;
  std::string plot;
  bool verbose = false;
  std::string autoscale = "off";
  std::vector<std::string> workloads;
  std::vector<std::string> sacct;
  double time_scale = 1;
  int epochs = 0;
  std::string study;
  StudySpec study_spec;
};

// A number in [lo, hi]. (CLI::Range lets NaN through, and libgoodput would
// then reject it with an exception instead of a usage error.)
CLI::Validator closed_range(double lo, double hi) {
  char range[64];
  std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
  return CLI::Validator(
      [lo, hi, range = std::string(range)](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        const bool ok = end != s.c_str() && *end == '\0' && v >= lo && v <= hi;
        return ok ? "" : "value " + s + " not in " + range;
      },
      range);
}

// A seed: a decimal integer in [0, 2^64 - 1]. CLI11 alone would wrap "-3"
// to 2^64 - 3, saturate what overflows and read "010" as octal.
CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        const bool digits = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
          return c >= '0' && c <= '9';
        });
        errno = 0;
        const unsigned long long v = digits ? std::strtoull(s.c_str(), nullptr, 10) : 0;
        if (!digits || errno == ERANGE) return "value " + s + " is not an integer in [0, 18446744073709551615]";
        s = std::to_string(v);  // leading zeros stripped
        return "";
      },
      "[0, 2^64-1]");
}

// Runs every workload on up to `threads` threads; results in input order.
// The first failure (in input order) is rethrown after all threads end.
std::vector<RunResult> run_all(const std::vector<Workload>& workloads, const AppCatalog& catalog,
                               const SimOptions& options, int threads, bool verbose) {
  std::vector<RunResult> results(workloads.size());
  std::vector<std::exception_ptr> errors(workloads.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&]() {
    for (std::size_t i = next++; i < workloads.size(); i = next++) {
      try {
        const auto t0 = std::chrono::steady_clock::now();
        results[i] = simulate(workloads[i], catalog, options);
        if (verbose) {
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          char line[256];
          std::snprintf(line, sizeof line,
                        "pollux-sim: %s: %zu jobs, %d rounds, %.2f s (policy %.2f s), %lld model fits, "
                        "%lld lookups outside the traces, %.1f%% of GPU time in interfering placements\n",
                        workloads[i].name.c_str(), results[i].jobs.size(), results[i].rounds, s,
                        results[i].policy_seconds, results[i].fits, results[i].model_lookups,
                        100.0 * results[i].interfering_gpu_seconds / std::max(1.0, results[i].gpu_hours * 3600));
          std::cerr << line;
        }
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const int n = std::max(1, std::min(threads, static_cast<int>(workloads.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

// --study: one search, run as a workload of its trials (study.h).
int run_study(Args& a, const std::string& app_dir) {
  if (!a.workloads.empty() || !a.sacct.empty())
    throw InputError("--study runs a search instead of workloads: give no workload (or --sacct) with it");
  if (!a.gpu_types.empty() || a.sim.autoscale.mode != ScaleMode::kOff)
    throw InputError("--study is simulated on a cluster of one GPU type without --autoscale");
  AppCatalog catalog(app_dir);
  const StudySpec parsed = parse_study(a.study, catalog);
  StudySpec& spec = a.study_spec;
  spec.application = parsed.application;
  spec.trials = parsed.trials;
  spec.in_flight = parsed.in_flight;
  const Application& app = catalog.load(spec.application);
  const std::vector<TrialPlan> plan = plan_study(spec, app.max_epochs());
  StepTimeCache steps(app);
  const long long batch = study_batch(spec, steps, a.sim.gpus_per_node);
  const Workload w = study_workload(spec, plan, batch);
  check_runnable(w, a.sim);
  if (!a.json.empty())
    if (auto problem = output_file_problem(a.json)) throw InputError("--json " + a.json + ": " + *problem);
  const std::string gnuplot = gnuplot_program();
  if (!a.plot.empty()) {
    if (auto problem = plot_dir_problem(a.plot)) throw InputError("--plot " + a.plot + ": " + *problem);
    if (auto problem = gnuplot_problem(gnuplot)) throw InputError(*problem);
  }
  a.sim.in_flight = spec.in_flight;
  a.sim.record_timeline = true;  // the survivors' share of the GPUs
  const std::vector<RunResult> runs = run_all({w}, catalog, a.sim, 1, a.verbose);
  print_table(std::cout, a.sim, runs);
  const PolicyEntry& policy = *find_policy(a.sim.policy);
  if (!policy.adaptive)
    std::cout << "fixed-size trials: " << spec.gpus << " GPUs each, total batch " << batch << "\n";
  print_study(std::cout, spec, summarize_study(spec, plan, runs[0], app.max_epochs()), app.max_epochs());
  std::cout.flush();
  if (!a.json.empty()) write_file_atomically(a.json, to_json(a.sim, app_dir, runs));
  if (!a.plot.empty()) write_plots(a.plot, gnuplot, a.sim, runs);
  return 0;
}

int run_main(int argc, char** argv) {
  Args a;
  a.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CLI::App app{"pollux-sim: trace-driven simulation of libgoodput's scheduling policies\n"
               "on the Pollux OSDI'21 traces (man pollux-sim)."};
  app.set_version_flag("--version", std::string(PACKAGE_VERSION));
  std::vector<std::string> policy_list;
  for (const PolicyEntry& e : policies()) policy_list.emplace_back(e.name);
  app.add_option("--policy", a.sim.policy, "scheduling policy (--list-policies)")
      ->required()
      ->check(CLI::IsMember(policy_list));
  app.add_flag_callback(
         "--list-policies",
         [] {
           // One line a policy: name, label, whether jobs adapt, whether this build has it, what it does.
           for (const PolicyEntry& e : policies())
             std::cout << e.name << '\t' << e.label << '\t' << (e.adaptive ? "adaptive" : "fixed-batch") << '\t'
                       << (e.missing.empty() ? "available" : "missing: " + std::string(e.missing)) << '\t'
                       << e.summary << '\n';
           throw CLI::Success();
         },
         "list the policies (name, label, adaptive or fixed-batch, available, what it does) and exit")
      ->trigger_on_parse();
  app.add_option("--traces", a.traces, "traces directory (default: the shipped pollux-osdi21 traces)");
  app.add_option("--nodes", a.sim.nodes, "nodes in the cluster")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("--gpus-per-node", a.sim.gpus_per_node, "GPUs per node")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--interval", a.interval, "seconds between scheduling rounds")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--interference", a.sim.interference,
                 "slowdown of distributed jobs sharing a node, in [0, 1)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(s.c_str(), &end);
            const bool ok = end != s.c_str() && *end == '\0' && v >= 0 && v < 1;
            return ok ? "" : "value " + s + " not in [0, 1)";
          },
          "[0, 1)"))
      ->capture_default_str();
  app.add_option("--fairness-p", a.sim.policy_options.fairness_p,
                 "power-mean exponent of the Pollux fitness (more negative = fairer)")
      ->check(closed_range(kMinFairnessP, kMaxFairnessP))
      ->capture_default_str();
  app.add_option("--seed", a.sim.policy_options.seed, "seed of the policies' searches")
      ->check(seed_value())
      ->capture_default_str();
  app.add_option("--search", a.search, "Pollux allocation search")
      ->check(CLI::IsMember({"local", "genetic"}))
      ->capture_default_str();
  app.add_option("--search-budget", a.sim.policy_options.search_budget,
                 "job-term evaluations the Pollux local search may spend per round (0: the policy's default)")
      ->check(CLI::Range(0LL, 1000000000000LL))
      ->capture_default_str();
  app.add_flag("--uniform-gpus", a.uniform_gpus,
               "multi-node jobs get the same GPU count on every node (as Slurm grants them)");
  app.add_flag("--no-interference-avoidance", a.no_avoidance,
               "let the policy put several distributed jobs on one node");
  app.add_option("--arrivals-tick", a.sim.arrivals_tick,
                 "sched/pollux's arrivals rounds beside its periodic ones (pollux's rounds are its plan_round "
                 "either way): step jobs by this many seconds and, after a step in which a job arrived, size the "
                 "jobs without GPUs in the free GPUs, placing uniformly (0: off, the paper's rounds; must divide "
                 "--interval)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  app.add_option("--min-nodes", a.sim.min_nodes,
                 "pollux: every job spans at least this many nodes when it runs (a Slurm partition's MinNodes)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--gpu-types", a.gpu_types,
                 "a cluster of several GPU types: a CSV of type,nodes,speed[,APPLICATION...] rows (the nodes add up "
                 "to the cluster; speed '-': the scheduler is told none and explores; e.g. "
                 "sim/clusters/t4-v100-a100.csv)");
  app.add_option("--sia-artifact", a.sia_artifact,
                 "an export of Sia's artifact (github.com/siasosp23/artifacts): the GPU types' step times from its "
                 "per-type profiles (the types' profile column), its traces for the rest (needs --gpu-types)");
  app.add_option("--sia-lambda-n", a.sim.policy_options.sia_lambda_n,
                 "sia: the objective's penalty for a job left without GPUs (Sia's lambda_n)")
      ->check(closed_range(-1000, 1000))
      ->capture_default_str();
  app.add_flag("--sia-calibration", a.sim.sia_calibration,
               "every policy: Sia's simulator's per-model slowdowns and checkpoint-restore times (doc/simulator.md)");
  app.add_flag("--type-agnostic", a.type_agnostic,
               "pollux with --gpu-types: today's policy, blind to the types (one model per job, any GPUs; a job on "
               "several types runs at the slowest one's speed)");
  app.add_option("--time-limit-factor", a.sim.time_limit_factor,
                 "backfill: a job's time limit is its runtime alone at its workload size times this, rounded up "
                 "(doc/simulator.md)")
      ->check(closed_range(1, 1000))
      ->capture_default_str();
  app.add_option("--restart-delay", a.restart_delay, "seconds a re-allocation stalls a job")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  app.add_option("--restart-penalty", a.sim.restart_penalty,
                 "the least restart cost D a policy weighs (sched/pollux's pollux_restart_penalty; default: "
                 "--restart-delay)")
      ->check(closed_range(0, 86400));
  app.add_option("--start-delay", a.sim.start_delay,
                 "seconds a job's first start stalls it, from the round that places it to its first step "
                 "(default: --restart-delay)")
      ->check(closed_range(0, 86400));
  app.add_option("--end-delay", a.sim.end_delay,
                 "seconds from a job's last step to its end, counted in its JCT, its GPUs held (a replay's process "
                 "exit and Slurm's completion)")
      ->check(closed_range(0, 86400))
      ->capture_default_str();
  std::vector<std::string> modes;
  for (ScaleMode m : {ScaleMode::kOff, ScaleMode::kFixed, ScaleMode::kQueue, ScaleMode::kGoodput})
    modes.emplace_back(scale_mode_name(m));
  app.add_option("--autoscale", a.autoscale,
                 "cloud auto-scaling: fixed (every node paid throughout), queue (Slurm's power saving: boot for what "
                 "the scheduler places, suspend after --suspend-time idle), goodput (Pollux: keep the cluster's "
                 "utility in [--min-utility, --max-utility]); reports node-hours and their cost")
      ->check(CLI::IsMember(modes))
      ->capture_default_str();
  app.add_option("--boot-delay", a.sim.autoscale.boot_delay, "auto-scaling: seconds from a node's start to its use")
      ->check(closed_range(0, 86400))
      ->capture_default_str();
  app.add_option("--node-price", a.sim.autoscale.node_price, "auto-scaling: price of a node-hour")
      ->check(closed_range(0, 1e9))
      ->capture_default_str();
  app.add_option("--suspend-time", a.sim.autoscale.suspend_time,
                 "--autoscale queue and goodput: idle seconds before a node is powered down (Slurm's SuspendTime)")
      ->check(closed_range(0, 86400 * 365))
      ->capture_default_str();
  app.add_option("--min-utility", a.sim.autoscale.band.min, "--autoscale goodput: the utility band's low end")
      ->check(closed_range(0, 1))
      ->capture_default_str();
  app.add_option("--max-utility", a.sim.autoscale.band.max, "--autoscale goodput: the utility band's high end")
      ->check(closed_range(0, 1))
      ->capture_default_str();
  app.add_option("--jobs,-j", a.jobs, "workloads simulated in parallel (default: the machine's cores)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--json", a.json, "write the results as JSON to FILE");
  app.add_option("--plot", a.plot, "write JCT CDF and GPU-allocation pictures (gnuplot) into DIR");
  app.add_flag("--verbose,-v", a.verbose, "per-workload statistics on stderr");
  app.add_option("--study", a.study,
                 "a hyper-parameter search instead of workloads: N trials of APP, K at once (default: all), pruned "
                 "by successive halving (APP:N[:K]; doc/simulator.md)");
  app.add_option("--study-seed", a.study_spec.seed, "--study: seed of the trials' qualities")
      ->check(seed_value())
      ->capture_default_str();
  app.add_option("--reduction-factor", a.study_spec.reduction_factor,
                 "--study: the pruner's reduction factor eta (Optuna's default 4)")
      ->check(CLI::Range(2, 100))
      ->capture_default_str();
  app.add_option("--min-resource", a.study_spec.min_resource, "--study: epochs to the pruner's first rung")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--study-gpus", a.study_spec.gpus, "--study, fixed-size policies: each trial's GPUs")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app.add_option("--study-batch", a.study_spec.batch,
                 "--study, fixed-size policies: each trial's total batch (0: the one whose training on "
                 "--study-gpus GPUs is shortest)")
      ->check(CLI::Range(0LL, 1LL << 40))
      ->capture_default_str();
  app.add_option("--sacct", a.sacct,
                 "a site's job history, sacct --parsable2 --allocations output, as a workload (doc/simulator.md); "
                 "may be repeated, beside workload files");
  app.add_option("--time-scale", a.time_scale,
                 "--sacct: simulated seconds per recorded second (a replay's time scale)")
      ->check(closed_range(1e-6, 1e6))
      ->capture_default_str();
  app.add_option("--epochs", a.epochs,
                 "every job of the workload files trains this many epochs, not its application's whole training "
                 "(0: all; pollux-emulate's --epochs, the rule of a replay's jobs)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("workloads", a.workloads, "workload CSV files or directories of them (none with --study)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "pollux-sim: error: " << e.what() << " (see pollux-sim --help)\n";
    return kExitBadInput;
  }
  // Slurm's default bf_interval under backfill, unless given.
  if (find_policy(a.sim.policy)->input == JobInput::kRigidTimeLimit && app.count("--interval") == 0)
    a.interval = kBackfillInterval;
  a.sim.interval = a.interval;
  if (a.study.empty())
    for (const char* o : {"--study-seed", "--reduction-factor", "--min-resource", "--study-gpus", "--study-batch"})
      if (app.count(o) > 0) throw InputError(std::string(o) + " is an option of --study: give --study APP:N with it");
  if (a.sacct.empty() && app.count("--time-scale") > 0) throw InputError("--time-scale is an option of --sacct");
  if (!a.study.empty() && a.epochs > 0)
    throw InputError("--epochs is for workload files: a --study's trials train until its pruner stops them");
  a.sim.autoscale.mode = *parse_scale_mode(a.autoscale);
  if (a.sim.autoscale.band.min >= a.sim.autoscale.band.max)
    throw InputError("--min-utility must be below --max-utility");
  if (a.sim.autoscale.mode != ScaleMode::kOff && (!a.gpu_types.empty() || a.sim.arrivals_tick > 0))
    throw InputError("--autoscale is simulated on a cluster of one GPU type, without --gpu-types or --arrivals-tick");
  if (a.sim.autoscale.mode == ScaleMode::kGoodput && !find_policy(a.sim.policy)->scheduler)
    throw InputError("--autoscale goodput is sched/pollux's: only with --policy " +
                     policy_names([](const PolicyEntry& e) { return e.scheduler; }));
  a.sim.restart_delay = a.restart_delay;
  a.sim.policy_options.search = a.search == "genetic" ? SearchKind::kGenetic : SearchKind::kLocal;
  a.sim.policy_options.uniform_gpus_per_node = a.uniform_gpus || a.sim.arrivals_tick > 0;  // as simulate() places: sched/pollux's rule
  a.sim.policy_options.interference_avoidance = !a.no_avoidance;
  a.sim.record_timeline = !a.plot.empty();
  a.sim.type_aware = !a.type_agnostic;
  // The policy's own default p (Sia's, its paper's section 4.3), unless given.
  const PolicyEntry& policy = *find_policy(a.sim.policy);
  if (app.count("--fairness-p") == 0) a.sim.policy_options.fairness_p = policy.fairness_p;
  if (!policy.missing.empty()) throw InputError("--policy " + a.sim.policy + ": this pollux-sim was " + std::string(policy.missing));
  if (!a.gpu_types.empty()) {
    a.sim.gpu_types = read_gpu_types(a.gpu_types);
    a.sim.nodes = 0;
    for (const GpuType& g : a.sim.gpu_types) a.sim.nodes += g.nodes;
    if (a.sim.nodes > 1024) throw InputError(a.gpu_types, 0, "the GPU types have more than 1024 nodes in all");
  }

  if (!a.sia_artifact.empty() && a.gpu_types.empty())
    throw InputError("--sia-artifact needs --gpu-types (the types' profile column names their profiles)");
  const std::string sia_traces = a.sia_artifact.empty() ? "" : sia_traces_dir(a.sia_artifact);
  const std::string app_dir =
      !a.traces.empty() || sia_traces.empty() ? application_dir(a.traces.empty() ? default_traces_root() : a.traces)
                                              : sia_traces;
  const std::string root = traces_root(app_dir);
  if (!a.study.empty()) return run_study(a, app_dir);
  if (a.workloads.empty() && a.sacct.empty())
    throw InputError("no workload given (a workload file or directory, --sacct FILE, or --study APP:N)");
  std::vector<std::string> args;
  for (const std::string& w : a.workloads) args.push_back(resolve_workload_arg(w, root));
  const std::vector<std::string> paths = expand_workload_paths(args);

  AppCatalog catalog(app_dir);
  std::vector<Workload> workloads;
  std::set<std::string> names;
  for (const std::string& p : paths) {
    workloads.push_back(read_workload(p, catalog));
    if (!names.insert(workloads.back().name).second)
      throw InputError(p, 0, "a workload named " + workloads.back().name + " is already given");
  }
  for (const std::string& p : a.sacct) {
    SacctSummary sum;
    workloads.push_back(read_sacct(p, catalog, a.time_scale, &sum));
    if (!names.insert(workloads.back().name).second)
      throw InputError(p, 0, "a workload named " + workloads.back().name + " is already given");
    std::cout << p << ": " << sum.modelled + sum.recorded << " jobs, " << sum.modelled
              << " on their application's model, " << sum.recorded
              << " at their recorded size and duration (no known application); skipped: " << sum.steps
              << " step rows, " << sum.not_started << " never started, " << sum.not_ended << " not ended, "
              << sum.no_gpus << " without GPUs\n";
  }
  std::set<std::string> used_apps;
  for (const Workload& w : workloads) {
    check_runnable(w, a.sim);
    for (const WorkloadJob& j : w.jobs)
      if (!j.recorded) used_apps.insert(j.application);
  }
  for (const std::string& app_name : used_apps) catalog.load(app_name);
  // --epochs: the workload files' jobs (a history's rows carry their own pollux-epochs=).
  for (std::size_t k = 0; k < paths.size() && a.epochs > 0; ++k)
    for (WorkloadJob& j : workloads[k].jobs) {
      try {
        j.last_epoch = catalog.get(j.application).last_epoch(a.epochs);
      } catch (const InputError& e) {
        throw InputError(workloads[k].path, j.line, "job " + j.name + ": --epochs " + e.what());
      }
    }
  std::vector<std::unique_ptr<AppCatalog>> profiles;
  if (!sia_traces.empty()) attach_profiles(a.sim.gpu_types, sia_traces, used_apps, catalog, profiles);

  // Destinations are checked now: the run may take minutes.
  if (!a.json.empty())
    if (auto problem = output_file_problem(a.json)) throw InputError("--json " + a.json + ": " + *problem);
  if (!a.plot.empty())
    if (auto problem = plot_dir_problem(a.plot)) throw InputError("--plot " + a.plot + ": " + *problem);
  const std::string gnuplot = gnuplot_program();
  if (!a.plot.empty())
    if (auto problem = gnuplot_problem(gnuplot)) throw InputError(*problem);

  const std::vector<RunResult> runs = run_all(workloads, catalog, a.sim, a.jobs, a.verbose);
  print_table(std::cout, a.sim, runs);
  std::cout.flush();
  if (!a.json.empty()) write_file_atomically(a.json, to_json(a.sim, app_dir, runs));
  if (!a.plot.empty()) write_plots(a.plot, gnuplot, a.sim, runs);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "pollux-sim: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "pollux-sim: error: " << e.what() << "\n";
    return 1;
  }
}
