// The training loop (see trainer.h).
#include "trainer.h"

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>
#include <tuple>

namespace digits {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kModelFile = "model.bin";

// The trainer's own measurement of whole optimizer steps (first
// micro-step to the end of the all-reduce), per configuration, to check
// the agent's profile and model against. Like the agent's profile it keeps
// the last 31 steps of each configuration.
struct StepTimer {
  static constexpr std::size_t kWindow = 31;
  std::map<std::tuple<int, int, int, int>, std::vector<double>> times;

  void add(int nodes, int replicas, int atomic, int accum, double s) {
    std::vector<double>& v = times[{nodes, replicas, atomic, accum}];
    if (v.size() == kWindow) v.erase(v.begin());
    v.push_back(s);
  }
  void print() const {
    for (const auto& [k, v] : times) {
      std::vector<double> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      double sum = 0;
      for (double x : v) sum += x;
      std::printf("timing nodes %d replicas %d atomic %d accum %d steps %zu iter_median %.6g iter_mean %.6g\n",
                  std::get<0>(k), std::get<1>(k), std::get<2>(k), std::get<3>(k), v.size(),
                  sorted[sorted.size() / 2], sum / static_cast<double>(v.size()));
    }
  }
};


}  // namespace

std::optional<int> parse_options(int argc, char** argv, const char* description, const std::string& default_data,
                                 TrainOptions& o) {
  CLI::App app{description};
  o.data = default_data;
  app.add_option("--data", o.data, "digits.csv.gz (from python3-sklearn)")->capture_default_str();
  app.add_option("--hidden", o.hidden, "hidden units")->check(CLI::Range(1, 65536))->capture_default_str();
  app.add_option("--init-batch", o.init_batch, "M0: the batch size the learning rate is tuned for")
      ->check(CLI::Range(1.0, 1e9))->capture_default_str();
  app.add_option("--max-batch", o.max_batch, "M_max: largest total batch the agent may pick")
      ->check(CLI::Range(1.0, 1e9))->capture_default_str();
  app.add_option("--min-atomic", o.min_atomic, "m_min: smallest per-replica micro-batch")
      ->check(CLI::Range(1, 100000000))->capture_default_str();
  app.add_option("--max-atomic", o.max_atomic, "m_max: largest per-replica micro-batch")
      ->check(CLI::Range(1, 100000000))->capture_default_str();
  bool no_accum = false, no_adapt = false;
  app.add_flag("--no-accumulation", no_accum, "never use gradient accumulation");
  app.add_flag("--no-adapt", no_adapt, "keep M0 (the agent still profiles and publishes its model)");
  app.add_option("--lr", o.lr, "SGD learning rate at M0")->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--epochs", o.epochs, "training length: epochs of M0 steps (scale-invariant progress)")
      ->check(CLI::PositiveNumber)->capture_default_str();
  app.add_option("--max-steps", o.max_steps, "stop after this many optimizer steps (0: no limit)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--seed", o.seed, "seed of the initialisation and the data order")->capture_default_str();
  app.add_option("--log-every", o.log_every, "steps between progress lines")->check(CLI::Range(1, 1000000000))->capture_default_str();
  app.add_option("--checkpoint-every", o.checkpoint_every,
                 "steps between periodic checkpoints, which a job killed by a failure resumes from (0: none)")
      ->check(CLI::NonNegativeNumber)->capture_default_str();
  app.add_option("--schedule", o.schedule, "cycle through these atomic batches (profiling runs; implies --no-adapt)")
      ->delimiter(',')->check(CLI::Range(1, 100000000));
  app.add_option("--schedule-steps", o.schedule_steps, "steps per --schedule entry")
      ->check(CLI::Range(1, 1000000000))->capture_default_str();
  app.add_option("--step-delay", o.step_delay,
                 "seconds each micro-step also waits, as if for a GPU (slower demo steps); divided by "
                 "$POLLUX_GPU_SPEED where set (pollux-local-cluster --gpu-types: a faster GPU type)")
      ->check(CLI::Range(0.0, 60.0))->capture_default_str();
  app.add_option("--example-delay", o.example_delay, "and seconds more per example of its micro-batch")
      ->check(CLI::Range(0.0, 1.0))->capture_default_str();
  app.add_option("--checkpoint-delay", o.checkpoint_delay,
                 "seconds every rank's checkpoint callback also waits, as if saving a large model (fault tests)")
      ->check(CLI::Range(0.0, 600.0))->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  o.accumulation = !no_accum;
  o.adapt = !no_adapt && o.schedule.empty();
  // The emulated GPU's speed: its simulated time is shorter on a faster type.
  if (const char* v = std::getenv("POLLUX_GPU_SPEED"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    const double speed = std::strtod(v, &end);
    if (*end != '\0' || !(speed > 0) || !std::isfinite(speed)) {
      std::fprintf(stderr, "POLLUX_GPU_SPEED='%s': not a positive number\n", v);
      return 2;
    }
    o.step_delay /= speed;
    o.example_delay /= speed;
  }
  return std::nullopt;
}

pollux::AgentOptions agent_options(const TrainOptions& o) {
  pollux::AgentOptions a;
  a.limits = pollux::BatchLimits{o.init_batch, o.max_batch, o.min_atomic, o.max_atomic, o.accumulation};
  a.adapt = o.adapt;
  a.apply_environment();
  return a;
}

int train(pollux::Agent& agent, Model& model, const Dataset& data, const Layout& layout, const TrainOptions& o) {
  const bool lead = agent.rank() == 0;
  // Data-parallel replicas hold identical parameters: rank 0 saves them,
  // every rank loads them.
  agent.on_checkpoint([&](const pollux::CheckpointContext& c) {
    if (o.checkpoint_delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(o.checkpoint_delay));
    if (c.rank == 0) save_params(c.dir + "/" + kModelFile, layout, model.params());
  });
  agent.on_restore([&](const pollux::CheckpointContext& c) { model.set_params(load_params(c.dir + "/" + kModelFile, layout)); });
  if (agent.restore() && lead) {
    std::printf("resumed step %lld progress %.3f samples %lld replicas %d batch %lld\n", agent.step(), agent.progress(),
                agent.samples_seen(), agent.replicas(), agent.total_batch());
    std::fflush(stdout);  // the run may be resized again before its first progress line
  }

  const double m0 = agent.options().limits.init_batch;
  const double target = o.epochs * data.n_train() / m0;
  ExampleOrder order(data.n_train(), o.seed);
  StepTimer timer;
  long long warm_key_steps = 0;
  std::tuple<int, int> last_config{-1, -1};
  long long last_epoch = agent.samples_seen() / data.n_train();
  std::vector<int> idx;
  double val_loss = 0, val_acc = 0;

  auto report = [&](const char* what, double loss) {
    model.evaluate(val_loss, val_acc);
    if (!lead) return;
    std::printf("%s %lld epoch %.2f progress %.2f/%.2f replicas %d batch %lld (%dx%d) lr_gain %.3f loss %.4f val_acc %.4f\n",
                what, agent.step(), static_cast<double>(agent.samples_seen()) / data.n_train(), agent.progress(), target,
                agent.replicas(), agent.total_batch(), agent.atomic_batch(), agent.accum_steps() + 1, agent.lr_gain(),
                loss, val_acc);
    std::fflush(stdout);
  };

  while (agent.progress() < target && (o.max_steps == 0 || agent.step() < o.max_steps)) {
    if (!o.schedule.empty()) {
      const int want = o.schedule[static_cast<std::size_t>((agent.step() / o.schedule_steps) % static_cast<long long>(o.schedule.size()))];
      if (want != agent.atomic_batch() || agent.accum_steps() != 0) agent.set_batch_config(want, 0);
    }
    const int m = agent.atomic_batch(), s = agent.accum_steps(), r = agent.rank(), R = agent.replicas();
    if (std::make_tuple(m, s) != last_config) {
      last_config = {m, s};
      warm_key_steps = 0;
    }
    // Global batch = examples [O, O + R*m*(s+1)) of the order; micro-step k
    // of rank r takes a contiguous slice, so resizes neither skip nor
    // repeat an example.
    const long long offset = agent.samples_seen();
    const Clock::time_point t0 = Clock::now();
    for (int k = 0; k <= s; ++k) {
      idx.resize(static_cast<std::size_t>(m));
      const long long base = offset + (static_cast<long long>(k) * R + r) * m;
      for (int j = 0; j < m; ++j) idx[static_cast<std::size_t>(j)] = order.at(base + j);
      agent.micro_step_begin();
      model.compute_gradient(idx);
      const double delay = o.step_delay + o.example_delay * m;
      if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
      agent.micro_step_end(model.gradient());
    }
    pollux::GradientBuffer g = model.gradient();
    agent.synchronize(g);
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    if (++warm_key_steps > 2) timer.add(agent.nodes(), R, m, s, seconds);
    model.sgd_step(o.lr * agent.lr_gain());
    if (agent.step_end() == pollux::StepAction::kRequeueExit) return agent.options().requeue_exit_code;

    const long long epoch = agent.samples_seen() / data.n_train();
    if (epoch != last_epoch || agent.step() % o.log_every == 0) {
      last_epoch = epoch;
      report("step", model.last_loss());
    }
    if (o.checkpoint_every > 0 && agent.step() % o.checkpoint_every == 0 && agent.progress() < target) {
      // A failed checkpoint leaves the previous one in place: keep training.
      try {
        agent.checkpoint();
        if (lead)
          std::printf("checkpoint step %lld progress %.3f samples %lld\n", agent.step(), agent.progress(),
                      agent.samples_seen());
      } catch (const pollux::SupersededError&) {
        throw;  // a later run of this job trains now: stop, do not go on
      } catch (const std::runtime_error& e) {
        if (lead) std::printf("checkpoint step %lld failed: %s\n", agent.step(), e.what());
      }
      std::fflush(stdout);
    }
  }
  model.evaluate(val_loss, val_acc);
  if (lead) {
    std::printf("final step %lld progress %.4f samples %lld replicas %d val_loss %.4f val_acc %.4f\n", agent.step(),
                agent.progress(), agent.samples_seen(), agent.replicas(), val_loss, val_acc);
    timer.print();
    std::fflush(stdout);
  }
  return 0;
}

int mpi_main(int argc, char** argv, const char* name, const char* description,
             const std::function<int(const TrainOptions&, const Dataset&)>& body) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  TrainOptions opt;
  if (auto rc = parse_options(argc, argv, description, POLLUX_DIGITS_DATA, opt)) {
    MPI_Finalize();
    return *rc;
  }
  int rc = 0;
  try {
    rc = body(opt, load_digits(opt.data));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s[%d]: error: %s\n", name, rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}

}  // namespace digits
