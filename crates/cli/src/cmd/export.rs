//! `fsbench export RUN --json FILE | --csv FILE`: one stored run, whole, through the report
//! model's exporters.

use crate::cli::ExportArgs;
use crate::exit::{self, Failure};
use anyhow::Context;
use fsbench_report::{Csv, Exporter, Json, ReportModel};
use fsbench_store::{Store, StoreError};
use std::io::Write;
use std::path::Path;

/// Writes `model` through `exporter` to a file, or to standard output for `-`.
pub fn write_to(path: &Path, exporter: &dyn Exporter, model: &ReportModel) -> Result<(), Failure> {
    if path == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        exporter
            .write(model, &mut stdout)
            .and_then(|_| stdout.flush())
            .context("cannot write to standard output")?;
        return Ok(());
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    exporter
        .write(model, &mut out)
        .and_then(|_| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

pub fn run(args: ExportArgs) -> Result<i32, Failure> {
    let store = Store::open_existing(&args.db.path()).map_err(Failure::usage)?;
    let model = ReportModel::load(&store, &[args.run]).map_err(|e| match e {
        StoreError::NoSuchRun(_) => Failure::usage(e),
        other => Failure::failed(other),
    })?;
    if let Some(path) = &args.json {
        write_to(path, &Json, &model)?;
    }
    if let Some(path) = &args.csv {
        write_to(path, &Csv, &model)?;
    }
    Ok(exit::OK)
}
