//! What older schemas wrote in text, read once more by the migrations that make it data:
//! schema 2's metric names (migration 3 parses every stored `metrics` and `histograms` row into
//! typed results, dimensions as columns, keeping what does not parse under its old name), and
//! the " (not retried)" that schema 3's campaigns appended to a reason (migration 4 makes it a
//! column, and the scale a run's plan set a column of the run). Nothing else reads these.

use crate::{bins_json, insert_measurements, Result};
use fsbench_model::{Dims, Direction, Measurement, ResultRecord, Unit};
use rusqlite::{params, Transaction};
use std::borrow::Cow;
use std::collections::HashMap;

/// What a schema 2 name says: the cell (phase, file size, record size) it belongs to, if any,
/// and the metric's typed name and whether it is the workload's main one.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parsed {
    pub cell: Option<Cell>,
    pub metric: String,
    pub main: bool,
}

/// `write 16m/4k`: a matrix cell and phase.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Cell {
    pub phase: String,
    pub file_size_bytes: u64,
    pub record_size_bytes: u64,
}

/// `4k`, `16m`, `1g`, `3000`: the inverse of `fsbench_model::size_label`.
fn parse_size(text: &str) -> Option<u64> {
    let (digits, shift) = match text.as_bytes().last()? {
        b'k' => (&text[..text.len() - 1], 10),
        b'm' => (&text[..text.len() - 1], 20),
        b'g' => (&text[..text.len() - 1], 30),
        b't' => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<u64>().ok()?.checked_mul(1 << shift)
}

/// `<phase> <file>/<record>`.
pub(crate) fn parse_cell(text: &str) -> Option<Cell> {
    let (phase, sizes) = text.split_once(' ')?;
    let (file, record) = sizes.split_once('/')?;
    if phase.is_empty() || phase.contains(char::is_whitespace) {
        return None;
    }
    Some(Cell {
        phase: phase.to_string(),
        file_size_bytes: parse_size(file)?,
        record_size_bytes: parse_size(record)?,
    })
}

/// A schema 2 metric name; None when it does not parse (it is then kept as it is).
pub(crate) fn parse(name: &str) -> Option<Parsed> {
    if name == "slept" {
        return Some(Parsed {
            cell: None,
            metric: "slept".into(),
            main: true,
        });
    }
    for (suffix, metric, main) in [
        (" throughput", "throughput", true),
        (" ops", "ops_rate", false),
        (" p99 latency", "latency_p99", false),
    ] {
        if let Some(cell) = name.strip_suffix(suffix).and_then(parse_cell) {
            return Some(Parsed {
                cell: Some(cell),
                metric: metric.into(),
                main,
            });
        }
    }
    None
}

fn dims(cell: &Option<Cell>) -> Dims {
    match cell {
        None => Dims::default(),
        Some(c) => Dims {
            phase: Some(c.phase.clone()),
            file_size_bytes: Some(c.file_size_bytes),
            record_size_bytes: Some(c.record_size_bytes),
            ..Dims::default()
        },
    }
}

fn legacy(name: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut attributes = serde_json::Map::new();
    attributes.insert("legacy_name".into(), name.into());
    attributes
}

/// The results of one sample from its schema 2 rows: (name, value, unit, higher_is_better)
/// in stored order, and (name, bins) of its histograms.
pub(crate) fn results(
    metrics: &[(String, f64, String, bool)],
    histograms: Vec<(String, Vec<(u64, u64)>)>,
) -> Vec<ResultRecord> {
    // Records in order of first appearance, and where each cell's record is (an unparsed name
    // is a record of its own).
    let mut out: Vec<ResultRecord> = Vec::new();
    let mut of_cell: HashMap<String, usize> = HashMap::new();
    let mut find_or_add = |out: &mut Vec<ResultRecord>, cell: &Option<Cell>| -> usize {
        let key = match cell {
            None => String::new(),
            Some(c) => format!("{} {}/{}", c.phase, c.file_size_bytes, c.record_size_bytes),
        };
        *of_cell.entry(key).or_insert_with(|| {
            out.push(ResultRecord {
                dims: dims(cell),
                ..ResultRecord::default()
            });
            out.len() - 1
        })
    };
    for (name, value, unit, higher) in metrics {
        let measurement = |metric: String, main: bool| Measurement {
            metric: Cow::Owned(metric),
            value: *value,
            // Schema 2 wrote B/s, ops/s and ns; anything else is kept as a count.
            unit: Unit::parse(unit).unwrap_or(Unit::Count),
            direction: if *higher {
                Direction::Higher
            } else {
                Direction::Lower
            },
            main,
        };
        match parse(name) {
            Some(parsed) => {
                let i = find_or_add(&mut out, &parsed.cell);
                out[i]
                    .measurements
                    .push(measurement(parsed.metric, parsed.main));
            }
            None => out.push(ResultRecord {
                attributes: legacy(name),
                measurements: vec![measurement(name.clone(), false)],
                ..ResultRecord::default()
            }),
        }
    }
    for (name, bins) in histograms {
        match parse_cell(&name) {
            Some(cell) => {
                let i = find_or_add(&mut out, &Some(cell));
                out[i].latency_bins = bins;
            }
            None => out.push(ResultRecord {
                attributes: legacy(&name),
                latency_bins: bins,
                ..ResultRecord::default()
            }),
        }
    }
    out
}

/// Migration 3's Rust step: every sample's `metrics` and `histograms` rows become results
/// (the workload kind from its case). The old tables are dropped after this.
pub(crate) fn convert(tx: &Transaction<'_>) -> Result<()> {
    let samples: Vec<(i64, String)> = tx
        .prepare(
            "SELECT s.id, COALESCE(json_extract(c.workload_json, '$.kind'), '')
             FROM samples s JOIN cases c ON s.case_id = c.id
             WHERE s.id IN (SELECT sample_id FROM metrics UNION SELECT sample_id FROM histograms)
             ORDER BY s.id",
        )?
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
        .collect::<std::result::Result<_, _>>()?;
    let mut metrics_stmt = tx.prepare(
        "SELECT name, value, unit, higher_is_better FROM metrics WHERE sample_id = ?1
         ORDER BY rowid",
    )?;
    let mut histograms_stmt =
        tx.prepare("SELECT name, bins_json FROM histograms WHERE sample_id = ?1 ORDER BY rowid")?;
    for (sample_id, workload) in samples {
        let metrics: Vec<(String, f64, String, bool)> = metrics_stmt
            .query_map(params![sample_id], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?))
            })?
            .collect::<std::result::Result<_, _>>()?;
        let raw: Vec<(String, String)> = histograms_stmt
            .query_map(params![sample_id], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<std::result::Result<_, _>>()?;
        let mut histograms = Vec::with_capacity(raw.len());
        for (name, bins) in raw {
            histograms.push((name, serde_json::from_str(&bins)?));
        }
        insert_v3(tx, sample_id, &workload, &results(&metrics, histograms))?;
    }
    Ok(())
}

/// Inserts converted results into `results` as version 3 made it: this step runs before any
/// later migration adds its columns, so it names only version 3's (old rows have no other
/// dimension than phase, file and record size).
fn insert_v3(
    tx: &Transaction<'_>,
    sample_id: i64,
    workload: &str,
    results: &[ResultRecord],
) -> Result<()> {
    let mut result = tx.prepare_cached(
        "INSERT INTO results (sample_id, position, workload, phase, file_size_bytes,
                              record_size_bytes, attributes_json, bins_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    for (position, r) in results.iter().enumerate() {
        let d = &r.dims;
        let int = |v: Option<u64>| v.map(|v| v as i64);
        result.execute(params![
            sample_id,
            position as i64,
            workload,
            d.phase,
            int(d.file_size_bytes),
            int(d.record_size_bytes),
            serde_json::to_string(&r.attributes)?,
            bins_json(r)?,
        ])?;
        insert_measurements(tx, tx.last_insert_rowid(), &r.measurements)?;
    }
    Ok(())
}

/// What schema 3 appended to the reason of a sample not tried because its case was known
/// unsupported.
const NOT_RETRIED: &str = " (not retried)";

/// Migration 4: a reason ending in " (not retried)" becomes the reason and the `not_retried`
/// flag; each run's scale is read from its plan's top-level `scale` key (1 when it has none).
pub(crate) fn split_not_retried(tx: &Transaction<'_>) -> Result<()> {
    let patched: Vec<(i64, String)> = {
        let mut stmt =
            tx.prepare("SELECT id, reason FROM samples WHERE reason LIKE '% (not retried)'")?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<std::result::Result<_, _>>()?
    };
    for (id, reason) in patched {
        let reason = reason.strip_suffix(NOT_RETRIED).unwrap_or(&reason);
        tx.execute(
            "UPDATE samples SET reason = ?1, not_retried = 1 WHERE id = ?2",
            params![reason, id],
        )?;
    }
    let plans: Vec<(i64, String)> = {
        let mut stmt = tx.prepare("SELECT id, plan_text FROM runs")?;
        let rows = stmt.query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?;
        rows.collect::<std::result::Result<_, _>>()?
    };
    for (id, text) in plans {
        tx.execute(
            "UPDATE runs SET scale = ?1 WHERE id = ?2",
            params![scale_of(&text), id],
        )?;
    }
    Ok(())
}

/// The top-level `scale = F` of a stored plan's text (1 when it has none): how runs stored
/// before the scale had a column of its own were read.
fn scale_of(plan_text: &str) -> f64 {
    plan_text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.strip_prefix("scale"))
        .filter_map(|rest| rest.trim_start().strip_prefix('='))
        .find_map(|v| v.split('#').next()?.trim().parse::<f64>().ok())
        .unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_2_names_parse_into_dims_and_typed_metrics() {
        let p = parse("rewrite 16m/4k throughput").unwrap();
        assert_eq!(
            p.cell,
            Some(Cell {
                phase: "rewrite".into(),
                file_size_bytes: 16 << 20,
                record_size_bytes: 4096
            })
        );
        assert_eq!((p.metric.as_str(), p.main), ("throughput", true));
        assert_eq!(parse("read 1g/3000 ops").unwrap().metric, "ops_rate");
        assert_eq!(
            parse("read 64k/64k p99 latency")
                .unwrap()
                .cell
                .unwrap()
                .record_size_bytes,
            65536
        );
        assert_eq!(parse("slept").unwrap().cell, None);
        for odd in [
            "write:throughput",
            "write 16q/4k throughput",
            "x throughput",
            "",
        ] {
            assert_eq!(parse(odd), None, "{odd}");
        }
    }
}
