/* The gyro path of the rate loop: a second-order Butterworth low-pass per
 * axis (bilinear transform with prewarping) on each fresh IMU sample, and
 * the derivative of the filtered rates through a first-order low-pass (the
 * D term's input).
 *
 * Sample period. The biquads are designed once for the IMU's nominal sample
 * period as the autopilot receives it (the mean gap between consecutive
 * sample timestamps, an exponential average) and tolerate jitter around it:
 * an IMU at 3 ms read by an autopilot at 4 ms delivers gaps of 3 and 6 ms,
 * 4 ms on average, and the filter runs on its 4 ms design throughout, its
 * state always consistent with its coefficients. Redesigning per gap would
 * run the state of one design through the coefficients of another on almost
 * every sample (at 250 Hz and 40 Hz: 29 % overshoot after one missed sample,
 * 65 % after a long gap). The derivative and its low-pass use each sample's
 * actual gap (no trigonometry there).
 *
 * A redesign happens only when the mean gap drifts more than 10 % from the
 * design (the IMU's rate changed), or when IMU_GYRO_CUTOFF or
 * IMU_DGYRO_CUTOFF is set (params.c), at the next sample; it resets the
 * biquads to the current filtered rate, so the output stays continuous.
 * PX4's vehicle_angular_velocity module works the same way: filters designed
 * for the measured mean sample rate, redesigned and reset when that rate or
 * a cutoff parameter changes.
 *
 * Gaps. A gap longer than AP_GYRO_STALE_PERIODS nominal periods (a dropout)
 * restarts the filter at the next sample: the rate restarts at that sample,
 * its derivative at 0, the biquads in steady state there. The rate loop
 * treats the gyro as stale after the same number of the IMU's own periods
 * (ap_gyro_current). Before the first design (one sample so far) the
 * autopilot's period stands in for the IMU's in the staleness test, and the
 * first gap up to AP_GYRO_MAX_PERIOD_US is taken as the period. */
#include <math.h>
#include <string.h>

#include "ap_internal.h"
#include "ap_math.h"

#define AP_SQRT2 1.41421356f
/* A sample older than this many nominal periods is stale. */
#define AP_GYRO_STALE_PERIODS 3u
/* Redesign when the mean gap drifts more than this fraction. */
#define AP_GYRO_PERIOD_TOL 0.1f
/* Weight of a new gap in the mean (1/16: about 16 samples). */
#define AP_GYRO_PERIOD_GAIN 0.0625f
/* The longest first gap taken as the sample period. */
#define AP_GYRO_MAX_PERIOD_US 100000u

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

/* Designs the filters for a sample period of dt_us and puts the biquads in
 * steady state at the current filtered rate. */
static void design(ap_gyro *g, const ap_params *p, uint64_t dt_us) {
  float fs = 1e6f / (float)dt_us;
  for (int i = 0; i < 3; i++) {
    ap_biquad_design(&g->lpf[i], p->gyro_cutoff_hz, fs);
    ap_biquad_reset(&g->lpf[i], g->rate[i]);
  }
  g->d_rc = 1.0f / (2.0f * (float)AP_PI * fminf(p->dgyro_cutoff_hz, 0.45f * fs));
  g->dt_us = dt_us;
  g->redesign = 0;
}

/* Starts over at this sample: rate = the sample, derivative 0. */
static void restart(ap_gyro *g, const float gyro[3], uint64_t t_us) {
  for (int i = 0; i < 3; i++) {
    g->rate[i] = gyro[i];
    g->accel[i] = 0.0f;
    if (g->dt_us) ap_biquad_reset(&g->lpf[i], gyro[i]);
  }
  g->last_us = t_us;
  g->valid = 1;
}

static uint64_t stale_after_us(const ap_gyro *g, uint32_t period_us) {
  return AP_GYRO_STALE_PERIODS * (g->dt_us ? g->dt_us : (uint64_t)period_us);
}

void ap_gyro_update(ap_gyro *g, const ap_params *p, const float gyro[3], uint64_t t_us, uint32_t period_us) {
  if (!g->valid) {
    restart(g, gyro, t_us);
    return;
  }
  if (t_us <= g->last_us) return; /* the same sample again */
  uint64_t dt_us = t_us - g->last_us;
  if (!g->dt_us) {
    /* The second sample: its gap is the first measure of the period. */
    if (dt_us > AP_GYRO_MAX_PERIOD_US) {
      restart(g, gyro, t_us);
      return;
    }
    g->period_avg_us = (float)dt_us;
    design(g, p, dt_us);
  } else {
    if (dt_us > stale_after_us(g, period_us)) {
      restart(g, gyro, t_us);
      return;
    }
    g->period_avg_us += AP_GYRO_PERIOD_GAIN * ((float)dt_us - g->period_avg_us);
    if (g->redesign || fabsf(g->period_avg_us - (float)g->dt_us) > AP_GYRO_PERIOD_TOL * (float)g->dt_us)
      design(g, p, (uint64_t)(g->period_avg_us + 0.5f));
  }
  float dt = (float)dt_us * 1e-6f;
  float alpha = dt / (dt + g->d_rc);
  for (int i = 0; i < 3; i++) {
    float r = ap_biquad_apply(&g->lpf[i], gyro[i]);
    float d = (r - g->rate[i]) / dt;
    g->accel[i] += alpha * (d - g->accel[i]);
    g->rate[i] = r;
  }
  g->last_us = t_us;
}

int ap_gyro_current(const ap_gyro *g, uint64_t now_us, uint32_t period_us) {
  return g->valid && now_us - g->last_us <= stale_after_us(g, period_us);
}
