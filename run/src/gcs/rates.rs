//! How often each stream is sent, as stations set it: MAVLink's
//! SET_MESSAGE_INTERVAL (per message: -1 off, 0 the default, else the
//! interval in µs; GET_MESSAGE_INTERVAL answers with MESSAGE_INTERVAL) and
//! ArduPilot's REQUEST_DATA_STREAM (a group of messages at a rate in Hz, 0
//! or stop: off), which MAVProxy and Mission Planner send. Periods are of
//! simulated time; a stream is sent at the first boundary at or after it
//! is due.

use mavlink::dialects::common::*;

use super::telemetry::STREAMS;

/// The shortest interval a station may ask for (1 kHz).
const MIN_INTERVAL_US: u64 = 1_000;

/// Each stream's period (`None`: off) and when it is next due.
#[derive(Debug)]
pub(super) struct Rates {
    period: [Option<u64>; STREAMS.len()],
    next_due: [u64; STREAMS.len()],
}

impl Rates {
    pub(super) fn new() -> Rates {
        Rates {
            period: STREAMS.map(|(_, p)| Some(p)),
            next_due: [0; STREAMS.len()],
        }
    }

    /// Which streams are due at `now` (by their index in [`STREAMS`]),
    /// each then scheduled a period on. No allocation: it runs at every
    /// boundary.
    pub(super) fn due(&mut self, now: u64) -> [bool; STREAMS.len()] {
        let mut due = [false; STREAMS.len()];
        for (k, d) in due.iter_mut().enumerate() {
            if let Some(period) = self.period[k]
                && now >= self.next_due[k]
            {
                *d = true;
                self.next_due[k] = (now / period + 1) * period;
            }
        }
        due
    }

    fn index(id: u32) -> Option<usize> {
        STREAMS.iter().position(|(s, _)| s.message_id() == id)
    }

    /// SET_MESSAGE_INTERVAL: whether the message is one the vehicle
    /// streams (else the command is unsupported).
    pub(super) fn set_interval(&mut self, id: f32, interval_us: f32, now: u64) -> MavResult {
        let Some(k) = whole(id).and_then(Self::index) else {
            return MavResult::MAV_RESULT_UNSUPPORTED;
        };
        let period = if interval_us == -1.0 {
            None
        } else if interval_us == 0.0 {
            Some(STREAMS[k].1)
        } else if interval_us.is_finite() && interval_us > 0.0 {
            Some((interval_us as u64).max(MIN_INTERVAL_US))
        } else {
            return MavResult::MAV_RESULT_DENIED;
        };
        self.period[k] = period;
        self.next_due[k] = now;
        MavResult::MAV_RESULT_ACCEPTED
    }

    /// GET_MESSAGE_INTERVAL's answer: the interval (-1 off), or `None`
    /// for a message the vehicle does not stream.
    pub(super) fn interval(&self, id: f32) -> Option<MavMessage> {
        let id = whole(id)?;
        let k = Self::index(id)?;
        Some(MavMessage::MESSAGE_INTERVAL(MESSAGE_INTERVAL_DATA {
            interval_us: self.period[k].map_or(-1, |p| i32::try_from(p).unwrap_or(i32::MAX)),
            message_id: id as u16,
        }))
    }

    /// REQUEST_DATA_STREAM: the group's streams at `hz` (stop or 0 Hz:
    /// off).
    pub(super) fn request_stream(&mut self, r: &REQUEST_DATA_STREAM_DATA, now: u64) {
        for (k, (stream, _)) in STREAMS.iter().enumerate() {
            if stream.in_group(r.req_stream_id) {
                self.period[k] = if r.start_stop == 0 || r.req_message_rate == 0 {
                    None
                } else {
                    Some((1_000_000 / u64::from(r.req_message_rate)).max(MIN_INTERVAL_US))
                };
                self.next_due[k] = now;
            }
        }
    }
}

/// A message id given as a float (COMMAND_LONG's params).
fn whole(id: f32) -> Option<u32> {
    (id.is_finite() && id >= 0.0 && id.fract() == 0.0 && id <= u32::MAX as f32).then_some(id as u32)
}
