//! `fsbench runs`: the stored runs, newest first.

use crate::cli::RunsArgs;
use crate::exit::{self, Failure};
use fsbench_store::Store;

pub fn run(args: RunsArgs) -> Result<i32, Failure> {
    let store = match Store::open_existing(&args.db.db) {
        Ok(store) => store,
        Err(fsbench_store::StoreError::Missing(path)) => {
            println!(
                "no runs: {} does not exist yet; start one with `fsbench run`",
                path.display()
            );
            return Ok(exit::OK);
        }
        Err(e) => return Err(Failure::usage(e)),
    };
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
