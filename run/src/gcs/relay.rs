//! The MAVLink vehicle in a distributed run
//! (`lockstep_distributed::served`): the primary's [`Router`] owns the
//! link (sockets, signing, the record); each secondary's [`Station`] runs
//! its vehicles' protocols, the same [`Gcs`] as in one process, on a
//! relayed link.

use std::collections::BTreeMap;
use std::path::Path;

use lockstep_distributed::protocol::{Frame, Served};
use lockstep_distributed::served::{Relay, Router, Station};
use lockstep_fleet::FleetScenario;
use lockstep_harness::engine::Engine;
use mavlink::Message;

use super::input::{Recorder, Replay};
use super::net::Net;
use super::{Gcs, Style};
use super::{GcsOptions, MAX_DATAGRAMS_PER_BOUNDARY, MAX_VEHICLES, REFUSED_WARNING};

/// The most endpoints a distributed run's primary serves on.
pub const MAX_LINKS: usize = 64;

/// The primary's end: the ground stations' link and the record.
#[derive(Debug)]
pub struct PrimaryRouter {
    net: Net,
    recorder: Option<Recorder>,
    vehicles: usize,
}

impl PrimaryRouter {
    /// The link of `options` for a fleet of `vehicles` (a replay opens no
    /// socket and records nothing: the secondaries replay).
    pub fn open(options: &GcsOptions, vehicles: usize) -> Result<PrimaryRouter, String> {
        if vehicles > MAX_VEHICLES {
            return Err(format!(
                "a fleet served over MAVLink has at most {MAX_VEHICLES} vehicles (system ids 1 to \
                 {MAX_VEHICLES}); this one has {vehicles}"
            ));
        }
        let replay = options.replay.is_some();
        let endpoints = if replay { &[][..] } else { &options.endpoints };
        if endpoints.len() > MAX_LINKS {
            return Err(format!(
                "a distributed run serves at most {MAX_LINKS} --mavlink endpoints; {} given",
                endpoints.len()
            ));
        }
        let recorder = match &options.record {
            Some(p) if !replay => Some(Recorder::create(p)?),
            _ => None,
        };
        Ok(PrimaryRouter {
            net: Net::open(endpoints, options.key)?,
            recorder,
            vehicles,
        })
    }

    /// What the secondaries are told, for a fleet of vehicles `names`
    /// (the record to replay read and checked here: they may not see the
    /// primary's files).
    pub fn setup(options: &GcsOptions, names: &[String]) -> Result<Served, String> {
        let replay = match &options.replay {
            Some(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("cannot open {}: {e}", p.display()))?;
                Replay::parse(&text, p, names)?;
                Some((p.display().to_string(), text))
            }
            None => None,
        };
        Ok(Served {
            style: options.style.name().into(),
            links: u32::try_from(options.endpoints.len()).unwrap_or(u32::MAX),
            record: options.record.is_some() && replay.is_none(),
            replay,
        })
    }
}

impl Router for PrimaryRouter {
    fn inbound(&mut self) -> Result<(Vec<Frame>, Vec<String>), String> {
        let mut frames = Vec::new();
        let mut warnings = Vec::new();
        for link in 0..self.net.links() {
            for _ in 0..MAX_DATAGRAMS_PER_BOUNDARY {
                let Some(datagram) = self.net.datagram(link)? else {
                    break;
                };
                if datagram.first_refusal {
                    warnings.push(REFUSED_WARNING.to_string());
                }
                for r in datagram.messages {
                    let target = r.msg.target_system_id().unwrap_or(0);
                    if usize::from(target) > self.vehicles {
                        let what = format!(
                            "{} messages for system {target}, which is not served (ignored)",
                            r.msg.message_name()
                        );
                        self.net.ignore(&what);
                        continue;
                    }
                    frames.push(Frame {
                        link: u32::try_from(link).ok(),
                        target,
                        bytes: r.frame,
                    });
                }
            }
        }
        Ok((frames, warnings))
    }

    fn outbound(&mut self, frames: &[Frame]) {
        for f in frames {
            self.net.forward(f.link.map(|l| l as usize), &f.bytes);
        }
    }

    fn record(&mut self, lines: &[String]) -> Result<(), String> {
        if let Some(r) = &mut self.recorder {
            for l in lines {
                r.write_line(l.clone())?;
            }
        }
        Ok(())
    }

    fn notes(&self) -> Vec<String> {
        self.net.notes()
    }
}

/// A secondary's end: the fleet's vehicles, those stepped here served.
#[derive(Debug)]
pub struct SecondaryStation {
    gcs: Gcs,
}

impl SecondaryStation {
    /// The station the primary's setup asks for, over `fleet`.
    pub fn new(served: &Served, fleet: &FleetScenario) -> Result<SecondaryStation, String> {
        let style = Style::from_name(&served.style).ok_or_else(|| {
            format!(
                "the primary serves in the MAVLink style `{}`, which this build does not know",
                served.style
            )
        })?;
        let names: Vec<String> = fleet.vehicles.iter().map(|v| v.name.clone()).collect();
        let params = fleet
            .vehicles
            .iter()
            .map(|v| v.scenario.autopilot_params.keys().cloned().collect())
            .collect();
        let replay = match &served.replay {
            Some((path, text)) => Some(Replay::parse(text, Path::new(path), &names)?),
            None => None,
        };
        let recorder = (served.record && replay.is_none()).then(Recorder::in_memory);
        let links = served.links as usize;
        if links > MAX_LINKS {
            return Err(format!(
                "the primary has {links} MAVLink endpoints; at most {MAX_LINKS}"
            ));
        }
        let mut gcs = Gcs::on(Net::relayed(links), style, names, params, recorder, replay);
        gcs.relayed = true;
        Ok(SecondaryStation { gcs })
    }
}

impl Station for SecondaryStation {
    fn serve(
        &mut self,
        engines: &mut BTreeMap<u32, Engine>,
        frames: &[Frame],
        warnings: &[String],
    ) -> Result<Relay, String> {
        if engines.is_empty() {
            // No vehicle here: nothing to hand the frames to, nor to keep.
            return Ok(Relay::default());
        }
        {
            let mut net = self.gcs.net();
            for f in frames {
                let here = f.target == 0 || engines.contains_key(&(u32::from(f.target) - 1));
                if let (true, Some(link)) = (here, f.link) {
                    net.relay_in(link as usize, f.bytes.clone())?;
                }
            }
        }
        self.gcs.warnings.extend(warnings.iter().cloned());
        let mut here: Vec<Option<&mut Engine>> = self.gcs.vehicles.iter().map(|_| None).collect();
        for (p, e) in engines.iter_mut() {
            if let Some(slot) = here.get_mut(*p as usize) {
                *slot = Some(e);
            }
        }
        self.gcs.serve_here(&mut here)?;
        let frames = self
            .gcs
            .net()
            .relay_out()
            .into_iter()
            .map(|(link, bytes)| Frame {
                link: link.and_then(|l| u32::try_from(l).ok()),
                target: 0,
                bytes,
            })
            .collect();
        let recorded = match &self.gcs.recorder {
            Some(r) => r
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .take_lines(),
            None => Vec::new(),
        };
        Ok(Relay { frames, recorded })
    }

    fn notes(&self) -> Vec<String> {
        self.gcs.notes()
    }
}

#[cfg(test)]
mod tests {
    use std::net::UdpSocket;
    use std::time::Duration;

    use mavlink::dialects::common::*;
    use mavlink::{MAVLinkMessageRaw, MavHeader, SigningConfig, SigningData};

    use super::*;
    use crate::gcs::Endpoint;
    use crate::gcs::signing::Signing;

    const KEY: [u8; 32] = [7; 32];

    fn frame(system: u32, msg: &MavMessage, signing: Option<&SigningData>) -> Vec<u8> {
        let header = MavHeader {
            system_id: system,
            component_id: 1,
            sequence: 9,
        };
        let mut out = Vec::new();
        mavlink::write_v2_msg_signed(&mut out, header, msg, signing).unwrap();
        out
    }

    fn arm(target: u8) -> MavMessage {
        MavMessage::COMMAND_LONG(COMMAND_LONG_DATA {
            target_system: target,
            target_component: 1,
            command: MavCmd::MAV_CMD_COMPONENT_ARM_DISARM,
            param1: 1.0,
            ..Default::default()
        })
    }

    #[test]
    fn the_primary_signs_what_vehicles_send_and_relays_only_what_the_key_signed() {
        let station = UdpSocket::bind("127.0.0.1:0").unwrap();
        station
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let options = GcsOptions {
            endpoints: vec![Endpoint::To(station.local_addr().unwrap())],
            style: Style::Px4,
            record: None,
            replay: None,
            key: Some(KEY),
        };
        let mut router = PrimaryRouter::open(&options, 2).unwrap();
        // A secondary's vehicle 2 sent a heartbeat, unsigned: the station
        // gets it signed with the key, its header kept.
        let heartbeat = MavMessage::HEARTBEAT(HEARTBEAT_DATA::default());
        router.outbound(&[Frame {
            link: Some(0),
            target: 0,
            bytes: frame(2, &heartbeat, None),
        }]);
        let mut buf = [0u8; 512];
        let (n, router_addr) = station.recv_from(&mut buf).unwrap();
        let raw = mavlink::MavlinkReader::new(&buf[..n])
            .read_any_raw_message::<MavMessage>()
            .unwrap();
        let MAVLinkMessageRaw::V2(v2) = &raw else {
            panic!("a MAVLink 1 frame")
        };
        assert_eq!((v2.system_id(), v2.sequence()), (2, 9));
        assert!(Signing::new(KEY).accepts(&raw), "not signed with the key");
        assert!(!Signing::new([8; 32]).accepts(&raw));
        // The station: unsigned, refused and announced once; signed,
        // relayed with its target; for no vehicle, counted.
        let theirs = SigningData::from_config(SigningConfig::new(KEY, 1, true, false));
        station
            .send_to(&frame(255, &arm(2), None), router_addr)
            .unwrap();
        station
            .send_to(&frame(255, &arm(2), None), router_addr)
            .unwrap();
        station
            .send_to(&frame(255, &arm(2), Some(&theirs)), router_addr)
            .unwrap();
        station
            .send_to(&frame(255, &arm(9), Some(&theirs)), router_addr)
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let (frames, warnings) = router.inbound().unwrap();
        assert_eq!(warnings, [REFUSED_WARNING]);
        assert_eq!(frames.len(), 1);
        assert_eq!((frames[0].link, frames[0].target), (Some(0), 2));
        let notes = router.notes();
        assert!(
            notes.contains(
                &"2 MAVLink messages refused: not signed with the link's key, or an \
                             old signature timestamp"
                    .to_string()
            ),
            "{notes:?}"
        );
        assert!(
            notes.contains(
                &"1 COMMAND_LONG messages for system 9, which is not served (ignored)".to_string()
            ),
            "{notes:?}"
        );
        // A frame for a link the primary does not have is counted, not sent.
        router.outbound(&[Frame {
            link: Some(3),
            target: 0,
            bytes: frame(2, &heartbeat, None),
        }]);
        assert!(
            router
                .notes()
                .contains(&"1 frames from a secondary for a link not open (not sent)".to_string())
        );
    }

    #[test]
    fn a_record_to_replay_is_checked_at_the_primary_naming_its_line() {
        let dir = std::env::temp_dir().join(format!("lockstep-relay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let record = dir.join("inputs.jsonl");
        std::fs::write(
            &record,
            "{\"time_us\":1000,\"vehicle\":\"delta\",\"input\":\"command\",\"command\":\"arm\"}\n",
        )
        .unwrap();
        let options = GcsOptions {
            endpoints: Vec::new(),
            style: Style::ArduPilot,
            record: None,
            replay: Some(record.clone()),
            key: None,
        };
        let names = ["alpha".to_string(), "bravo".to_string()];
        assert_eq!(
            PrimaryRouter::setup(&options, &names).unwrap_err(),
            format!(
                "{}:1: vehicle \"delta\" is not in the fleet (alpha, bravo)",
                record.display()
            )
        );
        std::fs::write(
            &record,
            "{\"time_us\":1000,\"vehicle\":\"bravo\",\"input\":\"command\",\"command\":\"arm\"}\n",
        )
        .unwrap();
        let served = PrimaryRouter::setup(&options, &names).unwrap();
        assert_eq!(served.style, "ardupilot");
        assert!(!served.record);
        assert_eq!(
            served.replay.as_ref().unwrap().0,
            record.display().to_string()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
