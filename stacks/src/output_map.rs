//! Which of a flight stack's output channels drives which of the spec's
//! rotors: `output_map[i]` is the channel (0-based) of rotor `i`. Without a
//! map, rotor `i` is channel `i`.

use lockstep_abi::AbiError;

use crate::StackKind;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OutputMap {
    channels: Vec<usize>,
}

impl OutputMap {
    /// Rotor `i` on channel `i`.
    pub fn identity() -> OutputMap {
        OutputMap::default()
    }

    pub fn new(channels: Vec<usize>) -> OutputMap {
        OutputMap { channels }
    }

    /// The map as given (empty: the identity).
    pub fn channels(&self) -> &[usize] {
        &self.channels
    }

    /// The channel of rotor `rotor`.
    pub fn channel(&self, rotor: usize) -> usize {
        self.channels.get(rotor).copied().unwrap_or(rotor)
    }

    /// A map the stack's protocol can carry for a vehicle of `rotors`
    /// rotors: one channel per rotor, each within the protocol's channels,
    /// no channel twice.
    pub fn check(&self, kind: StackKind, rotors: usize) -> Result<(), AbiError> {
        let bad = |reason: String| {
            Err(AbiError::InvalidInput {
                reason: format!("autopilot.output_map: {reason}"),
            })
        };
        let n = kind.channels();
        if self.channels.is_empty() {
            if rotors > n {
                return bad(format!(
                    "{rotors} rotors, but {} carries {n} output channels",
                    kind.name()
                ));
            }
            return Ok(());
        }
        if self.channels.len() != rotors {
            return bad(format!(
                "{} entries for a vehicle of {rotors} rotors (one channel per rotor)",
                self.channels.len()
            ));
        }
        for (i, &c) in self.channels.iter().enumerate() {
            if c >= n {
                return bad(format!(
                    "rotor {i} on channel {c}, but {} carries channels 0 to {}",
                    kind.name(),
                    n - 1
                ));
            }
            if let Some(j) = self.channels[..i].iter().position(|&d| d == c) {
                return bad(format!("rotors {j} and {i} both on channel {c}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(r: Result<(), AbiError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn a_map_is_one_distinct_channel_per_rotor_within_the_protocol() {
        assert!(OutputMap::identity().check(StackKind::Px4Sitl, 4).is_ok());
        assert!(
            OutputMap::new(vec![2, 0, 3, 1])
                .check(StackKind::Px4Sitl, 4)
                .is_ok()
        );
        assert_eq!(OutputMap::new(vec![2, 0, 3, 1]).channel(0), 2);
        assert_eq!(OutputMap::identity().channel(5), 5);
        assert_eq!(
            reason(OutputMap::new(vec![0, 1, 2]).check(StackKind::Px4Sitl, 4)),
            "invalid autopilot input: autopilot.output_map: 3 entries for a vehicle of 4 rotors \
             (one channel per rotor)"
        );
        assert_eq!(
            reason(OutputMap::new(vec![0, 1, 2, 16]).check(StackKind::Px4Sitl, 4)),
            "invalid autopilot input: autopilot.output_map: rotor 3 on channel 16, but px4-sitl \
             carries channels 0 to 15"
        );
        assert!(
            OutputMap::new(vec![0, 1, 2, 16])
                .check(StackKind::ArduPilotJson, 4)
                .is_ok()
        );
        assert_eq!(
            reason(OutputMap::new(vec![0, 1, 1, 3]).check(StackKind::ArduPilotJson, 4)),
            "invalid autopilot input: autopilot.output_map: rotors 1 and 2 both on channel 1"
        );
    }
}
