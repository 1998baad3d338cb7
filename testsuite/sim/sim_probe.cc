// sim-probe: prints what the simulator's application model answers, for
// tests that compare it with an independent implementation.
//
//   sim-probe TRACES_DIR < queries
//
// Each query line: `step APP LOCAL_BSZ COUNT...` (per-node GPU counts) ->
// `STEP SYNC SOURCE`, or `grad APP BATCH EPOCH` -> `SQR VAR`, or
// `limits APP` -> `M0 M_MAX M_MIN_LOCAL M_MAX_LOCAL MAX_EPOCHS`, or
// `fit - NODES REPLICAS M GRAD_TIME STEP_TIME ...` (profile samples) ->
// the fitted `ALPHA_C BETA_C ALPHA_N BETA_N ALPHA_R BETA_R GAMMA OBJECTIVE`.
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "application.h"
#include "input_error.h"

using namespace pollux::sim;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: sim-probe TRACES_DIR < queries\n";
    return 2;
  }
  try {
    AppCatalog catalog(argv[1]);
    std::string line;
    while (std::getline(std::cin, line)) {
      std::istringstream in(line);
      std::string what, app;
      if (!(in >> what >> app)) continue;
      char out[512];
      if (what == "fit") {
        std::vector<pollux::ProfileSample> samples;
        pollux::ProfileSample p;
        while (in >> p.nodes >> p.replicas >> p.atomic_batch >> p.grad_time >> p.step_time) samples.push_back(p);
        pollux::FitOptions paper;  // the artifact's objective, which crosscheck_fit.py compares with
        paper.one_replica_term = false;
        const pollux::FitResult f = pollux::fit_perf_params(samples, paper);
        const auto v = f.params.to_array();
        std::snprintf(out, sizeof out, "%.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n", v[0], v[1], v[2], v[3],
                      v[4], v[5], v[6], f.objective);
        std::cout << out;
        continue;
      }
      const Application& a = catalog.load(app);
      if (what == "step") {
        int bsz = 0, c = 0;
        std::vector<int> counts;
        in >> bsz;
        while (in >> c) counts.push_back(c);
        const StepTimes t = a.step_times(counts, bsz);
        std::snprintf(out, sizeof out, "%.17g %.17g %d\n", t.step, t.sync, static_cast<int>(t.source));
      } else if (what == "grad") {
        double batch = 0;
        int epoch = 0;
        in >> batch >> epoch;
        const pollux::GradStats g = a.grad_stats(batch, epoch);
        std::snprintf(out, sizeof out, "%.17g %.17g\n", g.sqr, g.var);
      } else if (what == "limits") {
        std::snprintf(out, sizeof out, "%g %g %d %d %d\n", a.init_batch(), a.max_batch(), a.min_local_bsz(),
                      a.max_local_bsz(), a.max_epochs());
      } else {
        std::cerr << "sim-probe: unknown query: " << line << "\n";
        return 2;
      }
      std::cout << out;
    }
  } catch (const std::exception& e) {
    std::cerr << "sim-probe: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
