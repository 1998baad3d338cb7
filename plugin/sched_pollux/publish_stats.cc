// SPDX-License-Identifier: GPL-2.0-or-later
// Publishing the round statistics (see publish_stats.h).
#include "publish_stats.h"

#include <ctime>
#include <exception>

#include "common/compat_locks.h"
#include "common/slurm_api.h"
#include "common/slurm_raii.h"
#include "io/status_file.h"
#include "pollux/atomic_file.h"

namespace pollux::sched {

void StatsPublisher::publish(RoundStats& stats, const Params& params) noexcept {
  try {
    std::string dir;
    uid_t slurm_uid = 0;
    {
      const SlurmctldLock lock(slurmctld_locks(READ_LOCK, NO_LOCK, NO_LOCK, NO_LOCK, NO_LOCK));
      dir = slurm_conf.state_save_location != nullptr ? slurm_conf.state_save_location : "";
      slurm_uid = slurm_conf.slurm_user_id;
    }
    const double now = static_cast<double>(std::time(nullptr));
    std::string failed;
    if (!dir.empty()) {
      std::string refused;
      if (take_reset_request(dir + "/" + std::string(kResetRequestName), slurm_uid, &refused)) {
        stats.reset(now);
        info("sched/pollux: round statistics reset (pollux-status --reset)");
      }
      if (!refused.empty()) error("sched/pollux: %s", refused.c_str());
      failed = write_file_atomic(dir + "/" + std::string(kStatusFileName), status_json(stats, now));
    }
    if (!params.metrics_file.empty()) {
      const std::string e = write_file_atomic(params.metrics_file, metrics_text(stats));
      if (failed.empty()) failed = e;
    }
    if (!failed.empty() && failed != last_error_) error("sched/pollux: round statistics not written: %s", failed.c_str());
    last_error_ = failed;
  } catch (const std::exception& e) {
    error("sched/pollux: round statistics not written: %s", e.what());
  } catch (...) {
    error("sched/pollux: round statistics not written (unknown exception)");
  }
}

}  // namespace pollux::sched
