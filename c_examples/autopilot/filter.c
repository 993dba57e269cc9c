/* The gyro path of the rate loop: a second-order Butterworth low-pass per
 * axis (bilinear transform with prewarping) on each fresh IMU sample, and
 * the derivative of the filtered rates through a first-order low-pass (the
 * D term's input). Filters are designed for the actual sample period, taken
 * from consecutive IMU timestamps, and redesigned when it changes. */
#include <math.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

#define AP_SQRT2 1.41421356f

void ap_biquad_design(ap_biquad *f, float cutoff_hz, float sample_hz) {
  float fc = fminf(cutoff_hz, 0.45f * sample_hz);
  float k = tanf((float)AP_PI * fc / sample_hz);
  float norm = 1.0f / (1.0f + AP_SQRT2 * k + k * k);
  f->b0 = k * k * norm;
  f->b1 = 2.0f * f->b0;
  f->b2 = f->b0;
  f->a1 = 2.0f * (k * k - 1.0f) * norm;
  f->a2 = (1.0f - AP_SQRT2 * k + k * k) * norm;
}

/* The state of a filter that has seen x forever (unit DC gain). */
void ap_biquad_reset(ap_biquad *f, float x) {
  f->z2 = (f->b2 - f->a2) * x;
  f->z1 = (f->b1 - f->a1) * x + f->z2;
}

float ap_biquad_apply(ap_biquad *f, float x) {
  /* Direct form II transposed. */
  float y = f->b0 * x + f->z1;
  f->z1 = f->b1 * x - f->a1 * y + f->z2;
  f->z2 = f->b2 * x - f->a2 * y;
  return y;
}

void ap_gyro_reset(ap_gyro *g) { memset(g, 0, sizeof(*g)); }

static void design(ap_gyro *g, const ap_params *p, uint64_t dt_us) {
  float fs = 1e6f / (float)dt_us;
  for (int i = 0; i < 3; i++) ap_biquad_design(&g->lpf[i], p->gyro_cutoff_hz, fs);
  float dt = (float)dt_us * 1e-6f;
  float rc = 1.0f / (2.0f * (float)AP_PI * fminf(p->dgyro_cutoff_hz, 0.45f * fs));
  g->d_alpha = dt / (dt + rc);
  g->dt_us = dt_us;
}

void ap_gyro_update(ap_gyro *g, const ap_params *p, const float gyro[3], uint64_t t_us, uint32_t period_us) {
  if (!g->valid) {
    design(g, p, period_us);
    for (int i = 0; i < 3; i++) {
      ap_biquad_reset(&g->lpf[i], gyro[i]);
      g->rate[i] = gyro[i];
      g->accel[i] = 0.0f;
    }
    g->last_us = t_us;
    g->valid = 1;
    return;
  }
  if (t_us <= g->last_us) return; /* the same sample again */
  uint64_t dt_us = t_us - g->last_us;
  if (dt_us != g->dt_us) design(g, p, dt_us);
  float dt = (float)dt_us * 1e-6f;
  for (int i = 0; i < 3; i++) {
    float r = ap_biquad_apply(&g->lpf[i], gyro[i]);
    float d = (r - g->rate[i]) / dt;
    g->accel[i] += g->d_alpha * (d - g->accel[i]);
    g->rate[i] = r;
  }
  g->last_us = t_us;
}

int ap_gyro_current(const ap_gyro *g, uint64_t now_us, uint32_t period_us) {
  return g->valid && now_us - g->last_us <= 3u * (uint64_t)period_us;
}
