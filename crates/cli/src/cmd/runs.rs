//! `fsbench runs`: the stored runs, newest first.

use crate::cli::RunsArgs;
use crate::exit::{self, Failure};
use fsbench_store::Store;

pub fn run(args: RunsArgs) -> Result<i32, Failure> {
    let store = Store::open(&args.db.db).map_err(Failure::usage)?;
    let runs = store.runs().map_err(Failure::failed)?;
    if runs.is_empty() {
        println!(
            "no runs in {}; start one with `fsbench run`",
            args.db.db.display()
        );
        return Ok(exit::OK);
    }
    println!(
        "{:>5}  {:<20}  {:<11}  {:<20}  {:>5}  {:>12}",
        "run", "started (UTC)", "status", "plan", "cases", "samples ok"
    );
    for r in runs {
        println!(
            "{:>5}  {:<20}  {:<11}  {:<20}  {:>5}  {:>12}",
            r.id,
            r.started_at,
            r.status,
            r.plan_name,
            r.cases,
            format!("{}/{}", r.ok_samples, r.samples)
        );
    }
    Ok(exit::OK)
}
