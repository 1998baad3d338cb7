// Agents over MPI: one per rank of `comm` (duplicated, so the agent's
// collectives never mix with the application's).
#ifndef POLLUX_AGENT_MPI_H
#define POLLUX_AGENT_MPI_H

#include <mpi.h>

#include <memory>

#include "pollux/agent.h"
#include "pollux/agent_backend.h"

namespace pollux {

/// Host-side collectives over a duplicate of `comm`; nodes() counts the
/// distinct SLURMD_NODENAME (else host) names of the ranks. Collective.
std::unique_ptr<Communicator> make_mpi_communicator(MPI_Comm comm);

/// A CPU agent: gradients in host memory (float, double), summed with
/// MPI_Allreduce. Collective over `comm`.
std::unique_ptr<Agent> make_mpi_agent(MPI_Comm comm, AgentOptions options);

}  // namespace pollux

#endif  // POLLUX_AGENT_MPI_H
