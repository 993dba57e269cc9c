"""A wind field as an FMI 2.0 co-simulation FMU, built with pythonfmu
(`pip install pythonfmu`, then `pythonfmu build -f wind_shear.py`): a
boundary-layer shear where the wind speed grows with height above the
ground as a power law,

    speed(h) = speed_ref_mps * (h / height_ref_m) ** exponent   (h > 0)

blowing towards `towards_deg` (0 = north, 90 = east), zero at and below the
ground. Its inputs are where the vehicle is (NED, m; the ground at down =
0); its outputs the wind there (NED, m/s)."""
import math

from pythonfmu import Fmi2Causality, Fmi2Slave, Fmi2Variability, Real


class WindShear(Fmi2Slave):
    author = "lockstep"
    description = "Power-law wind shear over flat ground (lockstep example)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.speed_ref_mps = 6.0
        self.height_ref_m = 10.0
        self.exponent = 1.0 / 7.0
        self.towards_deg = 90.0
        self.north_m = 0.0
        self.east_m = 0.0
        self.down_m = 0.0
        self.wind_north_mps = 0.0
        self.wind_east_mps = 0.0
        self.wind_down_mps = 0.0
        for name in ("speed_ref_mps", "height_ref_m", "exponent", "towards_deg"):
            self.register_variable(
                Real(name, causality=Fmi2Causality.parameter, variability=Fmi2Variability.fixed)
            )
        for name in ("north_m", "east_m", "down_m"):
            self.register_variable(Real(name, causality=Fmi2Causality.input))
        for name in ("wind_north_mps", "wind_east_mps", "wind_down_mps"):
            self.register_variable(Real(name, causality=Fmi2Causality.output))

    def do_step(self, current_time, step_size):
        h = -self.down_m
        speed = self.speed_ref_mps * (h / self.height_ref_m) ** self.exponent if h > 0.0 else 0.0
        a = math.radians(self.towards_deg)
        self.wind_north_mps = speed * math.cos(a)
        self.wind_east_mps = speed * math.sin(a)
        self.wind_down_mps = 0.0
        return True
