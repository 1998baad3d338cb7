/* libpollux-agent, C interface: for C programs and for Python's ctypes.
 *
 * The same agent as pollux/agent.h, behind an opaque handle. Functions
 * that can fail return 0 on success and -1 on failure; the reason is then
 * in pollux_agent_last_error() (thread-local, one line). No C++ exception
 * crosses this interface. The MPI communicator is passed in its Fortran
 * form (MPI_Comm_c2f(comm) in C, comm.py2f() in mpi4py) so that this
 * header needs no mpi.h; -1 means "no MPI, one process".
 *
 * See doc/agent.md for a complete training loop. */
#ifndef POLLUX_AGENT_C_H
#define POLLUX_AGENT_C_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pollux_agent pollux_agent;

enum pollux_dtype { POLLUX_FLOAT32 = 0, POLLUX_FLOAT64 = 1, POLLUX_FLOAT16 = 2, POLLUX_BFLOAT16 = 3 };
enum pollux_requeue_mode { POLLUX_REQUEUE_WAIT = 0, POLLUX_REQUEUE_EXIT = 1 };
enum pollux_step_action { POLLUX_CONTINUE = 0, POLLUX_REQUEUE_EXIT_NOW = 1 };

/* The fields of the structs below, in order, each as X(type, name): the
 * structs are declared from these lists and the library reports their
 * layout from them (pollux_agent_struct_layout), so that a binding's
 * declarations (Python's pollux._capi) are checked against the library it
 * loads rather than trusted.
 *
 * The agent's options are one list: X(C type, C name, AgentOptions member,
 * environment variable ("" for none), how the variable is read, lowest,
 * highest). The C struct, the C <-> C++ conversions and
 * AgentOptions::apply_environment() are all expanded from it; the defaults
 * and what each option means are AgentOptions' (pollux/agent.h). */
#define POLLUX_AGENT_OPTIONS_FIELDS(X)                                                               \
  X(double, init_batch, limits.init_batch, "POLLUX_INIT_BATCH", real, 1, 1e9)                        \
  X(double, max_batch, limits.max_batch, "POLLUX_MAX_BATCH", real, 1, 1e9)                           \
  X(int, min_atomic, limits.min_atomic, "POLLUX_MIN_ATOMIC", integer, 1, 100000000)                  \
  X(int, max_atomic, limits.max_atomic, "POLLUX_MAX_ATOMIC", integer, 1, 100000000)                  \
  X(int, accumulation, limits.accumulation, "POLLUX_ACCUMULATION", boolean, 0, 1)                    \
  X(int, adapt, adapt, "POLLUX_ADAPT", boolean, 0, 1)                                                \
  X(double, smoothing, smoothing, "", none, 0, 1)                                                    \
  X(const char*, spool_dir, spool_dir, "POLLUX_SPOOL_DIR", text, 0, 0) /* NULL: the default */       \
  X(int, write_hints, write_hints, "POLLUX_HINTS", boolean, 0, 1)                                    \
  X(double, hint_interval, hint_interval, "POLLUX_HINT_INTERVAL", real, 0, 86400)                    \
  X(const char*, checkpoint_dir, checkpoint_dir, "POLLUX_CHECKPOINT_DIR", text, 0, 0) /* NULL: default */ \
  X(int, requeue_mode, requeue_mode, "POLLUX_REQUEUE_MODE", requeue_mode, 0, 1) /* pollux_requeue_mode */ \
  X(double, requeue_wait, requeue_wait, "POLLUX_REQUEUE_WAIT", real, 0, 86400 * 7)                   \
  X(int, requeue_exit_code, requeue_exit_code, "POLLUX_REQUEUE_EXIT_CODE", integer, 1, 255)          \
  X(int, resize_signal, resize_signal, "POLLUX_RESIZE_SIGNAL", signal, 0, 64) /* 0: none */          \
  X(int, verbose, verbose, "POLLUX_VERBOSE", integer, 0, 3)                                          \
  X(double, checkpoint_interval, checkpoint_interval, "POLLUX_CHECKPOINT_INTERVAL", real, 0, 86400.0 * 365) \
  X(const char*, gpu_type, gpu_type, "POLLUX_GPU_TYPE", text, 0, 0) /* NULL: $POLLUX_GPU_TYPE, else device_name */ \
  X(const char*, device_name, device_name, "", none, 0, 0) /* the GPU's name (a framework's); NULL: none (a CUDA agent: its device's) */

#define POLLUX_C_FIELD(type, name) type name;
#define POLLUX_C_OPTION(type, name, member, env, read, lo, hi) type name;

typedef struct pollux_agent_options {
  POLLUX_AGENT_OPTIONS_FIELDS(POLLUX_C_OPTION)
} pollux_agent_options;

/* Defaults of AgentOptions (M0 = M_max = 1, m in [1, 1]: set the limits). */
void pollux_agent_options_init(pollux_agent_options* options);
/* Applies POLLUX_* environment overrides. 0 or -1. */
int pollux_agent_options_from_env(pollux_agent_options* options);
/* 1 if a committed checkpoint waits in the checkpoint directory these
 * options name (what restore() would resume from), 0 if none, -1 on error:
 * a framework's "resumed?" before its agent exists. */
int pollux_agent_checkpoint_waiting(const pollux_agent_options* options);

/* A CPU agent (float32/float64 host buffers). Collective over the MPI
 * communicator `mpi_comm_f` (Fortran handle), or single-process with -1.
 * NULL on failure. */
pollux_agent* pollux_agent_create(const pollux_agent_options* options, int mpi_comm_f);
/* A GPU agent (libpollux-agent-cuda): gradients in device memory (float32,
 * float64, float16, bfloat16) on the CUDA stream `cuda_stream` (a
 * cudaStream_t; NULL for the default stream), all-reduced by NCCL over a
 * communicator it creates on `mpi_comm_f`. Call cudaSetDevice() first.
 * NULL on failure. */
pollux_agent* pollux_agent_create_cuda(const pollux_agent_options* options, int mpi_comm_f, void* cuda_stream);
void pollux_agent_destroy(pollux_agent* agent);

/* --- The framework-neutral mode (doc/agent.md) ---------------------------
 * The framework (e.g. PyTorch DDP) all-reduces the gradients; the agent's
 * own small collectives go through these callbacks, each called by every
 * rank in the same order; they return 0 on success. */
/* SUM all-reduce of `count` doubles in place. */
typedef int (*pollux_allreduce_fn)(double* values, int count, void* user);
/* Root's `bytes` bytes at `data` are copied to every rank's `data`. */
typedef int (*pollux_broadcast_fn)(void* data, size_t bytes, int root, void* user);

#define POLLUX_COMMUNICATOR_FIELDS(X)                                                       \
  X(int, rank)                                                                              \
  X(int, size)                                                                              \
  X(int, nodes) /* distinct nodes the ranks run on */                                       \
  X(pollux_allreduce_fn, allreduce_sum)                                                     \
  X(pollux_broadcast_fn, broadcast)                                                         \
  X(void*, user)

typedef struct pollux_communicator {
  POLLUX_COMMUNICATOR_FIELDS(POLLUX_C_FIELD)
} pollux_communicator;

/* What one rank measured in one optimizer step (struct GradientNorms in
 * pollux/agent.h), every squared norm summed over the buckets. */
#define POLLUX_GRADIENT_NORMS_FIELDS(X)                                                     \
  X(double, local_sqr) /* sum of |local gradient|^2 before the all-reduce */                \
  X(int, local_grads)  /* local gradients in local_sqr: 1, or accum_steps + 1 (one per micro-step) */ \
  X(double, sync_sqr)  /* |averaged gradient|^2 after it */                                 \
  X(int, has_prev)     /* two-step phase "compare" only: */                                 \
  X(double, prev_sqr)  /*   |kept gradient|^2 */                                            \
  X(double, dot_prev)  /*   <kept, current> */

typedef struct pollux_gradient_norms {
  POLLUX_GRADIENT_NORMS_FIELDS(POLLUX_C_FIELD)
} pollux_gradient_norms;

enum pollux_two_step { POLLUX_TWO_STEP_OFF = 0, POLLUX_TWO_STEP_KEEP = 1, POLLUX_TWO_STEP_COMPARE = 2 };

/* A framework-neutral agent over `comm` (the callbacks are copied; `user`
 * must outlive the agent), or one process with NULL. Collective. NULL on
 * failure. */
pollux_agent* pollux_agent_create_external(const pollux_agent_options* options, const pollux_communicator* comm);
/* A buffer-mode CPU agent (the agent all-reduces float32/float64 host
 * buffers) whose collectives go through `comm`, as above. */
pollux_agent* pollux_agent_create_with_communicator(const pollux_agent_options* options, const pollux_communicator* comm);
/* Ends a micro-step's computation (no gradient buffer in this mode). */
int pollux_agent_micro_step_done(pollux_agent* agent);
/* Once the framework's all-reduce of the last micro-step is done. Collective. */
int pollux_agent_synchronized(pollux_agent* agent, const pollux_gradient_norms* norms);
/* The previous step as measured on the application's device (struct
 * StepMeasurement in pollux/agent.h). */
#define POLLUX_STEP_MEASUREMENT_FIELDS(X)                                                   \
  X(pollux_gradient_norms, norms)                                                           \
  X(double, grad_time_sum) /* seconds, over the micro-steps (see agent.h) */                \
  X(int, micro_steps)                                                                       \
  X(double, step_time)     /* seconds, last micro-step's batch to the next step's first */

typedef struct pollux_step_measurement {
  POLLUX_STEP_MEASUREMENT_FIELDS(POLLUX_C_FIELD)
} pollux_step_measurement;
/* In place of synchronized(): `previous` (NULL: none) is the previous
 * step's measurement, read a step late; `skipped` non-zero: this step's
 * update was left out (no progress, no statistics). Collective. */
int pollux_agent_synchronized_late(pollux_agent* agent, const pollux_step_measurement* previous, int skipped);
/* enum pollux_two_step for the next step (constant from step_end to synchronized). */
int pollux_agent_two_step_phase(const pollux_agent* agent);

/* Checkpoint callbacks: write / read the application's state in `dir`.
 * Return 0 on success, non-zero on failure. */
typedef int (*pollux_checkpoint_fn)(const char* dir, int rank, int replicas, long long step, void* user);
void pollux_agent_on_checkpoint(pollux_agent* agent, pollux_checkpoint_fn fn, void* user);
void pollux_agent_on_restore(pollux_agent* agent, pollux_checkpoint_fn fn, void* user);
/* Called on every rank once a resize's checkpoint is committed, before the
 * agent acknowledges it and waits for Slurm's requeue (which ends the
 * process with SIGTERM) or step_end() returns POLLUX_REQUEUE_EXIT_NOW: flush the
 * program's own logs there. Non-zero is logged; the resize goes on. */
typedef int (*pollux_requeue_fn)(void* user);
void pollux_agent_on_requeue(pollux_agent* agent, pollux_requeue_fn fn, void* user);

/* 1 if a checkpoint was restored, 0 if there was none, -1 on failure. Collective. */
int pollux_agent_restore(pollux_agent* agent);
/* Checkpoint now, between steps. Collective. */
int pollux_agent_checkpoint(pollux_agent* agent);

int pollux_agent_atomic_batch(const pollux_agent* agent);
int pollux_agent_accum_steps(const pollux_agent* agent);
long long pollux_agent_total_batch(const pollux_agent* agent);
double pollux_agent_lr_gain(const pollux_agent* agent);
long long pollux_agent_step(const pollux_agent* agent);
long long pollux_agent_samples_seen(const pollux_agent* agent);
double pollux_agent_progress(const pollux_agent* agent);
int pollux_agent_rank(const pollux_agent* agent);
int pollux_agent_replicas(const pollux_agent* agent);
int pollux_agent_nodes(const pollux_agent* agent);
int pollux_agent_requeue_exit_code(const pollux_agent* agent);
/* Gradient statistics: 1 and *sqr, *var set when measured, else 0. */
int pollux_agent_grad_stats(const pollux_agent* agent, double* sqr, double* var);

int pollux_agent_micro_step_begin(pollux_agent* agent);
int pollux_agent_micro_step_end(pollux_agent* agent, const void* grad, size_t count, int dtype);
int pollux_agent_synchronize(pollux_agent* agent, void* grad, size_t count, int dtype);
/* enum pollux_step_action, or -1 on failure. Collective. */
int pollux_agent_step_end(pollux_agent* agent);

/* The largest micro-batch the agent configures (Agent::max_atomic): the
 * job's max_atomic, lowered by what running out of memory taught it. */
int pollux_agent_max_atomic(const pollux_agent* agent);
/* Micro-batch `micro_batch` ran out of memory on this rank (not collective;
 * Agent::out_of_memory, doc/agent.md "Memory"): lowers max_atomic and keeps
 * it in the checkpoint directory for the job's later runs. Returns the new
 * max_atomic, or -1 when `micro_batch` is the job's smallest (nothing
 * smaller to try) or the limit could not be kept (the reason says which). */
int pollux_agent_out_of_memory(pollux_agent* agent, int micro_batch);
/* Declares the job's parameters sharded across its ranks (FSDP; `sharded`
 * 1) or not (0, the default: DDP), Agent::set_sharded: rank 0 then fits
 * the throughput model's sharded form, whose communication (all-gathers,
 * reduce-scatters) is paid in every micro-step, and its hint carries
 * `perf.sharded: true` for the scheduler (doc/hint-format.md). Call it on
 * every rank before the first step; pollux.torch's ElasticFSDP does.
 * Returns 0, or -1 (any other value of `sharded`, a null agent). */
int pollux_agent_set_sharded(pollux_agent* agent, int sharded);
/* 1 when declared sharded, 0 when not, -1 for a null agent. */
int pollux_agent_sharded(const pollux_agent* agent);
/* Sets the batch configuration from the next step on (Agent::set_batch_config). */
int pollux_agent_set_batch_config(pollux_agent* agent, int atomic_batch, int accum_steps);
/* The fitted model's seconds per optimizer step at a configuration (rank 0,
 * once fitted): 1 and *seconds set, else 0. */
int pollux_agent_predict_iter_time(const pollux_agent* agent, int nodes, int replicas, int atomic_batch,
                                   int accum_steps, double* seconds);
/* The profiled configurations (medians of the measured step times): fills
 * up to `max` and returns how many there are. */
#define POLLUX_PROFILE_SAMPLE_FIELDS(X)                                                     \
  X(int, nodes)                                                                             \
  X(int, replicas)                                                                          \
  X(double, atomic_batch)                                                                   \
  X(double, grad_time)                                                                      \
  X(double, step_time)

typedef struct pollux_profile_sample {
  POLLUX_PROFILE_SAMPLE_FIELDS(POLLUX_C_FIELD)
} pollux_profile_sample;
int pollux_agent_profile(const pollux_agent* agent, pollux_profile_sample* out, int max);

const char* pollux_agent_last_error(void);

/* The layout of one of this header's structs as this library was built
 * with it: "<sizeof>;<field>:<kind>:<offset>:<size>;..." (kind: d double,
 * i int, q long long, p pointer, s a struct of this header), fields in order; NULL for an unknown
 * name. `name`: "pollux_agent_options", "pollux_communicator",
 * "pollux_gradient_norms" or "pollux_profile_sample". */
const char* pollux_agent_struct_layout(const char* name);

/* The resize signal: when the program has installed its own handler for it
 * since the agent was made (sigaction, signal), puts the agent's handler
 * back in front of it; deliveries that are not resize requests still reach
 * the program's handler. Returns 1 when it did, 0 otherwise. The agent
 * does this by itself at every step boundary; call it right after
 * installing a handler to cover the steps in between (doc/agent.md). */
int pollux_agent_reclaim_signal(void);

#ifdef __cplusplus
}
#endif

#endif /* POLLUX_AGENT_C_H */
