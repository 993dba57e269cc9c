//! ArduPilot SITL's JSON backend (`--model JSON`): lockstep listens on UDP
//! (9002 + 10 × instance); ArduPilot sends a servo packet each frame and
//! waits for the state after it.
//!
//! The first packet (ArduPilot's outputs before it has seen any state) opens
//! the link. Then each autopilot boundary replies to the last packet with
//! the state at that boundary and waits for the next packet, whose PWM is
//! held over the next interval. A packet with the frame count already
//! answered is ArduPilot re-sending (after about a second without a reply):
//! a second after our reply, the reply was lost and is sent again; sooner,
//! it was queued before the reply went out and is ignored (ArduPilot counts
//! every reply as a frame). Nothing is integrated twice. A jump in the frame count (packets lost) is counted and
//! the run goes on; a count going back (ArduPilot restarted) ends it.
//! Datagrams that are no servo packet (a wrong magic or length) and packets
//! from a second sender are ignored and counted.
//!
//! ArduPilot simulates its own GPS, barometer and compass from the state
//! sent; lockstep's IMU samples (noise, faults) are what it reads directly.

mod reply;
mod servo;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use lockstep_abi::ffi::{
    lockstep_actuator_frame, lockstep_autopilot_config, lockstep_sensor_frame,
};
use lockstep_abi::{AbiError, FlightStack, GroundTruth, StackNotes};

use crate::listen::{Countdown, Interrupt, Tally, seconds, slice_until};
use crate::{OutputMap, StackOptions};
use servo::ServoPacket;

/// The link to one ArduPilot SITL instance.
pub struct ArduPilotJson {
    name: String,
    socket: Option<UdpSocket>,
    /// ArduPilot's address (from its first packet).
    peer: Option<SocketAddr>,
    /// The frame count of the last packet answered.
    frame: Option<u32>,
    map: OutputMap,
    rotors: usize,
    connect_timeout: Duration,
    step_deadline: Duration,
    clock: reply::Clock,
    reply: Vec<u8>,
    buf: [u8; 2048],
    tally: Tally,
    interrupt: Interrupt,
    /// When the last reply was sent.
    replied_at: Instant,
}

/// ArduPilot re-sends a frame after about a second without an answer
/// (`SIM_JSON.cpp`: 100 ms receive timeouts, re-sent past 1000 ms): a copy
/// arriving this long after our reply means the reply was lost.
const RESEND_AFTER: Duration = Duration::from_millis(900);

impl std::fmt::Debug for ArduPilotJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArduPilotJson")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

enum Received {
    Packet(ServoPacket),
    TimedOut,
}

impl ArduPilotJson {
    /// Binds the UDP port; ArduPilot's first packet arrives at the first step.
    pub fn listen(
        options: &StackOptions,
        config: &lockstep_autopilot_config,
    ) -> Result<ArduPilotJson, AbiError> {
        let address = SocketAddr::new(options.address, options.port);
        let socket = UdpSocket::bind(address).map_err(|e| AbiError::StackListen {
            stack: "ardupilot-json".into(),
            address: format!("UDP {address}"),
            reason: e.to_string(),
        })?;
        Ok(ArduPilotJson {
            name: format!("ardupilot-json (UDP {address})"),
            socket: Some(socket),
            peer: None,
            frame: None,
            map: options.output_map.clone(),
            rotors: config.rotor_count as usize,
            connect_timeout: options.connect_timeout,
            step_deadline: options.step_deadline,
            clock: reply::Clock::default(),
            reply: Vec::with_capacity(512),
            buf: [0; 2048],
            tally: Tally::default(),
            interrupt: Interrupt::default(),
            replied_at: Instant::now(),
        })
    }

    /// The port actually bound (useful when the options asked for port 0).
    pub fn local_port(&self) -> Option<u16> {
        self.socket
            .as_ref()
            .and_then(|s| s.local_addr().ok())
            .map(|a| a.port())
    }

    fn failed(&self, time_us: u64, reason: String) -> AbiError {
        AbiError::PeerFailed {
            stack: self.name.clone(),
            time_us,
            reason,
        }
    }

    /// The next servo packet from ArduPilot, waited for until `until`.
    fn receive(&mut self, time_us: u64, until: Instant) -> Result<Received, AbiError> {
        loop {
            self.interrupt.check()?;
            let Some(slice) = slice_until(until) else {
                return Ok(Received::TimedOut);
            };
            let socket = self.socket.as_ref().expect("open while stepping");
            let _ = socket.set_read_timeout(Some(slice));
            let (n, from) = match socket.recv_from(&mut self.buf) {
                Ok(r) => r,
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    continue;
                }
                Err(e) => {
                    let reason = format!("receiving from ArduPilot failed: {e}");
                    return Err(self.failed(time_us, reason));
                }
            };
            if let Some(peer) = self.peer
                && from != peer
            {
                self.tally.add(
                    &format!("datagrams from a second sender ignored (the link serves {peer})"),
                    1,
                );
                continue;
            }
            match ServoPacket::parse(&self.buf[..n]) {
                Ok(p) => {
                    self.peer = Some(from);
                    return Ok(Received::Packet(p));
                }
                Err(why) => self.tally.add(&format!("datagrams ignored ({why})"), 1),
            }
        }
    }

    fn send_reply(&mut self, time_us: u64) -> Result<(), AbiError> {
        self.replied_at = Instant::now();
        let (Some(socket), Some(peer)) = (&self.socket, self.peer) else {
            return Ok(());
        };
        if let Err(e) = socket.send_to(&self.reply, peer) {
            let reason = format!("sending the JSON state to {peer} failed: {e}");
            return Err(self.failed(time_us, reason));
        }
        Ok(())
    }
}

impl FlightStack for ArduPilotJson {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn step(
        &mut self,
        time_us: u64,
        sensors: &lockstep_sensor_frame,
        truth: &GroundTruth,
    ) -> Result<lockstep_actuator_frame, AbiError> {
        if self.frame.is_none() {
            let until = Instant::now() + self.connect_timeout;
            let mut countdown = Countdown::new(
                &self.name,
                "start ArduPilot SITL now (sim_vehicle.py ... --model JSON)",
                self.connect_timeout,
            );
            // Waited for in slices of the countdown's period, so it speaks.
            let first = loop {
                let slice = (Instant::now() + std::time::Duration::from_secs(1)).min(until);
                match self.receive(time_us, slice)? {
                    Received::TimedOut if Instant::now() < until => countdown.tick(),
                    r => break r,
                }
            };
            match first {
                Received::Packet(p) => self.frame = Some(p.frame_count),
                Received::TimedOut => {
                    return Err(AbiError::PeerNotConnected {
                        stack: self.name.clone(),
                        waited_s: seconds(self.connect_timeout),
                        hint: "start ArduPilot SITL with --model JSON (see the README's \
                               ArduPilot section)"
                            .into(),
                    });
                }
            }
        }
        let timestamp = self.clock.timestamp(time_us);
        reply::write(&mut self.reply, timestamp, sensors, truth);
        if self.reply.windows(4).any(|w| w == b"null") {
            let reason = "the state to send holds a number that is not finite".to_string();
            return Err(self.failed(time_us, reason));
        }
        self.send_reply(time_us)?;
        let until = Instant::now() + self.step_deadline;
        loop {
            let p = match self.receive(time_us, until)? {
                Received::Packet(p) => p,
                Received::TimedOut => {
                    let reason = format!(
                        "no servo packet within the step deadline of {} s",
                        seconds(self.step_deadline)
                    );
                    return Err(self.failed(time_us, reason));
                }
            };
            let last = self.frame.unwrap_or(0);
            if p.frame_count == last {
                // ArduPilot re-sends a frame about a second after it sent it
                // without an answer. Copies queued before our reply went out
                // are answered by it (ArduPilot counts every reply as a new
                // frame: answering each would put it out of step); one that
                // comes a second after the reply means the reply was lost.
                if self.replied_at.elapsed() >= RESEND_AFTER {
                    self.tally.add(
                        "servo packets re-sent by ArduPilot (answered again, not integrated)",
                        1,
                    );
                    self.send_reply(time_us)?;
                } else {
                    self.tally.add(
                        "re-sent servo packets queued before the reply went out (not answered \
                         again)",
                        1,
                    );
                }
                continue;
            }
            if p.frame_count < last {
                let reason = format!(
                    "the frame count went back from {last} to {} (ArduPilot restarted?)",
                    p.frame_count
                );
                return Err(self.failed(time_us, reason));
            }
            let missed = u64::from(p.frame_count - last - 1);
            self.tally
                .add("servo packets missing (frame count jumps)", missed);
            self.frame = Some(p.frame_count);
            return Ok(p.actuators(&self.map, self.rotors));
        }
    }

    fn notes(&self) -> StackNotes {
        self.tally.notes()
    }

    fn interrupt_on(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        self.interrupt.set(flag);
    }

    fn close(&mut self) -> Result<(), AbiError> {
        self.socket = None;
        Ok(())
    }
}
