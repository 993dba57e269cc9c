//! PX4 SITL over `simulator_mavlink`: lockstep is the TCP server (4560 +
//! instance, TCP_NODELAY) that PX4 connects to, as Gazebo's plugin is.
//!
//! Each autopilot boundary sends, in one write, `HIL_SENSOR` (time_usec =
//! lockstep time), `HIL_GPS` when a fix was sampled, and
//! `HIL_STATE_QUATERNION` (ground truth), then waits for the
//! `HIL_ACTUATOR_CONTROLS` whose `time_usec` is that time: its controls are
//! held over the next interval. Answers with an earlier time (a boot's late
//! answers) are skipped and counted; one with a later time, a closed
//! connection, or no answer by the step deadline is an error.
//!
//! The boot ([`crate::Boot`]): PX4 answers nothing until its modules run.
//! `FreeRun` (the default) waits one autopilot period of wall time for each
//! answer until the first arrives, the motors off meanwhile, as Gazebo
//! free-runs until the first `HIL_ACTUATOR_CONTROLS`; from the first answer
//! on, every message waits for its own. How many periods a real PX4 takes to
//! boot depends on the wall clock, so two runs match from the first answer
//! on, not before. `Strict` waits for every answer from the first message:
//! a peer that answers every message gives byte-identical runs.

mod messages;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use lockstep_abi::ffi::{
    lockstep_actuator_frame, lockstep_autopilot_config, lockstep_sensor_frame,
};
use lockstep_abi::{AbiError, FlightStack, GroundTruth, StackNotes};
use mavlink::dialects::common::{HilActuatorControlsFlags, MavMessage};
use mavlink::error::MessageReadError;
use mavlink::{MAVLinkMessageRaw, MavHeader, Message};

use crate::listen::{Countdown, Interrupt, Tally, seconds, slice_until};
use crate::{Boot, OutputMap, StackOptions};

/// Counts the bytes read from the stream, so that what the MAVLink reader
/// skipped (bytes of no valid frame) can be told at the end.
///
/// A read past `until`, or after a signal, fails as timed out: the MAVLink
/// reader keeps reading until it has a valid frame, so a peer trickling
/// bytes that never make one must not hold a step past its deadline.
struct Counted {
    stream: TcpStream,
    read: u64,
    until: Option<Instant>,
    interrupt: Interrupt,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let late = self.until.is_some_and(|u| Instant::now() >= u);
        if late || self.interrupt.check().is_err() {
            return Err(ErrorKind::TimedOut.into());
        }
        let n = self.stream.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// What a wait for an answer ended with (returned by value once a round:
/// boxing the frame would allocate every step).
#[allow(clippy::large_enum_variant)]
enum Answer {
    Frame(lockstep_actuator_frame),
    /// An answer to an earlier message (while booting).
    Lagging,
    None,
}

struct Connection {
    writer: TcpStream,
    reader: mavlink::MavlinkReader<Counted>,
    peer: SocketAddr,
    /// Bytes of the frames decoded so far.
    decoded: u64,
}

/// The link to one PX4 SITL instance.
pub struct Px4Sitl {
    name: String,
    listener: Option<TcpListener>,
    conn: Option<Connection>,
    map: OutputMap,
    rotors: usize,
    connect_timeout: Duration,
    step_deadline: Duration,
    boot: Boot,
    /// Wall time a boot message waits for its answer: one autopilot period.
    boot_wait: Duration,
    /// Whether the first answer has come (every message waits from then on).
    answered: bool,
    /// When the boot's first message was sent.
    boot_started: Option<Instant>,
    header: MavHeader,
    out: Vec<u8>,
    tally: Tally,
    interrupt: Interrupt,
}

impl std::fmt::Debug for Px4Sitl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Px4Sitl")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Px4Sitl {
    /// Binds the TCP port; PX4 connects at the first step.
    pub fn listen(
        options: &StackOptions,
        config: &lockstep_autopilot_config,
    ) -> Result<Px4Sitl, AbiError> {
        let address = SocketAddr::new(options.address, options.port);
        let name = format!("px4-sitl (TCP {address})");
        let listener = TcpListener::bind(address)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| AbiError::StackListen {
                stack: "px4-sitl".into(),
                address: format!("TCP {address}"),
                reason: e.to_string(),
            })?;
        Ok(Px4Sitl {
            name,
            listener: Some(listener),
            conn: None,
            map: options.output_map.clone(),
            rotors: config.rotor_count as usize,
            connect_timeout: options.connect_timeout,
            step_deadline: options.step_deadline,
            boot: options.boot,
            boot_wait: Duration::from_micros(u64::from(config.autopilot_period_us)),
            answered: false,
            boot_started: None,
            header: MavHeader {
                system_id: 1,
                component_id: 51,
                sequence: 0,
            },
            out: Vec::with_capacity(512),
            tally: Tally::default(),
            interrupt: Interrupt::default(),
        })
    }

    /// The port actually bound (useful when the options asked for port 0).
    pub fn local_port(&self) -> Option<u16> {
        self.listener
            .as_ref()
            .and_then(|l| l.local_addr().ok())
            .map(|a| a.port())
    }

    fn failed(&self, time_us: u64, reason: String) -> AbiError {
        AbiError::PeerFailed {
            stack: self.name.clone(),
            time_us,
            reason,
        }
    }

    /// Waits for PX4 to connect (the first step).
    fn accept(&mut self) -> Result<(), AbiError> {
        let Some(listener) = &self.listener else {
            return Err(AbiError::InvalidInput {
                reason: format!("{}: the link was closed", self.name),
            });
        };
        let until = Instant::now() + self.connect_timeout;
        let mut countdown = Countdown::new(
            &self.name,
            "start PX4 SITL now (make px4_sitl none_iris)",
            self.connect_timeout,
        );
        let (stream, peer) = loop {
            match listener.accept() {
                Ok(s) => break s,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    self.interrupt.check()?;
                    countdown.tick();
                    match slice_until(until) {
                        Some(d) => std::thread::sleep(d.min(Duration::from_millis(5))),
                        None => {
                            return Err(AbiError::PeerNotConnected {
                                stack: self.name.clone(),
                                waited_s: seconds(self.connect_timeout),
                                hint: "start PX4 SITL without a simulator of its own \
                                       (see the README's PX4 section)"
                                    .into(),
                            });
                        }
                    }
                }
                Err(e) => {
                    return Err(AbiError::PeerNotConnected {
                        stack: self.name.clone(),
                        waited_s: 0.0,
                        hint: format!("accept failed: {e}"),
                    });
                }
            }
        };
        // A PX4 that stops reading must not block a send forever either.
        let setup = stream
            .set_nonblocking(false)
            .and_then(|()| stream.set_nodelay(true))
            .and_then(|()| stream.set_write_timeout(Some(self.step_deadline)))
            .and_then(|()| stream.try_clone());
        let reader =
            setup.map_err(|e| self.failed(0, format!("setting up the connection: {e}")))?;
        self.conn = Some(Connection {
            writer: stream,
            reader: mavlink::MavlinkReader::new(Counted {
                stream: reader,
                read: 0,
                until: None,
                interrupt: self.interrupt.clone(),
            }),
            peer,
            decoded: 0,
        });
        Ok(())
    }

    /// Sends the boundary's messages in one write.
    fn send(
        &mut self,
        time_us: u64,
        sensors: &lockstep_sensor_frame,
        truth: &GroundTruth,
    ) -> Result<(), AbiError> {
        self.out.clear();
        let put = |header: &mut MavHeader, out: &mut Vec<u8>, msg: &MavMessage| {
            // Writing into a Vec cannot fail.
            let _ = mavlink::write_v2_msg(out, *header, msg);
            header.sequence = header.sequence.wrapping_add(1);
        };
        let h = &mut self.header;
        put(
            h,
            &mut self.out,
            &MavMessage::HIL_SENSOR(messages::hil_sensor(time_us, sensors)),
        );
        if sensors.fresh_mask & lockstep_abi::ffi::LOCKSTEP_FRESH_GPS != 0 {
            put(
                h,
                &mut self.out,
                &MavMessage::HIL_GPS(messages::hil_gps(time_us, &sensors.gps)),
            );
        }
        put(
            h,
            &mut self.out,
            &MavMessage::HIL_STATE_QUATERNION(messages::hil_state(time_us, truth)),
        );
        let conn = self.conn.as_mut().expect("connected before sending");
        if let Err(e) = conn.writer.write_all(&self.out) {
            let reason = if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) {
                format!(
                    "sending HIL_SENSOR blocked for the step deadline of {} s (PX4 is not \
                     reading)",
                    seconds(self.step_deadline)
                )
            } else {
                format!("sending HIL_SENSOR failed: {e} (PX4 disconnected?)")
            };
            return Err(self.failed(time_us, reason));
        }
        Ok(())
    }

    /// The answer to the message of `time_us`, waited for until `until`.
    /// While booting, an answer to an earlier message ends the wait too
    /// (PX4 answers now, a round trip behind).
    fn answer(&mut self, time_us: u64, until: Instant, booting: bool) -> Result<Answer, AbiError> {
        loop {
            self.interrupt.check()?;
            let Some(slice) = slice_until(until) else {
                return Ok(Answer::None);
            };
            let conn = self.conn.as_mut().expect("connected before reading");
            conn.reader.get_mut().until = Some(until);
            let _ = conn.reader.get_mut().stream.set_read_timeout(Some(slice));
            let raw = match conn.reader.read_any_raw_message::<MavMessage>() {
                Ok(raw) => raw,
                Err(MessageReadError::Io(e))
                    if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    continue;
                }
                Err(MessageReadError::Io(e)) if e.kind() == ErrorKind::UnexpectedEof => {
                    let reason = format!(
                        "PX4 ({}) closed the connection while lockstep waited for \
                         HIL_ACTUATOR_CONTROLS",
                        conn.peer
                    );
                    self.note_skipped();
                    return Err(self.failed(time_us, reason));
                }
                Err(e) => {
                    let reason = format!("reading from PX4 failed: {e}");
                    return Err(self.failed(time_us, reason));
                }
            };
            conn.decoded += match &raw {
                MAVLinkMessageRaw::V1(m) => m.raw_bytes().len(),
                MAVLinkMessageRaw::V2(m) => m.raw_bytes().len(),
            } as u64;
            let msg = match MavMessage::parse(raw.version(), raw.message_id(), raw.payload()) {
                Ok(m) => m,
                Err(e) => {
                    self.tally.add(&format!("MAVLink frames ignored: {e}"), 1);
                    continue;
                }
            };
            match msg {
                MavMessage::HIL_ACTUATOR_CONTROLS(c) if c.time_usec == time_us => {
                    if !c
                        .flags
                        .contains(HilActuatorControlsFlags::HIL_ACTUATOR_CONTROLS_FLAGS_LOCKSTEP)
                    {
                        self.tally.add(
                            "HIL_ACTUATOR_CONTROLS without the lockstep flag (PX4 does not \
                             run in lockstep; lockstep waited for each all the same)",
                            1,
                        );
                    }
                    if let Some(k) = c.controls.iter().position(|v| !v.is_finite()) {
                        let reason =
                            format!("HIL_ACTUATOR_CONTROLS.controls[{k}] is {}", c.controls[k]);
                        return Err(self.failed(time_us, reason));
                    }
                    return Ok(Answer::Frame(messages::actuators(
                        &c,
                        &self.map,
                        self.rotors,
                    )));
                }
                MavMessage::HIL_ACTUATOR_CONTROLS(c) if c.time_usec < time_us => {
                    self.tally.add(
                        "HIL_ACTUATOR_CONTROLS answering an earlier HIL_SENSOR (skipped)",
                        1,
                    );
                    if booting {
                        return Ok(Answer::Lagging);
                    }
                }
                MavMessage::HIL_ACTUATOR_CONTROLS(c) => {
                    let reason = format!(
                        "HIL_ACTUATOR_CONTROLS for time_usec {} answers a HIL_SENSOR not sent \
                         yet (the last was {time_us})",
                        c.time_usec
                    );
                    return Err(self.failed(time_us, reason));
                }
                other => {
                    self.tally.add(
                        &format!(
                            "{} messages (of no use on the simulator link)",
                            other.message_name()
                        ),
                        1,
                    );
                }
            }
        }
    }

    /// Counts the bytes read that were no valid frame (garbage, a wrong
    /// CRC, an unknown message, a truncated frame at the end).
    fn note_skipped(&mut self) {
        if let Some(conn) = &mut self.conn {
            let skipped = conn.reader.get_ref().read - conn.decoded;
            conn.decoded = conn.reader.get_ref().read;
            self.tally.add(
                "bytes skipped that were no valid MAVLink frame of the common dialect",
                skipped,
            );
        }
    }
}

impl FlightStack for Px4Sitl {
    fn describe(&self) -> String {
        self.name.clone()
    }

    fn step(
        &mut self,
        time_us: u64,
        sensors: &lockstep_sensor_frame,
        truth: &GroundTruth,
    ) -> Result<lockstep_actuator_frame, AbiError> {
        if self.conn.is_none() {
            self.accept()?;
        }
        self.send(time_us, sensors, truth)?;
        if !self.answered && self.boot == Boot::FreeRun {
            let started = *self.boot_started.get_or_insert_with(Instant::now);
            let until = Instant::now() + self.boot_wait;
            match self.answer(time_us, until, true)? {
                Answer::Frame(frame) => {
                    self.answered = true;
                    return Ok(frame);
                }
                // PX4 answers, a round trip behind: lockstep from here on.
                Answer::Lagging => self.answered = true,
                Answer::None if started.elapsed() > self.connect_timeout => {
                    let reason = format!(
                        "PX4 sent no HIL_ACTUATOR_CONTROLS within {} s (the connect timeout) \
                         of its first HIL_SENSOR: still booting, or not running in lockstep",
                        seconds(self.connect_timeout)
                    );
                    return Err(self.failed(time_us, reason));
                }
                Answer::None => {
                    self.tally
                        .add("boot periods before PX4's first answer (motors off)", 1);
                    return Ok(messages::motors_off());
                }
            }
        }
        let until = Instant::now() + self.step_deadline;
        match self.answer(time_us, until, false)? {
            Answer::Frame(frame) => {
                self.answered = true;
                Ok(frame)
            }
            Answer::None | Answer::Lagging => {
                let reason = format!(
                    "no HIL_ACTUATOR_CONTROLS for time_usec {time_us} within the step \
                     deadline of {} s",
                    seconds(self.step_deadline)
                );
                Err(self.failed(time_us, reason))
            }
        }
    }

    fn notes(&self) -> StackNotes {
        let mut tally = self.tally.clone();
        if let Some(conn) = &self.conn {
            tally.add(
                "bytes skipped that were no valid MAVLink frame of the common dialect (or \
                 arrived after the last answer)",
                conn.reader.get_ref().read - conn.decoded,
            );
        }
        tally.notes()
    }

    fn interrupt_on(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        self.interrupt.set(flag);
    }

    fn close(&mut self) -> Result<(), AbiError> {
        self.listener = None;
        if let Some(conn) = &self.conn {
            let _ = conn.writer.shutdown(std::net::Shutdown::Both);
        }
        Ok(())
    }
}
