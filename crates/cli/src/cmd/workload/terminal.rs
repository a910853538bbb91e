//! The terminal view of a one-case run: where it ran, at what scale, the target, then the
//! workload's grid or its table.

use crate::exit::Failure;
use anyhow::anyhow;
use fsbench_measure::units::human_duration;
use fsbench_plan::Plan;
use fsbench_report::grid;
use fsbench_report::target::write_target;
use fsbench_report::terminal::{printable, printable_path};
use fsbench_testbed::TargetInfo;
use fsbench_workload::workload::{GridUnit, GridView};
use fsbench_workload::WorkloadSettings;
use std::io::Write;

/// The workload's grid and the unit it is shown in (`--unit`), checked before anything runs;
/// None for a workload that prints a table.
pub(super) fn grid_of(
    settings: &WorkloadSettings,
    unit: Option<&str>,
) -> Result<Option<(GridView, GridUnit)>, Failure> {
    match (settings.grid(), unit) {
        (Some(view), key) => {
            let unit =
                *grid::unit(&view, key).map_err(|e| Failure::usage(anyhow!("--unit: {e}")))?;
            Ok(Some((view, unit)))
        }
        (None, Some(_)) => Err(Failure::usage(anyhow!(
            "--unit: the {} workload prints a table, not a grid; drop --unit",
            settings.kind()
        ))),
        (None, None) => Ok(None),
    }
}

/// "1 result", "12 results".
pub(super) fn results(n: usize) -> String {
    if n == 1 {
        "1 result".into()
    } else {
        format!("{n} results")
    }
}

/// Where a one-case run ran, as its first line says: the directory (or the target's mount
/// point) with its filesystem, source and options; in a job, the ranks' places.
pub(super) fn place(
    job: Option<&dyn fsbench_scale::Collective>,
    plan: &Plan,
    target: Option<&TargetInfo>,
    dir_mount: Option<String>,
) -> String {
    let mount = match (target, dir_mount) {
        (Some(t), _) => t.mount.as_ref().map(|m| {
            let source = t
                .device
                .path
                .as_ref()
                .map_or_else(|| "-".to_string(), |p| p.display().to_string());
            format!(" ({} {source}, {})", m.fs_type, m.mount_options)
        }),
        (None, mount) => mount,
    };
    let mount = printable(&mount.unwrap_or_default()).into_owned();
    let dir = plan
        .dir
        .clone()
        .or_else(|| target.map(|t| t.mountpoint.clone()))
        .unwrap_or_default();
    match job {
        Some(job) if target.is_some() => format!(
            "{} ranks, each on a filesystem of its own{mount}",
            job.size()
        ),
        Some(job) => format!(
            "{} ranks in {}/rank-0..{}{mount}",
            job.size(),
            printable_path(&dir),
            job.size() - 1
        ),
        None => format!("{}{mount}", printable_path(&dir)),
    }
}

/// The terminal view of a one-case run: where it ran, at what scale, the target, then the
/// workload's grid or its table.
#[allow(clippy::too_many_arguments)]
pub(super) fn write_terminal(
    out: &mut dyn Write,
    settings: &WorkloadSettings,
    place: &str,
    target: Option<&TargetInfo>,
    records: &[fsbench_model::ResultRecord],
    grid_view: Option<(GridView, GridUnit)>,
    scale: f64,
    elapsed_ns: u64,
    spread: bool,
) -> std::io::Result<()> {
    writeln!(
        out,
        "fsbench {} on {place}: {} in {}",
        settings.kind(),
        results(records.len()),
        human_duration(elapsed_ns)
    )?;
    if scale < 1.0 {
        writeln!(
            out,
            "Scale {scale}: sizes, counts and minimum times were shrunk (--scale or FSBENCH_SCALE); compare only with runs of the same scale."
        )?;
    }
    if let Some(target) = target {
        write_target(out, target)?;
    }
    match grid_view {
        Some((view, unit)) => grid::write_grids(out, &view, &unit, records, spread),
        None => {
            grid::write_table(out, records, settings.table_columns())?;
            grid::write_curves(out, records)
        }
    }
}
