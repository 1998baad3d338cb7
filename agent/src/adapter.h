// Rank 0's adaptation worker: re-fits the throughput model, picks the best
// (atomic batch, accumulation steps) for the allocation and rewrites the
// hint file, on a background thread so that neither the fit nor the
// hint's fsync ever stalls the training loop.
#ifndef POLLUX_AGENT_ADAPTER_H
#define POLLUX_AGENT_ADAPTER_H

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "pollux/goodput.h"
#include "pollux/hint.h"

namespace pollux::agent_detail {

struct AdaptRequest {
  Hint hint;             ///< complete except perf (the worker adds its latest fit)
  bool refit = false;    ///< fit the throughput model to hint.profile first
  enum class Propose { kNo, kIfBetter, kAlways } propose = Propose::kNo;
};

/// A configuration chosen by the worker for (hint.config.nodes, replicas).
struct Proposal {
  int atomic_batch = 0;
  int accum_steps = 0;
  double goodput = 0;
  HintConfig based_on;  ///< the configuration it improves on: stale once that changed
};

class Adapter {
 public:
  /// A proposal must beat the current configuration's predicted goodput by
  /// this fraction (so that noise in the fit does not flip configurations).
  static constexpr double kHysteresis = 0.02;

  /// `spool_dir` empty: no hint files. `rank` is only for messages.
  Adapter(std::string spool_dir, int rank, int verbose);
  ~Adapter();

  /// Queues a request; a newer one replaces one not yet started.
  void submit(AdaptRequest request);
  /// Waits until every submitted request has been processed; returns why
  /// the last hint could not be written ("" when it was, or none is).
  std::string flush();
  std::optional<Proposal> take_proposal();
  std::optional<PerfParams> perf() const;
  void set_perf(const PerfParams& perf);
  /// Fit the throughput model's sharded form (Agent::set_sharded) from the
  /// next re-fit on.
  void set_sharded(bool sharded);

 private:
  void run();
  void process(AdaptRequest& request);

  std::string spool_dir_;
  int rank_, verbose_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<AdaptRequest> pending_;
  long long submitted_ = 0, done_ = 0;
  bool stop_ = false;
  std::optional<PerfParams> perf_;
  bool sharded_ = false;
  std::optional<Proposal> proposal_;
  std::string last_write_error_;  // the worker's own
  std::string write_error_;       // the same, for flush() (under mu_)
  std::thread thread_;
};

}  // namespace pollux::agent_detail

#endif  // POLLUX_AGENT_ADAPTER_H
