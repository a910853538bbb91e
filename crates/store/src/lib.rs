//! The store: every run, case and sample of fsbench in one embedded SQLite database. A sample is
//! written in one transaction the moment it exists, so an interrupted campaign loses nothing that
//! finished. No SQL lives outside this crate. The schema is versioned (`PRAGMA user_version`)
//! and migrated forward on open; docs/results-schema.md describes it.
//!
//! Brief overview: [`Store::open`] -> [`Store::begin_run`] -> [`Store::add_case`] ->
//! [`Store::record_sample`] (its typed results with it) -> [`Store::finish_run`];
//! reading: [`Store::runs`], [`Store::load`] (results included), [`Store::recorded`].

mod legacy;

use fsbench_model::owner;
use fsbench_model::series::{Assessment, Point, Series};
use fsbench_model::target::TargetInfo;
use fsbench_model::{CaseConfig, Dim, DimKind, DimValue, Dims, Direction, Measurement, Unit};
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, Connection, OpenFlags, OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// One step of a migration: SQL, or Rust for what SQL cannot say (parsing old metric names).
enum Step {
    Sql(&'static str),
    Rust(fn(&Transaction<'_>) -> Result<()>),
}

/// Schema versions, each the steps that bring the previous version to it.
const MIGRATIONS: &[&[Step]] = &[
    // 1: runs, cases, samples, metrics, histograms.
    &[Step::Sql(
        "CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
        plan_name TEXT NOT NULL,
        plan_text TEXT NOT NULL,
        fsbench_version TEXT NOT NULL,
        host_json TEXT NOT NULL
    );
    CREATE TABLE cases (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        case_key TEXT NOT NULL,
        position INTEGER NOT NULL,
        config_json TEXT NOT NULL,
        workload_json TEXT NOT NULL,
        UNIQUE (run_id, case_key)
    );
    CREATE TABLE samples (
        id INTEGER PRIMARY KEY,
        case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        repetition INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('ok', 'unsupported', 'failed', 'timeout')),
        reason TEXT,
        started_at TEXT NOT NULL,
        elapsed_ns INTEGER NOT NULL,
        target_json TEXT,
        UNIQUE (case_id, repetition)
    );
    CREATE TABLE metrics (
        sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL,
        higher_is_better INTEGER NOT NULL,
        PRIMARY KEY (sample_id, name)
    );
    CREATE TABLE histograms (
        sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        bins_json TEXT NOT NULL,
        PRIMARY KEY (sample_id, name)
    );",
    )],
    // 2: who owns a running run (one process at a time; a gone owner means interrupted), and
    // how many samples the plan asks for (the minimum repetitions of every case).
    &[Step::Sql(
        "ALTER TABLE runs ADD COLUMN owner TEXT;
    ALTER TABLE runs ADD COLUMN planned_samples INTEGER;",
    )],
    // 3: typed results. Samples may be `interrupted` and keep their seed, warnings and the
    // workload's resolved configuration (a CHECK cannot be altered: the table is rebuilt);
    // results with their dimensions as columns and measurements replace metrics and
    // histograms, whose rows are converted (legacy::convert), never dropped unread.
    &[
        Step::Sql(
            "CREATE TABLE samples_v3 (
        id INTEGER PRIMARY KEY,
        case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
        repetition INTEGER NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('ok', 'unsupported', 'failed', 'timeout', 'interrupted')),
        reason TEXT,
        started_at TEXT NOT NULL,
        elapsed_ns INTEGER NOT NULL,
        target_json TEXT,
        seed INTEGER,
        warnings_json TEXT NOT NULL DEFAULT '[]',
        config_json TEXT,
        UNIQUE (case_id, repetition)
    );
    INSERT INTO samples_v3 (id, case_id, repetition, status, reason, started_at, elapsed_ns, target_json)
        SELECT id, case_id, repetition, status, reason, started_at, elapsed_ns, target_json FROM samples;
    DROP TABLE samples;
    ALTER TABLE samples_v3 RENAME TO samples;
    CREATE TABLE results (
        id INTEGER PRIMARY KEY,
        sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        workload TEXT NOT NULL,
        phase TEXT,
        operation TEXT,
        file_size_bytes INTEGER,
        record_size_bytes INTEGER,
        threads INTEGER,
        client INTEGER,
        step TEXT,
        sweep_parameter TEXT,
        sweep_value REAL,
        attributes_json TEXT NOT NULL DEFAULT '{}',
        bins_json TEXT,
        UNIQUE (sample_id, position)
    );
    CREATE TABLE measurements (
        result_id INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
        metric TEXT NOT NULL,
        value REAL NOT NULL,
        main INTEGER NOT NULL,
        unit TEXT NOT NULL,
        direction TEXT NOT NULL,
        PRIMARY KEY (result_id, metric)
    );
    CREATE INDEX results_by_sample ON results(sample_id);
    CREATE VIEW measurement_rows AS
        SELECT r.sample_id, r.workload, r.phase, r.operation, r.file_size_bytes,
               r.record_size_bytes, r.threads, r.client, r.step, r.sweep_parameter,
               r.sweep_value, m.metric, m.value, m.unit, m.direction, m.main
        FROM results r JOIN measurements m ON m.result_id = r.id;",
        ),
        Step::Rust(legacy::convert),
        Step::Sql("DROP TABLE metrics; DROP TABLE histograms;"),
    ],
    // 4: a sample not tried because its case is known unsupported says so in a column of its
    // own (its reason is the first sample's, no longer patched with " (not retried)"); a run
    // keeps the command line's overrides of its plan and the scale it ran at.
    &[
        Step::Sql(
            "ALTER TABLE samples ADD COLUMN not_retried INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE runs ADD COLUMN overrides_json TEXT;
    ALTER TABLE runs ADD COLUMN scale REAL;",
        ),
        Step::Rust(legacy::split_not_retried),
    ],
    // 5: the dimensions `engine` and `iodepth` (the io workload), and the view with them.
    &[Step::Sql(
        "ALTER TABLE results ADD COLUMN engine TEXT;
    ALTER TABLE results ADD COLUMN iodepth INTEGER;
    DROP VIEW measurement_rows;
    CREATE VIEW measurement_rows AS
        SELECT r.sample_id, r.workload, r.phase, r.operation, r.file_size_bytes,
               r.record_size_bytes, r.threads, r.client, r.step, r.engine, r.iodepth,
               r.sweep_parameter, r.sweep_value, m.metric, m.value, m.unit, m.direction, m.main
        FROM results r JOIN measurements m ON m.result_id = r.id;",
    )],
    // 6: what a sample measured over time: its series (the workload's phases per interval,
    // the host monitors'), one row per series and one per point (a 30-minute phase at 1 s is
    // 1,800 points a series), and what they say of the sample.
    &[Step::Sql(
        "CREATE TABLE series (
        id INTEGER PRIMARY KEY,
        sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
        source TEXT NOT NULL,
        phase INTEGER,
        label TEXT NOT NULL,
        subject TEXT NOT NULL,
        metric TEXT NOT NULL,
        unit TEXT NOT NULL
    );
    CREATE INDEX series_by_sample ON series(sample_id);
    CREATE TABLE series_points (
        series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
        n INTEGER NOT NULL,
        t_ns INTEGER NOT NULL,
        dt_ns INTEGER NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (series_id, n)
    ) WITHOUT ROWID;
    ALTER TABLE samples ADD COLUMN assessment_json TEXT;",
    )],
    // 7: a sample may end `corrupt` (verified data read back other than written). A CHECK
    // cannot be altered: the table is rebuilt from its own definition with the new status.
    &[Step::Rust(allow_corrupt_samples)],
];

/// Migration 7: `samples` again, its CHECK on `status` allowing `corrupt`, every row kept (the
/// migration runs with foreign keys off, so dropping the old table cascades nowhere).
fn allow_corrupt_samples(tx: &Transaction<'_>) -> Result<()> {
    let sql: String = tx.query_row(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'samples'",
        [],
        |row| row.get(0),
    )?;
    let before = "'timeout', 'interrupted')";
    if sql.contains("'corrupt'") {
        // Made by a build that wrote schema 7 and marked 6 (a test's, or a downgrade's).
        return Ok(());
    }
    if !sql.contains(before) {
        return Err(StoreError::Migration(format!(
            "the samples table is not as schema 6 made it (its status CHECK lacks {before})"
        )));
    }
    let rebuilt = sql
        .replacen("CREATE TABLE samples", "CREATE TABLE samples_v7", 1)
        .replacen("CREATE TABLE \"samples\"", "CREATE TABLE samples_v7", 1)
        .replacen(before, "'timeout', 'interrupted', 'corrupt')", 1);
    tx.execute_batch(&format!(
        "{rebuilt};
        INSERT INTO samples_v7 SELECT * FROM samples;
        DROP TABLE samples;
        ALTER TABLE samples_v7 RENAME TO samples;"
    ))?;
    Ok(())
}

/// The last schema version whose dimension columns the SQL of [`MIGRATIONS`] adds by hand. A
/// dimension declared (in `fsbench_model::result`) since a later version has its column, and
/// the `measurement_rows` view with it, added by [`add_dimensions`]: a new dimension is its one
/// line there, its version the next.
const DIMENSIONS_BY_HAND: u32 = 6;

/// The oldest schema this build reads as it is, without migrating: a database it may not
/// upgrade (a read-only file or mount, another user's) is still read by `runs`, `export` and
/// `report`. Migration 7 changed only a CHECK (a sample may be `corrupt`): every table,
/// column and view of schema 6 is as this build reads them.
const READABLE_AS_IS: u32 = 6;

/// The schema version this build writes: the last migration's, or a later dimension's.
pub const SCHEMA_VERSION: u32 = {
    let mut version = MIGRATIONS.len() as u32;
    let mut i = 0;
    while i < Dim::ALL.len() {
        if Dim::ALL[i].since() > version {
            version = Dim::ALL[i].since();
        }
        i += 1;
    }
    version
};

/// Brings a database of schema `version - 1` to `version`: that migration's steps, then the
/// columns of the dimensions declared since it.
fn migrate_to(tx: &Transaction<'_>, version: u32) -> Result<()> {
    let steps = MIGRATIONS.get(version as usize - 1).copied().unwrap_or(&[]);
    for step in steps {
        match step {
            Step::Sql(sql) => tx.execute_batch(sql)?,
            Step::Rust(convert) => convert(tx)?,
        }
    }
    if version > DIMENSIONS_BY_HAND {
        add_dimensions(tx, version)?;
    }
    Ok(())
}

/// Adds the columns of the dimensions declared since `version` to `results`, and makes
/// `measurement_rows` again with every dimension of that version.
fn add_dimensions(tx: &Transaction<'_>, version: u32) -> Result<()> {
    let new: Vec<Dim> = Dim::ALL
        .into_iter()
        .filter(|d| d.since() == version)
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    let mut sql = String::new();
    for (column, kind) in new.into_iter().flat_map(dim_columns) {
        sql += &format!("ALTER TABLE results ADD COLUMN {column} {kind};\n");
    }
    sql += "DROP VIEW measurement_rows;\n";
    sql += &measurement_rows(version);
    Ok(tx.execute_batch(&sql)?)
}

/// The `measurement_rows` view of schema `version`: a row per measurement, with its result's
/// workload and every dimension of that version.
fn measurement_rows(version: u32) -> String {
    let columns: Vec<String> = Dim::ALL
        .into_iter()
        .filter(|d| d.since() <= version)
        .flat_map(dim_columns)
        .map(|(column, _)| format!("r.{column}"))
        .collect();
    format!(
        "CREATE VIEW measurement_rows AS
        SELECT r.sample_id, r.workload, {},
               m.metric, m.value, m.unit, m.direction, m.main
        FROM results r JOIN measurements m ON m.result_id = r.id;",
        columns.join(", ")
    )
}

/// The columns of `results` a dimension is stored in, with their SQL types: its own, or for a
/// sweep point the swept parameter's name and its value.
fn dim_columns(dim: Dim) -> Vec<(String, &'static str)> {
    let column = dim.column();
    match dim.kind() {
        DimKind::Text => vec![(column.to_string(), "TEXT")],
        DimKind::Bytes | DimKind::Count => vec![(column.to_string(), "INTEGER")],
        DimKind::Sweep => vec![
            (format!("{column}_parameter"), "TEXT"),
            (format!("{column}_value"), "REAL"),
        ],
    }
}

/// Every dimension column of `results`, in [`Dim::ALL`] order, joined for SQL.
fn dims_sql() -> &'static str {
    static SQL: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    SQL.get_or_init(|| {
        Dim::ALL
            .into_iter()
            .flat_map(dim_columns)
            .map(|(column, _)| column)
            .collect::<Vec<_>>()
            .join(", ")
    })
}

/// A dimension's value as its columns hold it (NULL for an empty one).
fn dim_to_sql(dim: Dim, dims: &Dims, out: &mut Vec<Value>) {
    match (dim.kind(), dim.get(dims)) {
        (DimKind::Sweep, None) => out.extend([Value::Null, Value::Null]),
        (_, None) => out.push(Value::Null),
        (_, Some(DimValue::Text(text))) => out.push(Value::Text(text)),
        (_, Some(DimValue::Bytes(n) | DimValue::Count(n))) => out.push(Value::Integer(n as i64)),
        (_, Some(DimValue::Sweep(parameter, value))) => {
            out.extend([Value::Text(parameter), Value::Real(value)])
        }
    }
}

/// Reads a dimension from its columns, starting at `at`, into `dims`; returns the next column.
fn dim_from_sql(
    dim: Dim,
    row: &rusqlite::Row<'_>,
    at: usize,
    dims: &mut Dims,
) -> rusqlite::Result<usize> {
    let value = match dim.kind() {
        DimKind::Text => row.get::<_, Option<String>>(at)?.map(DimValue::Text),
        DimKind::Bytes => row
            .get::<_, Option<i64>>(at)?
            .map(|n| DimValue::Bytes(n as u64)),
        DimKind::Count => row
            .get::<_, Option<i64>>(at)?
            .map(|n| DimValue::Count(n as u64)),
        DimKind::Sweep => {
            let point = match (row.get::<_, Option<String>>(at)?, row.get(at + 1)?) {
                (Some(parameter), Some(value)) => Some(DimValue::Sweep(parameter, value)),
                _ => None,
            };
            if let Some(value) = point {
                dim.set(dims, value);
            }
            return Ok(at + 2);
        }
    };
    if let Some(value) = value {
        dim.set(dims, value);
    }
    Ok(at + 1)
}

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("cannot open the results database {}: {source}; pass another --db", path.display())]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("the results database {} has schema version {found}, newer than this fsbench understands ({SCHEMA_VERSION}); use a newer fsbench or another --db", path.display())]
    TooNew { path: PathBuf, found: u32 },
    #[error("results database: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("results database: {0}")]
    Json(#[from] serde_json::Error),
    #[error("no run {0} in the results database; `fsbench runs` lists them")]
    NoSuchRun(i64),
    #[error("no results database at {}; `fsbench run` creates it (or pass --db)", .0.display())]
    Missing(PathBuf),
    #[error("{} is empty, not a results database; remove it or pass another --db", .0.display())]
    Empty(PathBuf),
    #[error("{} is not an SQLite database, so not a results database of fsbench; it is left as it is: pass another --db", .0.display())]
    NotADatabase(PathBuf),
    #[error("{} is an SQLite database of another program ({what}), not a results database of fsbench; it is left as it is: pass another --db", path.display())]
    Foreign { path: PathBuf, what: String },
    #[error("the results database {} is damaged (SQLite's check says: {detail}); fsbench adds nothing to it: keep a copy, try `sqlite3 {} .recover`, or pass another --db", path.display(), path.display())]
    Malformed { path: PathBuf, detail: String },
    #[error("the results database {} is read-only, and fsbench stores what it measures in it; pass a writable --db (or --no-store) (`fsbench runs` and `fsbench export` read it as it is)", .0.display())]
    ReadOnly(PathBuf),
    #[error("the results database {} has schema version {found} and cannot be upgraded here ({source}); run `fsbench runs --db {}` once with write access", path.display(), path.display())]
    Outdated {
        path: PathBuf,
        found: u32,
        source: Box<StoreError>,
    },
    #[error("results database: {0}; the database is unchanged")]
    Migration(String),
    #[error("the results database {}: {why}; or pass another --db", path.display())]
    Untrusted { path: PathBuf, why: String },
    #[error("run {run_id} is still running in process {pid}; wait for it to end, or stop it (Ctrl-C, `kill {pid}`) and resume then")]
    Busy { run_id: i64, pid: u32 },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// How a sample ended (a campaign never stores `interrupted` samples: the sample is run again).
pub use fsbench_model::{Outcome, ResultRecord, RunState};

/// A run as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Run {
    pub id: i64,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunState,
    pub plan_name: String,
    pub plan_text: String,
    pub fsbench_version: String,
    /// Provenance: kernel, CPU, memory, hostname (JSON).
    pub host: serde_json::Value,
    /// What the command line set over the plan's keys (`--dir`, `--scale`), JSON; None when
    /// nothing (or for runs stored before fsbench recorded it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overrides: Option<serde_json::Value>,
    /// The scale the run ran at (1: as written); None for runs stored before fsbench recorded
    /// it (their plan's `scale` key says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
}

/// What a new run records about itself.
#[derive(Debug, Clone)]
pub struct NewRun<'a> {
    pub started_at: &'a str,
    pub plan_name: &'a str,
    pub plan_text: &'a str,
    pub fsbench_version: &'a str,
    pub host_json: &'a str,
    /// Samples the plan asks for (every case at its minimum repetitions).
    pub planned_samples: u64,
    /// The command line's overrides of the plan's keys, JSON (None: none).
    pub overrides_json: Option<&'a str>,
    /// The scale it runs at.
    pub scale: f64,
}

/// A case: one configuration x workload, identified by a stable key.
#[derive(Debug, Clone, Serialize)]
pub struct Case {
    pub id: i64,
    pub key: String,
    pub position: i64,
    pub config: CaseConfig,
    pub workload: serde_json::Value,
}

/// A sample to record.
#[derive(Debug, Clone)]
pub struct NewSample<'a> {
    pub repetition: u32,
    pub status: Outcome,
    pub reason: Option<&'a str>,
    /// Not tried: its case is known unsupported (the reason is the first sample's).
    pub not_retried: bool,
    pub started_at: &'a str,
    pub elapsed_ns: u64,
    /// The target read-back (device, mkfs, mount, scheduler, cache, fsck), JSON.
    pub target_json: Option<&'a str>,
    /// Every result of the workload, in the order it produced them.
    pub results: &'a [ResultRecord],
    /// The seed the workload used (data, offsets), to run it again alike.
    pub seed: Option<u64>,
    /// What the reader of the results must know (a cache that could not be dropped).
    pub warnings: &'a [String],
    /// The workload's resolved configuration as it ran, JSON.
    pub config_json: Option<&'a str>,
    /// Its series: the workload's phases' and the host monitors'.
    pub series: &'a [Series],
    /// What the series say of it.
    pub assessment: Option<&'a Assessment>,
}

/// A sample as stored.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub id: i64,
    pub repetition: u32,
    pub status: Outcome,
    pub reason: Option<String>,
    /// Not tried: its case is known unsupported (the reason is the first sample's).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub not_retried: bool,
    pub started_at: String,
    pub elapsed_ns: u64,
    /// The target read-back: the record as written, read once into its typed form.
    pub target: Option<StoredTarget>,
    pub seed: Option<u64>,
    pub warnings: Vec<String>,
    pub config: Option<serde_json::Value>,
    pub results: Vec<ResultRecord>,
    /// What its series say of it: steady or not, how busy its devices were, disturbed or not
    /// (None: not watched, or stored before fsbench watched).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assessment: Option<Assessment>,
    /// Its series, when asked for ([`Store::series`]; [`Store::load`] leaves them out: a long
    /// campaign's are large).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub series: Vec<Series>,
}

impl Sample {
    /// The sample's target read-back, typed (None: no target, or a record this fsbench cannot
    /// read, whose [`StoredTarget::note`] says why).
    pub fn target_info(&self) -> Option<&TargetInfo> {
        self.target.as_ref()?.info.as_deref()
    }
}

/// A sample's target read-back as stored: the JSON as written (what the exports carry,
/// verbatim) and the typed record read from it once, on loading.
#[derive(Debug, Clone)]
pub struct StoredTarget {
    /// The record as written.
    pub json: serde_json::Value,
    /// The record read (None: one this fsbench cannot read).
    pub info: Option<Box<TargetInfo>>,
    /// Why it could not be read, when it could not.
    pub note: Option<String>,
}

impl StoredTarget {
    /// Reads a stored record; one that does not read is kept as written, with a note.
    pub fn read(json: serde_json::Value) -> StoredTarget {
        match TargetInfo::deserialize(&json) {
            Ok(info) => StoredTarget {
                json,
                info: Some(Box::new(info)),
                note: None,
            },
            Err(e) => StoredTarget {
                json,
                info: None,
                note: Some(format!("the target's record cannot be read: {e}")),
            },
        }
    }
}

/// Written as it was stored.
impl Serialize for StoredTarget {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

/// A case with its samples, in repetition order.
#[derive(Debug, Clone, Serialize)]
pub struct CaseData {
    #[serde(flatten)]
    pub case: Case,
    pub samples: Vec<Sample>,
}

/// A whole run, as `fsbench export` and reports read it.
#[derive(Debug, Clone, Serialize)]
pub struct RunData {
    pub run: Run,
    pub cases: Vec<CaseData>,
}

/// One line of `fsbench runs`.
#[derive(Debug, Clone, Serialize)]
pub struct RunListing {
    pub id: i64,
    pub started_at: String,
    /// As stored, except that a `running` run whose process is gone is `interrupted`.
    pub status: RunState,
    pub plan_name: String,
    pub cases: u64,
    /// Samples the plan asks for; None for runs stored before fsbench recorded it.
    pub planned_samples: Option<u64>,
    pub samples: u64,
    pub ok_samples: u64,
}

/// The status to show: a run marked running whose owner process is gone was interrupted (a
/// SIGKILL, a crash, a power cut); nobody is going to finish it but `--resume`.
fn effective_status(status: String, owner: Option<&str>) -> RunState {
    let status = RunState::parse(&status).unwrap_or(RunState::Failed);
    if status == RunState::Running && !owner.is_some_and(owner::is_alive) {
        RunState::Interrupted
    } else {
        status
    }
}

/// As root, refuses a database another user could redirect (measure::trust): a symlink of
/// theirs on the way to it (its own name, or SQLite's `-wal`, `-shm` and `-journal` files
/// beside it), or a directory on the way that is theirs or writable by others without the
/// sticky bit, where they could put such a link at any time. SQLite opens these names as
/// they are, following links: root would create or write the file they point to. Missing
/// directories on the way are made (0755), each checked first.
fn check_trusted(path: &Path) -> Result<()> {
    use fsbench_measure::trust;
    if !trust::as_root() {
        return Ok(());
    }
    let untrusted = |e: std::io::Error| StoreError::Untrusted {
        path: path.to_path_buf(),
        why: e.to_string(),
    };
    trust::check_file_path(path).map_err(untrusted)?;
    // The others go beside the file the name leads to, links resolved (as SQLite does).
    let real = where_sqlite_opens(path);
    for suffix in COMPANIONS {
        let mut name = real.as_os_str().to_owned();
        name.push(suffix);
        trust::check_links(Path::new(&name)).map_err(untrusted)?;
    }
    Ok(())
}

/// SQLite's own files beside a database, which it reads as part of it (a write-ahead log's
/// frames, a hot journal's pages are the database's contents).
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// As root, whether another user could have written what a database holds, and so what
/// `--resume` would read back and run (a stored plan's commands, build targets, directories):
/// the database and SQLite's files beside it (those that exist) must each be a regular file of
/// root's that nobody else may write, and the directory holding them one where nobody else may
/// add names — in a sticky `/tmp` another user could make `results.db-wal` before SQLite does,
/// and SQLite would read their frames as the database. The error says what to change.
fn check_writable_by_others(path: &Path) -> Result<()> {
    use fsbench_measure::trust;
    use std::os::unix::fs::MetadataExt;
    if !trust::as_root() {
        return Ok(());
    }
    let untrusted = |why: String| StoreError::Untrusted {
        path: path.to_path_buf(),
        why,
    };
    let real = where_sqlite_opens(path);
    let parent = real
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if let Ok(meta) = std::fs::metadata(parent) {
        if meta.mode() & 0o022 != 0 {
            return Err(untrusted(format!(
                "its directory {} lets other users add files beside it (mode {:04o}), and SQLite \
                 reads its files there (-wal, -shm, -journal) as part of the database, which \
                 `--resume` runs: keep the database in a directory only root can write (such as \
                 the default /var/lib/fsbench), or run fsbench as the user it belongs to",
                parent.display(),
                meta.mode() & 0o7777
            )));
        }
    }
    for suffix in std::iter::once("").chain(COMPANIONS) {
        let mut name = real.as_os_str().to_owned();
        name.push(suffix);
        let name = PathBuf::from(name);
        match std::fs::symlink_metadata(&name) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(untrusted(format!("cannot look at {}: {e}", name.display()))),
            Ok(meta) => {
                trust::check_user_file(&name, &meta).map_err(|e| untrusted(e.to_string()))?
            }
        }
    }
    Ok(())
}

/// The file SQLite opens for `path`, which may not exist yet: symlinks followed (the last
/// component's too), so that its `-wal`, `-shm` and `-journal` are looked for where SQLite
/// puts them, beside the file a link leads to.
fn where_sqlite_opens(path: &Path) -> PathBuf {
    let mut at = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    for _ in 0..40 {
        match std::fs::read_link(&at) {
            Ok(target) => {
                at = match at.parent() {
                    Some(parent) => parent.join(target),
                    None => target,
                }
            }
            Err(_) => break,
        }
    }
    match (at.parent().map(std::fs::canonicalize), at.file_name()) {
        (Some(Ok(parent)), Some(name)) => parent.join(name),
        _ => at,
    }
}

/// Opens an existing database read-only: nothing about the file changes, its journal mode
/// included.
fn open_read_only(path: &Path) -> Result<Connection> {
    let open_error = |source: rusqlite::Error| match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => StoreError::NotADatabase(path.to_path_buf()),
        _ => StoreError::Open {
            path: path.to_path_buf(),
            source,
        },
    };
    let version = |conn: &Connection| -> rusqlite::Result<u32> {
        conn.pragma_query_value(None, "user_version", |row| row.get(0))
    };
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI;
    let uri = |extra: &str| {
        let mut text = String::from("file:");
        for byte in path.as_os_str().as_encoded_bytes() {
            match byte {
                b'%' | b'?' | b'#' => text.push_str(&format!("%{byte:02X}")),
                _ => text.push(*byte as char),
            }
        }
        text + "?mode=ro" + extra
    };
    let opened = Connection::open_with_flags(uri(""), flags).and_then(|conn| {
        // Wait for a concurrent writer (a running campaign) rather than fail at once.
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        version(&conn).map(|_| conn)
    });
    // A WAL database needs its -shm file, which a read-only directory or mount cannot get;
    // nobody can write there either, so reading it as immutable is then exact.
    match opened {
        Ok(conn) => Ok(conn),
        Err(e) if e.sqlite_error_code() == Some(rusqlite::ErrorCode::NotADatabase) => {
            Err(open_error(e))
        }
        Err(_) => {
            let conn =
                Connection::open_with_flags(uri("&immutable=1"), flags).map_err(open_error)?;
            version(&conn).map_err(open_error)?;
            Ok(conn)
        }
    }
}

/// Tables and views (with their columns) of a database, SQLite's own left out.
type Schema = std::collections::BTreeMap<String, std::collections::BTreeSet<String>>;

fn schema_of(conn: &Connection) -> rusqlite::Result<Schema> {
    let mut tables = conn.prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
    )?;
    let names: Vec<String> = tables
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    let mut schema = Schema::new();
    for name in names {
        let mut columns = conn.prepare("SELECT name FROM pragma_table_info(?1)")?;
        let columns = columns
            .query_map([&name], |row| row.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        schema.insert(name, columns);
    }
    Ok(schema)
}

/// The schema each version has (index = version), as the migrations make it: one definition,
/// the migrations themselves, applied to an empty database in memory.
fn schemas() -> &'static [Schema] {
    static SCHEMAS: std::sync::OnceLock<Vec<Schema>> = std::sync::OnceLock::new();
    SCHEMAS.get_or_init(|| {
        let mut conn = Connection::open_in_memory().expect("an in-memory database");
        let mut all = vec![Schema::new()];
        for version in 1..=SCHEMA_VERSION {
            let tx = conn.transaction().expect("a transaction in memory");
            migrate_to(&tx, version).expect("the migrations apply");
            tx.commit().expect("the migrations apply");
            all.push(schema_of(&conn).expect("the schema reads"));
        }
        all
    })
}

/// The schema version of an existing database, after checking it is fsbench's: version 0 with
/// no tables (a new database), or a version whose tables and columns are all there. Another
/// program's database (tables without fsbench's version, or a version without its tables) is
/// [`StoreError::Foreign`].
fn check_schema(conn: &Connection, path: &Path) -> Result<u32> {
    let open_error = |source: rusqlite::Error| match source.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => StoreError::NotADatabase(path.to_path_buf()),
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => StoreError::Malformed {
            path: path.to_path_buf(),
            detail: source.to_string(),
        },
        _ => StoreError::Open {
            path: path.to_path_buf(),
            source,
        },
    };
    // One read transaction: the version and the tables of one moment (a migration elsewhere
    // changes both at once).
    conn.execute_batch("BEGIN").map_err(open_error)?;
    let read = conn
        .pragma_query_value(None, "user_version", |row| row.get::<_, u32>(0))
        .and_then(|version| Ok((version, schema_of(conn)?)));
    let _ = conn.execute_batch("COMMIT");
    let (found, schema) = read.map_err(open_error)?;
    let foreign = |what: String| StoreError::Foreign {
        path: path.to_path_buf(),
        what,
    };
    let tables = || {
        let names: Vec<&str> = schema.keys().map(String::as_str).take(6).collect();
        format!("tables {}", names.join(", "))
    };
    if found as usize >= schemas().len() {
        if !schema.contains_key("runs") {
            return Err(foreign(format!("schema version {found}, {}", tables())));
        }
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
        });
    }
    if found == 0 && !schema.is_empty() {
        return Err(foreign(format!("no schema version, {}", tables())));
    }
    for (table, columns) in &schemas()[found as usize] {
        let missing = match schema.get(table) {
            None => format!("no table {table}"),
            Some(have) => match columns.iter().find(|c| !have.contains(*c)) {
                None => continue,
                Some(column) => format!("no column {table}.{column}"),
            },
        };
        return Err(foreign(format!(
            "schema version {found} but {missing}; {}",
            tables()
        )));
    }
    Ok(found)
}

/// SQLite's quick check (every page and index readable and consistent; about a second per
/// GB), before anything is added to a database.
fn quick_check(conn: &Connection, path: &Path) -> Result<()> {
    let malformed = |detail: String| StoreError::Malformed {
        path: path.to_path_buf(),
        detail,
    };
    let mut check = conn
        .prepare("PRAGMA quick_check(3)")
        .map_err(|e| malformed(e.to_string()))?;
    let found: Vec<String> = check
        .query_map([], |row| row.get(0))
        .and_then(|rows| rows.collect())
        .map_err(|e| malformed(e.to_string()))?;
    if found == ["ok"] {
        return Ok(());
    }
    // Each finding, without SQLite's "*** in database main ***" headings.
    let findings: Vec<&str> = found
        .iter()
        .flat_map(|f| f.lines())
        .filter(|l| !l.starts_with("***"))
        .collect();
    Err(malformed(findings.join("; ")))
}

/// A samples row before its JSON is parsed.
struct SampleRow {
    id: i64,
    repetition: u32,
    status: String,
    reason: Option<String>,
    started_at: String,
    elapsed_ns: i64,
    target: Option<String>,
    seed: Option<i64>,
    warnings: String,
    config: Option<String>,
    not_retried: bool,
    assessment: Option<String>,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// Why another user could have written what this database holds (as root: it or a file
    /// beside it is theirs or writable by them), or None; such a database is only read, and
    /// nothing read back from it is run.
    untrusted: Option<String>,
}

impl Store {
    /// Opens (creating if needed, with its directory) and migrates the database at `path`. A
    /// database this call created is removed again when it cannot be set up (a full disk), so
    /// no empty file stays behind.
    ///
    /// An existing file is looked at first, read-only, and refused untouched (no journal mode
    /// switched, nothing added) unless it is a sound results database or an empty one: not
    /// SQLite, another program's SQLite database, or one that fails SQLite's quick check.
    pub fn open(path: &Path) -> Result<Store> {
        check_trusted(path)?;
        check_writable_by_others(path)?;
        let existed = path.exists();
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            let conn = open_read_only(path)?;
            check_schema(&conn, path)?;
            quick_check(&conn, path)?;
        }
        let opened = Store::open_read_write(path);
        if opened.is_err() && !existed {
            for suffix in ["", "-wal", "-shm", "-journal"] {
                let mut name = path.as_os_str().to_owned();
                name.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(name));
            }
        }
        opened
    }

    fn open_read_write(path: &Path) -> Result<Store> {
        let open_error = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = std::fs::create_dir_all(dir);
        }
        let conn = Connection::open(path).map_err(open_error)?;
        // Looked at again now that SQLite has the file open and before it reads a page: a file
        // made beside it since the first look would be another user's.
        check_writable_by_others(path)?;
        // SQLite falls back to reading a file it may not write (a read-only mount, chmod 444):
        // say so now, not at the first sample.
        if conn.is_readonly(rusqlite::MAIN_DB).map_err(open_error)? {
            return Err(StoreError::ReadOnly(path.to_path_buf()));
        }
        // Wait for a concurrent writer (a running campaign) rather than fail at once; this must
        // come first, since switching to WAL itself needs the lock.
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(open_error)?;
        // Switching a new database to WAL may report "busy" without waiting on the busy
        // handler while another process does the same: retry for a bounded time.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(rusqlite::Error::SqliteFailure(e, _))
                    if e.code == rusqlite::ErrorCode::DatabaseBusy
                        && std::time::Instant::now() < deadline =>
                {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => return Err(open_error(e)),
            }
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(open_error)?;
        let mut store = Store {
            conn,
            path: path.to_path_buf(),
            untrusted: None,
        };
        store.migrate()?;
        Ok(store)
    }

    /// Opens a database that must exist already, read-only (for reading commands, which create
    /// and change nothing: a read-only file, directory or mount is enough, and the journal mode
    /// is left as it is). Only a database of an older schema is opened for writing, to migrate.
    pub fn open_existing(path: &Path) -> Result<Store> {
        if !path.exists() {
            return Err(StoreError::Missing(path.to_path_buf()));
        }
        check_trusted(path)?;
        // Another user's database is read as it is, never migrated (written) by root.
        let untrusted = check_writable_by_others(path).err();
        if std::fs::metadata(path).is_ok_and(|m| m.len() == 0) {
            return Err(StoreError::Empty(path.to_path_buf()));
        }
        let conn = open_read_only(path)?;
        let found = check_schema(&conn, path)?;
        if found == 0 {
            return Err(StoreError::Empty(path.to_path_buf()));
        }
        let as_is = |conn: Connection, untrusted: Option<StoreError>| Store {
            conn,
            path: path.to_path_buf(),
            untrusted: untrusted.map(|e| e.to_string()),
        };
        if (READABLE_AS_IS..SCHEMA_VERSION).contains(&found) {
            // Upgraded where this process may (a later campaign adds to it), else read as it is.
            if untrusted.is_some() {
                return Ok(as_is(conn, untrusted));
            }
            drop(conn);
            return match Store::open(path) {
                Ok(store) => Ok(store),
                // It cannot be written here (a read-only file, directory or mount).
                Err(StoreError::ReadOnly(_) | StoreError::Open { .. }) => {
                    Ok(as_is(open_read_only(path)?, None))
                }
                Err(e) => Err(StoreError::Outdated {
                    path: path.to_path_buf(),
                    found,
                    source: Box::new(e),
                }),
            };
        }
        if let (true, Some(StoreError::Untrusted { why, .. })) =
            (found < SCHEMA_VERSION, untrusted.as_ref())
        {
            return Err(StoreError::Untrusted {
                path: path.to_path_buf(),
                why: format!(
                    "its schema version {found} needs an upgrade, which root does not make to a \
                     database another user could write: {why}"
                ),
            });
        }
        if found < SCHEMA_VERSION {
            drop(conn);
            return Store::open(path).map_err(|e| StoreError::Outdated {
                path: path.to_path_buf(),
                found,
                source: Box::new(e),
            });
        }
        Ok(as_is(conn, untrusted))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Why another user could have written this database (it was opened read-only), or None:
    /// what such a database holds is shown, never run.
    pub fn untrusted(&self) -> Option<&str> {
        self.untrusted.as_deref()
    }

    /// Brings the schema up to date. Two processes may open a new database at once (a
    /// campaign and `fsbench runs`): the version is read again inside a write-locked
    /// transaction, so only one of them migrates and the other sees the result. Foreign keys
    /// are off meanwhile (rebuilding a table must not cascade into its children; the pragma is
    /// a no-op inside a transaction), and checked before the commit.
    fn migrate(&mut self) -> Result<()> {
        let version = |conn: &Connection| -> Result<u32> {
            Ok(conn.pragma_query_value(None, "user_version", |row| row.get(0))?)
        };
        if version(&self.conn)? == SCHEMA_VERSION {
            return Ok(());
        }
        self.conn.pragma_update(None, "foreign_keys", "OFF")?;
        let migrated = self.migrate_unchecked();
        let restored = self.conn.pragma_update(None, "foreign_keys", "ON");
        migrated?;
        Ok(restored?)
    }

    fn migrate_unchecked(&mut self) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let found: u32 = tx.pragma_query_value(None, "user_version", |row| row.get(0))?;
        if found > SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: self.path.clone(),
                found,
            });
        }
        if found == SCHEMA_VERSION {
            // Another process migrated it meanwhile.
            return Ok(());
        }
        for version in found + 1..=SCHEMA_VERSION {
            migrate_to(&tx, version)?;
        }
        let broken: Option<String> = tx
            .query_row("PRAGMA foreign_key_check", [], |row| row.get(0))
            .optional()?;
        if let Some(table) = broken {
            return Err(StoreError::Migration(format!(
                "the migration to schema {SCHEMA_VERSION} left rows of {table} without their parent"
            )));
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        tx.commit()?;
        Ok(())
    }

    /// Records a new run, owned by this process until [`Store::finish_run`].
    pub fn begin_run(&self, run: &NewRun<'_>) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO runs (started_at, status, plan_name, plan_text, fsbench_version, host_json, owner, planned_samples, overrides_json, scale)
             VALUES (?1, 'running', ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                run.started_at,
                run.plan_name,
                run.plan_text,
                run.fsbench_version,
                run.host_json,
                owner::current(),
                run.planned_samples as i64,
                run.overrides_json,
                run.scale
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Takes back a run that stored no sample (a one-case run whose request turned out to be a
    /// mistake before anything ran): as if it had never begun. A run with samples stays.
    pub fn discard_run(&self, run_id: i64) -> Result<()> {
        self.conn.execute(
            "DELETE FROM runs WHERE id = ?1 AND NOT EXISTS (
                 SELECT 1 FROM samples s JOIN cases c ON c.id = s.case_id WHERE c.run_id = ?1)",
            params![run_id],
        )?;
        Ok(())
    }

    /// Takes over a stored run to resume it: refused ([`StoreError::Busy`]) while the process
    /// that owns it is alive. The check and the take-over are one write transaction, so of two
    /// processes resuming at once exactly one wins.
    pub fn claim_run(&mut self, run_id: i64, planned_samples: u64) -> Result<()> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let row: Option<(String, Option<String>)> = tx
            .query_row(
                "SELECT status, owner FROM runs WHERE id = ?1",
                params![run_id],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()?;
        let Some((status, holder)) = row else {
            return Err(StoreError::NoSuchRun(run_id));
        };
        if let Some(holder) = holder.filter(|h| status == "running" && owner::is_alive(h)) {
            return Err(StoreError::Busy {
                run_id,
                pid: owner::pid(&holder).unwrap_or(0),
            });
        }
        tx.execute(
            "UPDATE runs SET status = 'running', finished_at = NULL, owner = ?2, planned_samples = ?3
             WHERE id = ?1",
            params![run_id, owner::current(), planned_samples as i64],
        )?;
        tx.commit()?;
        Ok(())
    }

    /// Sets a run's final state (complete, interrupted, failed) and lets go of it.
    pub fn finish_run(
        &self,
        run_id: i64,
        status: RunState,
        finished_at: Option<&str>,
    ) -> Result<()> {
        self.conn.execute(
            "UPDATE runs SET status = ?2, finished_at = ?3, owner = NULL WHERE id = ?1",
            params![run_id, status.name(), finished_at],
        )?;
        Ok(())
    }

    /// Adds a case (or finds it, when resuming); returns its id.
    pub fn add_case(
        &self,
        run_id: i64,
        key: &str,
        position: i64,
        config: &CaseConfig,
        workload_json: &str,
    ) -> Result<i64> {
        self.conn.execute(
            "INSERT OR IGNORE INTO cases (run_id, case_key, position, config_json, workload_json)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                run_id,
                key,
                position,
                serde_json::to_string(config)?,
                workload_json
            ],
        )?;
        Ok(self.conn.query_row(
            "SELECT id FROM cases WHERE run_id = ?1 AND case_key = ?2",
            params![run_id, key],
            |row| row.get(0),
        )?)
    }

    /// Records a sample with its results, in one transaction.
    pub fn record_sample(&mut self, case_id: i64, sample: &NewSample<'_>) -> Result<i64> {
        let tx = self.conn.transaction()?;
        let sample_id = insert_sample(&tx, case_id, sample)?;
        tx.commit()?;
        Ok(sample_id)
    }

    /// Appends results to a stored sample, after the ones it has, in one transaction: a job's
    /// rank 0 stores what every rank has measured after each phase, so that a killed job keeps
    /// it.
    pub fn append_results(&mut self, sample_id: i64, results: &[ResultRecord]) -> Result<()> {
        let tx = self.conn.transaction()?;
        let (workload, stored): (String, i64) = tx.query_row(
            "SELECT COALESCE(json_extract(c.workload_json, '$.kind'), ''),
                    (SELECT COUNT(*) FROM results r WHERE r.sample_id = s.id)
             FROM samples s JOIN cases c ON c.id = s.case_id WHERE s.id = ?1",
            params![sample_id],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        insert_results(&tx, sample_id, &workload, results, stored as usize)?;
        tx.commit()?;
        Ok(())
    }

    /// Records a sample in place of the one stored for the same case and repetition, if any, in
    /// one transaction: a job's final sample replaces the one rank 0 kept up to date while it
    /// ran.
    pub fn replace_sample(&mut self, case_id: i64, sample: &NewSample<'_>) -> Result<i64> {
        let tx = self.conn.transaction()?;
        tx.execute(
            "DELETE FROM samples WHERE case_id = ?1 AND repetition = ?2",
            params![case_id, sample.repetition],
        )?;
        let sample_id = insert_sample(&tx, case_id, sample)?;
        tx.commit()?;
        Ok(sample_id)
    }

    /// Replaces a sample's target read-back (a kept target's final fsck verdict).
    pub fn update_sample_target(&self, sample_id: i64, target_json: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE samples SET target_json = ?2 WHERE id = ?1",
            params![sample_id, target_json],
        )?;
        Ok(())
    }

    /// Every run, newest first, with counts.
    pub fn runs(&self) -> Result<Vec<RunListing>> {
        let mut stmt = self.conn.prepare(
            "SELECT r.id, r.started_at, r.status, r.plan_name,
                    (SELECT COUNT(*) FROM cases c WHERE c.run_id = r.id),
                    (SELECT COUNT(*) FROM samples s JOIN cases c ON s.case_id = c.id WHERE c.run_id = r.id),
                    (SELECT COUNT(*) FROM samples s JOIN cases c ON s.case_id = c.id
                      WHERE c.run_id = r.id AND s.status = 'ok'),
                    r.owner, r.planned_samples
             FROM runs r ORDER BY r.id DESC",
        )?;
        let rows = stmt.query_map([], |row| {
            Ok(RunListing {
                id: row.get(0)?,
                started_at: row.get(1)?,
                status: effective_status(row.get(2)?, row.get::<_, Option<String>>(7)?.as_deref()),
                plan_name: row.get(3)?,
                cases: row.get::<_, i64>(4)? as u64,
                planned_samples: row.get::<_, Option<i64>>(8)?.map(|n| n as u64),
                samples: row.get::<_, i64>(5)? as u64,
                ok_samples: row.get::<_, i64>(6)? as u64,
            })
        })?;
        Ok(rows.collect::<std::result::Result<Vec<_>, _>>()?)
    }

    /// One run's record, or an error naming the missing id.
    pub fn run(&self, run_id: i64) -> Result<Run> {
        let row = self
            .conn
            .query_row(
                "SELECT id, started_at, finished_at, status, plan_name, plan_text, fsbench_version,
                        host_json, owner, overrides_json, scale
                 FROM runs WHERE id = ?1",
                params![run_id],
                |row| {
                    Ok((
                        Run {
                            id: row.get(0)?,
                            started_at: row.get(1)?,
                            finished_at: row.get(2)?,
                            status: effective_status(
                                row.get(3)?,
                                row.get::<_, Option<String>>(8)?.as_deref(),
                            ),
                            plan_name: row.get(4)?,
                            plan_text: row.get(5)?,
                            fsbench_version: row.get(6)?,
                            host: serde_json::Value::Null,
                            overrides: None,
                            scale: row.get(10)?,
                        },
                        row.get::<_, String>(7)?,
                        row.get::<_, Option<String>>(9)?,
                    ))
                },
            )
            .optional()?;
        let (mut run, host, overrides) = row.ok_or(StoreError::NoSuchRun(run_id))?;
        run.host = serde_json::from_str(&host)?;
        run.overrides = overrides.map(|o| serde_json::from_str(&o)).transpose()?;
        Ok(run)
    }

    /// (case key, repetition) of every sample a run already has.
    pub fn recorded(&self, run_id: i64) -> Result<HashSet<(String, u32)>> {
        let mut stmt = self.conn.prepare(
            "SELECT c.case_key, s.repetition FROM samples s JOIN cases c ON s.case_id = c.id
             WHERE c.run_id = ?1",
        )?;
        let rows = stmt.query_map(params![run_id], |row| Ok((row.get(0)?, row.get(1)?)))?;
        Ok(rows.collect::<std::result::Result<HashSet<_>, _>>()?)
    }

    /// A whole run: cases in position order, samples in repetition order, metrics by name.
    pub fn load(&self, run_id: i64) -> Result<RunData> {
        let run = self.run(run_id)?;
        let mut cases_stmt = self.conn.prepare(
            "SELECT id, case_key, position, config_json, workload_json FROM cases
             WHERE run_id = ?1 ORDER BY position",
        )?;
        let cases: Vec<(i64, String, i64, String, String)> = cases_stmt
            .query_map(params![run_id], |row| {
                Ok((
                    row.get(0)?,
                    row.get(1)?,
                    row.get(2)?,
                    row.get(3)?,
                    row.get(4)?,
                ))
            })?
            .collect::<std::result::Result<_, _>>()?;
        let mut samples_stmt = self.conn.prepare(
            "SELECT id, repetition, status, reason, started_at, elapsed_ns, target_json,
                    seed, warnings_json, config_json, not_retried, assessment_json
             FROM samples WHERE case_id = ?1 ORDER BY repetition",
        )?;
        let mut out = Vec::with_capacity(cases.len());
        for (id, key, position, config, workload) in cases {
            let raw: Vec<SampleRow> = samples_stmt
                .query_map(params![id], |row| {
                    Ok(SampleRow {
                        id: row.get(0)?,
                        repetition: row.get(1)?,
                        status: row.get(2)?,
                        reason: row.get(3)?,
                        started_at: row.get(4)?,
                        elapsed_ns: row.get(5)?,
                        target: row.get(6)?,
                        seed: row.get(7)?,
                        warnings: row.get(8)?,
                        config: row.get(9)?,
                        not_retried: row.get(10)?,
                        assessment: row.get(11)?,
                    })
                })?
                .collect::<std::result::Result<_, _>>()?;
            let mut samples = Vec::with_capacity(raw.len());
            for row in raw {
                samples.push(Sample {
                    id: row.id,
                    repetition: row.repetition,
                    status: Outcome::parse(&row.status).unwrap_or(Outcome::Failed),
                    reason: row.reason,
                    not_retried: row.not_retried,
                    started_at: row.started_at,
                    elapsed_ns: row.elapsed_ns as u64,
                    target: row
                        .target
                        .map(|t| serde_json::from_str(&t).map(StoredTarget::read))
                        .transpose()?,
                    seed: row.seed.map(|s| s as u64),
                    warnings: serde_json::from_str(&row.warnings)?,
                    config: row.config.map(|c| serde_json::from_str(&c)).transpose()?,
                    results: self.results(row.id)?,
                    // An assessment this build cannot read (a later one's) is left out.
                    assessment: row.assessment.and_then(|a| serde_json::from_str(&a).ok()),
                    series: Vec::new(),
                });
            }
            out.push(CaseData {
                case: Case {
                    id,
                    key,
                    position,
                    config: serde_json::from_str(&config)?,
                    workload: serde_json::from_str(&workload)?,
                },
                samples,
            });
        }
        Ok(RunData { run, cases: out })
    }

    /// A sample's results in the order the workload produced them, measurements in theirs.
    pub fn results(&self, sample_id: i64) -> Result<Vec<ResultRecord>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT position, attributes_json, bins_json, {}
             FROM results WHERE sample_id = ?1 ORDER BY position",
            dims_sql()
        ))?;
        let mut positions = Vec::new();
        let mut records = Vec::new();
        let rows = stmt.query_map(params![sample_id], |row| {
            let mut dims = Dims::default();
            let mut at = 3;
            for dim in Dim::ALL {
                at = dim_from_sql(dim, row, at, &mut dims)?;
            }
            Ok((
                row.get::<_, i64>(0)?,
                dims,
                row.get::<_, String>(1)?,
                row.get::<_, Option<String>>(2)?,
            ))
        })?;
        for row in rows {
            let (position, dims, attributes, bins) = row?;
            positions.push(position);
            records.push(ResultRecord {
                dims,
                attributes: serde_json::from_str(&attributes)?,
                measurements: Vec::new(),
                latency_bins: bins
                    .map(|b| serde_json::from_str(&b))
                    .transpose()?
                    .unwrap_or_default(),
            });
        }
        let mut stmt = self.conn.prepare_cached(
            "SELECT r.position, m.metric, m.value, m.unit, m.direction, m.main
             FROM measurements m JOIN results r ON m.result_id = r.id
             WHERE r.sample_id = ?1 ORDER BY r.position, m.rowid",
        )?;
        let rows = stmt.query_map(params![sample_id], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                Measurement {
                    metric: Cow::Owned(row.get(1)?),
                    value: row.get(2)?,
                    unit: Unit::parse(&row.get::<_, String>(3)?).unwrap_or(Unit::Count),
                    direction: Direction::parse(&row.get::<_, String>(4)?)
                        .unwrap_or(Direction::None),
                    main: row.get(5)?,
                },
            ))
        })?;
        for row in rows {
            let (position, measurement) = row?;
            if let Ok(i) = positions.binary_search(&position) {
                records[i].measurements.push(measurement);
            }
        }
        Ok(records)
    }
}

/// Inserts a sample's results and their measurements (inside the caller's transaction).
fn insert_results(
    tx: &Transaction<'_>,
    sample_id: i64,
    workload: &str,
    results: &[ResultRecord],
    first_position: usize,
) -> Result<()> {
    let columns = 5 + Dim::ALL
        .into_iter()
        .map(|d| dim_columns(d).len())
        .sum::<usize>();
    let mut result = tx.prepare_cached(&format!(
        "INSERT INTO results (sample_id, position, workload, attributes_json, bins_json, {})
         VALUES ({})",
        dims_sql(),
        (1..=columns)
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))?;
    for (position, r) in (first_position..).zip(results) {
        let mut values = vec![
            Value::Integer(sample_id),
            Value::Integer(position as i64),
            Value::Text(workload.to_string()),
            Value::Text(serde_json::to_string(&r.attributes)?),
            bins_json(r)?.map_or(Value::Null, Value::Text),
        ];
        for dim in Dim::ALL {
            dim_to_sql(dim, &r.dims, &mut values);
        }
        result.execute(params_from_iter(values))?;
        insert_measurements(tx, tx.last_insert_rowid(), &r.measurements)?;
    }
    Ok(())
}

/// A result's latency histogram as stored (`[[lowest_ns, count], ...]`), None without one.
fn bins_json(r: &ResultRecord) -> Result<Option<String>> {
    Ok((!r.latency_bins.is_empty())
        .then(|| serde_json::to_string(&r.latency_bins))
        .transpose()?)
}

/// Inserts one stored result's measurements.
fn insert_measurements(
    tx: &Transaction<'_>,
    result_id: i64,
    measurements: &[Measurement],
) -> Result<()> {
    let mut measurement = tx.prepare_cached(
        "INSERT INTO measurements (result_id, metric, value, main, unit, direction)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for m in measurements {
        measurement.execute(params![
            result_id,
            m.metric.as_ref(),
            m.value,
            m.main,
            m.unit.name(),
            m.direction.name(),
        ])?;
    }
    Ok(())
}

impl Store {
    /// A sample's series, in the order they were stored (the workload's, then the monitors'),
    /// each with its points in time order.
    pub fn series(&self, sample_id: i64) -> Result<Vec<Series>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, source, phase, label, subject, metric, unit FROM series
             WHERE sample_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map(params![sample_id], |row| {
            Ok((
                row.get::<_, i64>(0)?,
                Series {
                    source: row.get(1)?,
                    phase: row.get::<_, Option<i64>>(2)?.map(|p| p as u32),
                    label: row.get(3)?,
                    subject: row.get(4)?,
                    metric: row.get(5)?,
                    unit: Unit::parse(&row.get::<_, String>(6)?).unwrap_or(Unit::Count),
                    points: Vec::new(),
                },
            ))
        })?;
        let mut all = rows.collect::<std::result::Result<Vec<_>, _>>()?;
        let mut points = self.conn.prepare_cached(
            "SELECT t_ns, dt_ns, value FROM series_points WHERE series_id = ?1 ORDER BY n",
        )?;
        for (id, series) in &mut all {
            series.points = points
                .query_map(params![*id], |row| {
                    Ok(Point(
                        row.get::<_, i64>(0)? as u64,
                        row.get::<_, i64>(1)? as u64,
                        row.get(2)?,
                    ))
                })?
                .collect::<std::result::Result<_, _>>()?;
        }
        Ok(all.into_iter().map(|(_, s)| s).collect())
    }
}

/// Inserts a sample's series and their points (inside the caller's transaction).
fn insert_series(tx: &Transaction<'_>, sample_id: i64, series: &[Series]) -> Result<()> {
    let mut head = tx.prepare_cached(
        "INSERT INTO series (sample_id, source, phase, label, subject, metric, unit)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    let mut point = tx.prepare_cached(
        "INSERT INTO series_points (series_id, n, t_ns, dt_ns, value) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for s in series {
        head.execute(params![
            sample_id,
            s.source,
            s.phase.map(i64::from),
            s.label,
            s.subject,
            s.metric,
            s.unit.name(),
        ])?;
        let id = tx.last_insert_rowid();
        for (n, p) in s.points.iter().enumerate() {
            point.execute(params![id, n as i64, p.0 as i64, p.1 as i64, p.2])?;
        }
    }
    Ok(())
}

/// Inserts one sample and its results in `tx`.
fn insert_sample(tx: &Transaction<'_>, case_id: i64, sample: &NewSample<'_>) -> Result<i64> {
    tx.execute(
        "INSERT INTO samples (case_id, repetition, status, reason, started_at, elapsed_ns,
                                  target_json, seed, warnings_json, config_json, not_retried,
                                  assessment_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            case_id,
            sample.repetition,
            sample.status.name(),
            sample.reason,
            sample.started_at,
            sample.elapsed_ns as i64,
            sample.target_json,
            // SQLite integers are signed: a seed above i64::MAX is stored as its two's
            // complement, and read back as the same u64.
            sample.seed.map(|s| s as i64),
            serde_json::to_string(sample.warnings)?,
            sample.config_json,
            sample.not_retried,
            sample.assessment.map(serde_json::to_string).transpose()?,
        ],
    )?;
    let sample_id = tx.last_insert_rowid();
    insert_series(tx, sample_id, sample.series)?;
    let workload: String = tx.query_row(
        "SELECT COALESCE(json_extract(workload_json, '$.kind'), '') FROM cases WHERE id = ?1",
        params![case_id],
        |row| row.get(0),
    )?;
    insert_results(tx, sample_id, &workload, sample.results, 0)?;
    Ok(sample_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fsbench_model::Sweep;

    /// A stored target reads typed once; one that does not read is no target, with a note,
    /// and either is written back as it was stored (keys in the order stored JSON has them).
    #[test]
    fn a_stored_target_reads_typed_or_says_why_not() {
        let json: serde_json::Value =
            serde_json::from_str(r#"{"fsck":{"elapsed_ns":5,"clean":true},"filesystem":"xfs"}"#)
                .unwrap();
        let read = StoredTarget::read(json.clone());
        let info = read.info.as_deref().unwrap();
        assert_eq!(
            (
                info.filesystem.as_ref(),
                info.fsck.as_ref().unwrap().elapsed_ns
            ),
            ("xfs", 5)
        );
        assert!(read.note.is_none());
        assert_eq!(serde_json::to_value(&read).unwrap(), json);
        let odd = serde_json::json!({"filesystem": 4});
        let read = StoredTarget::read(odd.clone());
        assert!(read.info.is_none());
        assert!(read
            .note
            .unwrap()
            .starts_with("the target's record cannot be read"));
        assert_eq!(
            serde_json::to_string(&StoredTarget::read(odd.clone())).unwrap(),
            odd.to_string()
        );
    }

    /// The dimensions' columns follow their declaration: every one is a column of `results`
    /// of its type, and the view the migrations make holds them in declaration order, as a
    /// later dimension's generated view will.
    #[test]
    fn dimension_columns_follow_their_declaration() {
        let mut conn = Connection::open_in_memory().unwrap();
        let tx = conn.transaction().unwrap();
        for version in 1..=SCHEMA_VERSION {
            migrate_to(&tx, version).unwrap();
        }
        let columns = |table: &str| -> Vec<(String, String)> {
            tx.prepare("SELECT name, type FROM pragma_table_info(?1) ORDER BY cid")
                .unwrap()
                .query_map([table], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap()
                .collect::<rusqlite::Result<_>>()
                .unwrap()
        };
        let results = columns("results");
        for dim in Dim::ALL {
            for (column, kind) in dim_columns(dim) {
                assert!(
                    results.iter().any(|(c, k)| *c == column && k == kind),
                    "{dim:?}: {column} {kind}"
                );
            }
        }
        let made: Vec<String> = columns("measurement_rows")
            .into_iter()
            .map(|(c, _)| c)
            .collect();
        let other = Connection::open_in_memory().unwrap();
        other
            .execute_batch(
                "CREATE TABLE results (id, sample_id, workload, phase, operation,
                    file_size_bytes, record_size_bytes, threads, client, step, engine, iodepth,
                    sweep_parameter, sweep_value);
                 CREATE TABLE measurements (result_id, metric, value, unit, direction, main);",
            )
            .unwrap();
        other
            .execute_batch(&measurement_rows(SCHEMA_VERSION))
            .unwrap();
        let generated: Vec<String> = other
            .prepare("SELECT name FROM pragma_table_info('measurement_rows') ORDER BY cid")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(made, generated);
        assert_eq!(
            SCHEMA_VERSION, 7,
            "no dimension is newer than the migrations"
        );
    }

    fn new_run(store: &Store) -> i64 {
        store
            .begin_run(&NewRun {
                started_at: "2026-11-22T00:00:00Z",
                plan_name: "t",
                plan_text: "name = \"t\"",
                fsbench_version: "0.1.0",
                host_json: "{\"kernel_release\":\"6.18\"}",
                planned_samples: 6,
                overrides_json: None,
                scale: 1.0,
            })
            .unwrap()
    }

    fn config() -> CaseConfig {
        serde_json::from_str(
            r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"default","cache":"warm"}"#,
        )
        .unwrap()
    }

    fn empty_sample(repetition: u32) -> NewSample<'static> {
        NewSample {
            repetition,
            status: Outcome::Ok,
            reason: None,
            not_retried: false,
            started_at: "t",
            elapsed_ns: 1,
            target_json: None,
            results: &[],
            seed: None,
            warnings: &[],
            config_json: None,
            series: &[],
            assessment: None,
        }
    }

    fn record() -> ResultRecord {
        const THROUGHPUT: fsbench_model::MetricDef =
            fsbench_model::MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher)
                .main();
        const PASSES: fsbench_model::MetricDef =
            fsbench_model::MetricDef::new("passes", Unit::Count, Direction::None);
        let mut attributes = serde_json::Map::new();
        attributes.insert("test".into(), "write".into());
        ResultRecord {
            dims: Dims {
                phase: Some("rewrite".into()),
                file_size_bytes: Some(16 << 20),
                record_size_bytes: Some(4096),
                engine: Some("io_uring".into()),
                iodepth: Some(32),
                sweep: Some(Sweep {
                    parameter: "queue_depth".into(),
                    value: 4.0,
                }),
                ..Dims::default()
            },
            attributes,
            measurements: vec![THROUGHPUT.at(1.5e9), PASSES.at(3.0)],
            latency_bins: vec![(1000, 3), (2000, 1)],
        }
    }

    /// As root, a database another user could redirect is refused before anything is made or
    /// opened: in their directory, in a directory writable by others without the sticky bit,
    /// through their link at its name or at its `-wal` beside it; root's own, and a sticky
    /// directory of root's (/var/tmp), are fine.
    #[test]
    fn as_root_a_database_another_user_could_redirect_is_refused() {
        use std::os::unix::fs::{lchown, symlink, PermissionsExt};
        if !fsbench_measure::trust::as_root() {
            eprintln!("skipped: needs root (lchown)");
            return;
        }
        let nobody = Some(65534);
        let base = tempfile::tempdir_in("/var/tmp").unwrap();
        let base = base.path();
        let refused = |path: &Path, says: &str| {
            let e = Store::open(path).err().expect("opened");
            assert!(matches!(e, StoreError::Untrusted { .. }), "{e}");
            assert!(e.to_string().contains(says), "{e}");
            assert!(e.to_string().contains("pass another --db"), "{e}");
        };
        let theirs = base.join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        lchown(&theirs, nobody, None).unwrap();
        refused(&theirs.join("results.db"), "run fsbench as nobody");
        refused(&theirs.join("sub/results.db"), "belongs to nobody");
        assert_eq!(std::fs::read_dir(&theirs).unwrap().count(), 0);

        let open = base.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        refused(&open.join("results.db"), "mode 0777");
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o1777)).unwrap();

        // Their link at the database's name, to where root would create it.
        let victim = base.join("victim.db");
        let link = open.join("results.db");
        symlink(&victim, &link).unwrap();
        lchown(&link, nobody, None).unwrap();
        refused(&link, "`chown -h root:");
        assert!(matches!(
            Store::open_existing(&link),
            Err(StoreError::Untrusted { .. }) | Err(StoreError::Missing(_))
        ));
        assert!(!victim.exists());
        std::fs::remove_file(&link).unwrap();
        // Their link where SQLite puts the write-ahead log.
        let wal = open.join("results.db-wal");
        symlink(&victim, &wal).unwrap();
        lchown(&wal, nobody, None).unwrap();
        refused(&link, "results.db-wal belongs to nobody");
        assert!(!victim.exists() && !link.exists());
        std::fs::remove_file(&wal).unwrap();

        // In a sticky directory anyone may add files to (another user could make its -wal
        // first): not written to by root, even through root's own link.
        refused(&link, "lets other users add files beside it (mode 1777)");
        // In a directory of root's, and root's own link: used; a database made there is read
        // through a link of root's in the sticky directory.
        let own = base.join("own");
        std::fs::create_dir(&own).unwrap();
        let db = own.join("results.db");
        drop(Store::open(&db).unwrap());
        let mine = open.join("mine.db");
        symlink(&db, &mine).unwrap();
        drop(Store::open(&mine).unwrap());
        drop(Store::open_existing(&mine).unwrap());
    }

    #[test]
    fn round_trips_a_run_with_samples_and_typed_results() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("sub/results.db")).unwrap();
        let run = new_run(&store);
        let case = store
            .add_case(run, "ext4.default", 0, &config(), "{\"kind\":\"matrix\"}")
            .unwrap();
        assert_eq!(
            store
                .add_case(run, "ext4.default", 0, &config(), "{}")
                .unwrap(),
            case,
            "idempotent"
        );
        let results = [record(), ResultRecord::default()];
        let warnings = ["the page cache could not be dropped".to_string()];
        let series = [
            Series {
                source: "workload".into(),
                phase: Some(0),
                label: "write 16m 4k".into(),
                subject: "total".into(),
                metric: "ops".into(),
                unit: Unit::Count,
                points: vec![Point(0, 100_000_000, 4096.0), Point(100_000_000, 5, 17.0)],
            },
            Series {
                source: "disk".into(),
                phase: None,
                label: "device".into(),
                subject: "loop3".into(),
                metric: "busy".into(),
                unit: Unit::Percent,
                points: vec![Point(0, 100_000_000, 99.5)],
            },
        ];
        let assessment = Assessment {
            steal_percent: Some(0.25),
            ..Assessment::default()
        };
        store
            .record_sample(
                case,
                &NewSample {
                    repetition: 1,
                    status: Outcome::Ok,
                    reason: None,
                    not_retried: false,
                    started_at: "2026-11-22T00:00:01Z",
                    elapsed_ns: 5,
                    target_json: Some("{\"filesystem\":\"ext4\"}"),
                    results: &results,
                    seed: Some(u64::MAX - 1),
                    warnings: &warnings,
                    config_json: Some("{\"cache\":\"warm\"}"),
                    series: &series,
                    assessment: Some(&assessment),
                },
            )
            .unwrap();
        store
            .record_sample(
                case,
                &NewSample {
                    status: Outcome::Timeout,
                    reason: Some("ran past 10s"),
                    not_retried: false,
                    ..empty_sample(2)
                },
            )
            .unwrap();
        store
            .record_sample(
                case,
                &NewSample {
                    status: Outcome::Interrupted,
                    ..empty_sample(3)
                },
            )
            .unwrap();
        store
            .finish_run(run, RunState::Complete, Some("2026-11-22T00:01:00Z"))
            .unwrap();

        let data = store.load(run).unwrap();
        assert_eq!(data.run.status, RunState::Complete);
        assert_eq!(data.run.host["kernel_release"], "6.18");
        assert_eq!(data.cases.len(), 1);
        let samples = &data.cases[0].samples;
        assert_eq!(samples.len(), 3);
        assert_eq!(samples[0].results, results);
        assert_eq!(samples[0].seed, Some(u64::MAX - 1));
        assert_eq!(samples[0].warnings, warnings);
        assert_eq!(samples[0].config.as_ref().unwrap()["cache"], "warm");
        assert_eq!(samples[1].status, Outcome::Timeout);
        assert_eq!(samples[1].reason.as_deref(), Some("ran past 10s"));
        assert!(samples[1].results.is_empty() && samples[1].warnings.is_empty());
        assert_eq!(samples[2].status, Outcome::Interrupted);
        // The assessment comes with the sample; the series when asked for, as stored.
        assert_eq!(samples[0].assessment.as_ref(), Some(&assessment));
        assert!(samples[0].series.is_empty() && samples[1].assessment.is_none());
        assert_eq!(store.series(samples[0].id).unwrap(), series);
        assert!(store.series(samples[1].id).unwrap().is_empty());
        // The dimensions are columns, with the workload's kind beside them.
        let (workload, record_size, value, engine, depth): (String, i64, f64, String, i64) = store
            .conn
            .query_row(
                "SELECT workload, record_size_bytes, value, engine, iodepth FROM measurement_rows
                 WHERE metric = 'throughput' AND main = 1",
                [],
                |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        row.get(2)?,
                        row.get(3)?,
                        row.get(4)?,
                    ))
                },
            )
            .unwrap();
        assert_eq!(
            (
                workload.as_str(),
                record_size,
                value,
                engine.as_str(),
                depth
            ),
            ("matrix", 4096, 1.5e9, "io_uring", 32)
        );
        let recorded = store.recorded(run).unwrap();
        assert!(recorded.contains(&("ext4.default".to_string(), 2)));
        let listing = store.runs().unwrap();
        assert_eq!(
            (listing[0].cases, listing[0].samples, listing[0].ok_samples),
            (1, 3, 1)
        );
    }

    /// Schema 2 as fsbench wrote it: migrations 1 and 2 as literal SQL, one matrix sample (a
    /// cell's three metrics, its histogram, and a name that does not parse) and a sleep sample.
    fn write_v2_fixture(path: &Path) {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA foreign_keys = ON;
             CREATE TABLE runs (id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT,
                 status TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
                 plan_name TEXT NOT NULL, plan_text TEXT NOT NULL, fsbench_version TEXT NOT NULL,
                 host_json TEXT NOT NULL);
             CREATE TABLE cases (id INTEGER PRIMARY KEY,
                 run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
                 case_key TEXT NOT NULL, position INTEGER NOT NULL, config_json TEXT NOT NULL,
                 workload_json TEXT NOT NULL, UNIQUE (run_id, case_key));
             CREATE TABLE samples (id INTEGER PRIMARY KEY,
                 case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
                 repetition INTEGER NOT NULL,
                 status TEXT NOT NULL CHECK (status IN ('ok', 'unsupported', 'failed', 'timeout')),
                 reason TEXT, started_at TEXT NOT NULL, elapsed_ns INTEGER NOT NULL, target_json TEXT,
                 UNIQUE (case_id, repetition));
             CREATE TABLE metrics (sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
                 name TEXT NOT NULL, value REAL NOT NULL, unit TEXT NOT NULL,
                 higher_is_better INTEGER NOT NULL, PRIMARY KEY (sample_id, name));
             CREATE TABLE histograms (sample_id INTEGER NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
                 name TEXT NOT NULL, bins_json TEXT NOT NULL, PRIMARY KEY (sample_id, name));
             ALTER TABLE runs ADD COLUMN owner TEXT;
             ALTER TABLE runs ADD COLUMN planned_samples INTEGER;
             PRAGMA user_version = 2;
             INSERT INTO runs VALUES (1, 't0', 't1', 'complete', 'old', 'name = \"old\"\nscale = 0.5 # small\n[device]\nscale = 2', '0.1.0', '{}', NULL, 3);
             INSERT INTO cases VALUES (1, 1, 'ext4.m', 0, '{\"filesystem\":\"ext4\",\"mkfs_set\":\"default\",\"mkfs_options\":\"\",\"mount_set\":\"default\",\"mount_options\":\"\",\"scheduler\":null,\"cache\":\"warm\"}', '{\"kind\":\"matrix\",\"name\":\"m\"}');
             INSERT INTO cases VALUES (2, 1, 'ext4.s', 1, '{\"filesystem\":\"ext4\",\"mkfs_set\":\"default\",\"mkfs_options\":\"\",\"mount_set\":\"default\",\"mount_options\":\"\",\"scheduler\":null,\"cache\":\"warm\"}', '{\"kind\":\"sleep\",\"name\":\"s\"}');
             INSERT INTO samples VALUES (1, 1, 1, 'ok', NULL, 't', 5, '{\"filesystem\":\"ext4\"}');
             INSERT INTO samples VALUES (2, 2, 1, 'ok', NULL, 't', 5, NULL);
             INSERT INTO samples VALUES (3, 2, 2, 'unsupported', 'no', 't', 5, NULL);
             INSERT INTO samples VALUES (4, 2, 3, 'unsupported', 'no (not retried)', 't', 5, NULL);
             INSERT INTO metrics VALUES (1, 'write 16m/4k throughput', 1.5e9, 'B/s', 1);
             INSERT INTO metrics VALUES (1, 'write 16m/4k ops', 366210.9, 'ops/s', 1);
             INSERT INTO metrics VALUES (1, 'write 16m/4k p99 latency', 4200, 'ns', 0);
             INSERT INTO metrics VALUES (1, 'write:throughput', 7, 'B/s', 1);
             INSERT INTO histograms VALUES (1, 'write 16m/4k', '[[1000,3],[2000,1]]');
             INSERT INTO metrics VALUES (2, 'slept', 20000000, 'ns', 0);",
        )
        .unwrap();
    }

    #[test]
    fn a_schema_2_database_migrates_to_typed_results_losing_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        write_v2_fixture(&path);
        // A reading command migrates an older database too.
        let store = Store::open_existing(&path).unwrap();
        let version: u32 = store
            .conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .unwrap();
        assert_eq!(version, SCHEMA_VERSION);
        let record_size: i64 = store
            .conn
            .query_row(
                "SELECT record_size_bytes FROM results WHERE phase = 'write'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert_eq!(record_size, 4096);
        // Version 4's dimensions are columns of the results and of the view, empty for old rows.
        let (engine, depth): (Option<String>, Option<i64>) = store
            .conn
            .query_row(
                "SELECT engine, iodepth FROM measurement_rows WHERE phase = 'write' LIMIT 1",
                [],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .unwrap();
        assert_eq!((engine, depth), (None, None));
        for gone in ["metrics", "histograms"] {
            let n: i64 = store
                .conn
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_schema WHERE name = ?1",
                    params![gone],
                    |row| row.get(0),
                )
                .unwrap();
            assert_eq!(n, 0, "{gone} is dropped");
        }
        let data = store.load(1).unwrap();
        let matrix = &data.cases[0].samples[0];
        assert_eq!(matrix.target.as_ref().unwrap().json["filesystem"], "ext4");
        assert_eq!(matrix.target_info().unwrap().filesystem, "ext4");
        assert_eq!(matrix.results.len(), 2, "{:?}", matrix.results);
        let cell = &matrix.results[0];
        assert_eq!(cell.dims.phase.as_deref(), Some("write"));
        assert_eq!(cell.dims.file_size_bytes, Some(16 << 20));
        assert_eq!(cell.measurements.len(), 3);
        assert_eq!(
            cell.measurements
                .iter()
                .map(|m| (m.metric.as_ref(), m.unit, m.direction, m.main))
                .collect::<Vec<_>>(),
            [
                ("throughput", Unit::BytesPerSec, Direction::Higher, true),
                ("ops_rate", Unit::OpsPerSec, Direction::Higher, false),
                ("latency_p99", Unit::Nanos, Direction::Lower, false),
            ]
        );
        assert_eq!(cell.latency_bins, [(1000, 3), (2000, 1)]);
        let odd = &matrix.results[1];
        assert_eq!(odd.attributes["legacy_name"], "write:throughput");
        assert_eq!(odd.measurements[0].metric, "write:throughput");
        assert_eq!(odd.dims, Dims::default());
        let sleep = &data.cases[1].samples;
        assert_eq!(sleep[0].results.len(), 1);
        assert_eq!(sleep[0].results[0].dims, Dims::default());
        assert_eq!(sleep[0].results[0].main().unwrap().metric, "slept");
        assert_eq!(sleep[1].status, Outcome::Unsupported);
        assert!(sleep[1].results.is_empty() && sleep[1].seed.is_none());
        // Migration 4: " (not retried)" leaves the reason for a flag of its own; the plan's
        // scale becomes the run's.
        assert_eq!(
            (sleep[1].reason.as_deref(), sleep[1].not_retried),
            (Some("no"), false)
        );
        assert_eq!(
            (sleep[2].reason.as_deref(), sleep[2].not_retried),
            (Some("no"), true)
        );
        assert_eq!(data.run.scale, Some(0.5));
        assert_eq!(data.cases[0].case.config.filesystem, "ext4");
        let workloads: Vec<String> = store
            .conn
            .prepare("SELECT workload FROM results ORDER BY id")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(workloads, ["matrix", "matrix", "sleep"]);
        drop(store);
        // Foreign keys are on again, and a new sample may be interrupted.
        let mut store = Store::open(&path).unwrap();
        let on: bool = store
            .conn
            .pragma_query_value(None, "foreign_keys", |row| row.get(0))
            .unwrap();
        assert!(on);
        store
            .record_sample(
                2,
                &NewSample {
                    status: Outcome::Interrupted,
                    ..empty_sample(4)
                },
            )
            .unwrap();
        // Migration 7 rebuilt the samples (their results still theirs, above), and one may
        // be corrupt.
        store
            .record_sample(
                2,
                &NewSample {
                    status: Outcome::Corrupt,
                    reason: Some("corrupt: f: the block at byte 4096 is not what was written"),
                    ..empty_sample(5)
                },
            )
            .unwrap();
        let data = store.load(1).unwrap();
        let last = data.cases[1].samples.last().unwrap();
        assert_eq!((last.repetition, last.status), (5, Outcome::Corrupt));
        assert_eq!(data.cases[0].samples[0].results.len(), 2);
    }

    #[test]
    fn concurrent_first_opens_migrate_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || Store::open(&path).map(|_| ()))
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let store = Store::open(&path).unwrap();
        assert!(store.runs().unwrap().is_empty());
        assert!(matches!(
            Store::open_existing(&dir.path().join("none.db")),
            Err(StoreError::Missing(_))
        ));
        assert!(!dir.path().join("none.db").exists());
    }

    /// A schema-6 database this process may not upgrade (here: writable by others, read by
    /// root) is read as it is — its runs and samples, the version left at 6 — where it used
    /// to be refused; one it may upgrade is migrated on opening. Real: the untrusted case needs
    /// root (as another user nothing is untrusted, and the database is migrated).
    #[test]
    fn a_schema_6_database_is_read_as_it_is_where_it_may_not_be_upgraded() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("six.db");
        let mut store = Store::open(&path).unwrap();
        let run = new_run(&store);
        let case = store.add_case(run, "k", 0, &config(), "{}").unwrap();
        store.record_sample(case, &empty_sample(1)).unwrap();
        store
            .conn
            .pragma_update(None, "user_version", READABLE_AS_IS)
            .unwrap();
        drop(store);
        let version = |store: &Store| -> u32 {
            store
                .conn
                .pragma_query_value(None, "user_version", |row| row.get(0))
                .unwrap()
        };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let store = Store::open_existing(&path).unwrap();
        let root = fsbench_measure::trust::as_root();
        if root {
            assert!(store.untrusted().is_some());
            assert_eq!(version(&store), READABLE_AS_IS);
        }
        assert_eq!(store.load(run).unwrap().cases[0].samples.len(), 1);
        drop(store);
        // (The -wal and -shm files made meanwhile took the database's mode.)
        for file in ["six.db", "six.db-wal", "six.db-shm"] {
            let file = dir.path().join(file);
            if file.exists() {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
        let store = Store::open_existing(&path).unwrap();
        assert_eq!(version(&store), SCHEMA_VERSION);
        assert_eq!(store.load(run).unwrap().cases[0].samples.len(), 1);
    }

    #[test]
    fn a_sample_is_recorded_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let run = new_run(&store);
        let case = store.add_case(run, "k", 0, &config(), "{}").unwrap();
        let sample = empty_sample(1);
        store.record_sample(case, &sample).unwrap();
        assert!(store.record_sample(case, &sample).is_err());
    }

    /// A job's interim sample grows by the results of each phase, in order; the final one
    /// replaces it, results and all: one sample per repetition, the last one's.
    #[test]
    fn results_append_in_order_and_a_replaced_sample_leaves_only_the_new_one() {
        use fsbench_model::{Dims, Direction, MetricDef, Unit};
        const OPS: MetricDef = MetricDef::new("ops", Unit::Count, Direction::None).main();
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let run = new_run(&store);
        let case = store
            .add_case(run, "k", 0, &config(), r#"{"kind":"metadata"}"#)
            .unwrap();
        let phase = |name: &str| ResultRecord {
            dims: Dims {
                phase: Some(name.into()),
                ..Dims::default()
            },
            measurements: vec![OPS.at(1.0)],
            ..ResultRecord::default()
        };
        let first = [phase("create")];
        let interim = NewSample {
            status: Outcome::Failed,
            results: &first,
            ..empty_sample(1)
        };
        let kept = store.replace_sample(case, &interim).unwrap();
        store.append_results(kept, &[phase("stat")]).unwrap();
        let phases: Vec<Option<String>> = store
            .results(kept)
            .unwrap()
            .into_iter()
            .map(|r| r.dims.phase)
            .collect();
        assert_eq!(phases, [Some("create".into()), Some("stat".into())]);
        let both = [phase("create"), phase("stat")];
        let last = NewSample {
            results: &both,
            ..empty_sample(1)
        };
        let id = store.replace_sample(case, &last).unwrap();
        let data = store.load(run).unwrap();
        assert_eq!(data.cases[0].samples.len(), 1);
        assert_eq!(data.cases[0].samples[0].status, Outcome::Ok);
        assert_eq!(store.results(id).unwrap().len(), 2);
        let rows: i64 = store
            .conn
            .query_row("SELECT COUNT(*) FROM results", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 2, "the interim sample's results went with it");
    }

    #[test]
    fn reopening_keeps_data_and_a_newer_schema_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let run = {
            let store = Store::open(&path).unwrap();
            new_run(&store)
        };
        let store = Store::open(&path).unwrap();
        assert_eq!(store.run(run).unwrap().plan_name, "t");
        assert!(matches!(store.run(99), Err(StoreError::NoSuchRun(99))));
        store
            .conn
            .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(store);
        let e = Store::open(&path).err().unwrap().to_string();
        assert!(e.contains("newer than this fsbench"), "{e}");
    }

    #[test]
    fn a_run_has_one_owner_and_a_gone_owner_means_interrupted() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("r.db")).unwrap();
        let run = new_run(&store);
        assert_eq!(store.runs().unwrap()[0].status, RunState::Running);
        assert_eq!(store.runs().unwrap()[0].planned_samples, Some(6));
        let e = store.claim_run(run, 6).unwrap_err();
        assert!(
            matches!(e, StoreError::Busy { pid, .. } if pid == std::process::id()),
            "{e}"
        );
        // The owner died (SIGKILL): shown as interrupted, and resumable.
        store
            .conn
            .execute(
                "UPDATE runs SET owner = 'gone 1 1' WHERE id = ?1",
                params![run],
            )
            .unwrap();
        assert_eq!(store.runs().unwrap()[0].status, RunState::Interrupted);
        assert_eq!(store.run(run).unwrap().status, RunState::Interrupted);
        store.claim_run(run, 8).unwrap();
        assert_eq!(store.runs().unwrap()[0].status, RunState::Running);
        assert_eq!(store.runs().unwrap()[0].planned_samples, Some(8));
        store
            .finish_run(run, RunState::Complete, Some("t"))
            .unwrap();
        assert_eq!(store.runs().unwrap()[0].status, RunState::Complete);
        store.claim_run(run, 8).unwrap();
    }

    #[test]
    fn reading_opens_read_only_and_refuses_an_empty_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        new_run(&Store::open(&path).unwrap());
        let store = Store::open_existing(&path).unwrap();
        assert_eq!(store.runs().unwrap().len(), 1);
        assert!(store
            .begin_run(&NewRun {
                started_at: "t",
                plan_name: "t",
                plan_text: "",
                fsbench_version: "0",
                host_json: "{}",
                planned_samples: 0,
                overrides_json: None,
                scale: 1.0,
            })
            .is_err());
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let e = Store::open_existing(&empty).err().unwrap();
        assert!(matches!(e, StoreError::Empty(_)), "{e}");
        assert_eq!(std::fs::metadata(&empty).unwrap().len(), 0);
    }
}
