//! One run of a batch flown again alone (`lockstep montecarlo --rerun K`):
//! the batch's scenario with the batch's overrides and the run's draw as
//! `--set` overrides, so the same flight is a `lockstep fly` command anyone
//! can type, with its log, plots and viewer.

use std::path::Path;

use lockstep_harness::inputs::scenario::{Override, Scenario};
use lockstep_plant::AircraftSpec;

use super::Draw;
use crate::RunError;

/// The overrides that fly run `run` of the batch over `scenario` (with the
/// batch's `overrides`): the batch's, then the draw's.
pub fn rerun_overrides(
    scenario: &Path,
    overrides: &[Override],
    run: u64,
) -> Result<Vec<Override>, RunError> {
    let base = Scenario::load_with(scenario, overrides)
        .map_err(|e| RunError::configuration(e.to_string()))?;
    let Some(d) = &base.montecarlo else {
        return Err(RunError::configuration(format!(
            "{} has no [montecarlo] section: there is no run to fly again",
            scenario.display()
        )));
    };
    let rotors = AircraftSpec::resolve(&base.spec)
        .map_err(|e| RunError::configuration(e.to_string()))?
        .rotors
        .len();
    let draw = Draw::new(d, base.seed, run, base.tick);
    let mut all = overrides.to_vec();
    all.extend(draw.overrides(&base, rotors));
    Ok(all)
}

/// `text` quoted for a POSIX shell when it needs it.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// The `lockstep fly` command that flies `scenario` with `overrides`.
pub fn fly_command(scenario: &Path, overrides: &[Override]) -> String {
    let mut words = vec![
        "lockstep".to_string(),
        "fly".to_string(),
        shell_word(&scenario.display().to_string()),
    ];
    for o in overrides {
        words.push("--set".into());
        words.push(shell_word(&format!("{}={}", o.key, o.value)));
    }
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_they_need_it() {
        assert_eq!(shell_word("simulation.seed=3"), "simulation.seed=3");
        assert_eq!(
            shell_word("wind.mean_ned_mps=[1.0, 2.0, 0.0]"),
            "'wind.mean_ned_mps=[1.0, 2.0, 0.0]'"
        );
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
