// The simulated application (see application.h).
#include "application.h"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "input_error.h"
#include "linear_interp.h"

namespace pollux::sim {
namespace {

// The artifact caps the node count of a scattered-data lookup at 16, the
// largest node count its scalability traces measured.
constexpr int kMaxTracedNodes = 16;

std::string validation_file(const AppTrace& t, long long batch) {
  return t.dir + "/validation-" + std::to_string(batch) + ".csv";
}

}  // namespace

AppSpec known_app_spec(const std::string& name) {
  AppSpec s;
  if (name == "bert") s.max_epochs = 2;
  if (name == "cifar10") s.max_epochs = 100;
  if (name == "imagenet") s.max_epochs = 90;
  if (name == "deepspeech2") s.max_epochs = 80;
  if (name == "yolov3") {
    s.max_epochs = 50;
    s.max_local_bsz = 8;
  }
  if (name == "ncf") {
    s.max_epochs = 10;
    s.fixed_batch = 32768;
    s.max_replicas = 1;
  }
  return s;
}

Application::Application(AppTrace trace, const AppSpec& spec) : trace_(std::move(trace)), spec_(spec) {
  const std::string& placements_csv = trace_.placements_file;
  init_batch_ = static_cast<double>(trace_.validation.begin()->first);
  max_batch_ = static_cast<double>(trace_.validation.rbegin()->first);
  for (const auto& [batch, runs] : trace_.validation) validated_batches_.push_back(static_cast<double>(batch));

  min_local_ = max_local_ = static_cast<int>(trace_.placements.front().sample.local_bsz);
  for (const PlacementSample& p : trace_.placements) {
    min_local_ = std::min(min_local_, static_cast<int>(p.sample.local_bsz));
    max_local_ = std::max(max_local_, static_cast<int>(p.sample.local_bsz));
  }
  if (spec_.max_local_bsz > 0) max_local_ = spec_.max_local_bsz;
  if (max_local_ < min_local_)
    throw InputError(placements_csv, 0, "maximum local batch below the smallest measured one");
  if (max_batch_ < min_local_)
    throw InputError(trace_.dir, 0, "largest validated batch is below the smallest local batch");

  int shortest = static_cast<int>(trace_.validation.begin()->second.size());
  for (const auto& [batch, runs] : trace_.validation) shortest = std::min(shortest, static_cast<int>(runs.size()));
  max_epochs_ = spec_.max_epochs > 0 ? spec_.max_epochs : shortest;
  for (const auto& [batch, runs] : trace_.validation)
    if (static_cast<int>(runs.size()) < max_epochs_)
      throw InputError(validation_file(trace_, batch), 0,
                       "has " + std::to_string(runs.size()) + " epochs; " + trace_.name + " trains for " +
                           std::to_string(max_epochs_));

  epoch_progress_.assign(static_cast<std::size_t>(max_epochs_) + 1, 0.0);
  for (int e = 1; e <= max_epochs_; ++e) {
    double p = HUGE_VAL;
    for (const auto& [batch, runs] : trace_.validation) p = std::min(p, runs[static_cast<std::size_t>(e - 1)].progress);
    epoch_progress_[static_cast<std::size_t>(e)] = p;
  }

  // Exact placements, each a curve over local_bsz.
  for (const PlacementSample& p : trace_.placements) {
    Curve& c = curves_[p.placement];
    c.bsz.push_back(p.sample.local_bsz);
    c.step.push_back(p.sample.step_time);
    c.sync.push_back(p.sample.sync_time);
  }
  for (auto& [id, c] : curves_) {
    std::vector<std::size_t> order(c.bsz.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const std::vector<double>& bsz = c.bsz;  // a lambda may not capture a structured binding before C++20
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bsz[a] < bsz[b]; });
    Curve sorted;
    for (std::size_t i : order) {
      if (!sorted.bsz.empty() && sorted.bsz.back() == c.bsz[i])
        throw InputError(placements_csv, 0,
                         "placement " + id + " has two rows for local_bsz " + std::to_string(int(c.bsz[i])));
      sorted.bsz.push_back(c.bsz[i]);
      sorted.step.push_back(c.step[i]);
      sorted.sync.push_back(c.sync[i]);
    }
    c = std::move(sorted);
  }

  // Scattered data: placements.csv averaged per (nodes, replicas, local_bsz)
  // in ascending key order, then scalability.csv in file order.
  struct Sum {
    double step = 0, sync = 0;
    int n = 0;
  };
  std::map<std::tuple<int, int, double>, Sum> groups;
  for (const PlacementSample& p : trace_.placements) {
    Sum& s = groups[{p.sample.nodes, p.sample.replicas, p.sample.local_bsz}];
    s.step += p.sample.step_time;
    s.sync += p.sample.sync_time;
    ++s.n;
  }
  std::vector<double> points, values;
  std::vector<ProfileSample> all;
  auto add = [&](int nodes, int replicas, double bsz, double step, double sync) {
    points.insert(points.end(), {double(nodes), double(replicas), bsz});
    values.insert(values.end(), {step, sync});
    all.push_back(ProfileSample{nodes, replicas, bsz, step - sync, step});
  };
  for (const auto& [key, s] : groups)
    add(std::get<0>(key), std::get<1>(key), std::get<2>(key), s.step / s.n, s.sync / s.n);
  for (const StepSample& s : trace_.scalability) add(s.nodes, s.replicas, s.local_bsz, s.step_time, s.sync_time);
  try {
    scattered_ = std::make_unique<DelaunayInterpolator>(3, points, 2, values);
  } catch (const std::runtime_error&) {
    scattered_.reset();  // too few or flat measurements: the model covers everything else
  }
  fallback_ = fit_perf_params(all, FitOptions::paper()).params;  // the artifact's model
}

BatchLimits Application::limits() const noexcept {
  BatchLimits l;
  l.init_batch = init_batch_;
  l.max_batch = max_batch_;
  l.min_atomic = min_local_;
  l.max_atomic = max_local_;
  l.accumulation = true;
  return l;
}

BatchConfig Application::split_batch(double batch, int replicas, bool accumulate_on_one_gpu) const noexcept {
  constexpr double eps = 1e-8;  // tolerance of the ceil() steps, as in the artifact
  BatchConfig c;
  const double local = std::ceil(batch / replicas - eps);
  c.accum_steps = static_cast<int>(std::ceil(local / max_local_ - eps)) - 1;
  if (replicas == 1 && accumulate_on_one_gpu) c.accum_steps = std::max(1, c.accum_steps);
  c.atomic_batch = cap_atomic(static_cast<int>(std::ceil(local / (c.accum_steps + 1) - eps)), replicas, c.accum_steps);
  return c;
}

int Application::cap_atomic(int atomic, int replicas, int accum_steps) const noexcept {
  const int cap = static_cast<int>(max_batch_ / (static_cast<double>(replicas) * (accum_steps + 1)));
  return std::max(1, std::min(atomic, cap));
}

double Application::epoch_progress(int epoch) const {
  return epoch_progress_.at(static_cast<std::size_t>(epoch));
}

int Application::last_epoch(int epochs) const {
  if (epochs < 0 || epochs > max_epochs_)
    throw InputError(std::to_string(epochs) + ": " + name() + " trains " + std::to_string(max_epochs_) +
                     " epochs (0: all of them)");
  return epochs > 0 ? epochs : max_epochs_;
}

GradStats Application::grad_stats(double batch, int epoch) const {
  std::vector<double> sqr, var;
  for (const auto& [b, runs] : trace_.validation) {
    const EpochRecord& r = runs.at(static_cast<std::size_t>(epoch));
    sqr.push_back(r.grad_sqr);
    var.push_back(r.grad_var);
  }
  GradStats g;
  g.sqr = *interp_linear(validated_batches_, sqr, batch, OutOfRange::kClamp);
  g.var = *interp_linear(validated_batches_, var, batch, OutOfRange::kClamp);
  return g;
}

double Application::iterations(double batch, int epoch) const {
  std::vector<double> its;
  for (const auto& [b, runs] : trace_.validation) its.push_back(runs.at(static_cast<std::size_t>(epoch)).iteration);
  return *interp_linear(validated_batches_, its, batch, OutOfRange::kClamp);
}

Iteration Application::iteration(const StepTimes& t, int replicas, int atomic, int accum, int epoch) const {
  Iteration it;
  it.batch = static_cast<double>(replicas) * atomic * (accum + 1);
  it.grad = grad_stats(it.batch, epoch);
  it.gain = adascale_gain(it.grad, it.batch, init_batch_);
  it.seconds = t.step + (t.step - t.sync) * accum;
  return it;
}

std::vector<int> Application::canonical_placement(const std::vector<int>& counts) {
  std::vector<int> p;
  for (int c : counts)
    if (c > 0) p.push_back(c);
  std::vector<int> best = p;
  for (std::size_t i = 1; i < p.size(); ++i) {
    std::vector<int> r(p.begin() + static_cast<std::ptrdiff_t>(i), p.end());
    r.insert(r.end(), p.begin(), p.begin() + static_cast<std::ptrdiff_t>(i));
    if (r < best) best = std::move(r);
  }
  return best;
}

StepTimes Application::step_times(const std::vector<int>& counts, int local_bsz) const {
  const std::vector<int> p = canonical_placement(counts);
  if (p.empty()) throw std::invalid_argument("step_times: empty placement");
  int replicas = 0;
  bool digits = true;
  std::string id;
  for (int c : p) {
    replicas += c;
    digits = digits && c <= 9;
    id.push_back(static_cast<char>('0' + std::min(c, 9)));
  }
  const int nodes = static_cast<int>(p.size());
  const double bsz = local_bsz;
  if (digits) {
    const auto it = curves_.find(id);
    if (it != curves_.end()) {
      const auto step = interp_linear(it->second.bsz, it->second.step, bsz, OutOfRange::kNone);
      const auto sync = interp_linear(it->second.bsz, it->second.sync, bsz, OutOfRange::kNone);
      if (step && sync) return StepTimes{*step, *sync, StepSource::kPlacement};
    }
  }
  if (scattered_ != nullptr) {
    const double x[3] = {double(std::min(nodes, kMaxTracedNodes)), double(replicas), bsz};
    double y[2];
    if (scattered_->interpolate(x, y)) return StepTimes{y[0], y[1], StepSource::kScattered};
  }
  const double step = predict_step_time(fallback_, nodes, replicas, bsz);
  const double grad = predict_grad_time(fallback_, bsz);
  return StepTimes{step, std::max(step - grad, 0.0), StepSource::kModel};
}

const StepTimes& StepTimeCache::get(const std::vector<int>& counts, int local_bsz) {
  std::string key;
  for (int c : Application::canonical_placement(counts)) key += std::to_string(c) + ",";
  key += std::to_string(local_bsz);
  auto it = memo_.find(key);
  if (it == memo_.end()) {
    it = memo_.emplace(std::move(key), app_->step_times(counts, local_bsz)).first;
    if (it->second.source == StepSource::kModel) ++model_lookups_;
  }
  return it->second;
}

bool AppCatalog::has(const std::string& name) const {
  if (name.empty() || name[0] == '.' || name.find('/') != std::string::npos) return false;
  struct stat st {};
  return ::stat(trace_path(dir_, name, profile_file("placements", profile_)).c_str(), &st) == 0 &&
         S_ISREG(st.st_mode);
}

const Application& AppCatalog::load(const std::string& name) {
  auto it = apps_.find(name);
  if (it != apps_.end()) return *it->second;
  if (!has(name)) throw InputError(dir_, 0, "no traces for application '" + name + "'");
  auto app = std::make_unique<Application>(read_app_trace(dir_, name, profile_), known_app_spec(name));
  return *apps_.emplace(name, std::move(app)).first->second;
}

const Application& AppCatalog::get(const std::string& name) const { return *apps_.at(name); }

}  // namespace pollux::sim
