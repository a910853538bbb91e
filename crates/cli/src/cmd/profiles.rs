//! `fsbench profiles`: the built-in profiles, one line each (cases, estimate, what it does), or
//! one profile's plan file.

use crate::cli::ProfilesArgs;
use crate::exit::Failure;
use crate::out::say;
use anyhow::anyhow;
use fsbench_measure::units::human_duration;
use fsbench_plan::profiles;

pub fn run(args: ProfilesArgs) -> Result<i32, Failure> {
    if let Some(name) = &args.name {
        let profile = profiles::by_name(name).ok_or_else(|| {
            Failure::usage(anyhow!(
                "unknown profile '{name}'; the built-in ones are {}",
                profiles::names()
            ))
        })?;
        say!("{}", profile.text.trim_end())?;
        return Ok(0);
    }
    let width = profiles::ALL
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(5);
    say!(
        "{:<width$}  {:>7}  {:>9}  what it does (run: fsbench run --profile NAME [--scale F])",
        "profile",
        "samples",
        "estimate"
    )?;
    for profile in profiles::ALL {
        let plan = profile.plan().map_err(Failure::failed)?;
        say!(
            "{:<width$}  {:>7}  {:>9}  {}{}",
            profile.name,
            plan.sample_count(),
            human_duration(plan.estimate_ns()),
            plan.description,
            if profile.name == profiles::DEFAULT {
                " (the default)"
            } else {
                ""
            }
        )?;
    }
    Ok(0)
}
