/* Geodetic to local NED on the WGS-84 ellipsoid (local tangent plane at the
 * origin, with the meridian and prime-vertical radii of curvature there;
 * the second-order error is about d^2 tan(lat) / 2R: centimetres at 1 km). */
#include <math.h>

#include "ap_internal.h"
#include "ap_math.h"

void ap_geo_to_ned(const lockstep_autopilot_config *cfg, double lat_deg, double lon_deg, float out_ne[2]) {
  const double a = 6378137.0, f = 1.0 / 298.257223563;
  const double e2 = f * (2.0 - f);
  const double deg = AP_PI / 180.0;
  double phi0 = cfg->origin_lat_deg * deg;
  double s = sin(phi0);
  double w = sqrt(1.0 - e2 * s * s);
  double rn = a / w;                    /* prime vertical */
  double rm = a * (1.0 - e2) / (w * w * w); /* meridian */
  double h0 = cfg->origin_alt_m;
  double dlat = (lat_deg - cfg->origin_lat_deg) * deg;
  double dlon = (lon_deg - cfg->origin_lon_deg) * deg;
  out_ne[0] = (float)(dlat * (rm + h0));
  out_ne[1] = (float)(dlon * (rn + h0) * cos(phi0));
}
