//! `fsbench export RUN --json FILE | --csv FILE | --series FILE [--sample ID]`: one stored
//! run, whole, through the report model's exporters; its samples' series (all, or one
//! sample's) with the JSON and in long-form CSV.

use crate::cli::ExportArgs;
use crate::exit::{self, Failure};
use crate::outfile::{distinct, write_file, Origin};
use anyhow::anyhow;
use fsbench_report::standings::Options;
use fsbench_report::{Csv, Exporter, Findings, Json, ReportModel, SeriesCsv};
use fsbench_store::{Store, StoreError};
use std::path::Path;

/// Writes `findings` through `exporter` to a file the user named (whole, or the old file is
/// kept: crate::outfile), or to standard output for `-`.
pub fn write_to(path: &Path, exporter: &dyn Exporter, findings: &Findings) -> Result<(), Failure> {
    write_file(path, Origin::User, |out| exporter.render(findings, out))
}

/// Writes every output from the same findings (found once), each tried even when one before
/// it failed (a full disk at the XLSX still gives the Markdown).
pub fn write_all(outputs: &[(&Path, &dyn Exporter)], findings: &Findings) -> Result<(), Failure> {
    exit::all_of(
        outputs
            .iter()
            .map(|(path, exporter)| write_to(path, *exporter, findings)),
    )
}

pub fn run(args: ExportArgs) -> Result<i32, Failure> {
    distinct(&[
        ("--json", args.json.as_deref()),
        ("--csv", args.csv.as_deref()),
        ("--series", args.series.as_deref()),
    ])?;
    let store = Store::open_existing(&args.db.path()).map_err(Failure::usage)?;
    let mut model = ReportModel::load(&store, &[args.run]).map_err(|e| match e {
        StoreError::NoSuchRun(_) => Failure::usage(e),
        other => Failure::failed(other),
    })?;
    if let Some(id) = args.sample {
        if model.sample(id).is_none() {
            return Err(Failure::usage(anyhow!(
                "--sample {id}: run {} has no sample {id}; its samples' ids are `sample_id` in `fsbench export {} --series -`",
                args.run,
                args.run
            )));
        }
    }
    if args.json.is_some() || args.series.is_some() {
        model
            .load_series(&store, args.sample)
            .map_err(Failure::failed)?;
    }
    let outputs: Vec<(&Path, &dyn Exporter)> = [
        args.json.as_deref().map(|p| (p, &Json as &dyn Exporter)),
        args.csv.as_deref().map(|p| (p, &Csv as &dyn Exporter)),
        args.series
            .as_deref()
            .map(|p| (p, &SeriesCsv as &dyn Exporter)),
    ]
    .into_iter()
    .flatten()
    .collect();
    write_all(&outputs, &Findings::new(&model, &Options::default()))?;
    Ok(exit::OK)
}
