//! The throughput matrix's result document and its three renderings: versioned JSON
//! (docs/results-schema.md), tidy CSV (one row per phase x file size x record size x metric),
//! and an iozone-style terminal grid (rows file size, columns record size, one block per phase).

use crate::unit::DisplayUnit;
use fsbench_measure::host::{HostInfo, MountEntry};
use fsbench_measure::units::{human_bytes, human_duration, size_label};
use fsbench_model::Outcome;
use fsbench_testbed::TargetInfo;
use fsbench_workload::matrix::{CellResult, MatrixOutcome, MatrixPlan, Phase};
use serde::Serialize;
use std::collections::BTreeSet;
use std::io::{self, Write};
use std::path::Path;

/// Name of the JSON document kind.
pub const SCHEMA: &str = "fsbench.matrix";
/// Bumped whenever a field changes meaning or disappears (additions keep the version).
pub const SCHEMA_VERSION: u32 = 1;

/// The document's `status`: the outcome, with schema v1's word for ok (`complete`); an
/// unsupported configuration was not measured at all (see `error`).
fn status_name<S: serde::Serializer>(status: &Outcome, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(match status {
        Outcome::Ok => "complete",
        other => other.name(),
    })
}

/// Where the matrix ran.
#[derive(Debug, Clone, Serialize)]
pub struct Directory<'a> {
    pub path: &'a Path,
    /// The mounted filesystem holding it (from /proc/self/mountinfo).
    pub mount: Option<MountEntry>,
}

/// Everything one matrix run produced, with its provenance: the model every exporter renders.
#[derive(Debug, Serialize)]
pub struct MatrixDocument<'a> {
    pub schema: &'static str,
    pub schema_version: u32,
    pub fsbench_version: &'a str,
    /// RFC 3339 UTC start time.
    pub started_at: String,
    /// Wall-clock time of the whole run, setup included.
    pub elapsed_ns: u64,
    #[serde(serialize_with = "status_name")]
    pub status: Outcome,
    /// Why the run failed or could not run (status "failed" or "unsupported").
    pub error: Option<String>,
    pub host: &'a HostInfo,
    pub directory: Directory<'a>,
    /// The prepared filesystem (with --fs): device, mkfs, mount, scheduler, cache, fsck read-back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<&'a TargetInfo>,
    /// The validated request: tests, sizes, options, seed, skipped cells.
    pub config: &'a MatrixPlan,
    /// The test file left in place by `--keep` (absent when it was removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept_file: Option<&'a Path>,
    pub warnings: &'a [String],
    pub results: &'a [CellResult],
}

impl<'a> MatrixDocument<'a> {
    pub fn new(
        plan: &'a MatrixPlan,
        outcome: &'a MatrixOutcome,
        host: &'a HostInfo,
        directory: Directory<'a>,
        started_at: String,
    ) -> MatrixDocument<'a> {
        MatrixDocument {
            schema: SCHEMA,
            schema_version: SCHEMA_VERSION,
            fsbench_version: env!("CARGO_PKG_VERSION"),
            started_at,
            elapsed_ns: outcome.elapsed_ns,
            status: outcome.status,
            error: outcome.failure.as_ref().map(|e| e.to_string()),
            host,
            directory,
            target: None,
            config: plan,
            kept_file: (plan.settings.keep && outcome.status == Outcome::Ok)
                .then_some(outcome.test_file.as_path()),
            warnings: &outcome.warnings,
            results: &outcome.results,
        }
    }

    /// Pretty-printed JSON.
    pub fn write_json(&self, out: &mut dyn Write) -> io::Result<()> {
        serde_json::to_writer_pretty(&mut *out, self).map_err(io::Error::other)?;
        writeln!(out)
    }

    /// Tidy CSV: one row per phase x file size x record size x metric, values in base units.
    pub fn write_csv(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "test,phase,file_size_bytes,record_size_bytes,metric,value,unit,passes,cache_state,direct_io"
        )?;
        for r in self.results {
            let s = &r.summary;
            let lat = &s.latency;
            let rows: [(&str, f64, &str); 18] = [
                ("ops_per_s", s.ops_per_s, "ops/s"),
                ("kib_per_s", s.bytes_per_s / 1024.0, "KiB/s"),
                ("bytes", s.bytes as f64, "B"),
                ("ops", s.ops as f64, "count"),
                ("elapsed_ns", s.elapsed_ns as f64, "ns"),
                ("finish_ns", s.finish_ns as f64, "ns"),
                ("user_cpu_ns", s.cpu.user_ns as f64, "ns"),
                ("sys_cpu_ns", s.cpu.sys_ns as f64, "ns"),
                ("pass_ops_per_s_stddev", s.pass_ops_per_s.stddev, "ops/s"),
                ("pass_ops_per_s_cv", s.pass_ops_per_s.cv, "ratio"),
                ("latency_min_ns", lat.min_ns as f64, "ns"),
                ("latency_mean_ns", lat.mean_ns, "ns"),
                ("latency_p50_ns", lat.p50_ns as f64, "ns"),
                ("latency_p90_ns", lat.p90_ns as f64, "ns"),
                ("latency_p99_ns", lat.p99_ns as f64, "ns"),
                ("latency_p99_9_ns", lat.p99_9_ns as f64, "ns"),
                ("latency_max_ns", lat.max_ns as f64, "ns"),
                (
                    "resident_before_percent",
                    r.resident_before_percent.unwrap_or(f64::NAN),
                    "%",
                ),
            ];
            for (metric, value, unit) in rows {
                if value.is_nan() {
                    continue;
                }
                writeln!(
                    out,
                    "{},{},{},{},{metric},{},{unit},{},{},{}",
                    r.test.name(),
                    r.phase.name(),
                    r.file_size_bytes,
                    r.record_size_bytes,
                    csv_number(value),
                    s.passes,
                    r.cache_state.name(),
                    r.direct_io
                )?;
            }
        }
        Ok(())
    }

    /// The iozone-style grid: one block per phase, rows file sizes, columns record sizes.
    /// With `spread`, each value is followed by the coefficient of variation across passes.
    pub fn write_terminal(
        &self,
        out: &mut dyn Write,
        unit: DisplayUnit,
        spread: bool,
    ) -> io::Result<()> {
        let mount = self
            .directory
            .mount
            .as_ref()
            .map(|m| format!(" ({} {}, {})", m.fs_type, m.source, m.mount_options))
            .unwrap_or_default();
        writeln!(
            out,
            "fsbench matrix on {}{mount}: {} results in {}",
            self.directory.path.display(),
            self.results.len(),
            human_duration(self.elapsed_ns)
        )?;
        if self.config.scale < 1.0 {
            writeln!(
                out,
                "Scale {}: file sizes and the minimum time were shrunk (--scale or FSBENCH_SCALE); compare only with runs of the same scale.",
                self.config.scale
            )?;
        }
        if let Some(target) = self.target {
            write_target(out, target)?;
        }
        let spread_note = if spread {
            "; ±N% = coefficient of variation of the per-pass rates"
        } else {
            ""
        };
        writeln!(
            out,
            "Values in {}, {}; each value is the rate over all passes of a cell{spread_note}.",
            unit.label(),
            unit.direction()
        )?;
        let (files, records) = (
            &self.config.file_sizes_bytes,
            &self.config.record_sizes_bytes,
        );
        for &phase in &self.config.phases {
            let cells: Vec<&CellResult> =
                self.results.iter().filter(|r| r.phase == phase).collect();
            if cells.is_empty() {
                continue;
            }
            self.write_block(out, phase, &cells, files, records, unit, spread)?;
        }
        if !self.config.skipped.is_empty() {
            writeln!(
                out,
                "\n{} cells skipped: {}",
                self.config.skipped.len(),
                self.config.skipped[0].reason
            )?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn write_block(
        &self,
        out: &mut dyn Write,
        phase: Phase,
        cells: &[&CellResult],
        files: &[u64],
        records: &[u64],
        unit: DisplayUnit,
        spread: bool,
    ) -> io::Result<()> {
        let find = |f: u64, r: u64| {
            cells
                .iter()
                .find(|c| c.file_size_bytes == f && c.record_size_bytes == r)
        };
        let text = |c: &CellResult| {
            let value = unit.format(unit.value(&c.summary));
            if spread {
                format!("{value}±{:.0}%", c.summary.pass_ops_per_s.cv * 100.0)
            } else {
                value
            }
        };
        let width = cells
            .iter()
            .map(|c| text(c).chars().count())
            .max()
            .unwrap_or(1)
            .max(6);
        writeln!(
            out,
            "\n{} ({}) [{}, {}]",
            phase.report_title(),
            phase.name(),
            unit.label(),
            unit.direction()
        )?;
        write!(out, "{:>12}", "file\\record")?;
        for &r in records {
            write!(out, " {:>width$}", size_label(r))?;
        }
        writeln!(out)?;
        for &f in files {
            if !cells.iter().any(|c| c.file_size_bytes == f) {
                continue;
            }
            write!(out, "{:>12}", size_label(f))?;
            for &r in records {
                let cell = find(f, r).map(|c| text(c)).unwrap_or_default();
                write!(out, " {cell:>width$}")?;
            }
            writeln!(out)?;
        }
        let passes = cells.iter().map(|c| c.summary.passes);
        let (min_passes, max_passes) =
            (passes.clone().min().unwrap_or(0), passes.max().unwrap_or(0));
        let states: BTreeSet<&str> = cells.iter().map(|c| c.cache_state.name()).collect();
        let states: Vec<&str> = states.into_iter().collect();
        writeln!(
            out,
            "{:>12} passes per cell: {min_passes}..{max_passes}; cache: {}",
            "",
            states.join(", ")
        )
    }
}

/// The prepared target in a few lines: what it is, what it took, and the integrity verdict.
pub fn write_target(out: &mut dyn Write, t: &TargetInfo) -> io::Result<()> {
    let device = match (&t.device.path, &t.device.image) {
        (Some(dev), Some(_)) => format!(
            "{} on {} ({} sparse image, {} backing I/O)",
            t.filesystem,
            dev.display(),
            human_bytes(t.device.size_bytes),
            if t.device.loop_direct_io == Some(true) {
                "direct"
            } else {
                "buffered"
            }
        ),
        (Some(dev), None) => format!(
            "{} on {} ({})",
            t.filesystem,
            dev.display(),
            human_bytes(t.device.size_bytes)
        ),
        _ => format!(
            "{} in memory ({})",
            t.filesystem,
            human_bytes(t.device.size_bytes)
        ),
    };
    writeln!(out, "Target: {device}")?;
    if let Some(mkfs) = &t.mkfs {
        writeln!(
            out,
            "  made: `{}` in {}",
            mkfs.command,
            human_duration(mkfs.elapsed_ns)
        )?;
    }
    if let Some(m) = &t.mount {
        writeln!(
            out,
            "  mounted: {} ({}) in {}",
            m.mount_options,
            m.super_options,
            human_duration(m.elapsed_ns)
        )?;
        for (asked, got) in &m.changed {
            writeln!(
                out,
                "  mount option changed by the kernel: {asked} -> {got}"
            )?;
        }
        if !m.not_shown.is_empty() {
            writeln!(
                out,
                "  mount options the kernel does not show: {}",
                m.not_shown.join(",")
            )?;
        }
    }
    if let Some(s) = &t.scheduler {
        let note = s
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        let backing = s
            .backing_disk
            .as_deref()
            .map(|b| format!(", backing disk: {b}"))
            .unwrap_or_default();
        writeln!(out, "  scheduler: {}{note}{backing}", s.in_force)?;
    }
    if let Some(c) = &t.cache {
        let note = c
            .note
            .as_deref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        writeln!(out, "  cache: {} -> {}{note}", c.policy, c.state)?;
    }
    match &t.fsck {
        Some(f) => writeln!(
            out,
            "  fsck: {} (`{}`, exit {}, {})",
            if f.clean { "clean" } else { "PROBLEMS FOUND" },
            f.command,
            f.exit_status.map_or("none".to_string(), |s| s.to_string()),
            human_duration(f.elapsed_ns)
        )?,
        None => writeln!(out, "  fsck: not run")?,
    }
    Ok(())
}

/// A number for CSV: integers without a decimal point, others with enough digits to round-trip.
fn csv_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_measure::units::{SizeSpec, TimeSpan};
    use fsbench_workload::matrix::{self, MatrixSettings, MatrixTest, NoObserver};
    use fsbench_workload::{Context, StopFlag};

    fn small_run() -> (MatrixPlan, MatrixOutcome, HostInfo) {
        let dir = tempfile::tempdir().unwrap();
        let plan = MatrixSettings {
            tests: vec![MatrixTest::Write, MatrixTest::Read],
            file_sizes: SizeSpec::parse("4k..8k").unwrap(),
            record_sizes: SizeSpec::parse("4k..8k").unwrap(),
            min_time: TimeSpan::from_ns(0),
            ..MatrixSettings::default()
        }
        .plan(&Context::default())
        .unwrap();
        let outcome = matrix::run(&plan, dir.path(), &StopFlag::new(), &mut NoObserver);
        assert_eq!(outcome.status, Outcome::Ok, "{:?}", outcome.failure);
        (plan, outcome, HostInfo::probe())
    }

    #[test]
    fn json_has_schema_and_every_result() {
        let (plan, outcome, host) = small_run();
        let doc = MatrixDocument::new(
            &plan,
            &outcome,
            &host,
            Directory {
                path: Path::new("/tmp"),
                mount: None,
            },
            "2026-11-22T00:00:00Z".into(),
        );
        let mut bytes = Vec::new();
        doc.write_json(&mut bytes).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(v["status"], "complete");
        // 3 cells x 4 phases.
        assert_eq!(v["results"].as_array().unwrap().len(), 12);
        let first = &v["results"][0];
        for key in [
            "phase",
            "ops_per_s",
            "bytes_per_s",
            "latency",
            "pass_ops_per_s",
            "cache_state",
            "cpu",
        ] {
            assert!(!first[key].is_null(), "missing {key}");
        }
        assert_eq!(v["config"]["tests"], serde_json::json!(["write", "read"]));
    }

    #[test]
    fn csv_is_tidy_and_terminal_has_a_block_per_phase() {
        let (plan, outcome, host) = small_run();
        let doc = MatrixDocument::new(
            &plan,
            &outcome,
            &host,
            Directory {
                path: Path::new("/tmp"),
                mount: None,
            },
            String::new(),
        );
        let mut csv = Vec::new();
        doc.write_csv(&mut csv).unwrap();
        let csv = String::from_utf8(csv).unwrap();
        let header_columns = csv.lines().next().unwrap().split(',').count();
        assert!(csv.lines().all(|l| l.split(',').count() == header_columns));
        let kib_rows = csv.lines().filter(|l| l.contains(",kib_per_s,")).count();
        assert_eq!(kib_rows, 12);

        let mut text = Vec::new();
        doc.write_terminal(&mut text, DisplayUnit::KibPerSec, true)
            .unwrap();
        let text = String::from_utf8(text).unwrap();
        for title in [
            "Writer report",
            "Re-writer report",
            "Reader report",
            "Re-reader report",
        ] {
            assert!(text.contains(title), "{title} missing:\n{text}");
        }
        assert!(text.contains("KiB/s, higher is better"));
        assert!(text.contains("passes per cell"));
    }
}
