//! The world origin: the geodetic point at the origin of the local NED
//! frame. The scenario's `[world]` section sets it; without one, the
//! mission's home does; without a mission, the aircraft spec's
//! `environment.origin_*` does. A mission with any point farther than
//! `max_mission_distance_m` from the origin is refused, never flown.

use std::path::Path;

use crate::inputs::mission::Mission;

/// Default bound on a mission's reach from the origin: 50 km, beyond any
/// multirotor's range on one pack, and close enough that a mission drawn
/// in another place (thousands of km away) is caught.
pub const DEFAULT_MAX_MISSION_DISTANCE_M: f64 = 50_000.0;

/// A geodetic point (WGS-84), altitude above mean sea level.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geo {
    pub lat_deg: f64,
    pub lon_deg: f64,
    pub alt_m: f64,
}

/// `[world]` as loaded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorldSettings {
    pub origin: Option<Geo>,
    pub max_mission_distance_m: f64,
}

impl Default for WorldSettings {
    fn default() -> Self {
        WorldSettings {
            origin: None,
            max_mission_distance_m: DEFAULT_MAX_MISSION_DISTANCE_M,
        }
    }
}

/// Where the origin came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginSource {
    Scenario,
    MissionHome,
    Spec,
}

impl std::fmt::Display for OriginSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OriginSource::Scenario => "the scenario's [world]",
            OriginSource::MissionHome => "the mission's home",
            OriginSource::Spec => "the aircraft spec's environment.origin_*",
        })
    }
}

/// The origin of a run, and the check that the mission lies near it.
pub fn origin(
    world: &WorldSettings,
    spec_origin: Geo,
    mission: Option<(&Path, &Mission)>,
) -> Result<(Geo, OriginSource), String> {
    let (origin, source) = match (world.origin, mission) {
        (Some(o), _) => (o, OriginSource::Scenario),
        (None, Some((_, m))) => (
            Geo {
                lat_deg: m.home.lat_deg,
                lon_deg: m.home.lon_deg,
                alt_m: f64::from(m.home.alt_m),
            },
            OriginSource::MissionHome,
        ),
        (None, None) => (spec_origin, OriginSource::Spec),
    };
    if let Some((path, m)) = mission
        && let Some((d, place)) =
            m.first_beyond(origin.lat_deg, origin.lon_deg, world.max_mission_distance_m)
    {
        return Err(format!(
            "mission {}: {place} is {:.1} km from the world origin ({}, {}) set by {source}; \
             a mission must lie within {:.1} km of the origin (world.max_mission_distance_m). \
             Was it drawn for another place? Without a [world] origin, the mission's home \
             sets the origin",
            path.display(),
            d / 1000.0,
            origin.lat_deg,
            origin.lon_deg,
            world.max_mission_distance_m / 1000.0,
        ));
    }
    Ok((origin, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    const FAR: &str = "QGC WPL 110\n\
        0 1 0 16 0 0 0 0 -35.3632621 149.1652374 584 1\n\
        1 0 3 22 0 0 0 0 0 0 10 1\n\
        2 0 3 16 0 0 0 0 -35.3630 149.1652 10 1\n";

    fn zurich() -> Geo {
        Geo {
            lat_deg: 47.397742,
            lon_deg: 8.545594,
            alt_m: 488.0,
        }
    }

    #[test]
    fn the_mission_home_sets_the_origin_unless_the_scenario_does() {
        let m = Mission::parse(FAR).unwrap();
        let p = Path::new("far.waypoints");
        let (o, s) = origin(&WorldSettings::default(), zurich(), Some((p, &m))).unwrap();
        assert_eq!(s, OriginSource::MissionHome);
        assert_eq!(
            (o.lat_deg, o.lon_deg, o.alt_m),
            (-35.3632621, 149.1652374, 584.0)
        );
        let (o, s) = origin(&WorldSettings::default(), zurich(), None).unwrap();
        assert_eq!((o, s), (zurich(), OriginSource::Spec));
    }

    #[test]
    fn a_mission_far_from_the_origin_is_refused() {
        let m = Mission::parse(FAR).unwrap();
        let w = WorldSettings {
            origin: Some(zurich()),
            ..Default::default()
        };
        let e = origin(&w, zurich(), Some((Path::new("far.waypoints"), &m))).unwrap_err();
        assert!(
            e.starts_with(
                "mission far.waypoints: its home is 16513.1 km from the world origin \
                 (47.397742, 8.545594) set by the scenario's [world]; a mission must lie \
                 within 50.0 km of the origin"
            ),
            "{e}"
        );
        // Near its own home, one item pushed 60 km north is too far.
        let m = Mission::parse(&FAR.replace("-35.3630 149.1652", "-34.8235 149.1652")).unwrap();
        let e = origin(
            &WorldSettings::default(),
            zurich(),
            Some((Path::new("f"), &m)),
        )
        .unwrap_err();
        assert!(
            e.starts_with("mission f: item 1 is 60.0 km from the world origin"),
            "{e}"
        );
    }
}
