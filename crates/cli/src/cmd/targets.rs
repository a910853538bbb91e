//! `fsbench targets`: the support table — every filesystem, whether this host can prepare it,
//! and exactly why not.

use crate::cli::TargetsArgs;
use crate::exit::{self, Failure};
use crate::out::say;
use crate::outfile::{is_stdout, write_file, Origin};
use anyhow::Context;
use fsbench_testbed::fs::{self, Support};
use fsbench_testbed::RealSystem;

pub fn run(args: TargetsArgs) -> Result<i32, Failure> {
    let table: Vec<Support> = fs::all()
        .iter()
        .map(|f| fs::support(&RealSystem, *f))
        .collect();
    // `-` is standard output, as for `export` and `matrix`; the JSON then replaces the table.
    let json_on_stdout = args.json.as_deref().is_some_and(is_stdout);
    if !json_on_stdout {
        let width = table.iter().map(|s| s.filesystem.len()).max().unwrap_or(5);
        say!("{:<width$}  {:<11}  reason", "filesystem", "status")?;
        for row in &table {
            let status = if row.supported {
                "supported"
            } else {
                "unavailable"
            };
            let reason = if row.supported {
                format!("tools: {}", row.tools_found.join(", "))
            } else {
                row.reasons.join("; ")
            };
            say!(
                "{:<width$}  {status:<11}  {reason}",
                row.filesystem,
                width = width.max(10)
            )?;
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&serde_json::json!({
            "schema": "fsbench.targets",
            "schema_version": 1,
            "filesystems": table,
        }))
        .context("cannot encode the table")?;
        write_file(path, Origin::User, |out| {
            out.write_all((text + "\n").as_bytes())
        })?;
    }
    Ok(exit::OK)
}
