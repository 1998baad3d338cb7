// The C interface (see pollux/agent_c.h).
#include "config.h"

#include "c_handle.h"
#include "resize_signal.h"
#include "pollux/agent_backend.h"
#if POLLUX_HAVE_MPI
#include "pollux/agent_mpi.h"
#endif

#include <optional>
#include <stdexcept>
#include <vector>

using pollux::agent_detail::c_call;
using pollux::agent_detail::set_c_error;

namespace pollux::agent_detail {

namespace {
thread_local std::string t_error;
}

void set_c_error(const std::string& message) { t_error = message; }

namespace {
// One C option into its AgentOptions member, by the member's type.
void from_c_value(double& to, double v) { to = v; }
void from_c_value(int& to, int v) { to = v; }
void from_c_value(bool& to, int v) { to = v != 0; }
void from_c_value(std::string& to, const char* v) { to = v != nullptr ? v : ""; }
void from_c_value(RequeueMode& to, int v) { to = v == POLLUX_REQUEUE_EXIT ? RequeueMode::kExit : RequeueMode::kWait; }
}  // namespace

AgentOptions from_c(const pollux_agent_options& o) {
  AgentOptions a;
#define POLLUX_FROM_C(type, name, member, env, read, lo, hi) from_c_value(a.member, o.name);
  POLLUX_AGENT_OPTIONS_FIELDS(POLLUX_FROM_C)
#undef POLLUX_FROM_C
  return a;
}

}  // namespace pollux::agent_detail

namespace {

pollux::DType to_dtype(int t) {
  switch (t) {
    case POLLUX_FLOAT32: return pollux::DType::kFloat32;
    case POLLUX_FLOAT64: return pollux::DType::kFloat64;
    case POLLUX_FLOAT16: return pollux::DType::kFloat16;
    case POLLUX_BFLOAT16: return pollux::DType::kBFloat16;
    default: break;
  }
  throw std::invalid_argument("unknown dtype " + std::to_string(t));
}

pollux::Agent& get(pollux_agent* a) {
  if (a == nullptr || !a->agent) throw std::invalid_argument("null agent");
  return *a->agent;
}

// The C options' numbers from C++ options (the directory strings are the
// caller's and stay as they are).
void to_c_value(double& to, double v) { to = v; }
void to_c_value(int& to, int v) { to = v; }
void to_c_value(int& to, bool v) { to = v ? 1 : 0; }
void to_c_value(const char*&, const std::string&) {}
void to_c_value(int& to, pollux::RequeueMode v) {
  to = v == pollux::RequeueMode::kExit ? POLLUX_REQUEUE_EXIT : POLLUX_REQUEUE_WAIT;
}

void to_c(const pollux::AgentOptions& a, pollux_agent_options* o) {
#define POLLUX_TO_C(type, name, member, env, read, lo, hi) to_c_value(o->name, a.member);
  POLLUX_AGENT_OPTIONS_FIELDS(POLLUX_TO_C)
#undef POLLUX_TO_C
}

pollux::CheckpointFn c_callback(pollux_checkpoint_fn fn, void* user, const char* what) {
  if (fn == nullptr) return {};
  return [fn, user, what](const pollux::CheckpointContext& c) {
    const int rc = fn(c.dir.c_str(), c.rank, c.replicas, c.step, user);
    if (rc != 0) throw std::runtime_error(std::string(what) + " callback returned " + std::to_string(rc));
  };
}

// The agent's collectives through the application's callbacks (the
// framework-neutral mode). Synchronous: start_allreduce() completes at once.
class CallbackCommunicator final : public pollux::Communicator {
 public:
  explicit CallbackCommunicator(const pollux_communicator& c) : c_(c) {
    if (c_.allreduce_sum == nullptr || c_.broadcast == nullptr)
      throw std::invalid_argument("communicator: allreduce_sum and broadcast callbacks are required");
    if (c_.size < 1 || c_.rank < 0 || c_.rank >= c_.size || c_.nodes < 1 || c_.nodes > c_.size)
      throw std::invalid_argument("communicator: rank " + std::to_string(c_.rank) + ", size " +
                                  std::to_string(c_.size) + ", nodes " + std::to_string(c_.nodes) + " are inconsistent");
  }
  int rank() const override { return c_.rank; }
  int size() const override { return c_.size; }
  int nodes() const override { return c_.nodes; }
  void start_allreduce(double* values, int n) override { sum(values, n); }
  void wait_allreduce() override {}
  void allreduce_sum(void* data, std::size_t count, pollux::DType dtype) override {
    if (dtype == pollux::DType::kFloat64) return sum(static_cast<double*>(data), static_cast<int>(count));
    if (dtype != pollux::DType::kFloat32) throw std::invalid_argument("communicator: float32/float64 sums only");
    float* f = static_cast<float*>(data);
    std::vector<double> d(f, f + count);
    sum(d.data(), static_cast<int>(count));
    for (std::size_t i = 0; i < count; ++i) f[i] = static_cast<float>(d[i]);
  }
  void broadcast(std::string& data, int root) override {
    double len = c_.rank == root ? static_cast<double>(data.size()) : 0.0;
    sum(&len, 1);
    data.resize(static_cast<std::size_t>(len));
    if (!data.empty() && c_.broadcast(data.data(), data.size(), root, c_.user) != 0)
      throw std::runtime_error("communicator: the broadcast callback failed");
  }
  void barrier() override {
    double one = 1;
    sum(&one, 1);
  }

 private:
  void sum(double* values, int n) {
    if (c_.allreduce_sum(values, n, c_.user) != 0) throw std::runtime_error("communicator: the all-reduce callback failed");
  }
  pollux_communicator c_;
};

}  // namespace

extern "C" {

void pollux_agent_options_init(pollux_agent_options* o) {
  if (o == nullptr) return;
  *o = pollux_agent_options{};
  to_c(pollux::AgentOptions{}, o);
  o->spool_dir = nullptr;
  o->checkpoint_dir = nullptr;
}

int pollux_agent_options_from_env(pollux_agent_options* o) {
  return c_call([&] {
    if (o == nullptr) throw std::invalid_argument("null options");
    pollux::AgentOptions a = pollux::agent_detail::from_c(*o);
    a.apply_environment();
    // The text options stay as given: the agent reads POLLUX_SPOOL_DIR,
    // POLLUX_CHECKPOINT_DIR and POLLUX_GPU_TYPE itself when they are NULL.
    to_c(a, o);
    return 0;
  });
}

int pollux_agent_checkpoint_waiting(const pollux_agent_options* o) {
  return c_call([&] {
    if (o == nullptr) throw std::invalid_argument("null options");
    return pollux::checkpoint_waiting(pollux::agent_detail::from_c(*o)) ? 1 : 0;
  });
}

pollux_agent* pollux_agent_create(const pollux_agent_options* o, int mpi_comm_f) {
  pollux_agent* handle = nullptr;
  c_call([&] {
    if (o == nullptr) throw std::invalid_argument("null options");
    pollux::AgentOptions a = pollux::agent_detail::from_c(*o);
    std::unique_ptr<pollux::Agent> agent;
    if (mpi_comm_f == -1) {
      agent = pollux::make_local_agent(std::move(a));
    } else {
#if POLLUX_HAVE_MPI
      agent = pollux::make_mpi_agent(MPI_Comm_f2c(static_cast<MPI_Fint>(mpi_comm_f)), std::move(a));
#else
      throw std::invalid_argument("libpollux-agent was built without MPI: pass -1 for a single process");
#endif
    }
    handle = new pollux_agent{std::move(agent)};
    return 0;
  });
  return handle;
}

void pollux_agent_destroy(pollux_agent* a) { delete a; }

pollux_agent* pollux_agent_create_external(const pollux_agent_options* o, const pollux_communicator* comm) {
  pollux_agent* handle = nullptr;
  c_call([&] {
    if (o == nullptr) throw std::invalid_argument("null options");
    std::unique_ptr<pollux::Communicator> c;
    if (comm != nullptr) c = std::make_unique<CallbackCommunicator>(*comm);
    handle = new pollux_agent{pollux::make_external_agent(std::move(c), pollux::agent_detail::from_c(*o))};
    return 0;
  });
  return handle;
}

pollux_agent* pollux_agent_create_with_communicator(const pollux_agent_options* o, const pollux_communicator* comm) {
  pollux_agent* handle = nullptr;
  c_call([&] {
    if (o == nullptr || comm == nullptr) throw std::invalid_argument("null options or communicator");
    handle = new pollux_agent{std::make_unique<pollux::Agent>(
        std::make_unique<CallbackCommunicator>(*comm), pollux::make_cpu_backend(), pollux::agent_detail::from_c(*o),
        pollux::JobEnvironment::from_environment())};
    return 0;
  });
  return handle;
}

int pollux_agent_micro_step_done(pollux_agent* a) {
  return c_call([&] {
    get(a).micro_step_end();
    return 0;
  });
}

namespace {
pollux::GradientNorms norms_from_c(const pollux_gradient_norms& n) {
  pollux::GradientNorms g;
  g.local_sqr = n.local_sqr;
  g.local_grads = n.local_grads;
  g.sync_sqr = n.sync_sqr;
  g.has_prev = n.has_prev != 0;
  g.prev_sqr = n.prev_sqr;
  g.dot_prev = n.dot_prev;
  return g;
}
}  // namespace

int pollux_agent_synchronized(pollux_agent* a, const pollux_gradient_norms* n) {
  return c_call([&] {
    if (n == nullptr) throw std::invalid_argument("null norms");
    get(a).synchronized(norms_from_c(*n));
    return 0;
  });
}

int pollux_agent_synchronized_late(pollux_agent* a, const pollux_step_measurement* m, int skipped) {
  return c_call([&] {
    std::optional<pollux::StepMeasurement> prev;
    if (m != nullptr) prev = pollux::StepMeasurement{norms_from_c(m->norms), m->grad_time_sum, m->micro_steps,
                                                     m->step_time};
    get(a).synchronized_late(prev ? &*prev : nullptr, skipped != 0);
    return 0;
  });
}

int pollux_agent_two_step_phase(const pollux_agent* a) {
  if (a == nullptr || !a->agent) return -1;
  switch (a->agent->two_step_phase()) {
    case pollux::TwoStep::kKeep: return POLLUX_TWO_STEP_KEEP;
    case pollux::TwoStep::kCompare: return POLLUX_TWO_STEP_COMPARE;
    case pollux::TwoStep::kOff: break;
  }
  return POLLUX_TWO_STEP_OFF;
}

void pollux_agent_on_checkpoint(pollux_agent* a, pollux_checkpoint_fn fn, void* user) {
  if (a != nullptr && a->agent) a->agent->on_checkpoint(c_callback(fn, user, "checkpoint"));
}

void pollux_agent_on_restore(pollux_agent* a, pollux_checkpoint_fn fn, void* user) {
  if (a != nullptr && a->agent) a->agent->on_restore(c_callback(fn, user, "restore"));
}

void pollux_agent_on_requeue(pollux_agent* a, pollux_requeue_fn fn, void* user) {
  if (a == nullptr || !a->agent) return;
  pollux::RequeueFn f;
  if (fn != nullptr)
    f = [fn, user] {
      if (const int rc = fn(user); rc != 0) throw std::runtime_error("returned " + std::to_string(rc));
    };
  a->agent->on_requeue(std::move(f));
}

int pollux_agent_restore(pollux_agent* a) {
  return c_call([&] { return get(a).restore() ? 1 : 0; });
}

int pollux_agent_checkpoint(pollux_agent* a) {
  return c_call([&] {
    get(a).checkpoint();
    return 0;
  });
}

#define POLLUX_GETTER(type, name, expr, fallback)                 \
  type pollux_agent_##name(const pollux_agent* a) {               \
    return a != nullptr && a->agent ? (expr) : (fallback);        \
  }
POLLUX_GETTER(int, atomic_batch, a->agent->atomic_batch(), -1)
POLLUX_GETTER(int, accum_steps, a->agent->accum_steps(), -1)
POLLUX_GETTER(long long, total_batch, a->agent->total_batch(), -1)
POLLUX_GETTER(double, lr_gain, a->agent->lr_gain(), 1.0)
POLLUX_GETTER(long long, step, a->agent->step(), -1)
POLLUX_GETTER(long long, samples_seen, a->agent->samples_seen(), -1)
POLLUX_GETTER(double, progress, a->agent->progress(), -1.0)
POLLUX_GETTER(int, rank, a->agent->rank(), -1)
POLLUX_GETTER(int, replicas, a->agent->replicas(), -1)
POLLUX_GETTER(int, nodes, a->agent->nodes(), -1)
POLLUX_GETTER(int, max_atomic, a->agent->max_atomic(), -1)
POLLUX_GETTER(int, requeue_exit_code, a->agent->options().requeue_exit_code, 75)
#undef POLLUX_GETTER

int pollux_agent_grad_stats(const pollux_agent* a, double* sqr, double* var) {
  if (a == nullptr || !a->agent) return 0;
  const auto g = a->agent->grad_stats();
  if (!g) return 0;
  if (sqr != nullptr) *sqr = g->sqr;
  if (var != nullptr) *var = g->var;
  return 1;
}

int pollux_agent_micro_step_begin(pollux_agent* a) {
  return c_call([&] {
    get(a).micro_step_begin();
    return 0;
  });
}

int pollux_agent_micro_step_end(pollux_agent* a, const void* grad, size_t count, int dtype) {
  return c_call([&] {
    get(a).micro_step_end(pollux::GradientBuffer{const_cast<void*>(grad), count, to_dtype(dtype)});
    return 0;
  });
}

int pollux_agent_synchronize(pollux_agent* a, void* grad, size_t count, int dtype) {
  return c_call([&] {
    pollux::GradientBuffer g{grad, count, to_dtype(dtype)};
    get(a).synchronize(g);
    return 0;
  });
}

int pollux_agent_step_end(pollux_agent* a) {
  return c_call([&] {
    return get(a).step_end() == pollux::StepAction::kRequeueExit ? POLLUX_REQUEUE_EXIT_NOW : POLLUX_CONTINUE;
  });
}

int pollux_agent_out_of_memory(pollux_agent* a, int micro_batch) {
  return c_call([&] { return get(a).out_of_memory(micro_batch); });
}

int pollux_agent_set_sharded(pollux_agent* a, int sharded) {
  return c_call([&] {
    if (sharded != 0 && sharded != 1) throw std::invalid_argument("set_sharded: 0 or 1, not " + std::to_string(sharded));
    get(a).set_sharded(sharded == 1);
    return 0;
  });
}

int pollux_agent_sharded(const pollux_agent* a) {
  return c_call([&] { return get(const_cast<pollux_agent*>(a)).sharded() ? 1 : 0; });
}

int pollux_agent_set_batch_config(pollux_agent* a, int atomic, int accum) {
  return c_call([&] {
    get(a).set_batch_config(atomic, accum);
    return 0;
  });
}

int pollux_agent_predict_iter_time(const pollux_agent* a, int nodes, int replicas, int atomic, int accum,
                                   double* seconds) {
  if (a == nullptr || !a->agent || seconds == nullptr) return 0;
  const auto p = a->agent->perf_params();
  if (!p) return 0;
  *seconds = pollux::predict_iter_time(*p, nodes, replicas, atomic, accum);
  return 1;
}

int pollux_agent_profile(const pollux_agent* a, pollux_profile_sample* out, int max) {
  if (a == nullptr || !a->agent) return 0;
  const auto samples = a->agent->profile();
  for (int i = 0; i < max && i < static_cast<int>(samples.size()); ++i) {
    const auto& s = samples[static_cast<std::size_t>(i)];
    out[i] = pollux_profile_sample{s.nodes, s.replicas, s.atomic_batch, s.grad_time, s.step_time};
  }
  return static_cast<int>(samples.size());
}

const char* pollux_agent_last_error(void) { return pollux::agent_detail::t_error.c_str(); }

int pollux_agent_reclaim_signal(void) { return pollux::agent_detail::ResizeSignal::reclaim() ? 1 : 0; }

}  // extern "C"
