// The data-parallel training loop shared by the CPU (MPI) and GPU (NCCL)
// digits trainers: command line, checkpoint callbacks, the step protocol
// of the agent, deterministic data placement, progress lines.
#ifndef POLLUX_EXAMPLES_TRAINER_H
#define POLLUX_EXAMPLES_TRAINER_H

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dataset.h"
#include "model.h"
#include "pollux/agent.h"

namespace digits {

struct TrainOptions {
  std::string data;            ///< digits.csv.gz
  int hidden = 256;
  double init_batch = 64;      ///< M0
  double max_batch = 1024;
  int min_atomic = 8;
  int max_atomic = 256;
  bool accumulation = true;
  bool adapt = true;
  double lr = 0.1;             ///< SGD learning rate at M0 (scaled by the AdaScale gain)
  double epochs = 30;          ///< training length in epochs of M0 steps (scale-invariant)
  long long max_steps = 0;     ///< stop after this many optimizer steps (0: no limit)
  std::uint64_t seed = 1;
  int log_every = 50;          ///< steps between progress lines (plus one per epoch)
  long long checkpoint_every = 0;  ///< steps between periodic checkpoints (0: only the scheduler's)
  std::vector<int> schedule;   ///< fixed atomic batches to cycle through (implies no adaptation)
  int schedule_steps = 50;
  double step_delay = 0;       ///< seconds each micro-step sleeps, as a host waiting for a GPU would (demos)
  double example_delay = 0;    ///< and seconds more per example of the micro-batch
                               ///< (both divided by $POLLUX_GPU_SPEED where set: an emulated GPU type's speed)
  double checkpoint_delay = 0; ///< seconds every rank's checkpoint callback also takes (a large model; fault tests)
};

/// Parses the command line. Returns an exit code when the program should
/// stop (--help: 0; a wrong option: 2, after a message on stderr).
std::optional<int> parse_options(int argc, char** argv, const char* description, const std::string& default_data,
                                 TrainOptions& options);

/// The agent's options: the job's batch limits from the command line, then
/// POLLUX_* environment overrides.
pollux::AgentOptions agent_options(const TrainOptions& options);

/// Trains until the scale-invariant progress reaches `epochs` worth of M0
/// steps (or max_steps). Returns the process exit code (the agent's
/// requeue exit code after a checkpoint in RequeueMode::kExit).
int train(pollux::Agent& agent, Model& model, const Dataset& data, const Layout& layout,
          const TrainOptions& options);

/// A trainer's main(): MPI_Init, the command line, then `body` with the
/// options and the loaded dataset; an exception is reported as
/// "<name>[rank]: error: ..." and ends every rank (MPI_Abort), since the
/// others may be blocked in a collective. Returns the exit code.
int mpi_main(int argc, char** argv, const char* name, const char* description,
             const std::function<int(const TrainOptions&, const Dataset&)>& body);

}  // namespace digits

#endif  // POLLUX_EXAMPLES_TRAINER_H
