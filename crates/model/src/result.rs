//! Typed results: what every workload hands back, what the store keeps as columns and what
//! every report reads. A value such as a record size is a dimension ([`Dims`]), never part of a
//! metric's name; a figure carries its unit, direction and whether it is its workload's main one.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// The unit of a stored figure (base units only; reports choose a display scale).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Unit {
    #[serde(rename = "B/s")]
    BytesPerSec,
    #[serde(rename = "ops/s")]
    OpsPerSec,
    #[serde(rename = "ns")]
    Nanos,
    #[serde(rename = "B")]
    Bytes,
    #[serde(rename = "count")]
    Count,
    #[serde(rename = "%")]
    Percent,
    #[serde(rename = "ratio")]
    Ratio,
}

impl Unit {
    pub const ALL: [Unit; 7] = [
        Unit::BytesPerSec,
        Unit::OpsPerSec,
        Unit::Nanos,
        Unit::Bytes,
        Unit::Count,
        Unit::Percent,
        Unit::Ratio,
    ];

    /// The one spelling, in the store and the exports.
    pub const fn name(self) -> &'static str {
        match self {
            Unit::BytesPerSec => "B/s",
            Unit::OpsPerSec => "ops/s",
            Unit::Nanos => "ns",
            Unit::Bytes => "B",
            Unit::Count => "count",
            Unit::Percent => "%",
            Unit::Ratio => "ratio",
        }
    }

    pub fn parse(text: &str) -> Option<Unit> {
        Unit::ALL.into_iter().find(|u| u.name() == text)
    }

    /// The factor and label that show values around `typical` readably: B/s as MiB/s or
    /// GiB/s, ns as µs, ms or s, bytes as KiB..GiB. Binary prefixes, as everywhere in fsbench.
    pub fn display(self, typical: f64) -> (f64, &'static str) {
        const KI: f64 = 1024.0;
        let t = typical.abs();
        match self {
            Unit::BytesPerSec if t >= KI * KI * KI => (KI * KI * KI, "GiB/s"),
            Unit::BytesPerSec if t >= KI * KI => (KI * KI, "MiB/s"),
            Unit::BytesPerSec if t >= KI => (KI, "KiB/s"),
            Unit::BytesPerSec => (1.0, "B/s"),
            Unit::Bytes if t >= KI * KI * KI => (KI * KI * KI, "GiB"),
            Unit::Bytes if t >= KI * KI => (KI * KI, "MiB"),
            Unit::Bytes if t >= KI => (KI, "KiB"),
            Unit::Bytes => (1.0, "B"),
            Unit::Nanos if t >= 1e9 => (1e9, "s"),
            Unit::Nanos if t >= 1e6 => (1e6, "ms"),
            Unit::Nanos if t >= 1e3 => (1e3, "µs"),
            Unit::Nanos => (1.0, "ns"),
            Unit::OpsPerSec => (1.0, "ops/s"),
            Unit::Count => (1.0, ""),
            Unit::Percent => (1.0, "%"),
            Unit::Ratio => (1.0, "x"),
        }
    }
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Which way is better for a figure; `None` for facts (passes, bytes moved, CPU time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Higher,
    Lower,
    None,
}

impl Direction {
    pub const ALL: [Direction; 3] = [Direction::Higher, Direction::Lower, Direction::None];

    pub const fn name(self) -> &'static str {
        match self {
            Direction::Higher => "higher",
            Direction::Lower => "lower",
            Direction::None => "none",
        }
    }

    pub fn parse(text: &str) -> Option<Direction> {
        Direction::ALL.into_iter().find(|d| d.name() == text)
    }

    /// What a chart or table says under the figure.
    pub const fn phrase(self) -> &'static str {
        match self {
            Direction::Higher => "higher is better",
            Direction::Lower => "lower is better",
            Direction::None => "",
        }
    }
}

/// A figure a workload reports, declared once in its module: name, unit, direction, whether
/// it is the workload's main figure (what summaries show and adaptive repetitions watch) and
/// how the ranks of an MPI job merge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetricDef {
    pub name: &'static str,
    pub unit: Unit,
    pub direction: Direction,
    pub main: bool,
    pub merge: Merge,
}

impl MetricDef {
    /// A figure merged as its unit and direction say ([`Merge::of`]); [`MetricDef::merged`]
    /// declares another rule.
    pub const fn new(name: &'static str, unit: Unit, direction: Direction) -> MetricDef {
        MetricDef {
            name,
            unit,
            direction,
            main: false,
            merge: Merge::of(unit, direction),
        }
    }

    pub const fn main(self) -> MetricDef {
        MetricDef { main: true, ..self }
    }

    /// Merged over the ranks of a job by `rule`.
    pub const fn merged(self, rule: Merge) -> MetricDef {
        MetricDef {
            merge: rule,
            ..self
        }
    }

    /// The name a reader sees: [`metric_label`] of its name.
    pub fn label(&self) -> Cow<'static, str> {
        metric_label(self.name)
    }

    pub fn at(&self, value: f64) -> Measurement {
        Measurement {
            metric: Cow::Borrowed(self.name),
            value,
            unit: self.unit,
            direction: self.direction,
            main: self.main,
        }
    }
}

/// How the ranks' values of a figure become the job's, in the MPI merge (`fsbench-scale`,
/// docs/design/mpi.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Added up: amounts (bytes, operations, passes), CPU time, the rates of ranks that ran
    /// for one fixed duration.
    Sum,
    /// The most: a time the phase lasts as long as its slowest rank takes.
    Max,
    /// The mean of the ranks' values: a percentage, a ratio, a spread.
    Mean,
    /// The ranks' values weighted by their operations (`ops`): a per-operation figure.
    PerOp,
    /// The ranks' total amount over the slowest rank's `elapsed` (IOR's aggregate rule); the
    /// sum of the ranks' rates where a record lacks its amount or time.
    Rate(Amount),
    /// A figure of a latency distribution named `<distribution>_<stat>`: from the ranks'
    /// histograms merged exactly — the record's own (`latency`) or bins kept in the attribute
    /// `<distribution>_bins`. The least minimum and the most maximum without them, the mean
    /// weighted by operations; a percentile without every rank's histogram is left out. A
    /// record that keeps no such bins merges it as its unit and direction say.
    Distribution(Stat),
}

/// What a rate counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// The record's `bytes`.
    Bytes,
    /// The record's `ops`.
    Ops,
}

impl Amount {
    /// The figure that holds it.
    pub const fn metric(self) -> &'static str {
        match self {
            Amount::Bytes => "bytes",
            Amount::Ops => "ops",
        }
    }
}

/// A figure of a distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    Min,
    Mean,
    P50,
    P90,
    P99,
    P99_9,
    Max,
}

impl Stat {
    pub const ALL: [Stat; 7] = [
        Stat::Min,
        Stat::Mean,
        Stat::P50,
        Stat::P90,
        Stat::P99,
        Stat::P99_9,
        Stat::Max,
    ];

    /// Its suffix in a figure's name (`latency_p99_9`).
    pub const fn name(self) -> &'static str {
        match self {
            Stat::Min => "min",
            Stat::Mean => "mean",
            Stat::P50 => "p50",
            Stat::P90 => "p90",
            Stat::P99 => "p99",
            Stat::P99_9 => "p99_9",
            Stat::Max => "max",
        }
    }
}

impl Merge {
    /// The rule of a figure whose definition declares none: a rate that is better higher is
    /// added (ranks that ran for one duration), a time is the slowest rank's, an amount is
    /// added, anything else (a percentage, a ratio, a spread) is the ranks' mean.
    pub const fn of(unit: Unit, direction: Direction) -> Merge {
        match unit {
            Unit::BytesPerSec | Unit::OpsPerSec if matches!(direction, Direction::Higher) => {
                Merge::Sum
            }
            Unit::Nanos => Merge::Max,
            Unit::Bytes | Unit::Count => Merge::Sum,
            _ => Merge::Mean,
        }
    }
}

/// The name a reader sees for each stored metric name, in every report and summary (the
/// store, the JSON and the CSV keep the stored name, which plans and scripts use). Every
/// figure a workload declares is here; one that is not reads as its name with spaces.
const METRIC_LABELS: &[(&str, &str)] = &[
    ("throughput", "throughput"),
    ("ops_rate", "operations/s"),
    ("entries_rate", "entries/s"),
    ("tps", "transactions/s"),
    ("read_throughput", "read throughput"),
    ("write_throughput", "write throughput"),
    ("writeback", "writeback throughput"),
    ("rate", "data rate"),
    ("latency_min", "minimum latency"),
    ("latency_mean", "mean latency"),
    ("latency_p50", "p50 latency"),
    ("latency_p90", "p90 latency"),
    ("latency_p99", "p99 latency"),
    ("latency_p99_9", "p99.9 latency"),
    ("latency_max", "maximum latency"),
    ("slat_min", "minimum submission latency"),
    ("slat_mean", "mean submission latency"),
    ("slat_p50", "p50 submission latency"),
    ("slat_p90", "p90 submission latency"),
    ("slat_p99", "p99 submission latency"),
    ("slat_p99_9", "p99.9 submission latency"),
    ("slat_max", "maximum submission latency"),
    ("sync_min", "minimum sync time"),
    ("sync_mean", "mean sync time"),
    ("sync_p50", "p50 sync time"),
    ("sync_p90", "p90 sync time"),
    ("sync_p99", "p99 sync time"),
    ("sync_p99_9", "p99.9 sync time"),
    ("sync_max", "maximum sync time"),
    ("real", "real time"),
    ("user", "user CPU time"),
    ("sys", "system CPU time"),
    ("sync", "sync time"),
    ("cpu_user", "user CPU time"),
    ("cpu_sys", "system CPU time"),
    ("cpu_per_op", "CPU time per operation"),
    ("cpu_user_percent", "user CPU %"),
    ("cpu_sys_percent", "system CPU %"),
    ("cpu_percent", "CPU %"),
    ("ops", "operations"),
    ("bytes", "bytes"),
    ("files", "files"),
    ("elapsed", "elapsed time"),
    ("finish", "finishing time"),
    ("passes", "passes"),
    ("pass_rate_stddev", "pass rate standard deviation"),
    ("pass_rate_cv", "pass rate CV"),
    ("quantisation", "clock quantisation"),
    ("resident_before", "cached before a pass"),
    ("transactions", "transactions"),
    ("unexpected", "unexpected outcomes"),
    ("lines", "lines replayed"),
    ("loops", "loadfile loops"),
    ("slept", "time slept"),
    ("ranks", "ranks"),
    ("imbalance", "rank imbalance"),
];

/// The name a reader sees for a stored metric ([`METRIC_LABELS`]): `operations/s` for
/// `ops_rate`; a name the table lacks (a figure newer than it) with its underscores as spaces.
pub fn metric_label(name: &str) -> Cow<'static, str> {
    match METRIC_LABELS.iter().find(|(stored, _)| *stored == name) {
        Some((_, label)) => Cow::Borrowed(label),
        None => Cow::Owned(name.replace('_', " ")),
    }
}

/// A column's heading for a metric shown in `unit` (a display unit, `Unit::display`):
/// `p99 latency [µs]`; a label that says its unit already (`CPU %`, and a rate named by what
/// it counts per second: `operations/s`, `entries/s`) has none after it, nor has a count.
pub fn metric_heading(name: &str, unit: &str) -> String {
    let label = metric_label(name);
    let said = label.ends_with(unit) || (unit == Unit::OpsPerSec.name() && label.ends_with("/s"));
    if unit.is_empty() || said {
        label.into_owned()
    } else {
        format!("{label} [{unit}]")
    }
}

/// One measured figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub metric: Cow<'static, str>,
    pub value: f64,
    pub unit: Unit,
    pub direction: Direction,
    pub main: bool,
}

/// A swept parameter without a dimension of its own (the sweep's value of it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub parameter: String,
    pub value: f64,
}

/// Declares every result dimension once, as one line: its variant of [`Dim`], its field of
/// [`Dims`] (which is also its column in the store and in CSV), its kind (what its value is:
/// `Text`, `Bytes`, `Count` or the `Sweep` point), its label in a table header, and the store's
/// schema version that first holds it. [`Dims`], [`Dim::ALL`], [`Dim::column`], [`Dim::label`],
/// [`Dim::kind`], [`Dim::since`], [`Dim::get`], [`Dim::set`] and [`Dim::clear`] are generated
/// from it; the store's columns, the CSV's and the reports' follow from those.
macro_rules! dimensions {
    ($($(#[$doc:meta])* $variant:ident $field:ident: $kind:ident, label $label:literal, since $since:literal;)+) => {
        /// Where in a workload a result belongs: the closed vocabulary of result dimensions,
        /// each a column in the store and in CSV. A workload sets the ones it has; the rest
        /// stay empty.
        #[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
        #[serde(default)]
        pub struct Dims {
            $(
                $(#[$doc])*
                #[serde(skip_serializing_if = "Option::is_none")]
                pub $field: Option<dimensions!(@type $kind)>,
            )+
        }

        /// One dimension of [`Dims`], for code that walks them all (columns, labels, grouping).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum Dim {
            $($variant),+
        }

        impl Dim {
            /// Every dimension, in declaration order (the order of columns and of labels).
            pub const ALL: [Dim; [$(stringify!($field)),+].len()] = [$(Dim::$variant),+];

            /// The column in the store and in CSV.
            pub const fn column(self) -> &'static str {
                match self {
                    $(Dim::$variant => stringify!($field)),+
                }
            }

            /// A table header.
            pub const fn label(self) -> &'static str {
                match self {
                    $(Dim::$variant => $label),+
                }
            }

            /// What its value is.
            pub const fn kind(self) -> DimKind {
                match self {
                    $(Dim::$variant => DimKind::$kind),+
                }
            }

            /// The store's schema version that first holds it (its column, or columns).
            pub const fn since(self) -> u32 {
                match self {
                    $(Dim::$variant => $since),+
                }
            }

            pub fn get(self, dims: &Dims) -> Option<DimValue> {
                match self {
                    $(Dim::$variant => dims.$field.as_ref().map(|v| dimensions!(@value $kind v))),+
                }
            }

            /// Sets this dimension of `dims` to `value`; a value of another kind (text for a
            /// size) leaves it as it was and says false.
            pub fn set(self, dims: &mut Dims, value: DimValue) -> bool {
                match (self, value) {
                    $((Dim::$variant, dimensions!(@pattern $kind p v)) => {
                        dims.$field = Some(dimensions!(@from $kind p v));
                        true
                    })+
                    _ => false,
                }
            }

            /// Empties this dimension of `dims`.
            pub fn clear(self, dims: &mut Dims) {
                match self {
                    $(Dim::$variant => dims.$field = None),+
                }
            }
        }
    };
    (@type Text) => { String };
    (@type Bytes) => { u64 };
    (@type Count) => { u64 };
    (@type Sweep) => { Sweep };
    (@value Text $v:ident) => { DimValue::Text($v.clone()) };
    (@value Bytes $v:ident) => { DimValue::Bytes(*$v) };
    (@value Count $v:ident) => { DimValue::Count(*$v) };
    (@value Sweep $v:ident) => { DimValue::Sweep($v.parameter.clone(), $v.value) };
    (@pattern Text $p:ident $v:ident) => { DimValue::Text($v) };
    (@pattern Bytes $p:ident $v:ident) => { DimValue::Bytes($v) };
    (@pattern Count $p:ident $v:ident) => { DimValue::Count($v) };
    (@pattern Sweep $p:ident $v:ident) => { DimValue::Sweep($p, $v) };
    (@from Text $p:ident $v:ident) => { $v };
    (@from Bytes $p:ident $v:ident) => { $v };
    (@from Count $p:ident $v:ident) => { $v };
    (@from Sweep $p:ident $v:ident) => { Sweep { parameter: $p, value: $v } };
}

dimensions! {
    Phase phase: Text, label "phase", since 3;
    Operation operation: Text, label "operation", since 3;
    FileSizeBytes file_size_bytes: Bytes, label "file", since 3;
    RecordSizeBytes record_size_bytes: Bytes, label "record", since 3;
    Threads threads: Count, label "threads", since 3;
    Client client: Count, label "client", since 3;
    Step step: Text, label "step", since 3;
    /// How the operations were issued (the io workload's `sync`, `io_uring`).
    Engine engine: Text, label "engine", since 5;
    /// Operations kept in flight at once (queue depth).
    Iodepth iodepth: Count, label "iodepth", since 5;
    Sweep sweep: Sweep, label "sweep", since 3;
}

/// What a dimension's value is: text, a size in bytes, a count, or a sweep point (the swept
/// parameter's name and its value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DimKind {
    Text,
    Bytes,
    Count,
    Sweep,
}

/// A dimension's value: text, a size in bytes, a count, or a sweep point.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum DimValue {
    Text(String),
    Bytes(u64),
    Count(u64),
    Sweep(String, f64),
}

impl fmt::Display for DimValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimValue::Text(t) => f.pad(t),
            DimValue::Bytes(b) => f.pad(&size_label(*b)),
            DimValue::Count(n) => f.pad(&n.to_string()),
            DimValue::Sweep(p, v) => f.pad(&format!("{p}={v}")),
        }
    }
}

/// Short size label in iozone's style: `4k`, `64m`, `1g`; bytes when not a whole KiB.
pub fn size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (size, suffix) in UNITS {
        if bytes >= size && bytes % size == 0 {
            return format!("{}{suffix}", bytes / size);
        }
    }
    bytes.to_string()
}

impl Dim {
    /// The value as a label shows it: text and sizes as they are (`write`, `16m`), counts
    /// with their name (`threads=4`), sweep points as `threads=4`.
    pub fn text(self, dims: &Dims) -> Option<String> {
        self.get(dims).map(|v| match v {
            DimValue::Count(n) => format!("{}={n}", self.label()),
            other => other.to_string(),
        })
    }
}

impl Dims {
    /// What the points of a sweep's curve share: the dimensions without the sweep point, nor
    /// the dimension that is the swept setting itself (a swept `iodepth` sets the `iodepth`
    /// dimension at every point, which would otherwise make each point a curve of its own).
    pub fn without_sweep(&self) -> Dims {
        let mut rest = self.clone();
        if let Some(sweep) = rest.sweep.take() {
            if let Some(dim) = Dim::ALL.into_iter().find(|d| d.column() == sweep.parameter) {
                dim.clear(&mut rest);
            }
        }
        rest
    }

    /// The dimensions that are set, in [`Dim::ALL`] order: `write 16m 4k`, `create threads=4`.
    pub fn label(&self) -> String {
        Dim::ALL
            .into_iter()
            .filter_map(|d| d.text(self))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// One result of a workload: where it belongs, its figures, and (when it timed operations) the
/// latency histogram as (lowest ns of the bucket, count) for every non-empty bucket.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultRecord {
    #[serde(flatten)]
    pub dims: Dims,
    /// Workload-specific facts that are not dimensions (the matrix's test and cache state).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub attributes: serde_json::Map<String, serde_json::Value>,
    pub measurements: Vec<Measurement>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub latency_bins: Vec<(u64, u64)>,
}

impl ResultRecord {
    /// The workload's main figure, when this record has one.
    pub fn main(&self) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.main)
    }

    pub fn measurement(&self, metric: &str) -> Option<&Measurement> {
        self.measurements.iter().find(|m| m.metric == metric)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_match_serde() {
        for unit in Unit::ALL {
            assert_eq!(Unit::parse(unit.name()), Some(unit));
            assert_eq!(
                serde_json::to_value(unit).unwrap(),
                serde_json::json!(unit.name())
            );
        }
        for d in Direction::ALL {
            assert_eq!(Direction::parse(d.name()), Some(d));
            assert_eq!(
                serde_json::to_value(d).unwrap(),
                serde_json::json!(d.name())
            );
        }
        for dim in Dim::ALL {
            assert_eq!(
                serde_json::to_value(dim).unwrap(),
                serde_json::json!(dim.column())
            );
        }
    }

    #[test]
    fn a_record_serializes_its_dims_as_flat_columns() {
        const THROUGHPUT: MetricDef =
            MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher).main();
        let record = ResultRecord {
            dims: Dims {
                phase: Some("write".into()),
                file_size_bytes: Some(16 << 20),
                record_size_bytes: Some(4096),
                ..Dims::default()
            },
            measurements: vec![THROUGHPUT.at(1e9)],
            ..ResultRecord::default()
        };
        let json = serde_json::to_value(&record).unwrap();
        assert_eq!(json["record_size_bytes"], 4096);
        assert_eq!(json["measurements"][0]["unit"], "B/s");
        assert_eq!(json["measurements"][0]["main"], true);
        let back: ResultRecord = serde_json::from_value(json).unwrap();
        assert_eq!(back, record);
        assert_eq!(back.dims.label(), "write 16m 4k");
        assert_eq!(back.main().unwrap().value, 1e9);
    }

    /// The points of a sweep over a setting that is a dimension share one curve.
    #[test]
    fn a_swept_dimension_leaves_the_curves_key() {
        let point = |depth: u64| Dims {
            phase: Some("randread".into()),
            engine: Some("io_uring".into()),
            iodepth: Some(depth),
            sweep: Some(Sweep {
                parameter: "iodepth".into(),
                value: depth as f64,
            }),
            ..Dims::default()
        };
        assert_eq!(point(1).without_sweep(), point(32).without_sweep());
        assert_eq!(point(1).without_sweep().label(), "randread io_uring");
        let other = Dims {
            sweep: Some(Sweep {
                parameter: "rate_iops".into(),
                value: 1000.0,
            }),
            ..point(8)
        };
        assert_eq!(
            other.without_sweep().iodepth,
            Some(8),
            "only the swept one goes"
        );
        for dim in Dim::ALL {
            let mut all = point(4);
            all.operation = Some("read".into());
            all.file_size_bytes = Some(1);
            all.record_size_bytes = Some(1);
            all.threads = Some(1);
            all.client = Some(1);
            all.step = Some("s".into());
            dim.clear(&mut all);
            assert_eq!(dim.get(&all), None, "{dim:?}");
        }
    }

    /// What a dimension gives is what it takes back; a value of another kind is refused.
    #[test]
    fn a_dimension_sets_what_it_gets() {
        let all = Dims {
            phase: Some("write".into()),
            operation: Some("read".into()),
            file_size_bytes: Some(1 << 20),
            record_size_bytes: Some(4096),
            threads: Some(4),
            client: Some(2),
            step: Some("s".into()),
            engine: Some("io_uring".into()),
            iodepth: Some(32),
            sweep: Some(Sweep {
                parameter: "iodepth".into(),
                value: 32.0,
            }),
        };
        let mut back = Dims::default();
        for dim in Dim::ALL {
            assert!(dim.set(&mut back, dim.get(&all).unwrap()), "{dim:?}");
        }
        assert_eq!(back, all);
        let mut empty = Dims::default();
        assert!(!Dim::Threads.set(&mut empty, DimValue::Text("4".into())));
        assert_eq!(empty, Dims::default());
    }

    #[test]
    fn every_metric_has_one_name_a_reader_knows() {
        assert_eq!(metric_label("ops_rate"), "operations/s");
        assert_eq!(metric_label("latency_p99_9"), "p99.9 latency");
        assert_eq!(
            MetricDef::new("tps", Unit::OpsPerSec, Direction::Higher).label(),
            "transactions/s"
        );
        // A figure newer than the table reads as its name with spaces.
        assert_eq!(metric_label("flush_time"), "flush time");
        for (i, (name, label)) in METRIC_LABELS.iter().enumerate() {
            assert!(
                METRIC_LABELS[..i].iter().all(|(other, _)| other != name),
                "{name} twice"
            );
            assert!(
                !label.contains('_') && !label.is_empty(),
                "{name}: {label:?}"
            );
        }
        assert_eq!(metric_heading("latency_p99", "µs"), "p99 latency [µs]");
        assert_eq!(metric_heading("ops_rate", "ops/s"), "operations/s");
        assert_eq!(metric_heading("cpu_sys_percent", "%"), "system CPU %");
        assert_eq!(metric_heading("ops", ""), "operations");
    }

    #[test]
    fn display_scales_pick_readable_units() {
        assert_eq!(
            Unit::BytesPerSec.display(3e9),
            (1024.0 * 1024.0 * 1024.0, "GiB/s")
        );
        assert_eq!(Unit::Nanos.display(2500.0), (1e3, "µs"));
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(3000), "3000");
    }
}
