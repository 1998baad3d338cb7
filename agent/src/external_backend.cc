// Framework-neutral mode: steady-clock timing of the boundaries the
// application marks, and the norms it reports in place of a buffer; or
// (synchronized_late()) the application's own record of the previous step,
// measured on its device.
#include "external_backend.h"

#include <chrono>

namespace pollux::agent_detail {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

class External final : public ExternalBackend {
 public:
  void micro_begin() override { micro_start_ = Clock::now(); }

  // The buffer is empty in this mode: the norms come with stage().
  void micro_end(const GradientBuffer&, bool) override {
    ++cur_.micro_steps;
    last_micro_start_ = micro_start_;
    cur_.grad_time_sum += seconds(micro_start_, Clock::now());
  }

  void stage(const GradientNorms& n) override { staged_ = n; }

  // The application's own record of the previous step replaces the clock's:
  // take_record() returns it, and this step's comes with the next call.
  void stage_previous(const StepRecord& previous) override {
    done_ = previous;
    late_ = true;
  }

  void synchronize(GradientBuffer&, int, TwoStep two_step, Communicator&) override {
    if (late_) {
      late_ = false;
      cur_ = StepRecord{};
      done_ = StepRecord{};
      staged_ = GradientNorms{};
      return;
    }
    cur_.local_sqr_sum = staged_.local_sqr;
    cur_.local_grads = staged_.local_grads;
    cur_.sync_sqr = staged_.sync_sqr;
    if (two_step == TwoStep::kCompare && staged_.has_prev) {
      cur_.has_prev = true;
      cur_.prev_sqr = staged_.prev_sqr;
      cur_.dot_prev = staged_.dot_prev;
    }
    cur_.step_time = seconds(last_micro_start_, Clock::now());
    cur_.valid = cur_.micro_steps > 0;
    done_ = cur_;
    cur_ = StepRecord{};
    staged_ = GradientNorms{};
  }

  StepRecord take_record() override {
    StepRecord r = done_;
    done_ = StepRecord{};
    return r;
  }

  void reset() override {
    cur_ = done_ = StepRecord{};
    late_ = false;
  }

 private:
  Clock::time_point micro_start_{}, last_micro_start_{};
  StepRecord cur_, done_;
  GradientNorms staged_;
  bool late_ = false;
};

}  // namespace

std::unique_ptr<ExternalBackend> make_external_backend() { return std::make_unique<External>(); }

}  // namespace pollux::agent_detail
