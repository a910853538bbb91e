//! The report model and its exporters on a real (temporary) store: two matrix cases with two
//! samples each and an unsupported sleep case.

use crate::{Csv, Exporter, Json, ReportModel, Terminal};
use fsbench_model::{Dims, Direction, MetricDef, ResultRecord, Unit};
use fsbench_store::{NewRun, NewSample, Outcome, Store};

const THROUGHPUT: MetricDef =
    MetricDef::new("throughput", Unit::BytesPerSec, Direction::Higher).main();
const P99: MetricDef = MetricDef::new("latency_p99", Unit::Nanos, Direction::Lower);

fn cell(phase: &str, record: u64, rate: f64) -> ResultRecord {
    ResultRecord {
        dims: Dims {
            phase: Some(phase.into()),
            file_size_bytes: Some(1 << 20),
            record_size_bytes: Some(record),
            ..Dims::default()
        },
        measurements: vec![THROUGHPUT.at(rate), P99.at(4200.0)],
        latency_bins: vec![(1000, 2)],
        ..ResultRecord::default()
    }
}

fn sample(repetition: u32, status: Outcome) -> NewSample<'static> {
    NewSample {
        repetition,
        status,
        reason: None,
        started_at: "t",
        elapsed_ns: 1,
        target_json: None,
        results: &[],
        seed: None,
        warnings: &[],
        config_json: None,
    }
}

/// (the store's directory, the store, the run id).
fn fixture() -> (tempfile::TempDir, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.db")).unwrap();
    let run = store
        .begin_run(&NewRun {
            started_at: "t0",
            plan_name: "p",
            plan_text: "",
            fsbench_version: "0",
            host_json: "{}",
            planned_samples: 6,
        })
        .unwrap();
    let config = |mount: &str| {
        format!(
            r#"{{"filesystem":"ext4","mkfs_set":"default","mount_set":"{mount}","scheduler":null,"cache":"warm"}}"#
        )
    };
    let matrix = r#"{"kind":"matrix","name":"small"}"#;
    let warnings = ["kept in the page cache".to_string()];
    for (position, mount) in ["default", "noatime"].into_iter().enumerate() {
        let case = store
            .add_case(
                run,
                &format!("ext4.default.{mount}.default.warm.small"),
                position as i64,
                &config(mount),
                matrix,
            )
            .unwrap();
        for rep in 1..=2u32 {
            let rate = (1 << 30) as f64 * (1.0 + position as f64) + rep as f64 * 1e6;
            let results = [cell("write", 4096, rate), cell("write", 65536, rate / 2.0)];
            store
                .record_sample(
                    case,
                    &NewSample {
                        results: &results,
                        seed: Some(7),
                        warnings: &warnings,
                        ..sample(rep, Outcome::Ok)
                    },
                )
                .unwrap();
        }
    }
    let case = store
        .add_case(
            run,
            "ext4.default.bogus.default.warm.nap",
            2,
            &config("bogus"),
            r#"{"kind":"sleep","name":"nap"}"#,
        )
        .unwrap();
    for rep in 1..=2 {
        store
            .record_sample(
                case,
                &NewSample {
                    reason: Some("the kernel said no (not retried)"),
                    ..sample(rep, Outcome::Unsupported)
                },
            )
            .unwrap();
    }
    (dir, store, run)
}

fn render(exporter: &dyn Exporter, model: &ReportModel) -> String {
    let mut out = Vec::new();
    exporter.write(model, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn tables_group_by_kind_metric_and_unit_with_a_column_per_case() {
    let (_dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let tables: Vec<(&str, &str, bool)> = model
        .tables
        .iter()
        .map(|t| (t.workload.as_str(), t.metric.as_str(), t.main))
        .collect();
    assert_eq!(
        tables,
        [
            ("matrix", "throughput", true),
            ("matrix", "latency_p99", false)
        ]
    );
    let t = &model.tables[0];
    assert_eq!(t.columns.len(), 2);
    assert_eq!(t.columns[1].label, "ext4 mount=noatime");
    assert_eq!(t.rows.len(), 2);
    assert_eq!(t.varying_dims, [fsbench_model::Dim::RecordSizeBytes]);
    let cell = t.rows[0].cells[0].as_ref().unwrap();
    assert_eq!(cell.summary.n, 2);
    assert!(cell.summary.ci95_half_width.is_some());
    assert_eq!(model.problems.len(), 1);
    assert_eq!(model.problems[0].count, 2);
    assert_eq!(model.kinds(), ["matrix", "sleep"]);
}

#[test]
fn json_has_schema_runs_typed_results_and_tables() {
    let (_dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&render(&Json, &model)).unwrap();
    assert_eq!(doc["schema"], "fsbench.run");
    assert_eq!(doc["schema_version"], 2);
    let case = &doc["runs"][0]["cases"][0];
    assert_eq!(case["axes"]["scheduler"], "default");
    assert_eq!(case["axes"]["workload"], "small");
    let sample = &case["samples"][0];
    assert_eq!(sample["seed"], 7);
    assert_eq!(sample["warnings"][0], "kept in the page cache");
    let result = &sample["results"][1];
    assert_eq!(result["record_size_bytes"], 65536);
    assert_eq!(result["measurements"][0]["unit"], "B/s");
    assert_eq!(result["measurements"][1]["direction"], "lower");
    assert_eq!(doc["tables"][0]["varying_axes"][1], "mount_set");
    assert_eq!(doc["tables"][0]["rows"][0]["cells"][1]["n"], 2);
    assert_eq!(doc["problems"][0]["status"], "unsupported");
}

#[test]
fn csv_is_tidy_with_integer_sizes_and_a_row_for_every_sample() {
    let (_dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let csv = render(&Csv, &model);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], crate::export::csv_header());
    // 4 samples x 2 results x 2 measurements, and one row per unsupported sample.
    assert_eq!(lines.len(), 1 + 16 + 2);
    assert!(lines.contains(
        &"1,ext4.default.noatime.default.warm.small,ext4,default,noatime,default,warm,small,2,ok,,write,,1048576,65536,,,,,latency_p99,4200,ns,lower,false"
    ), "{csv}");
    assert!(
        lines.iter().any(
            |l| l.ends_with(",nap,1,unsupported,the kernel said no (not retried),,,,,,,,,,,,,")
        ),
        "{csv}"
    );
    let columns = lines[0].split(',').count();
    assert!(
        lines.iter().all(|l| l.split(',').count() == columns),
        "{csv}"
    );
}

#[test]
fn the_terminal_summary_shows_main_metrics_each_row_in_its_unit() {
    let (dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let db = dir.path().join("r.db");
    let text = render(
        &Terminal {
            db: Some(&db),
            all_metrics: false,
        },
        &model,
    );
    assert!(
        text.starts_with(
            "Run 1 \"p\" (running): 6 samples: 4 ok, 2 unsupported, 0 failed, 0 timeout\n"
        ),
        "{text}"
    );
    assert!(text.contains("\nsmall [higher is better; each cell: mean ± half-width of the 95 % confidence interval]\n"), "{text}");
    // 1 GiB/s and 0.5 GiB/s: each row in its own unit.
    let row = |label: &str| {
        text.lines()
            .find(|l| l.starts_with(label))
            .unwrap()
            .to_string()
    };
    assert!(row("write 1m 4k ").ends_with("  GiB/s"), "{text}");
    assert!(row("write 1m 64k ").ends_with("  MiB/s"), "{text}");
    assert!(
        text.contains("ext4 mount=default") && text.contains("2 of 2"),
        "{text}"
    );
    assert!(!text.contains("latency_p99"), "{text}");
    assert!(
        text.contains("\nnap: no sample measured anything\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "  ext4.default.bogus.default.warm.nap: unsupported ×2: the kernel said no\n"
        ),
        "{text}"
    );
    assert!(
        text.ends_with(&format!(
            "\nStored as run 1 in {} (`fsbench export 1 --json FILE`).\n",
            db.display()
        )),
        "{text}"
    );
    let all = render(
        &Terminal {
            db: None,
            all_metrics: true,
        },
        &model,
    );
    assert!(
        all.contains("small latency_p99 [µs, lower is better;"),
        "{all}"
    );
}
