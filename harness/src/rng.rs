//! Named random streams derived from one master seed.
//!
//! Stream `name` is a ChaCha8 generator seeded with
//! `SHA-256("lockstep.rng.v1\0" || seed as 8 little-endian bytes || name)`.
//! A stream depends on the seed and its own name only, so adding, removing or
//! reordering other streams never changes it. Normal deviates use Box–Muller
//! with `libm`, so every stream gives the same numbers on every host.
//!
//! Each stochastic process owns one stream, named after it (for example
//! `wind` or `sensor.imu`); the sources that use streams name them.

use rand_chacha::ChaCha8Rng;
use rand_core::{Rng, SeedableRng};
use sha2::{Digest, Sha256};

/// The master seed and the streams derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RngStreams {
    seed: u64,
}

impl RngStreams {
    pub fn new(seed: u64) -> Self {
        RngStreams { seed }
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The 32-byte ChaCha8 key of stream `name` (to reproduce a stream
    /// outside lockstep).
    pub fn stream_key(&self, name: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"lockstep.rng.v1\0");
        h.update(self.seed.to_le_bytes());
        h.update(name.as_bytes());
        let mut key = [0u8; 32];
        key.copy_from_slice(&h.finalize());
        key
    }

    /// The stream named `name`.
    pub fn stream(&self, name: &str) -> Stream {
        Stream {
            rng: ChaCha8Rng::from_seed(self.stream_key(name)),
            spare_normal: None,
        }
    }
}

/// One random stream.
#[derive(Debug, Clone)]
pub struct Stream {
    rng: ChaCha8Rng,
    spare_normal: Option<f64>,
}

impl Stream {
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal deviate (Box–Muller; the second value is kept for
    /// the next call).
    pub fn standard_normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        // u1 in (0, 1]: never ln(0).
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        let r = libm::sqrt(-2.0 * libm::log(u1));
        let (s, c) = libm::sincos(2.0 * std::f64::consts::PI * u2);
        self.spare_normal = Some(r * s);
        r * c
    }

    /// A normal deviate with the given mean and standard deviation.
    pub fn normal(&mut self, mean: f64, std_dev: f64) -> f64 {
        mean + std_dev * self.standard_normal()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_is_pinned_across_versions_and_hosts() {
        // If this changes, every recorded run changes: bump the "v1" tag
        // instead of editing the derivation silently.
        let mut s = RngStreams::new(42).stream("wind");
        let first: Vec<u64> = (0..3).map(|_| s.next_u64()).collect();
        let mut again = RngStreams::new(42).stream("wind");
        assert_eq!(first, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        assert_eq!(first, PINNED_WIND_SEED_42);
    }

    #[test]
    fn stream_key_is_the_documented_sha256() {
        // Computed independently: Python hashlib.sha256(b"lockstep.rng.v1\x00"
        // + struct.pack("<Q", 42) + b"wind").hexdigest().
        let hex: String = RngStreams::new(42)
            .stream_key("wind")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "978758651158cb2bb7b4b718c5b27ae794f5226d8aa06e1a78ea716281a1e455"
        );
    }

    const PINNED_WIND_SEED_42: [u64; 3] = [
        1673027244621154908,
        18201729431399546798,
        5376418984287654241,
    ];

    #[test]
    fn streams_are_independent_of_each_other_and_of_order() {
        let r = RngStreams::new(7);
        let wind_alone: Vec<u64> = {
            let mut w = r.stream("wind");
            (0..100).map(|_| w.next_u64()).collect()
        };
        // Other streams created and drawn from first change nothing.
        let mut imu = r.stream("sensor.imu");
        let mut extra = r.stream("sensor.extra");
        for _ in 0..1000 {
            imu.next_u64();
            extra.next_u64();
        }
        let mut w = r.stream("wind");
        assert_eq!(
            (0..100).map(|_| w.next_u64()).collect::<Vec<_>>(),
            wind_alone
        );
        let mut other_seed = RngStreams::new(8).stream("wind");
        assert_ne!(other_seed.next_u64(), wind_alone[0]);
        assert_ne!(r.stream("sensor.imu").next_u64(), wind_alone[0]);
    }

    #[test]
    fn normal_deviates_have_the_right_moments() {
        let mut s = RngStreams::new(1).stream("test");
        let n = 200_000;
        let (mut sum, mut sq) = (0.0, 0.0);
        for _ in 0..n {
            let z = s.normal(2.0, 0.5);
            sum += z;
            sq += (z - 2.0) * (z - 2.0);
        }
        let mean = sum / n as f64;
        let var = sq / n as f64;
        assert!((mean - 2.0).abs() < 0.005, "{mean}");
        assert!((var - 0.25).abs() < 0.005, "{var}");
        let u = s.uniform();
        assert!((0.0..1.0).contains(&u));
    }
}
