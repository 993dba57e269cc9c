//! Named random streams derived from one master seed.
//!
//! Stream `name` is a Xoshiro256++ generator (Blackman and Vigna, 2019)
//! seeded with `SHA-256("lockstep.rng.v2\0" || seed as 8 little-endian
//! bytes || name)` as its 256-bit state.
//! A stream depends on the seed and its own name only, so adding, removing or
//! reordering other streams never changes it. Normal deviates come from a
//! ziggurat ([`crate::time::ziggurat`]) whose rare slow paths use `libm`, so every
//! stream gives the same numbers on every host. (v1 was ChaCha8 with
//! Box–Muller normals; v2 draws about three times cheaper, which a lockstep
//! run drawing nine normals per simulated millisecond notices. Simulation
//! needs statistical quality, which Xoshiro256++ has, not a cipher.)
//!
//! Each stochastic process owns one stream, named after it (for example
//! `wind` or `sensor.imu`); the sources that use streams name them.

use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
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

    /// The 32-byte Xoshiro256++ seed of stream `name` (to reproduce a
    /// stream outside lockstep: the state is its four little-endian words).
    pub fn stream_key(&self, name: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"lockstep.rng.v2\0");
        h.update(self.seed.to_le_bytes());
        h.update(name.as_bytes());
        let mut key = [0u8; 32];
        key.copy_from_slice(&h.finalize());
        key
    }

    /// The seed of member `name` of a run that derives its members' seeds
    /// from this one (`kind`: `fleet.vehicle`, `cosim.vehicle`,
    /// `orchestrate.vehicle`): the first 8 bytes, little-endian, of the
    /// stream key `<kind>.<name>`. A member's seed depends on the master
    /// seed and its own name only.
    pub fn member_seed(&self, kind: &str, name: &str) -> u64 {
        let key = self.stream_key(&format!("{kind}.{name}"));
        u64::from_le_bytes(key[..8].try_into().expect("a key holds 32 bytes"))
    }

    /// The stream named `name`.
    pub fn stream(&self, name: &str) -> Stream {
        Stream {
            rng: Xoshiro256PlusPlus::from_seed(self.stream_key(name)),
            normal: crate::time::ziggurat::tables(),
        }
    }
}

/// One random stream.
#[derive(Debug, Clone)]
pub struct Stream {
    rng: Xoshiro256PlusPlus,
    normal: &'static crate::time::ziggurat::Tables,
}

impl Stream {
    pub fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in [0, 1) with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal deviate (ziggurat).
    #[inline]
    pub fn standard_normal(&mut self) -> f64 {
        let rng = &mut self.rng;
        crate::time::ziggurat::standard_normal(self.normal, || rng.next_u64())
    }

    /// A normal deviate with the given mean and standard deviation.
    pub fn normal(&mut self, mean: f64, std_dev: f64) -> f64 {
        mean + std_dev * self.standard_normal()
    }
}

/// A stream's state is Xoshiro256++'s four words (read through its serde
/// form, the only public view of them); loading seeds the generator with
/// them, which sets exactly that state.
impl crate::persist::Persist for Stream {
    fn save(&self, w: &mut Vec<u8>) {
        let v = serde_json::to_value(&self.rng).expect("a generator state serializes");
        for k in 0..4 {
            let word = v["s"][k]
                .as_u64()
                .expect("Xoshiro256++ holds four u64 words");
            w.extend_from_slice(&word.to_le_bytes());
        }
    }
    fn load(
        &mut self,
        r: &mut crate::persist::Reader<'_>,
    ) -> Result<(), crate::persist::PersistError> {
        let mut seed = [0u8; 32];
        seed.copy_from_slice(r.take(32)?);
        if seed == [0u8; 32] {
            return Err(crate::persist::PersistError::Mismatch {
                what: "a random stream in the all-zero state".into(),
            });
        }
        self.rng = Xoshiro256PlusPlus::from_seed(seed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivation_is_pinned_across_versions_and_hosts() {
        // If this changes, every recorded run changes: bump the "v2" tag
        // instead of editing the derivation silently.
        let mut s = RngStreams::new(42).stream("wind");
        let first: Vec<u64> = (0..3).map(|_| s.next_u64()).collect();
        let mut again = RngStreams::new(42).stream("wind");
        assert_eq!(first, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        assert_eq!(first, PINNED_WIND_SEED_42);
    }

    #[test]
    fn stream_key_is_the_documented_sha256() {
        // Computed independently: Python hashlib.sha256(b"lockstep.rng.v2\x00"
        // + struct.pack("<Q", 42) + b"wind").hexdigest().
        let hex: String = RngStreams::new(42)
            .stream_key("wind")
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(
            hex,
            "85aefd44c4c15a9673365dd5f4f1ee6ae775ea4ee21fd234d84a49f809205285"
        );
    }

    // Checked independently: a 10-line Python Xoshiro256++ seeded with the
    // hashlib key gives the same three words.
    const PINNED_WIND_SEED_42: [u64; 3] = [
        9041369056561300725,
        10549722763175563253,
        14654909715814822002,
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
        // The normals are pinned too: the same bits on every host. (Checked
        // independently with the ziggurat in Python on those words: 0.26916,
        // -0.31406, 1.29622, 0.76862, to within 8 ulps of these bits, the
        // difference being Python's exp and log in the table.)
        let mut w = RngStreams::new(42).stream("wind");
        let z: Vec<u64> = (0..4).map(|_| w.standard_normal().to_bits()).collect();
        assert_eq!(z, PINNED_NORMALS_SEED_42);
    }

    const PINNED_NORMALS_SEED_42: [u64; 4] = [
        4598520333988978948,
        13822701272216507402,
        4608516465987439860,
        4605098334173944949,
    ];
}
