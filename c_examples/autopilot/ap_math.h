/* Small vector and quaternion helpers (float, NED/FRD, Hamilton w,x,y,z). */
#ifndef AP_MATH_H
#define AP_MATH_H

#include <math.h>

#define AP_PI 3.14159265358979323846

static inline float ap_clampf(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline float ap_dot3(const float a[3], const float b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline float ap_norm3(const float a[3]) { return sqrtf(ap_dot3(a, a)); }
static inline float ap_norm2(const float a[3]) { return sqrtf(a[0] * a[0] + a[1] * a[1]); }
static inline void ap_cross3(const float a[3], const float b[3], float out[3]) {
  float x = a[1] * b[2] - a[2] * b[1], y = a[2] * b[0] - a[0] * b[2], z = a[0] * b[1] - a[1] * b[0];
  out[0] = x;
  out[1] = y;
  out[2] = z;
}
static inline int ap_finite_n(const float *v, int n) {
  for (int i = 0; i < n; i++)
    if (!isfinite(v[i])) return 0;
  return 1;
}
/* r = a (x) b */
static inline void ap_quat_mul(const float a[4], const float b[4], float r[4]) {
  float w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  float x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  float y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  float z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  r[0] = w;
  r[1] = x;
  r[2] = y;
  r[3] = z;
}
static inline void ap_quat_normalize(float q[4]) {
  float n = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n > 1e-9f) {
    for (int i = 0; i < 4; i++) q[i] /= n;
  } else {
    q[0] = 1.0f;
    q[1] = q[2] = q[3] = 0.0f;
  }
}
/* Rotates a body vector into NED with q (body -> NED). */
static inline void ap_quat_rotate(const float q[4], const float v[3], float out[3]) {
  float w = q[0], x = q[1], y = q[2], z = q[3];
  float r00 = 1 - 2 * (y * y + z * z), r01 = 2 * (x * y - w * z), r02 = 2 * (x * z + w * y);
  float r10 = 2 * (x * y + w * z), r11 = 1 - 2 * (x * x + z * z), r12 = 2 * (y * z - w * x);
  float r20 = 2 * (x * z - w * y), r21 = 2 * (y * z + w * x), r22 = 1 - 2 * (x * x + y * y);
  float a = v[0], b = v[1], c = v[2];
  out[0] = r00 * a + r01 * b + r02 * c;
  out[1] = r10 * a + r11 * b + r12 * c;
  out[2] = r20 * a + r21 * b + r22 * c;
}
/* Yaw (rad) of a body -> NED quaternion. */
static inline float ap_quat_yaw(const float q[4]) {
  return atan2f(2.0f * (q[0] * q[3] + q[1] * q[2]), 1.0f - 2.0f * (q[2] * q[2] + q[3] * q[3]));
}
/* Quaternion of the rotation matrix with columns bx, by, bz (body axes in NED). */
static inline void ap_quat_from_axes(const float bx[3], const float by[3], const float bz[3], float q[4]) {
  float m00 = bx[0], m11 = by[1], m22 = bz[2];
  float tr = m00 + m11 + m22;
  if (tr > 0.0f) {
    float s = sqrtf(tr + 1.0f) * 2.0f;
    q[0] = 0.25f * s;
    q[1] = (by[2] - bz[1]) / s;
    q[2] = (bz[0] - bx[2]) / s;
    q[3] = (bx[1] - by[0]) / s;
  } else if (m00 > m11 && m00 > m22) {
    float s = sqrtf(1.0f + m00 - m11 - m22) * 2.0f;
    q[0] = (by[2] - bz[1]) / s;
    q[1] = 0.25f * s;
    q[2] = (by[0] + bx[1]) / s;
    q[3] = (bz[0] + bx[2]) / s;
  } else if (m11 > m22) {
    float s = sqrtf(1.0f + m11 - m00 - m22) * 2.0f;
    q[0] = (bz[0] - bx[2]) / s;
    q[1] = (by[0] + bx[1]) / s;
    q[2] = 0.25f * s;
    q[3] = (bz[1] + by[2]) / s;
  } else {
    float s = sqrtf(1.0f + m22 - m00 - m11) * 2.0f;
    q[0] = (bx[1] - by[0]) / s;
    q[1] = (bz[0] + bx[2]) / s;
    q[2] = (bz[1] + by[2]) / s;
    q[3] = 0.25f * s;
  }
  ap_quat_normalize(q);
}
#endif
