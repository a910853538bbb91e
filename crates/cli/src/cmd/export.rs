//! `fsbench export RUN --json FILE | --csv FILE`: one stored run, whole.

use crate::cli::ExportArgs;
use crate::exit::{self, Failure};
use anyhow::Context;
use fsbench_report::campaign;
use fsbench_store::{RunData, Store, StoreError};
use std::io::Write;
use std::path::Path;

fn write_to(
    path: &Path,
    data: &RunData,
    render: fn(&mut dyn Write, &RunData) -> std::io::Result<()>,
) -> Result<(), Failure> {
    if path == Path::new("-") {
        let mut stdout = std::io::stdout().lock();
        render(&mut stdout, data).context("cannot write to standard output")?;
        return Ok(());
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut out = std::io::BufWriter::new(file);
    render(&mut out, data)
        .and_then(|_| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

pub fn run(args: ExportArgs) -> Result<i32, Failure> {
    let store = Store::open_existing(&args.db.db).map_err(Failure::usage)?;
    let data = store.load(args.run).map_err(|e| match e {
        StoreError::NoSuchRun(_) => Failure::usage(e),
        other => Failure::failed(other),
    })?;
    if let Some(path) = &args.json {
        write_to(path, &data, campaign::write_json)?;
    }
    if let Some(path) = &args.csv {
        write_to(path, &data, campaign::write_csv)?;
    }
    Ok(exit::OK)
}
