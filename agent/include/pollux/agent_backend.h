// The two seams of the agent: how ranks talk (Communicator) and where the
// gradients live and how they are measured (StepBackend). The library
// provides a local and an MPI communicator, a CPU backend and, in
// libpollux-agent-cuda, a CUDA/NCCL backend; an application with another
// transport can implement these.
#ifndef POLLUX_AGENT_BACKEND_H
#define POLLUX_AGENT_BACKEND_H

#include <cstddef>
#include <memory>
#include <string>

#include "pollux/agent.h"

namespace pollux {

/// Host-side collectives over the job's ranks. Every method except
/// rank/size/nodes is collective.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Distinct nodes the ranks run on.
  virtual int nodes() const = 0;
  /// Starts a SUM all-reduce of `n` doubles in place; wait_allreduce()
  /// completes it. One may be in flight at a time; other collectives may be
  /// issued meanwhile (the agent overlaps it with the gradient all-reduce).
  virtual void start_allreduce(double* values, int n) = 0;
  virtual void wait_allreduce() = 0;
  /// SUM all-reduce of a host buffer of float or double, in place.
  virtual void allreduce_sum(void* data, std::size_t count, DType dtype) = 0;
  /// Root's `data` is copied to every rank.
  virtual void broadcast(std::string& data, int root) = 0;
  virtual void barrier() = 0;
  /// MPI communicator handle in Fortran form (MPI_Comm_c2f), -1 without MPI.
  virtual int fortran_handle() const { return -1; }
};

/// What one optimizer step measured, on one rank.
struct StepRecord {
  bool valid = false;
  int micro_steps = 0;          ///< micro-steps of this rank in the step (s + 1)
  double local_sqr_sum = 0;     ///< sum over micro-steps of |local micro-gradient|^2
  int local_grads = 0;          ///< local gradients local_sqr_sum sums (0: one per micro-step)
  double sync_sqr = 0;          ///< |averaged gradient|^2 after the all-reduce
  double grad_time_sum = 0;     ///< seconds, sum over micro-steps
  double step_time = 0;         ///< seconds from the last micro-step's begin to the end of the sync
  bool has_prev = false;        ///< two-step fallback: compared with the kept previous gradient
  double prev_sqr = 0;          ///< |kept previous averaged gradient|^2
  double dot_prev = 0;          ///< <kept previous, current> averaged gradients
};

/// Measures and synchronises one rank's gradients.
class StepBackend {
 public:
  virtual ~StepBackend() = default;
  virtual void micro_begin() = 0;
  /// Adds |grad|^2 to the step's local sum; when `accumulate`, adds grad
  /// into the backend's accumulation buffer.
  virtual void micro_end(const GradientBuffer& grad, bool accumulate) = 0;
  /// grad += accumulated; all-reduce; grad /= num_grads; measures
  /// |grad|^2. TwoStep::kKeep keeps a copy of the result; kCompare
  /// measures <kept, grad> (record.has_prev) and forgets the copy.
  virtual void synchronize(GradientBuffer& grad, int num_grads, TwoStep two_step, Communicator& comm) = 0;
  /// The record of the last synchronised step, once its measurements are
  /// available (a GPU backend waits for them here); invalid if none.
  virtual StepRecord take_record() = 0;
  /// Forgets the kept gradient and any half-finished step (after a
  /// configuration change or a restore).
  virtual void reset() = 0;
};

/// A single-process communicator (one rank).
std::unique_ptr<Communicator> make_local_communicator();
/// Host buffers (float, double), steady-clock timing.
std::unique_ptr<StepBackend> make_cpu_backend();

}  // namespace pollux

#endif  // POLLUX_AGENT_BACKEND_H
