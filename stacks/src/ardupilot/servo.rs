//! ArduPilot's servo packet (`libraries/SITL/SIM_JSON.h`): little-endian
//! `u16 magic, u16 frame_rate, u32 frame_count, u16 pwm[N]`, with N = 16
//! (magic 18458, 40 bytes) or N = 32 (magic 29569, 72 bytes, when
//! `SERVO_32_ENABLE` is 1). A PWM of 0 is a channel not driven.

use lockstep_abi::ffi::*;

use crate::OutputMap;

pub(crate) const MAGIC_16: u16 = 18458;
pub(crate) const MAGIC_32: u16 = 29569;

/// One servo packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ServoPacket {
    pub(crate) frame_rate: u16,
    pub(crate) frame_count: u32,
    pub(crate) channels: usize,
    pub(crate) pwm: [u16; 32],
}

/// Why a datagram is not a servo packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotServo {
    Short(usize),
    Magic(u16),
    Length {
        magic: u16,
        len: usize,
        expected: usize,
    },
}

impl std::fmt::Display for NotServo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotServo::Short(n) => write!(f, "{n} bytes, shorter than a servo packet's header"),
            NotServo::Magic(m) => write!(
                f,
                "magic {m}, neither {MAGIC_16} (16 channels) nor {MAGIC_32} (32 channels)"
            ),
            NotServo::Length {
                magic,
                len,
                expected,
            } => write!(f, "magic {magic} with {len} bytes instead of {expected}"),
        }
    }
}

impl ServoPacket {
    pub(crate) fn parse(d: &[u8]) -> Result<ServoPacket, NotServo> {
        if d.len() < 8 {
            return Err(NotServo::Short(d.len()));
        }
        let u16_at = |i: usize| u16::from_le_bytes([d[i], d[i + 1]]);
        let magic = u16_at(0);
        let channels = match magic {
            MAGIC_16 => 16,
            MAGIC_32 => 32,
            m => return Err(NotServo::Magic(m)),
        };
        let expected = 8 + 2 * channels;
        if d.len() != expected {
            return Err(NotServo::Length {
                magic,
                len: d.len(),
                expected,
            });
        }
        let mut pwm = [0u16; 32];
        for (i, p) in pwm.iter_mut().enumerate().take(channels) {
            *p = u16_at(8 + 2 * i);
        }
        Ok(ServoPacket {
            frame_rate: u16_at(2),
            frame_count: u32::from_le_bytes([d[4], d[5], d[6], d[7]]),
            channels,
            pwm,
        })
    }

    /// The actuator frame the packet commands: rotor `i` gets channel
    /// `map.channel(i)` as (PWM − 1000 µs) / 1000 µs within [0, 1] (a
    /// channel not driven, PWM 0, is 0). The packet carries no armed flag
    /// nor mode: armed is inferred as any rotor above 1000 µs, and the mode
    /// is `LOCKSTEP_MODE_STACK` then.
    pub(crate) fn actuators(&self, map: &OutputMap, rotors: usize) -> lockstep_actuator_frame {
        let mut out = lockstep_actuator_frame {
            mission_current: -1,
            ..Default::default()
        };
        let mut spinning = false;
        for (i, m) in out.motors.iter_mut().enumerate().take(rotors) {
            let pwm = self.pwm.get(map.channel(i)).copied().unwrap_or(0);
            spinning |= pwm > 1000;
            *m = ((f32::from(pwm) - 1000.0) / 1000.0).clamp(0.0, 1.0);
        }
        out.armed = u32::from(spinning);
        out.mode = if spinning {
            LOCKSTEP_MODE_STACK
        } else {
            LOCKSTEP_MODE_DISARMED
        };
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(magic: u16, count: u32, pwm: &[u16]) -> Vec<u8> {
        let mut d = Vec::new();
        d.extend_from_slice(&magic.to_le_bytes());
        d.extend_from_slice(&400u16.to_le_bytes());
        d.extend_from_slice(&count.to_le_bytes());
        for p in pwm {
            d.extend_from_slice(&p.to_le_bytes());
        }
        d
    }

    #[test]
    fn both_magics_parse_and_anything_else_says_why_not() {
        let mut pwm = [1000u16; 32];
        pwm[..4].copy_from_slice(&[1500, 1250, 2000, 1000]);
        let p16 = ServoPacket::parse(&packet(MAGIC_16, 7, &pwm[..16])).unwrap();
        assert_eq!(
            (p16.frame_rate, p16.frame_count, p16.channels),
            (400, 7, 16)
        );
        assert_eq!(p16.pwm[..4], [1500, 1250, 2000, 1000]);
        assert_eq!(p16.pwm[16], 0);
        let p32 = ServoPacket::parse(&packet(MAGIC_32, 8, &pwm)).unwrap();
        assert_eq!((p32.channels, p32.pwm[31]), (32, 1000));
        assert_eq!(ServoPacket::parse(&[1, 2, 3]), Err(NotServo::Short(3)));
        assert_eq!(
            ServoPacket::parse(&packet(1234, 1, &pwm[..16])),
            Err(NotServo::Magic(1234))
        );
        let wrong = ServoPacket::parse(&packet(MAGIC_32, 1, &pwm[..16])).unwrap_err();
        assert_eq!(wrong.to_string(), "magic 29569 with 40 bytes instead of 72");
    }

    #[test]
    fn pwm_maps_to_motor_commands_through_the_output_map() {
        let mut pwm = [0u16; 32];
        pwm[..4].copy_from_slice(&[1500, 1250, 2100, 900]);
        let p = ServoPacket::parse(&packet(MAGIC_16, 1, &pwm[..16])).unwrap();
        let a = p.actuators(&OutputMap::new(vec![1, 0, 2, 3]), 4);
        assert_eq!(a.motors[..4], [0.25, 0.5, 1.0, 0.0]);
        assert_eq!((a.armed, a.mode), (1, LOCKSTEP_MODE_STACK));
        let idle = ServoPacket::parse(&packet(MAGIC_16, 1, &[1000; 16])).unwrap();
        let a = idle.actuators(&OutputMap::identity(), 4);
        assert_eq!(
            (a.armed, a.mode, a.motors[0]),
            (0, LOCKSTEP_MODE_DISARMED, 0.0)
        );
    }
}
