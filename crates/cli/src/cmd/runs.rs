//! `fsbench runs`: the stored runs, newest first, read without writing (a read-only database,
//! directory or mount is enough).

use crate::cli::RunsArgs;
use crate::exit::{self, Failure};
use crate::out::say;
use fsbench_report::terminal::{printable, printable_path};
use fsbench_store::Store;

pub fn run(args: RunsArgs) -> Result<i32, Failure> {
    let store = match Store::open_existing(&args.db.path()) {
        Ok(store) => store,
        Err(fsbench_store::StoreError::Missing(path)) => {
            say!(
                "no runs: {} does not exist yet; start one with `fsbench run`",
                path.display()
            )?;
            return Ok(exit::OK);
        }
        Err(e) => return Err(Failure::usage(e)),
    };
    let runs = store.runs().map_err(Failure::failed)?;
    if runs.is_empty() {
        say!(
            "no runs in {}; start one with `fsbench run`",
            printable_path(&args.db.path())
        )?;
        return Ok(exit::OK);
    }
    // Samples: stored of planned (every case at its minimum repetitions), and how many are ok.
    say!(
        "{:>5}  {:<20}  {:<11}  {:<20}  {:>5}  {:>15}  {:>5}",
        "run",
        "started (UTC)",
        "status",
        "plan",
        "cases",
        "stored/planned",
        "ok"
    )?;
    for r in runs {
        let planned = r
            .planned_samples
            .map_or_else(|| "?".to_string(), |n| n.to_string());
        say!(
            "{:>5}  {:<20}  {:<11}  {:<20}  {:>5}  {:>15}  {:>5}",
            r.id,
            r.started_at,
            r.status,
            printable(&r.plan_name),
            r.cases,
            format!("{}/{planned}", r.samples),
            r.ok_samples
        )?;
    }
    Ok(exit::OK)
}
