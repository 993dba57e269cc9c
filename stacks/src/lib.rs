//! lockstep-stacks: flight stacks flown in lockstep over their own simulator
//! protocols, as a third kind of autopilot bridge
//! ([`lockstep_abi::FlightStack`]) beside a library in this process and one
//! isolated in a child:
//!
//! - [`px4`]: PX4 SITL's `simulator_mavlink` (MAVLink `HIL_*` messages over
//!   TCP; lockstep is the server on 4560 + instance, PX4 connects);
//! - [`ardupilot`]: ArduPilot SITL's JSON backend (servo packets in, one
//!   line of JSON out, over UDP on 9002 + 10 × instance).
//!
//! Each step sends the boundary's sensor frame (lockstep's own sensor
//! models, faults and battery) and the true state, and waits for the stack's
//! answer before the plant integrates the next interval. A peer that never
//! connects, disconnects, breaks the protocol or misses the step deadline is
//! an [`lockstep_abi::AbiError`] naming what happened and when; what is
//! ignored (bytes that are not frames, messages of no use, re-sent packets)
//! is counted in [`lockstep_abi::StackNotes`].

pub mod ardupilot;
mod listen;
mod output_map;
pub mod px4;

use std::net::IpAddr;
use std::time::Duration;

use lockstep_abi::{AbiError, FlightStack, ffi};

pub use output_map::OutputMap;

/// Which flight stack, by the name scenarios and `--autopilot` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackKind {
    Px4Sitl,
    ArduPilotJson,
}

impl StackKind {
    pub const ALL: [StackKind; 2] = [StackKind::Px4Sitl, StackKind::ArduPilotJson];

    pub fn name(self) -> &'static str {
        match self {
            StackKind::Px4Sitl => "px4-sitl",
            StackKind::ArduPilotJson => "ardupilot-json",
        }
    }

    pub fn from_name(name: &str) -> Option<StackKind> {
        StackKind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The port the stack expects for `instance` (PX4: 4560 + instance,
    /// TCP; ArduPilot: 9002 + 10 × instance, UDP), if it fits in 16 bits.
    pub fn default_port(self, instance: u32) -> Option<u16> {
        let port = match self {
            StackKind::Px4Sitl => 4560 + u64::from(instance),
            StackKind::ArduPilotJson => 9002 + 10 * u64::from(instance),
        };
        u16::try_from(port).ok()
    }

    /// Output channels the protocol carries (PX4's `HIL_ACTUATOR_CONTROLS`:
    /// 16; ArduPilot's servo packet: up to 32).
    pub fn channels(self) -> usize {
        match self {
            StackKind::Px4Sitl => 16,
            StackKind::ArduPilotJson => 32,
        }
    }
}

/// How a PX4 boot is met: PX4 answers nothing until its modules run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Boot {
    /// Until the first answer, each sensor message waits one autopilot
    /// period of wall time for it and then the next is sent with the motors
    /// off (as Gazebo's plugin free-runs until the first
    /// `HIL_ACTUATOR_CONTROLS`): a booting PX4 gets a sensor stream.
    FreeRun,
    /// Every message waits for its answer, from the first: for a peer that
    /// answers every message; two runs are byte-identical.
    Strict,
}

/// Everything a link needs, validated (see the scenario's `[autopilot]`).
#[derive(Debug, Clone, PartialEq)]
pub struct StackOptions {
    pub kind: StackKind,
    /// The address to listen on.
    pub address: IpAddr,
    pub port: u16,
    /// Which output channel drives each rotor.
    pub output_map: OutputMap,
    /// How long the first step waits for the stack to connect (PX4) or send
    /// its first servo packet (ArduPilot).
    pub connect_timeout: Duration,
    /// How long a step in lockstep waits for the stack's answer.
    pub step_deadline: Duration,
    pub boot: Boot,
}

/// Opens the link `options` describe for a vehicle configured as `config`:
/// the port is bound now (a port in use is refused before any flight); the
/// stack connects at the first step.
pub fn open(
    options: &StackOptions,
    config: &ffi::lockstep_autopilot_config,
) -> Result<Box<dyn FlightStack>, AbiError> {
    options
        .output_map
        .check(options.kind, config.rotor_count as usize)?;
    Ok(match options.kind {
        StackKind::Px4Sitl => Box::new(px4::Px4Sitl::listen(options, config)?),
        StackKind::ArduPilotJson => Box::new(ardupilot::ArduPilotJson::listen(options, config)?),
    })
}
