// QGroundControl may still download with MISSION_REQUEST (superseded):
// it is answered with MISSION_ITEM_INT, as MAVLink says.
#![allow(deprecated)]

//! MAVLink's mission protocol on the vehicle's side (mission type MISSION;
//! fences and rally points are answered as unsupported): upload (COUNT,
//! REQUEST_INT for each item, ACK once the autopilot took it or refused
//! it), download (REQUEST_LIST, COUNT, ITEM_INT for each REQUEST_INT or
//! REQUEST), clear (CLEAR_ALL). PX4 numbers items as the contract does
//! (no home line); ArduPilot puts home at 0: in its style the uploaded
//! item 0 is home (not given to the autopilot), downloads start with home,
//! and item numbers on the link are the contract's + 1.

use mavlink::dialects::common::*;

use super::input::{Input, Item};

/// An upload under way.
#[derive(Debug, Clone)]
struct Upload {
    from: (u8, u8),
    count: u16,
    items: Vec<MISSION_ITEM_INT_DATA>,
}

/// What the server says back, and what the flight must take.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) replies: Vec<MavMessage>,
    /// A mission to upload; once applied, `acknowledge` answers it.
    pub(crate) input: Option<Input>,
}

#[derive(Debug, Default)]
pub(crate) struct MissionServer {
    /// Item 0 on the link is home (ArduPilot's numbering).
    pub(crate) home_first: bool,
    upload: Option<Upload>,
    /// The mission as last uploaded (answered on download).
    current: Vec<MISSION_ITEM_INT_DATA>,
    /// The mission the last input carries, kept until it is acknowledged.
    pending: Option<Vec<MISSION_ITEM_INT_DATA>>,
    pending_from: (u8, u8),
    /// The last upload answered: to whom, its item count, the answer.
    last_ack: Option<((u8, u8), u16, MavMissionResult)>,
}

fn ack(to: (u8, u8), result: MavMissionResult, mission_type: MavMissionType) -> MavMessage {
    MavMessage::MISSION_ACK(MISSION_ACK_DATA {
        target_system: to.0,
        target_component: to.1,
        mavtype: result,
        mission_type,
        opaque_id: 0,
    })
}

fn request(to: (u8, u8), seq: u16) -> MavMessage {
    MavMessage::MISSION_REQUEST_INT(MISSION_REQUEST_INT_DATA {
        seq,
        target_system: to.0,
        target_component: to.1,
        mission_type: MavMissionType::MAV_MISSION_TYPE_MISSION,
    })
}

/// A MISSION_ITEM_INT as the contract's item: the `_INT` frames are the
/// contract's global frames (altitude above mean sea level, above home).
pub(crate) fn item(m: &MISSION_ITEM_INT_DATA) -> Item {
    let frame = match m.frame {
        MavFrame::MAV_FRAME_GLOBAL_INT => MavFrame::MAV_FRAME_GLOBAL as u32,
        MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT_INT => {
            MavFrame::MAV_FRAME_GLOBAL_RELATIVE_ALT as u32
        }
        f => f as u32,
    };
    Item {
        command: m.command as u32,
        frame,
        params: [m.param1, m.param2, m.param3, m.param4],
        lat_deg: f64::from(m.x) * 1e-7,
        lon_deg: f64::from(m.y) * 1e-7,
        alt_m: m.z,
        autocontinue: u32::from(m.autocontinue),
    }
}

impl MissionServer {
    /// A server numbering items as `home_first` says.
    pub(crate) fn new(home_first: bool) -> MissionServer {
        MissionServer {
            home_first,
            ..Default::default()
        }
    }

    /// Handles one mission message from the ground station `from` (system,
    /// component).
    pub(crate) fn handle(
        &mut self,
        from: (u8, u8),
        msg: &MavMessage,
        home: &MISSION_ITEM_INT_DATA,
    ) -> Outcome {
        self.home_at_zero(home);
        let mut out = Outcome::default();
        let mission = MavMissionType::MAV_MISSION_TYPE_MISSION;
        match msg {
            MavMessage::MISSION_COUNT(c) if c.mission_type != mission => {
                out.replies.push(ack(
                    from,
                    MavMissionResult::MAV_MISSION_UNSUPPORTED,
                    c.mission_type,
                ));
            }
            MavMessage::MISSION_COUNT(c) if c.count == 0 => {
                self.upload = None;
                out.input = Some(self.take(from, Vec::new()));
            }
            MavMessage::MISSION_COUNT(c) => {
                self.last_ack = None;
                self.upload = Some(Upload {
                    from,
                    count: c.count,
                    items: Vec::with_capacity(usize::from(c.count)),
                });
                out.replies.push(request(from, 0));
            }
            MavMessage::MISSION_ITEM_INT(m) if m.mission_type == mission => {
                let Some(up) = &mut self.upload else {
                    // The last item again: our MISSION_ACK was lost.
                    let answer = match self.last_ack {
                        Some((to, count, r)) if to == from && m.seq + 1 == count => r,
                        _ => MavMissionResult::MAV_MISSION_DENIED,
                    };
                    out.replies.push(ack(from, answer, mission));
                    return out;
                };
                if up.from != from {
                    // Another station's upload is under way.
                    out.replies
                        .push(ack(from, MavMissionResult::MAV_MISSION_DENIED, mission));
                    return out;
                }
                let next = up.items.len() as u16;
                if m.seq != next {
                    // Out of order (a retry crossing an answer): ask again.
                    out.replies.push(request(up.from, next));
                    return out;
                }
                up.items.push(m.clone());
                if up.items.len() == usize::from(up.count) {
                    let up = self.upload.take().expect("an upload under way");
                    out.input = Some(self.take(up.from, up.items));
                } else {
                    out.replies.push(request(up.from, next + 1));
                }
            }
            MavMessage::MISSION_REQUEST_LIST(r) => {
                let count = if r.mission_type == mission {
                    self.current.len() as u16
                } else {
                    0
                };
                out.replies
                    .push(MavMessage::MISSION_COUNT(MISSION_COUNT_DATA {
                        count,
                        target_system: from.0,
                        target_component: from.1,
                        mission_type: r.mission_type,
                        opaque_id: 0,
                    }));
            }
            MavMessage::MISSION_REQUEST_INT(MISSION_REQUEST_INT_DATA {
                seq, mission_type, ..
            })
            | MavMessage::MISSION_REQUEST(MISSION_REQUEST_DATA {
                seq, mission_type, ..
            }) => match self.current.get(usize::from(*seq)) {
                Some(m) if *mission_type == mission => {
                    let mut m = m.clone();
                    m.target_system = from.0;
                    m.target_component = from.1;
                    out.replies.push(MavMessage::MISSION_ITEM_INT(m));
                }
                _ => out.replies.push(ack(
                    from,
                    MavMissionResult::MAV_MISSION_INVALID_SEQUENCE,
                    *mission_type,
                )),
            },
            MavMessage::MISSION_CLEAR_ALL(c) if c.mission_type == mission => {
                self.upload = None;
                out.input = Some(self.take(from, Vec::new()));
            }
            MavMessage::MISSION_CLEAR_ALL(c) => {
                out.replies.push(ack(
                    from,
                    MavMissionResult::MAV_MISSION_UNSUPPORTED,
                    c.mission_type,
                ));
            }
            _ => {}
        }
        out
    }

    /// The mission as a download (MISSION_REQUEST_LIST) returns it, item
    /// by item: in ArduPilot's numbering, home first.
    pub(crate) fn download(&mut self, home: &MISSION_ITEM_INT_DATA) -> &[MISSION_ITEM_INT_DATA] {
        self.home_at_zero(home);
        &self.current
    }

    fn home_at_zero(&mut self, home: &MISSION_ITEM_INT_DATA) {
        if self.home_first {
            // ArduPilot's item 0 is the vehicle's home, whatever was
            // uploaded there.
            match self.current.first_mut() {
                Some(first) => *first = home.clone(),
                None => self.current.push(home.clone()),
            }
        }
    }

    /// The input of a complete upload (applied by the caller, then
    /// [`MissionServer::acknowledge`]d).
    fn take(&mut self, from: (u8, u8), items: Vec<MISSION_ITEM_INT_DATA>) -> Input {
        let skip = usize::from(self.home_first).min(items.len());
        let input = Input::Mission {
            items: items[skip..].iter().map(item).collect(),
        };
        self.pending = Some(items);
        self.pending_from = from;
        input
    }

    /// The answer to the upload just applied: accepted (the mission is now
    /// the one downloads return) or an error.
    pub(crate) fn acknowledge(&mut self, result: &Result<(), String>) -> MavMessage {
        let items = self.pending.take().unwrap_or_default();
        let count = items.len() as u16;
        let r = match result {
            Ok(()) => {
                self.current = items;
                MavMissionResult::MAV_MISSION_ACCEPTED
            }
            Err(_) => MavMissionResult::MAV_MISSION_ERROR,
        };
        self.last_ack = Some((self.pending_from, count, r));
        ack(
            self.pending_from,
            r,
            MavMissionType::MAV_MISSION_TYPE_MISSION,
        )
    }
}
