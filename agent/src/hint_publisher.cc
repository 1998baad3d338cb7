// Rank 0's hints and when to write them (see hint_publisher.h).
#include "hint_publisher.h"

#include "unix_time.h"

namespace pollux::agent_detail {

HintPublisher::HintPublisher(const std::string& spool_dir, int rank, const AgentOptions& options,
                             std::function<Hint()> describe)
    : opt_(options), describe_(std::move(describe)), adapter_(spool_dir, rank, options.verbose) {}

void HintPublisher::publish(bool refit, Propose propose) {
  AdaptRequest req;
  req.hint = describe_();
  req.hint.timestamp = unix_now();
  req.hint.checkpoint = checkpoint_;
  req.refit = refit;
  req.propose = opt_.adapt ? propose : Propose::kNo;
  adapter_.submit(std::move(req));
  last_hint_ = Clock::now();
  if (refit) {
    last_fit_ = last_hint_;
    new_data_ = profile_changed_ = false;
  }
}

void HintPublisher::maybe_publish() {
  const Clock::time_point now = Clock::now();
  const auto since = [&](Clock::time_point t) { return std::chrono::duration<double>(now - t).count(); };
  const bool refit = profile_changed_ || (new_data_ && since(last_fit_) >= opt_.refit_interval);
  if (refit || config_changed_ || restart_news_ || since(last_hint_) >= opt_.hint_interval)
    publish(refit, Propose::kIfBetter);
  config_changed_ = restart_news_ = false;
}

void HintPublisher::close() {
  try {
    publish(new_data_, Propose::kNo);
  } catch (...) {
  }
  adapter_.flush();
}

void HintPublisher::learned(StepStatistics::ProfileNews news) {
  if (news == StepStatistics::ProfileNews::kNone) return;
  new_data_ = true;
  profile_changed_ |= news == StepStatistics::ProfileNews::kMatured;
}

void HintPublisher::checkpoint_committed(long long step, bool ready_for_requeue) {
  checkpoint_ = HintCheckpoint{step, unix_now(), ready_for_requeue};
}

void HintPublisher::checkpoint_restored(long long step, double time) {
  checkpoint_ = HintCheckpoint{step, time, false};
}

}  // namespace pollux::agent_detail
