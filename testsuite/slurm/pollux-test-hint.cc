// pollux-test-hint: writes a job's hint file the way the agent does
// (write_hint_file: atomic, validated format), for the integration tests'
// job scripts, which stand in for a training job: they profile nothing,
// but publish a model that scales well or poorly, and acknowledge
// checkpoint requests.
//
//   pollux-test-hint --spool DIR [--job ID] [--scaling good|poor|none]
//                    [--profiled R] [--ack] [--step N] [--signal SIG]
//                    [--gpu-type NAME] [--speed S] [--ran-on TYPE:SPEED...]
// Job id, node and replica counts and the restart count default to the
// job's SLURM_* environment; the GPU type and its speed to what
// pollux-local-cluster --gpu-types's TaskProlog exports (POLLUX_GPU_TYPE,
// POLLUX_GPU_SPEED): the model's compute time is divided by the speed, as
// if measured there. --ran-on names the types the job ran on before (the
// job script keeps them across restarts): each but the current one gets
// the model's fit there (type_perf), as the agent keeps a fit per type.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>

#include "pollux/gpu_type.h"
#include "pollux/hint.h"

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : fallback;
}

double now() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

// The "good" model (compute-bound, cheap synchronisation) as measured on
// a GPU `speed` times as fast as the base one.
pollux::PerfParams good_perf(double speed) {
  pollux::PerfParams p{0.05, 0.002, 0.01, 0.0005, 0.005, 0.0002, 1.5};
  p.alpha_c /= speed;
  p.beta_c /= speed;
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Writes a test hint file into the sched/pollux spool"};
  std::string spool, scaling = "good";
  int job = env_int("SLURM_JOB_ID", 0);
  int profiled = -1;
  long long step = 100;
  bool ack = false;
  int signal = 10;  // SIGUSR1: the job is elastic
  app.add_option("--spool", spool, "spool directory")->required();
  app.add_option("--job", job, "job id (default: $SLURM_JOB_ID)");
  app.add_option("--scaling", scaling, "good, poor or none (no model yet)")
      ->check(CLI::IsMember({"good", "poor", "none"}));
  app.add_option("--profiled", profiled, "most replicas profiled (default: the job's GPUs)");
  app.add_option("--step", step, "optimizer steps taken");
  app.add_option("--signal", signal, "the resize signal announced (0: none, a moldable job; default 10, USR1)");
  const char* env_type = std::getenv("POLLUX_GPU_TYPE");
  const char* env_speed = std::getenv("POLLUX_GPU_SPEED");
  std::string gpu_type = env_type != nullptr ? env_type : "";
  double speed = env_speed != nullptr && *env_speed != '\0' ? std::atof(env_speed) : 1.0;
  app.add_option("--gpu-type", gpu_type, "the GPU type measured on (default: $POLLUX_GPU_TYPE; empty: unknown)");
  app.add_option("--speed", speed, "the GPU's relative speed (default: $POLLUX_GPU_SPEED, else 1)")
      ->check(CLI::PositiveNumber);
  std::vector<std::string> ran_on;
  app.add_option("--ran-on", ran_on, "TYPE:SPEED of a GPU type the job ran on before (repeatable)");
  app.add_flag("--ack", ack, "acknowledge a checkpoint request (checkpoint.ready_for_requeue, now)");
  CLI11_PARSE(app, argc, argv);
  if (job <= 0) {
    std::cerr << "pollux-test-hint: no job id (--job or SLURM_JOB_ID)\n";
    return 2;
  }

  pollux::Hint h;
  h.job_id = static_cast<std::uint32_t>(job);
  h.uid = ::getuid();
  h.timestamp = now();
  h.restart_count = env_int("SLURM_RESTART_COUNT", 0);
  h.limits = pollux::BatchLimits{64, 8192, 8, 256, true};
  // The job's GPUs (POLLUX_TEST_GPUS, from the batch script: inside a
  // one-task step SLURM_NTASKS is 1).
  const int nodes = std::max(1, env_int("SLURM_JOB_NUM_NODES", 1));
  const int replicas = std::max(nodes, env_int("POLLUX_TEST_GPUS", env_int("SLURM_NTASKS", 1)));
  h.config = pollux::HintConfig{nodes, replicas, 64, 0};
  h.step = step;
  h.progress = static_cast<double>(step);
  h.max_profiled_replicas = profiled >= 0 ? profiled : replicas;
  if (scaling == "good") {  // compute-bound, cheap synchronisation, large gradient noise scale
    h.perf = good_perf(1.0);
    h.grad = pollux::GradStats{0.01, 10.0};
  } else if (scaling == "poor") {  // synchronisation dominates: more GPUs slow it down
    h.perf = pollux::PerfParams{0.01, 0.0001, 5.0, 1.0, 5.0, 1.0, 1.0};
    h.grad = pollux::GradStats{10.0, 0.01};
  }
  if (h.perf && speed > 0) {
    h.perf->alpha_c /= speed;
    h.perf->beta_c /= speed;
  }
  h.gpu_type = pollux::normalize_gpu_type(gpu_type);
  if (scaling == "good")  // on each other type at its speed
    for (const std::string& r : ran_on) {
      const std::size_t colon = r.rfind(':');
      const std::string name = pollux::normalize_gpu_type(r.substr(0, colon));
      const double s = colon == std::string::npos ? 1.0 : std::atof(r.c_str() + colon + 1);
      if (name.empty() || name == h.gpu_type || !(s > 0) || h.type_perf.size() >= pollux::kHintMaxTypes) continue;
      bool dup = false;
      for (const pollux::HintTypePerf& t : h.type_perf) dup = dup || t.gpu_type == name;
      if (dup) continue;
      h.type_perf.push_back(pollux::HintTypePerf{name, good_perf(s)});
    }
  h.resize_signal = signal;
  if (ack) h.checkpoint = pollux::HintCheckpoint{step, now(), true};
  const std::string err = pollux::write_hint_file(spool, h);
  if (!err.empty()) {
    std::cerr << "pollux-test-hint: " << err << "\n";
    return 1;
  }
  return 0;
}
