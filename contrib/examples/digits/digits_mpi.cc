// pollux-digits: data-parallel training of the digits classifier on CPUs,
// one MPI rank per replica (Open MPI all-reduce), elastic through the
// Pollux agent. Run it with srun --mpi=pmix (or mpirun) inside an elastic
// Slurm job; see doc/agent.md.
#include <mpi.h>

#include <cstdio>
#include <exception>

#include "dataset.h"
#include "mlp_cpu.h"
#include "pollux/agent_mpi.h"
#include "trainer.h"

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  digits::TrainOptions opt;
  if (auto rc = digits::parse_options(argc, argv, "Data-parallel digits classifier on CPUs (MPI), elastic with Pollux",
                                      POLLUX_DIGITS_DATA, opt)) {
    MPI_Finalize();
    return *rc;
  }
  int rc = 0;
  try {
    const digits::Dataset data = digits::load_digits(opt.data);
    const digits::Layout layout{opt.hidden};
    auto model = digits::make_cpu_mlp(data, layout, opt.seed);
    auto agent = pollux::make_mpi_agent(MPI_COMM_WORLD, digits::agent_options(opt));
    rc = digits::train(*agent, *model, data, layout, opt);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "pollux-digits[%d]: error: %s\n", rank, e.what());
    std::fflush(stderr);
    // The other ranks may be blocked in a collective: end them all.
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}
