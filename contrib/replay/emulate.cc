// pollux-emulate: an emulated trainer for trace replays on a real Slurm
// (doc/simulator.md, "Emulated trainer"). One process per rank (srun or
// mpirun), linked to the real agent in its framework-neutral mode: the
// agent chooses the batch configuration, profiles, fits, hints,
// checkpoints and runs the resize protocol as for a real trainer, while
// what a GPU would compute comes from pollux-sim's application model:
//
// - step time: Application::step_times() of the rank's placement (ranks
//   per node) and per-GPU batch, T_iter = Application::iteration(); the
//   step sleeps T_iter / time-scale and reports exactly that as its
//   measured times (StepMeasurement, so the profile is the model's, not the
//   sleep's jitter); the wall clock follows absolute deadlines;
// - gradient statistics: the traces' (grad_stats at the step's batch and
//   epoch), reported as norms whose estimate they are (emulated_norms.h);
// - progress: the application's, Application::iteration()'s gain per step
//   (what SimJob integrates), up to the progress target of its last epoch;
//   checkpointed with the agent's step and samples, so it survives requeues.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "sim/application.h"
#include "sim/input_error.h"
#include "sim/traces_location.h"
#include "emulated_norms.h"
#include "pollux/agent_mpi.h"

namespace {

using Clock = std::chrono::steady_clock;
using pollux::sim::InputError;

constexpr const char* kStateFile = "emulate.state";

struct Options {
  std::string app;
  std::string traces;
  double time_scale = 1.0;
  int epochs = 0;
  long long batch = 0;
  long long log_every = 0;
  bool check_only = false;
};

// The emulated training state beyond the agent's own (step, samples).
struct State {
  double progress = 0;     // the application's progress (M0 steps)
  double sim_seconds = 0;  // simulated seconds of training, over all runs
};

// Per-node rank counts of MPI_COMM_WORLD, by the node names the agent
// counts nodes with (SLURMD_NODENAME, else the host name), in rank order.
std::vector<int> placement_counts() {
  constexpr int kLen = 256;
  char name[kLen] = {};
  if (const char* n = std::getenv("SLURMD_NODENAME"); n != nullptr && *n != '\0')
    std::snprintf(name, kLen, "%s", n);
  else
    gethostname(name, kLen - 1);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<char> all(static_cast<std::size_t>(size) * kLen);
  MPI_Allgather(name, kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> order;
  std::map<std::string, int> counts;
  for (int r = 0; r < size; ++r) {
    const std::string n(&all[static_cast<std::size_t>(r) * kLen]);
    if (counts[n]++ == 0) order.push_back(n);
  }
  std::vector<int> out;
  for (const std::string& n : order) out.push_back(counts[n]);
  return out;
}

// The wall clock (seconds since the epoch, as the batch script's `date +%s.%N`
// and slurmctld's log stamp their lines).
double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

int epoch_at(const pollux::sim::Application& a, double progress, int last) {
  int e = 0;
  while (e < last - 1 && progress >= a.epoch_progress(e + 1)) ++e;
  return e;
}

int run(const Options& o, int rank) {
  const std::string dir =
      pollux::sim::application_dir(o.traces.empty() ? pollux::sim::default_traces_root() : o.traces);
  pollux::sim::AppCatalog catalog(dir);
  if (!catalog.has(o.app))
    throw InputError(dir, 0, "no application '" + o.app + "' (no " +
                                 pollux::sim::trace_path(dir, o.app, "placements.csv") + ")");
  const pollux::sim::Application& a = catalog.load(o.app);
  int last = 0;  // pollux-sim's rule (Application::last_epoch), as SimJob applies it
  try {
    last = a.last_epoch(o.epochs);
  } catch (const InputError& e) {
    throw InputError(std::string("--epochs ") + e.what());
  }
  const double target = a.target_progress(o.epochs);
  const long long fixed = o.batch > 0 ? o.batch : a.spec().fixed_batch;
  const double m0 = a.init_batch();
  if (o.batch > 0 && (o.batch < m0 || o.batch > a.max_batch()))
    throw InputError("--batch " + std::to_string(o.batch) + ": outside " + o.app + "'s batch sizes [" +
                     std::to_string(static_cast<long long>(m0)) + ", " +
                     std::to_string(static_cast<long long>(a.max_batch())) + "]");

  if (o.check_only) return 0;  // the options fit the application: nothing is trained

  pollux::AgentOptions options;
  options.limits = a.limits();
  options.adapt = fixed <= 0;
  options.apply_environment();
  auto agent = pollux::make_external_agent(pollux::make_mpi_communicator(MPI_COMM_WORLD), options);
  const bool lead = agent->rank() == 0;
  const std::vector<int> counts = placement_counts();
  const int replicas = agent->replicas();
  const int nodes = static_cast<int>(counts.size());

  State st;
  agent->on_checkpoint([&](const pollux::CheckpointContext& c) {
    if (c.rank != 0) return;
    const std::string path = c.dir + "/" + kStateFile;
    std::ofstream out(path);
    char line[128];
    std::snprintf(line, sizeof line, "%.17g %.17g\n", st.progress, st.sim_seconds);
    out << line;
    if (!out.flush()) throw std::runtime_error("cannot write " + path);
    std::printf("checkpoint step %lld progress %.17g\n", c.step, st.progress);
    std::fflush(stdout);
  });
  agent->on_restore([&](const pollux::CheckpointContext& c) {
    const std::string path = c.dir + "/" + kStateFile;
    std::ifstream in(path);
    if (!(in >> st.progress >> st.sim_seconds) || !std::isfinite(st.progress) || st.progress < 0)
      throw std::runtime_error(path + ": not an emulated trainer's state");
  });
  // Slurm's requeue ends the process with SIGTERM: what it printed goes first.
  agent->on_requeue([] { std::fflush(stdout); });
  if (agent->restore() && lead) {
    std::printf("resumed step %lld progress %.17g\n", agent->step(), st.progress);
    std::fflush(stdout);
  }
  if (fixed > 0) {  // the user's batch, as pollux-sim splits it
    const pollux::BatchConfig c = a.split_batch(static_cast<double>(fixed), replicas, fixed > m0);
    try {
      agent->set_batch_config(a.cap_atomic(c.atomic_batch, replicas, c.accum_steps), c.accum_steps);
    } catch (const std::invalid_argument& e) {
      throw InputError("--batch " + std::to_string(fixed) + " on " + std::to_string(replicas) + " replica(s) of " +
                       o.app + ": " + e.what());
    }
  }

  pollux::sim::StepTimeCache cache(a);
  const auto start = Clock::now();
  auto deadline = start;
  pollux::StepMeasurement prev;
  bool have_prev = false;
  double kept_sqr = 0;
  pollux::sim::Iteration it;
  bool stepped = false;  // this run has ended a step
  while (st.progress < target) {
    const int m = agent->atomic_batch(), s = agent->accum_steps();
    const pollux::sim::StepTimes& t = cache.get(counts, m);
    it = a.iteration(t, replicas, m, s, epoch_at(a, st.progress, last));
    const pollux::TwoStep phase = agent->two_step_phase();
    const pollux::GradientNorms norms = pollux::replay::emulated_norms(it.grad, m0, replicas, m, s, phase, kept_sqr);
    if (phase == pollux::TwoStep::kKeep) kept_sqr = norms.sync_sqr;
    for (int k = 0; k <= s; ++k) {
      agent->micro_step_begin();
      agent->micro_step_end();
    }
    deadline += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(it.seconds / o.time_scale));
    const auto now = Clock::now();
    if (deadline < now)
      deadline = now;  // behind (a checkpoint, a slow agent call): no burst to catch up
    else
      std::this_thread::sleep_until(deadline);
    agent->synchronized_late(have_prev ? &prev : nullptr, false);
    prev.norms = norms;
    prev.micro_steps = s + 1;
    prev.grad_time_sum = (s + 1) * (t.step - t.sync) / o.time_scale;
    prev.step_time = t.step / o.time_scale;
    have_prev = true;
    st.progress += it.gain;
    st.sim_seconds += it.seconds;
    if (agent->step_end() == pollux::StepAction::kRequeueExit) return agent->options().requeue_exit_code;
    if (lead && !stepped) {  // when this run's training began (the replay's latencies: doc/simulator.md)
      std::printf("pollux-emulate: run %d first step at %.3f\n", agent->job().restart_count, unix_seconds());
      std::fflush(stdout);
    }
    stepped = true;
    if (lead && o.log_every > 0 && agent->step() % o.log_every == 0) {
      std::printf("step %lld progress %.4f/%.4f replicas %d batch %lld (%dx%d)\n", agent->step(), st.progress, target,
                  replicas, agent->total_batch(), agent->atomic_batch(), agent->accum_steps() + 1);
      std::fflush(stdout);
    }
  }
  if (lead) {
    const double real = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("pollux-emulate: run %d last step at %.3f\n", agent->job().restart_count, unix_seconds());
    std::printf("pollux-emulate: %s done: steps %lld progress %.6f/%.6f simulated %.1f s real %.1f s restarts %d\n",
                o.app.c_str(), agent->step(), st.progress, target, st.sim_seconds, real, agent->job().restart_count);
    // What the agent was shown last: the tests hold its hint against it.
    std::printf("pollux-emulate: last step nodes %d replicas %d atomic %d accum %d noise_scale %.9g iter_time %.9g\n",
                nodes, replicas, agent->atomic_batch(), agent->accum_steps(),
                it.grad.sqr > 0 ? m0 * it.grad.var / it.grad.sqr : 0.0,  // 0: no step ran (restored at the target)
                it.seconds / o.time_scale);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  Options o;
  CLI::App cli{"Emulated trainer: an application of pollux-sim's traces, trained through the Pollux agent"};
  cli.add_option("--app", o.app, "application (a directory of the traces: bert, cifar10, ...)")->required();
  cli.add_option("--traces", o.traces, "traces directory (default: pollux-sim's)");
  cli.add_option("--time-scale", o.time_scale, "simulated seconds per real second")->capture_default_str();
  cli.add_option("--epochs", o.epochs, "end after this many epochs (0: the application's whole training)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cli.add_option("--batch", o.batch, "fixed total batch size, as the user chose it (0: the agent adapts it)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cli.add_option("--log-every", o.log_every, "steps between progress lines (0: none)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  cli.add_flag("--check", o.check_only,
               "check the options against the application (exit 0, or 2 naming what does not fit) and train nothing");
  int code = 0;
  try {
    cli.parse(argc, argv);
    if (!(o.time_scale > 0) || !std::isfinite(o.time_scale))
      throw InputError("--time-scale " + cli.get_option("--time-scale")->as<std::string>() +
                       ": not a positive finite number of simulated seconds per real second");
    code = run(o, rank);
  } catch (const CLI::Success& e) {  // --help
    code = cli.exit(e);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) std::fprintf(stderr, "pollux-emulate: %s (see --help)\n", e.what());
    code = pollux::sim::kExitBadInput;
  } catch (const InputError& e) {
    if (rank == 0) std::fprintf(stderr, "pollux-emulate: %s\n", e.what());
    code = pollux::sim::kExitBadInput;
  } catch (const std::invalid_argument& e) {  // an agent option (POLLUX_*) or batch outside the limits
    if (rank == 0) std::fprintf(stderr, "pollux-emulate: %s\n", e.what());
    code = pollux::sim::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pollux-emulate: rank %d: %s\n", rank, e.what());
    code = 1;
  }
  std::fflush(stdout);
  MPI_Finalize();
  return code;
}
