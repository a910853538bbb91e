//! The throughput matrix: iozone's automatic mode, measured honestly.
//!
//! For every file size x record size cell (record <= file), each selected test runs its phases
//! (write then rewrite, read then reread, ...) on one test file in the given directory. A phase
//! repeats its pass until a minimum measured time is reached, keeping each pass's semantics (a
//! write pass starts from a fresh file, a rewrite from a written one), so small cells are not
//! quantised by the clock as iozone's one-pass timing is.
//!
//! Flow: [`MatrixSettings`] (what the user asked) -> [`MatrixSettings::plan`] validates it into a
//! [`MatrixPlan`] (cells, phases; no side effects) -> [`MatrixPlan::preflight`] checks the
//! directory -> [`run`] measures, reporting each [`CellResult`] to a [`MatrixObserver`] as
//! soon as it exists; [`results`] declares the figures each result carries.

pub mod results;
mod run;
mod spec;
mod test;

pub use results::CacheState;
pub use run::{run, CellResult, MatrixObserver, MatrixOutcome, NoObserver, SHARED_FILE_NAME};
pub use spec::{Cell, MatrixPlan, MatrixSettings, SkippedCell, MAX_RECORD_BYTES};
pub use test::{Access, Api, Direction, MatrixTest, Phase};

use crate::harness::Harness;
use crate::workload::{Context, End, GridUnit, GridView, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::units::{human_bytes, size_label};
use fsbench_model::{CachePolicy, Category, Dim, Direction as Better, ResultRecord};
use std::path::Path;

impl Workload for MatrixSettings {
    const KIND: &'static str = "matrix";
    const ABOUT: &'static str =
        "Throughput matrix (iozone -a): every file size x record size x test, in one directory";
    const LONG_ABOUT: &'static str = "Throughput matrix (iozone -a): every file size x record \
size x test, in one directory.\n\nEach phase of a cell repeats its pass (a write pass on a fresh \
file, a rewrite on a written one, ...) until --min-time of measured time is reached, so small \
cells are not quantised by the clock; --passes 1 times one pass, as iozone. Data written is incompressible unless --data says otherwise.";
    const CATEGORY: Option<Category> = Some(Category::Throughput);
    // `direct` opens the test file with O_DIRECT (but for fwrite/fread, which say so).
    const CACHE_POLICIES: &'static [CachePolicy] = &[
        CachePolicy::Warm,
        CachePolicy::Drop,
        CachePolicy::Remount,
        CachePolicy::Direct,
    ];

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        self.plan(ctx).map(drop)
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        match self.plan(ctx) {
            Ok(plan) => {
                let setup = plan.cells.len() as u64 * 50_000_000;
                match plan.passes {
                    // A pass moves its file at about 1 GB/s, plus a millisecond of setup
                    // (open, purge, eviction).
                    Some(passes) => {
                        let phases = plan.phases.len() as u64;
                        let per_cell = |c: &Cell| phases * passes * (c.file_size_bytes + 1_000_000);
                        plan.cells.iter().map(per_cell).sum::<u64>() + setup
                    }
                    None => {
                        let per_phase = plan.min_time_ns.max(20_000_000) * 3 / 2;
                        plan.result_count() as u64 * per_phase + setup
                    }
                }
            }
            Err(_) => 0,
        }
    }

    fn preflight(&self, ctx: &Context, dir: &Path) -> Result<(), WorkloadError> {
        self.plan(ctx)?.preflight(dir)
    }

    fn footprint(&self, ctx: &Context) -> Option<crate::workload::Footprint> {
        self.plan(ctx).ok().map(|plan| plan.footprint())
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let plan = match self.plan(ctx) {
            Ok(plan) => plan,
            Err(e) => return End::failed(e, self.seed),
        };
        if let Err(e) = plan.preflight(dir) {
            return End::failed(e, Some(plan.seed));
        }
        let outcome = run(&plan, dir, stop, &mut ToSink(sink, ctx), harness);
        let kept = plan.settings.keep && outcome.status == fsbench_model::Outcome::Ok;
        End {
            outcome: outcome.status,
            error: outcome.failure,
            seed: Some(plan.seed),
            kept: if kept {
                vec![outcome.test_file]
            } else {
                Vec::new()
            },
        }
    }

    fn describe(&self, ctx: &Context) -> Option<serde_json::Value> {
        let mut plan = serde_json::to_value(self.plan(ctx).ok()?).ok()?;
        // The seed of the run is stored on its own; this one was drawn only to describe.
        if let Some(map) = plan.as_object_mut() {
            map.remove("seed");
            map.remove("settings");
        }
        Some(plan)
    }

    fn keeps_files(&self) -> bool {
        self.keep
    }

    fn shares_dir(&self) -> bool {
        self.shared_file
    }

    fn grid() -> Option<GridView> {
        Some(GridView {
            blocks: Dim::Phase,
            rows: Dim::FileSizeBytes,
            columns: Dim::RecordSizeBytes,
            block_title: |phase| Phase::parse(phase).map_or("", Phase::report_title),
            units: GRID_UNITS,
            note: "each value is the rate over all passes of a cell",
            spread: Some((
                results::PASS_RATE_CV.name,
                "coefficient of variation of the per-pass rates",
            )),
            footer: grid_footer,
        })
    }
}

/// The units of the matrix's grid: iozone's KiB/s (its default), MiB/s, ops/s (-O), mean
/// µs per operation (-N), and the 99th percentile.
const GRID_UNITS: &[GridUnit] = &[
    GridUnit {
        key: "kib",
        metric: results::THROUGHPUT.name,
        divisor: 1024.0,
        label: "KiB/s",
        direction: Better::Higher,
        decimals: 0,
    },
    GridUnit {
        key: "mib",
        metric: results::THROUGHPUT.name,
        divisor: 1024.0 * 1024.0,
        label: "MiB/s",
        direction: Better::Higher,
        decimals: 1,
    },
    GridUnit {
        key: "ops",
        metric: results::OPS_RATE.name,
        divisor: 1.0,
        label: "ops/s",
        direction: Better::Higher,
        decimals: 0,
    },
    GridUnit {
        key: "us",
        metric: results::LATENCY_MEAN.name,
        divisor: 1e3,
        label: "µs/op (mean)",
        direction: Better::Lower,
        decimals: 1,
    },
    GridUnit {
        key: "p99",
        metric: results::LATENCY_P99.name,
        divisor: 1e3,
        label: "µs/op (p99)",
        direction: Better::Lower,
        decimals: 1,
    },
];

/// "passes per cell: 1..9; cache: warm" under each block.
fn grid_footer(records: &[&ResultRecord]) -> String {
    let passes = records
        .iter()
        .filter_map(|r| r.measurement(results::PASSES.name))
        .map(|m| m.value as u64);
    let (min, max) = (passes.clone().min().unwrap_or(0), passes.max().unwrap_or(0));
    let states: std::collections::BTreeSet<&str> = records
        .iter()
        .filter_map(|r| r.attributes.get("cache_state").and_then(|v| v.as_str()))
        .collect();
    let states: Vec<&str> = states.into_iter().collect();
    format!(
        "passes per cell: {min}..{max}; cache: {}",
        states.join(", ")
    )
}

/// Hands each finished cell to a sink as a record, with a live rate for progress lines:
/// "write 16m/4k 3.1 GiB/s (5 of 12)".
struct ToSink<'a>(&'a mut dyn Sink, &'a Context);

impl MatrixObserver for ToSink<'_> {
    fn result(&mut self, r: &CellResult, done: usize, total: usize) {
        self.0.status(&format!(
            "{} {}/{} {}/s ({done} of {total})",
            r.phase,
            size_label(r.file_size_bytes),
            size_label(r.record_size_bytes),
            human_bytes(r.summary.bytes_per_s as u64)
        ));
        self.0.record(r.record(), done, Some(total));
    }

    fn warning(&mut self, message: &str) {
        self.0.warning(message);
    }

    fn series(&mut self, label: String) -> Option<fsbench_measure::series::PhaseSampler> {
        crate::workload::phase_series(self.1, self.0, label, "thread", 1)
    }
}
