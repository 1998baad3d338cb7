// pollux-digits: data-parallel training of the digits classifier on CPUs,
// one MPI rank per replica (Open MPI all-reduce), elastic through the
// Pollux agent. Run it with srun --mpi=pmix (or mpirun) inside an elastic
// Slurm job; see doc/agent.md.
#include "mlp_cpu.h"
#include "pollux/agent_mpi.h"
#include "trainer.h"

int main(int argc, char** argv) {
  return digits::mpi_main(argc, argv, "pollux-digits", "Data-parallel digits classifier on CPUs (MPI), elastic with Pollux",
                          [](const digits::TrainOptions& opt, const digits::Dataset& data) {
                            const digits::Layout layout{opt.hidden};
                            auto model = digits::make_cpu_mlp(data, layout, opt.seed);
                            auto agent = pollux::make_mpi_agent(MPI_COMM_WORLD, digits::agent_options(opt));
                            return digits::train(*agent, *model, data, layout, opt);
                          });
}
