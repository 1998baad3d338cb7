/* The C interface from a C program: a least-squares fit y = <w, x> trained
 * with the agent's step protocol, checkpointed through a C callback and
 * restored by a second agent. Exits non-zero with a message on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pollux/agent_c.h"

#define DIM 8

static float w[DIM];
static float grad[DIM];

static int save(const char* dir, int rank, int replicas, long long step, void* user) {
  char path[4096];
  (void)rank, (void)replicas, (void)user;
  snprintf(path, sizeof path, "%s/w.txt", dir);
  FILE* f = fopen(path, "w");
  if (f == NULL) return 1;
  fprintf(f, "%lld", step);
  for (int i = 0; i < DIM; ++i) fprintf(f, " %.9g", w[i]);
  return fclose(f) == 0 ? 0 : 1;
}

static long long restored_step = -1;

static int load(const char* dir, int rank, int replicas, long long step, void* user) {
  char path[4096];
  (void)rank, (void)replicas, (void)step, (void)user;
  snprintf(path, sizeof path, "%s/w.txt", dir);
  FILE* f = fopen(path, "r");
  if (f == NULL) return 1;
  int ok = fscanf(f, "%lld", &restored_step) == 1;
  for (int i = 0; i < DIM && ok; ++i) ok = fscanf(f, "%g", &w[i]) == 1;
  fclose(f);
  return ok ? 0 : 1;
}

static int fail(const char* what) {
  fprintf(stderr, "c-api-test: %s: %s\n", what, pollux_agent_last_error());
  return 1;
}

int main(void) {
  char dir[] = "/tmp/pollux-c-api.XXXXXX";
  if (mkdtemp(dir) == NULL) return fail("mkdtemp");
  pollux_agent_options o;
  pollux_agent_options_init(&o);
  o.init_batch = 16;
  o.max_batch = 16;
  o.min_atomic = 1;
  o.max_atomic = 16;
  o.adapt = 0;
  o.write_hints = 0;
  o.verbose = 0;
  o.checkpoint_dir = dir;

  pollux_agent* a = pollux_agent_create(&o, -1);
  if (a == NULL) return fail("create");
  pollux_agent_on_checkpoint(a, save, NULL);
  if (pollux_agent_restore(a) != 0) return fail("restore of nothing");
  /* The throughput model's form: not sharded by default, set and unset. */
  if (pollux_agent_sharded(a) != 0) return fail("sharded by default");
  if (pollux_agent_set_sharded(a, 1) != 0 || pollux_agent_sharded(a) != 1) return fail("set_sharded(1)");
  if (pollux_agent_set_sharded(a, 2) != -1 || strstr(pollux_agent_last_error(), "0 or 1") == NULL)
    return fail("set_sharded(2) not refused");
  if (pollux_agent_set_sharded(a, 0) != 0 || pollux_agent_sharded(a) != 0) return fail("set_sharded(0)");
  if (pollux_agent_set_sharded(NULL, 1) != -1 || pollux_agent_sharded(NULL) != -1) return fail("null agent");

  /* Data: x_j = (j, j+1, ...) mod 5 / 5, target weights 0.1 * (i + 1). */
  unsigned seed = 1;
  for (int t = 0; t < 300; ++t) {
    const int m = pollux_agent_atomic_batch(a);
    if (pollux_agent_micro_step_begin(a) != 0) return fail("micro_step_begin");
    memset(grad, 0, sizeof grad);
    for (int j = 0; j < m; ++j) {
      float x[DIM], y = 0, pred = 0;
      for (int i = 0; i < DIM; ++i) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (float)((seed >> 16) % 1000) / 1000.0f;
        y += 0.1f * (float)(i + 1) * x[i];
        pred += w[i] * x[i];
      }
      for (int i = 0; i < DIM; ++i) grad[i] += (pred - y) * x[i] / (float)m;
    }
    if (pollux_agent_micro_step_end(a, grad, DIM, POLLUX_FLOAT32) != 0) return fail("micro_step_end");
    if (pollux_agent_synchronize(a, grad, DIM, POLLUX_FLOAT32) != 0) return fail("synchronize");
    for (int i = 0; i < DIM; ++i) w[i] -= 0.5f * (float)pollux_agent_lr_gain(a) * grad[i];
    if (pollux_agent_step_end(a) != POLLUX_CONTINUE) return fail("step_end");
  }
  if (pollux_agent_checkpoint(a) != 0) return fail("checkpoint");
  const long long step = pollux_agent_step(a);
  double sqr = 0, var = 0;
  if (!pollux_agent_grad_stats(a, &sqr, &var)) return fail("no gradient statistics");
  pollux_agent_destroy(a);
  for (int i = 0; i < DIM; ++i)
    if (w[i] < 0.1f * (float)(i + 1) - 0.05f || w[i] > 0.1f * (float)(i + 1) + 0.05f) {
      fprintf(stderr, "c-api-test: w[%d] = %g did not converge to %g\n", i, w[i], 0.1 * (i + 1));
      return 1;
    }

  memset(w, 0, sizeof w);
  pollux_agent* b = pollux_agent_create(&o, -1);
  if (b == NULL) return fail("create again");
  pollux_agent_on_restore(b, load, NULL);
  if (pollux_agent_restore(b) != 1) return fail("restore");
  if (pollux_agent_step(b) != step || restored_step != step) {
    fprintf(stderr, "c-api-test: restored step %lld / %lld, expected %lld\n", pollux_agent_step(b), restored_step, step);
    return 1;
  }
  if (w[DIM - 1] < 0.75f) return fail("weights not restored");
  if (pollux_agent_micro_step_end(b, grad, DIM, POLLUX_FLOAT32) != -1 || strstr(pollux_agent_last_error(), "without micro_step_begin") == NULL)
    return fail("misuse not reported");
  pollux_agent_destroy(b);
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) return fail("cleanup");
  printf("c-api-test: trained %lld steps (|g|^2 %.3g, var %.3g), checkpointed and restored\n", step, sqr, var);
  return 0;
}
