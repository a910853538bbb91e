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

/// A stored configuration from its JSON (as earlier versions wrote it).
fn typed(json: &str) -> fsbench_model::CaseConfig {
    serde_json::from_str(json).unwrap()
}

fn sample(repetition: u32, status: Outcome) -> NewSample<'static> {
    NewSample {
        repetition,
        status,
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

/// A store in a new directory with one run of the plan `plan_name`: (the directory, the
/// store, the run id).
fn new_run(plan_name: &str, planned_samples: u64) -> (tempfile::TempDir, Store, i64) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("r.db")).unwrap();
    let run = store
        .begin_run(&NewRun {
            started_at: "t0",
            plan_name,
            plan_text: "",
            fsbench_version: "0",
            host_json: "{}",
            planned_samples,
            overrides_json: None,
            scale: 1.0,
        })
        .unwrap();
    (dir, store, run)
}

/// (the store's directory, the store, the run id).
fn fixture() -> (tempfile::TempDir, Store, i64) {
    let (dir, mut store, run) = new_run("p", 6);
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
                &typed(&config(mount)),
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
            &typed(&config("bogus")),
            r#"{"kind":"sleep","name":"nap"}"#,
        )
        .unwrap();
    for rep in 1..=2 {
        store
            .record_sample(
                case,
                &NewSample {
                    reason: Some("the kernel said no"),
                    not_retried: rep > 1,
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
        &"1,ext4.default.noatime.default.warm.small,ext4,default,noatime,default,default,fresh,warm,small,2,ok,,write,,1048576,65536,,,,,,,latency_p99,4200,ns,lower,false"
    ), "{csv}");
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with(",nap,1,unsupported,the kernel said no,,,,,,,,,,,,,,,")),
        "{csv}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l
                .ends_with(",nap,2,unsupported,the kernel said no (not retried),,,,,,,,,,,,,,,")),
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
            ranking: false,
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
        text.contains("\n  ext4 mount=bogus  unsupported ×2 (nap):\n    the kernel said no\n"),
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
            ranking: true,
        },
        &model,
    );
    assert!(
        all.contains("small p99 latency [µs, lower is better;"),
        "{all}"
    );
}

#[test]
fn the_markdown_names_winners_with_their_margin_rankings_and_failures() {
    let (_dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let md = render(&crate::Markdown::default(), &model);
    // noatime is twice as fast in both rows; its two rounds pair with default's.
    assert!(md.contains("| small write 1m 4k (throughput) (higher is better) | ext4 mount=noatime | 2.00 GiB/s | 99.9 % ahead of ext4 mount=default (95 % CI 99.3..100.5 %) |"), "{md}");
    assert!(md.contains("Pairing by round"), "{md}");
    // Twice as fast in every round: the ranks are separate, as the paired tests say.
    assert!(
        md.contains("| 1 | ext4 mount=noatime | 4.0 (2 disciplines) |"),
        "{md}"
    );
    assert!(
        md.contains("| ext4 mount=bogus | unsupported | 2 | nap | the kernel said no |"),
        "{md}"
    );
    // The answer first: the verdict and the ranking before the configurations.
    let at = |part: &str| md.find(part).unwrap_or_else(|| panic!("{part}: {md}"));
    assert!(at("## Verdict") < at("## Ranking") && at("## Ranking") < at("## Configurations"));
}

/// A run whose figures no unit makes readable (1e298 and 1e306 B/s) on configurations named
/// with Markdown (an image, a link, emphasis): the Markdown writes the figures in scientific
/// notation, never as hundreds of digits, and the names as text.
#[test]
fn the_markdown_shows_huge_figures_short_and_markdown_in_names_as_text() {
    let (_dir, mut store, run) = new_run("![p](https://evil.example/p.png)", 4);
    let config = |mount: &str| {
        serde_json::json!({"filesystem": "ext4", "mkfs_set": "default", "mount_set": mount,
                           "mount_options": "[o](https://evil.example/)", "scheduler": null,
                           "cache": "warm"})
        .to_string()
    };
    let mounts = ["*a*", "![x](https://evil.example/x.png)"];
    for (position, (mount, rate)) in mounts.into_iter().zip([1e298, 1e306]).enumerate() {
        let case = store
            .add_case(
                run,
                &format!("ext4.default.{position}.default.warm.small"),
                position as i64,
                &typed(&config(mount)),
                r#"{"kind":"matrix","name":"small"}"#,
            )
            .unwrap();
        for rep in 1..=2u32 {
            let results = [cell("write", 4096, rate * (1.0 + f64::from(rep) / 100.0))];
            store
                .record_sample(
                    case,
                    &NewSample {
                        results: &results,
                        ..sample(rep, Outcome::Ok)
                    },
                )
                .unwrap();
        }
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let md = render(&crate::Markdown::default(), &model);
    let longest = md
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    assert!(longest < 20, "a number of {longest} digits in {md}");
    assert!(md.contains("| 9.45e296 GiB/s |"), "{md}");
    let bare = md
        .char_indices()
        .filter(|&(i, c)| matches!(c, '[' | ']') && !md[..i].ends_with('\\'))
        .count();
    assert_eq!(bare, 0, "{md}");
    assert!(
        md.contains("\\!\\[x\\](https://evil.example/x.png)"),
        "{md}"
    );
    assert!(md.contains("mount=\\*a\\*"), "{md}");
}

/// Every chart has a title with its direction and axis titles with units; every configuration
/// appears; the failed ones are listed; nothing is fetched from the network.
#[test]
fn the_html_report_is_self_contained_and_every_chart_is_labelled() {
    let (_dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    assert!(html.starts_with("<!DOCTYPE html>"));
    let svgs: Vec<&str> = html
        .split("<svg")
        .skip(1)
        .map(|s| &s[..s.find("</svg>").unwrap()])
        .collect();
    // write @4k and @64k lines (file size on a log axis), a heat-map per configuration, the
    // relative chart.
    assert!(svgs.len() >= 4, "{} charts", svgs.len());
    for svg in &svgs {
        assert!(
            svg.contains("is better"),
            "a chart without its direction: {svg}"
        );
        assert!(
            svg.contains("GiB/s") || svg.contains("(ratio"),
            "a chart without a unit: {svg}"
        );
    }
    // One file size: bars with error bars per test and record size.
    assert!(
        html.contains("small: write, file 1m, record 4k (higher is better)"),
        "{html}"
    );
    for label in ["ext4 mount=default", "ext4 mount=noatime"] {
        assert!(html.contains(label), "{label}");
    }
    assert!(html.contains("the kernel said no"));
    assert!(!html.contains("<script"));
    let external = html
        .match_indices("http")
        .filter(|(i, _)| !html[*i..].starts_with("http://www.w3.org/"))
        .count();
    assert_eq!(external, 0, "a link to the network");
}

/// The workbook reads back: iozone's sheet holds the means in KiB/s at (file size, record
/// size), and the tidy sheet every stored value exactly.
#[test]
fn the_xlsx_reads_back_as_stored() {
    use calamine::{Data, Reader, Xlsx as XlsxReader};
    let (_dir, store, run) = fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let mut bytes = Vec::new();
    crate::Xlsx.write(&model, &mut bytes).unwrap();
    let mut book: XlsxReader<_> = XlsxReader::new(std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(
        book.sheet_names(),
        [
            "write",
            "verdict",
            "ranking",
            "not measured",
            "summary",
            "tidy"
        ]
    );
    let write = book.worksheet_range("write").unwrap();
    // Block 1 (ext4 mount=default): title, header (record KiB), then file 1024 KiB.
    assert_eq!(write.get((1, 1)), Some(&Data::Float(4.0)));
    assert_eq!(write.get((1, 2)), Some(&Data::Float(64.0)));
    assert_eq!(write.get((2, 0)), Some(&Data::Float(1024.0)));
    let mean = model.tables[0].rows[0].cells[0]
        .as_ref()
        .unwrap()
        .summary
        .mean;
    assert_eq!(
        write.get((2, 1)),
        Some(&Data::Float((mean / 1024.0).round()))
    );
    let tidy = book.worksheet_range("tidy").unwrap();
    let csv = render(&Csv, &model);
    assert_eq!(tidy.height(), csv.lines().count());
    let value_col = crate::export::csv_header()
        .split(',')
        .position(|h| h == "value")
        .unwrap();
    for (row, line) in tidy.rows().zip(csv.lines()).skip(1) {
        let text = line.split(',').nth(value_col).unwrap();
        match &row[value_col] {
            Data::Float(v) => assert_eq!(v.to_string(), text),
            Data::Empty => assert_eq!(text, ""),
            other => panic!("{other:?}"),
        }
    }
}

/// A store with a swept metadata case and a task case on two filesystems, 3 rounds each.
fn sweep_and_task_fixture() -> (tempfile::TempDir, Store, i64) {
    use fsbench_model::Sweep;
    const OPS: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
    const REAL: MetricDef = MetricDef::new("real", Unit::Nanos, Direction::Lower).main();
    const USER: MetricDef = MetricDef::new("user", Unit::Nanos, Direction::Lower);
    let (dir, mut store, run) = new_run("p", 12);
    let mut position = 0;
    for (fs, speed) in [("ext4", 1.0), ("xfs", 1.5)] {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        let meta = store
            .add_case(
                run,
                &format!("{fs}.meta"),
                position,
                &typed(&config),
                r#"{"kind":"metadata","name":"meta"}"#,
            )
            .unwrap();
        let task = store
            .add_case(
                run,
                &format!("{fs}.untar"),
                position + 1,
                &typed(&config),
                r#"{"kind":"task","name":"untar"}"#,
            )
            .unwrap();
        position += 2;
        for rep in 1..=3u32 {
            let jitter = 1.0 + rep as f64 * 0.01;
            let swept: Vec<ResultRecord> = [1.0, 2.0, 4.0, 8.0]
                .iter()
                .map(|&t| ResultRecord {
                    dims: Dims {
                        operation: Some("create".into()),
                        sweep: Some(Sweep {
                            parameter: "threads".into(),
                            value: t,
                        }),
                        ..Dims::default()
                    },
                    // Saturates at 4 threads.
                    measurements: vec![OPS.at(1000.0 * speed * jitter * f64::min(t, 4.0))],
                    ..ResultRecord::default()
                })
                .collect();
            store
                .record_sample(
                    meta,
                    &NewSample {
                        results: &swept,
                        ..sample(rep, Outcome::Ok)
                    },
                )
                .unwrap();
            let untar = [ResultRecord {
                dims: Dims {
                    step: Some("untar".into()),
                    operation: Some("tool".into()),
                    ..Dims::default()
                },
                measurements: vec![REAL.at(2e9 / speed * jitter), USER.at(1e9)],
                ..ResultRecord::default()
            }];
            store
                .record_sample(
                    task,
                    &NewSample {
                        results: &untar,
                        ..sample(rep, Outcome::Ok)
                    },
                )
                .unwrap();
        }
    }
    (dir, store, run)
}

/// Saturation curves carry their peak and knee; tasks get the studies' real/user/sys tables;
/// xfs wins both disciplines by a significant margin and ranks first in each category.
#[test]
fn sweeps_become_curves_with_peak_and_knee_and_tasks_become_tables() {
    let (_dir, store, run) = sweep_and_task_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    assert!(
        html.contains("create: operations/s over threads (higher is better)"),
        "{html}"
    );
    assert!(
        html.contains("\npeak\n</text>") && html.contains("\nknee\n</text>"),
        "peak and knee marked"
    );
    // The figures the task lists (real, user, sys, ...) by configuration, per step.
    assert!(
        html.contains("untar: tool untar (mean ± 95 % CI half-width; lower is better)"),
        "the task table"
    );
    assert!(html.contains("real time [s]") && html.contains("user CPU time [s]"));
    let standings = crate::standings::Standings::of(&model, &Default::default());
    assert_eq!(standings.scores[0].label, "xfs");
    let untar = standings
        .disciplines
        .iter()
        .find(|d| d.row.contains("untar"))
        .unwrap();
    let ext4 = untar.entries.iter().find(|e| e.label == "ext4").unwrap();
    let c = ext4.vs_best.unwrap();
    assert!(c.paired && (c.ratio - 1.5).abs() < 1e-9, "{c:?}");
}

/// A sweep over a setting that is also a dimension (the io workload's queue depth): one
/// saturation curve of IOPS over the depth, not a chart per point, and beside it the latency
/// (median, 99th percentile) over the same depths.
#[test]
fn a_queue_depth_sweep_draws_iops_and_latency_against_the_depth() {
    use fsbench_model::Sweep;
    const IOPS: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
    const P50: MetricDef = MetricDef::new("latency_p50", Unit::Nanos, Direction::Lower);
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("r.db")).unwrap();
    let run = store
        .begin_run(&NewRun {
            started_at: "t0",
            plan_name: "p",
            plan_text: "",
            fsbench_version: "0",
            host_json: "{}",
            planned_samples: 1,
            overrides_json: None,
            scale: 1.0,
        })
        .unwrap();
    let config = typed(
        r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}"#,
    );
    let case = store
        .add_case(run, "ext4.qd", 0, &config, r#"{"kind":"io","name":"qd"}"#)
        .unwrap();
    let points: Vec<ResultRecord> = [1u64, 8, 32, 128]
        .iter()
        .map(|&depth| ResultRecord {
            dims: Dims {
                phase: Some("randread".into()),
                operation: Some("read".into()),
                engine: Some("io_uring".into()),
                iodepth: Some(depth),
                sweep: Some(Sweep {
                    parameter: "iodepth".into(),
                    value: depth as f64,
                }),
                ..Dims::default()
            },
            measurements: vec![
                // Saturates at 32: 128 adds less than 5 %.
                IOPS.at(10_000.0 * f64::min(depth as f64, 32.0) + depth as f64),
                P50.at(50_000.0 * depth as f64),
                P99.at(90_000.0 * depth as f64),
            ],
            ..ResultRecord::default()
        })
        .collect();
    store
        .record_sample(
            case,
            &NewSample {
                results: &points,
                ..sample(1, Outcome::Ok)
            },
        )
        .unwrap();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    let curve = "randread read io_uring: operations/s over iodepth (higher is better)";
    assert_eq!(html.matches(curve).count(), 1, "one curve: {html}");
    assert!(html.contains("\nknee\n</text>"), "the knee at 32 is marked");
    for latency in ["p50 latency", "p99 latency"] {
        let title = format!("randread read io_uring: {latency} over iodepth (lower is better)");
        assert_eq!(html.matches(&title).count(), 1, "{latency}: {html}");
    }
    let mut terminal = Vec::new();
    crate::grid::write_curves(&mut terminal, &points).unwrap();
    let terminal = String::from_utf8(terminal).unwrap();
    assert!(
        terminal
            .starts_with("randread read io_uring operations/s over iodepth: peak at iodepth=128")
            && terminal.contains("knee at iodepth=32")
            && terminal.matches(" over ").count() == 1
            && terminal.lines().all(|l| l.chars().count() <= 120),
        "{terminal}"
    );
}

/// Study 002's table: a workload's whole-run figures (TPS, CPU %) per configuration, each in
/// its unit with its interval, and the filesystem check's time from the targets.
#[test]
fn whole_run_figures_and_the_fsck_time_make_one_table_per_workload() {
    const TPS: MetricDef = MetricDef::new("tps", Unit::OpsPerSec, Direction::Higher).main();
    const CPU: MetricDef = MetricDef::new("cpu_sys_percent", Unit::Percent, Direction::Lower);
    const OPEN: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher);
    let (_dir, mut store, run) = new_run("p", 4);
    for (position, (fs, fsck_s)) in [("ext4", 1.25), ("xfs", 0.5)].into_iter().enumerate() {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        let case = store
            .add_case(
                run,
                &format!("{fs}.smallfile"),
                position as i64,
                &typed(&config),
                r#"{"kind":"mix","name":"smallfile"}"#,
            )
            .unwrap();
        let target = format!(
            r#"{{"fsck":{{"clean":true,"elapsed_ns":{}}}}}"#,
            fsck_s * 1e9
        );
        for rep in 1..=2u32 {
            let tps = 1000.0 * (position + 1) as f64 + rep as f64;
            let results = [
                ResultRecord {
                    measurements: vec![TPS.at(tps), CPU.at(12.0 + rep as f64)],
                    ..ResultRecord::default()
                },
                ResultRecord {
                    dims: Dims {
                        operation: Some("read".into()),
                        ..Dims::default()
                    },
                    measurements: vec![OPEN.at(tps / 2.0)],
                    ..ResultRecord::default()
                },
            ];
            store
                .record_sample(
                    case,
                    &NewSample {
                        results: &results,
                        target_json: Some(&target),
                        ..sample(rep, Outcome::Ok)
                    },
                )
                .unwrap();
        }
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    let table = html
        .split("every figure of the whole run per configuration")
        .nth(1)
        .expect("the whole-run table")
        .split("</table>")
        .next()
        .unwrap();
    for header in ["transactions&#x2f;s", "system CPU %<", "fsck [s]"] {
        assert!(table.contains(header), "{header}: {table}");
    }
    assert!(
        !table.contains("ops_rate"),
        "per-operation rows are not whole-run"
    );
    for row in ["1002 ± ", "2002 ± ", "13.5 ± ", "1.25", "0.50"] {
        assert!(table.contains(row), "{row}: {table}");
    }
    assert!(table.contains("ext4") && table.contains("xfs"));
}

/// The ranking is ordered by its points, most first, whatever its rank intervals: ext3 leads
/// both disciplines, but one of them has a single value of it (its other samples failed), so
/// no order against it can be claimed and its interval spans every rank (1–3), wider than
/// ext2's (1–2) — the issue's ext2 (10.90 points) above ext3 (12.00 points), which the old
/// order by intervals gave. The summary says the rule and shows each interval beside the
/// points.
#[test]
fn the_ranking_is_ordered_by_its_points_with_each_rank_interval_beside_them() {
    const OPS: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
    let (_dir, mut store, run) = new_run("p", 18);
    let create = |rate: f64| {
        [ResultRecord {
            dims: Dims {
                operation: Some("create".into()),
                ..Dims::default()
            },
            measurements: vec![OPS.at(rate)],
            ..ResultRecord::default()
        }]
    };
    let mut position = 0;
    for (fs, speed) in [("ext2", 2000.0), ("ext3", 3000.0), ("ext4", 1000.0)] {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        for workload in ["files", "fsync"] {
            let case = store
                .add_case(
                    run,
                    &format!("{fs}.{workload}"),
                    position,
                    &typed(&config),
                    &format!(r#"{{"kind":"metadata","name":"{workload}"}}"#),
                )
                .unwrap();
            position += 1;
            for rep in 1..=3u32 {
                let results = create(speed + rep as f64 * 10.0);
                let failed = fs == "ext3" && workload == "fsync" && rep > 1;
                let new = if failed {
                    sample(rep, Outcome::Failed)
                } else {
                    NewSample {
                        results: &results,
                        ..sample(rep, Outcome::Ok)
                    }
                };
                store.record_sample(case, &new).unwrap();
            }
        }
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let standings = crate::standings::Standings::of(&model, &Default::default());
    let scores: Vec<(&str, f64, String)> = standings
        .scores
        .iter()
        .map(|s| (s.label.as_str(), s.overall, s.rank.text()))
        .collect();
    // The case the order by intervals got wrong: ext3 has more points, ext2 the better interval.
    let of = |fs: &str| scores.iter().find(|s| s.0 == fs).unwrap().clone();
    assert!(of("ext3").1 > of("ext2").1, "{scores:?}");
    assert_eq!(
        (of("ext2").2.as_str(), of("ext3").2.as_str()),
        ("1–2", "1–3")
    );
    assert_eq!(
        scores.iter().map(|s| s.0).collect::<Vec<_>>(),
        ["ext3", "ext2", "ext4"],
        "{scores:?}"
    );
    let text = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    let ranking = text.split("\nRanking (").nth(1).unwrap();
    assert!(ranking.starts_with("most points first"), "{text}");
    let lines: Vec<&str> = ranking.lines().skip(1).take(3).collect();
    assert!(
        lines[0].starts_with("  ext3") && lines[0].contains(" points  rank 1–3  ("),
        "{text}"
    );
    assert!(
        lines[1].starts_with("  ext2") && lines[1].contains(" points  rank 1–2  ("),
        "{text}"
    );
}

/// The lead of a sole winner is set against the best of the rest by its figure — the
/// comparison that separated them — never against another of the rest that happens to come
/// first in the plan: that one may tie with the winner, and the verdict then named a winner
/// whose lead's interval held zero ("17.2 % ahead of ext3 (95 % CI -21.8..75.7 %)").
#[test]
fn a_sole_winners_lead_is_over_the_best_of_the_rest() {
    const OPS: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
    let (_dir, mut store, run) = new_run("p", 15);
    // b (second in the plan) is noisy and below c on average: c separates from a, b does not.
    let rates: [(&str, [f64; 5]); 3] = [
        ("a", [100.0, 101.0, 99.0, 100.0, 100.5]),
        ("b", [40.0, 120.0, 30.0, 125.0, 60.0]),
        ("c", [80.0, 81.0, 79.0, 80.0, 80.5]),
    ];
    for (position, (fs, values)) in rates.iter().enumerate() {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        let case = store
            .add_case(
                run,
                &format!("{fs}.files"),
                position as i64,
                &typed(&config),
                r#"{"kind":"metadata","name":"files"}"#,
            )
            .unwrap();
        for (rep, rate) in values.iter().enumerate() {
            let results = [ResultRecord {
                dims: Dims {
                    operation: Some("create".into()),
                    ..Dims::default()
                },
                measurements: vec![OPS.at(*rate)],
                ..ResultRecord::default()
            }];
            let new = NewSample {
                results: &results,
                ..sample(rep as u32 + 1, Outcome::Ok)
            };
            store.record_sample(case, &new).unwrap();
        }
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let standings = crate::standings::Standings::of(&model, &Default::default());
    let d = &standings.disciplines[0];
    assert_eq!(d.leaders, ["a"], "{d:?}");
    let lead = d.lead.as_ref().expect("a lead");
    assert_eq!(lead.over, "c", "{lead:?}");
    assert!(lead.ci95_low.unwrap() > 1.0, "{lead:?}");
}

/// A discipline that fewer than half of the configurations ran (a sweep on one of them) is
/// among the winners but scores no points: the ranking compares like with like.
#[test]
fn a_discipline_few_configurations_ran_does_not_score() {
    use fsbench_model::Sweep;
    const OPS: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
    let (_dir, mut store, run) = new_run("p", 15);
    let create = |rate: f64, sweep: Option<f64>| ResultRecord {
        dims: Dims {
            operation: Some("create".into()),
            sweep: sweep.map(|value| Sweep {
                parameter: "threads".into(),
                value,
            }),
            ..Dims::default()
        },
        measurements: vec![OPS.at(rate)],
        ..ResultRecord::default()
    };
    for (position, (fs, speed)) in [("ext2", 1.0), ("ext3", 2.0), ("ext4", 3.0), ("xfs", 4.0)]
        .into_iter()
        .enumerate()
    {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        let files = store
            .add_case(
                run,
                &format!("{fs}.files"),
                position as i64 * 2,
                &typed(&config),
                r#"{"kind":"metadata","name":"files"}"#,
            )
            .unwrap();
        for rep in 1..=3u32 {
            let results = [create(1000.0 * speed + rep as f64, None)];
            store
                .record_sample(
                    files,
                    &NewSample {
                        results: &results,
                        ..sample(rep, Outcome::Ok)
                    },
                )
                .unwrap();
        }
        if fs == "ext2" {
            let curve = store
                .add_case(
                    run,
                    "ext2.curve",
                    position as i64 * 2 + 1,
                    &typed(&config),
                    r#"{"kind":"metadata","name":"curve"}"#,
                )
                .unwrap();
            for rep in 1..=3u32 {
                let results: Vec<ResultRecord> = [1.0, 2.0, 4.0]
                    .iter()
                    .map(|&t| create(500.0 * t + rep as f64, Some(t)))
                    .collect();
                store
                    .record_sample(
                        curve,
                        &NewSample {
                            results: &results,
                            ..sample(rep, Outcome::Ok)
                        },
                    )
                    .unwrap();
            }
        }
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let standings = crate::standings::Standings::of(&model, &Default::default());
    let curve = standings
        .disciplines
        .iter()
        .filter(|d| d.workload == "curve")
        .count();
    assert_eq!(curve, 3, "the sweep's disciplines are still shown");
    let ext2 = standings.scores.iter().find(|s| s.label == "ext2").unwrap();
    let metadata = fsbench_workload::WorkloadSettings::category_of("metadata").unwrap();
    assert_eq!(
        ext2.placed[&metadata], 1,
        "only the discipline everyone ran"
    );
    assert_eq!(ext2.points[&metadata], 1.0, "last of 4 in files");
    assert_eq!(standings.scores[0].label, "xfs");
}

/// Study 004's shape: dbench at a fixed load beside a saturation sweep of the client count,
/// both with a row per client. The report draws the fixed load's total as a bar chart and one
/// saturation curve per swept workload, never a chart per client or per sweep point (the
/// 004 report at scale 0.01 once drew thousands, 27 MB of HTML).
#[test]
fn a_client_sweep_beside_a_fixed_load_draws_one_curve_and_the_loads_bars() {
    use fsbench_model::Sweep;
    let (_dir, mut store, run) = new_run("p", 12);
    // The total of `clients` clients and one row per client, at a sweep point or not.
    let load = |clients: u64, speed: f64, point: Option<f64>| -> Vec<ResultRecord> {
        let dims = |client: Option<u64>| Dims {
            threads: Some(clients),
            client,
            sweep: point.map(|value| Sweep {
                parameter: "clients".into(),
                value,
            }),
            ..Dims::default()
        };
        let total = 1e8 * speed * f64::min(clients as f64, 4.0);
        std::iter::once(ResultRecord {
            dims: dims(None),
            measurements: vec![THROUGHPUT.at(total)],
            ..ResultRecord::default()
        })
        .chain((1..=clients).map(|c| ResultRecord {
            dims: dims(Some(c)),
            measurements: vec![THROUGHPUT.at(total / clients as f64)],
            ..ResultRecord::default()
        }))
        .collect()
    };
    let mut position = 0;
    for (fs, speed) in [("ext4", 1.0), ("btrfs", 0.5)] {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        for (name, results) in [
            ("dbench-5", load(5, speed, None)),
            (
                "saturation",
                [1u64, 2, 4, 8]
                    .iter()
                    .flat_map(|&n| load(n, speed, Some(n as f64)))
                    .collect(),
            ),
        ] {
            let case = store
                .add_case(
                    run,
                    &format!("{fs}.{name}"),
                    position,
                    &typed(&config),
                    &format!(r#"{{"kind":"clients","name":"{name}"}}"#),
                )
                .unwrap();
            position += 1;
            for rep in 1..=3u32 {
                store
                    .record_sample(
                        case,
                        &NewSample {
                            results: &results,
                            ..sample(rep, Outcome::Ok)
                        },
                    )
                    .unwrap();
            }
        }
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    let captions: Vec<&str> = html
        .split("<figcaption>")
        .skip(1)
        .map(|c| c.split("</figcaption>").next().unwrap())
        .collect();
    let curves: Vec<&&str> = captions
        .iter()
        .filter(|c| c.contains("saturation curve"))
        .collect();
    assert_eq!(curves.len(), 1, "one curve chart: {captions:#?}");
    assert!(
        curves[0].starts_with("throughput over clients"),
        "{curves:?}"
    );
    assert!(
        captions
            .iter()
            .any(|c| c.starts_with("dbench-5: threads=5: mean")),
        "the fixed load's bars: {captions:#?}"
    );
    assert!(
        !captions.iter().any(|c| c.contains("client=")),
        "no chart per client: {captions:#?}"
    );
    assert!(captions.len() < 12, "{captions:#?}");
}

/// A run whose names come from a hostile plan: HTML, a formula, terminal codes, a newline.
fn hostile_fixture() -> (tempfile::TempDir, Store, i64) {
    let (dir, mut store, run) = new_run("<script>alert(1)</script>\u{1b}[31mred\nsecond line", 2);
    let config = r#"{"filesystem":"ext4","mkfs_set":"@SUM(1+1)","mount_set":"-2+3","mkfs_options":"<img src=x onerror=alert(1)>","scheduler":null,"cache":"warm"}"#;
    let workload = r#"{"kind":"sleep","name":"=cmd|' /c calc'!A0"}"#;
    let case = store
        .add_case(
            run,
            "ext4.@SUM(1+1).-2+3.default.warm.=cmd|' /c calc'!A0",
            0,
            &typed(config),
            workload,
        )
        .unwrap();
    const DRIFT: MetricDef = MetricDef::new("drift", Unit::Nanos, Direction::Lower).main();
    let results = [ResultRecord {
        dims: Dims {
            phase: Some("+phase".into()),
            ..Dims::default()
        },
        measurements: vec![DRIFT.at(-1.5)],
        ..ResultRecord::default()
    }];
    store
        .record_sample(
            case,
            &NewSample {
                results: &results,
                ..sample(1, Outcome::Ok)
            },
        )
        .unwrap();
    store
        .record_sample(
            case,
            &NewSample {
                reason: Some("\tthe tool said \u{1b}]0;owned\u{7}"),
                ..sample(2, Outcome::Failed)
            },
        )
        .unwrap();
    (dir, store, run)
}

/// The cells of one CSV line (RFC 4180 quoting).
fn csv_cells(line: &str) -> Vec<String> {
    let (mut cells, mut cell, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => cells.push(std::mem::take(&mut cell)),
            c => cell.push(c),
        }
    }
    cells.push(cell);
    cells
}

#[test]
fn names_cannot_inject_formulas_html_or_terminal_codes() {
    let (_dir, store, run) = hostile_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();

    // CSV: a text cell never starts a formula; a number stays a number, `-1.5` included.
    let csv = render(&Csv, &model);
    let header = csv_cells(csv.lines().next().unwrap());
    let value = header.iter().position(|h| h == "value").unwrap();
    let mut numbers = Vec::new();
    for line in csv.lines().skip(1) {
        let cells = csv_cells(line);
        assert_eq!(cells.len(), header.len(), "{line}");
        for (i, cell) in cells.iter().enumerate() {
            if i == value && !cell.is_empty() {
                numbers.push(cell.clone());
                continue;
            }
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "column {}: {cell:?} in {line}",
                header[i]
            );
        }
    }
    assert_eq!(numbers, ["-1.5"], "{csv}");
    assert!(csv.contains(",'=cmd|' /c calc'!A0,"), "{csv}");
    assert!(csv.contains(",'@SUM(1+1),'-2+3,"), "{csv}");
    assert!(csv.contains(",'+phase,"), "{csv}");

    // Markdown: HTML is shown as text, not run; no control character reaches the page.
    let md = render(&crate::Markdown::default(), &model);
    for raw in ["<script>", "<img", "\u{1b}", "\u{7}", "\t"] {
        assert!(!md.contains(raw), "{raw:?} in {md}");
    }
    assert!(
        md.starts_with("# fsbench report: run 1 \"&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{md}"
    );
    assert!(md.contains("&lt;img src=x onerror=alert(1)&gt;"), "{md}");
    // A `|` in a name does not end its table cell.
    assert!(md.contains("=cmd\\|' /c calc'\\!A0"), "{md}");

    // Terminal: codes and newlines in names are shown escaped, on the name's own line.
    let text = render(
        &Terminal {
            db: None,
            all_metrics: true,
            ranking: true,
        },
        &model,
    );
    for raw in ["\u{1b}", "\u{7}", "\t"] {
        assert!(!text.contains(raw), "{raw:?} in {text}");
    }
    // The name shown escaped (elided in its middle to keep the line within 120 columns).
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("\"<script>alert(1)") && first.chars().count() <= 120,
        "{text}"
    );
    assert!(text.contains("\\u{1b}]0;owned\\u{7}"), "{text}");
}

/// The quick profile's shape on a host with six of its ten filesystems: five workloads
/// (streaming, metadata, fsync'd creates, a client load, untar) in five interleaved rounds,
/// each filesystem with a speed of its own (ext2 and ext3 alike), the last four unsupported
/// with the reason a host without them gives.
fn quick_fixture() -> (tempfile::TempDir, Store, i64) {
    const OPS: MetricDef = MetricDef::new("ops_rate", Unit::OpsPerSec, Direction::Higher).main();
    const REAL: MetricDef = MetricDef::new("real", Unit::Nanos, Direction::Lower).main();
    const USER: MetricDef = MetricDef::new("user", Unit::Nanos, Direction::Lower);
    let latency = |base: f64| {
        [
            ("latency_p50", 1.0),
            ("latency_p90", 1.6),
            ("latency_p99", 4.0),
            ("latency_p99_9", 30.0),
        ]
        .map(|(name, f)| MetricDef::new(name, Unit::Nanos, Direction::Lower).at(base * f))
    };
    let filesystems = [
        "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "jfs", "reiserfs", "f2fs", "nilfs2",
    ];
    let speeds = [1.0, 1.0, 1.15, 1.3, 0.8, 0.55];
    let (dir, mut store, run) = new_run("quick", 250);
    let mut position = 0;
    for (f, fs) in filesystems.iter().enumerate() {
        let config = format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}}"#
        );
        for (workload, kind) in [
            ("stream", "matrix"),
            ("files", "metadata"),
            ("fsync", "metadata"),
            ("clients", "clients"),
            ("untar", "task"),
        ] {
            let case = store
                .add_case(
                    run,
                    &format!("{fs}.default.default.default.warm.{workload}"),
                    position,
                    &typed(&config),
                    &format!(r#"{{"kind":"{kind}","name":"{workload}"}}"#),
                )
                .unwrap();
            position += 1;
            for rep in 1..=5u32 {
                let Some(speed) = speeds.get(f) else {
                    let reason = format!("{fs} cannot run on this host: the kernel lacks {fs} (not in /proc/filesystems: not built in and no module loaded); mkfs.{fs}, fsck.{fs} are not installed (apt-get install {fs}-tools)");
                    store
                        .record_sample(
                            case,
                            &NewSample {
                                reason: Some(&reason),
                                not_retried: rep > 1,
                                ..sample(rep, Outcome::Unsupported)
                            },
                        )
                        .unwrap();
                    continue;
                };
                // Every round drifts all alike; each value has a little noise of its own.
                let drift = [1.0, 0.9, 1.1, 0.95, 1.05][rep as usize - 1];
                let noise =
                    1.0 + 0.01 * ((f * 3 + rep as usize * 7 + position as usize) % 5) as f64;
                let v = speed * drift * noise;
                let dims = |phase: Option<&str>, operation: Option<&str>| Dims {
                    phase: phase.map(String::from),
                    operation: operation.map(String::from),
                    ..Dims::default()
                };
                let results: Vec<ResultRecord> = match kind {
                    "matrix" => ["write", "rewrite", "read", "reread"]
                        .iter()
                        .map(|phase| ResultRecord {
                            dims: Dims {
                                file_size_bytes: Some(16 << 20),
                                record_size_bytes: Some(1 << 20),
                                ..dims(Some(phase), None)
                            },
                            measurements: vec![THROUGHPUT.at(7e8 * v)],
                            ..ResultRecord::default()
                        })
                        .collect(),
                    "metadata" => {
                        let ops: &[&str] = if workload == "files" {
                            &["create", "stat", "readdir", "unlink"]
                        } else {
                            &["create"]
                        };
                        ops.iter()
                            .enumerate()
                            .map(|(i, op)| ResultRecord {
                                dims: Dims {
                                    threads: Some(1),
                                    ..dims(None, Some(op))
                                },
                                measurements: std::iter::once(OPS.at(3e4 * (i + 1) as f64 * v))
                                    .chain(latency(3e4 / v))
                                    .collect(),
                                ..ResultRecord::default()
                            })
                            .collect()
                    }
                    "clients" => (0..=4u64)
                        .map(|client| ResultRecord {
                            dims: Dims {
                                threads: Some(4),
                                client: (client > 0).then_some(client),
                                ..Dims::default()
                            },
                            measurements: vec![
                                THROUGHPUT.at(8e8 * v / if client > 0 { 4.0 } else { 1.0 })
                            ],
                            ..ResultRecord::default()
                        })
                        .collect(),
                    _ => vec![ResultRecord {
                        dims: Dims {
                            step: Some("untar".into()),
                            operation: Some("native".into()),
                            ..Dims::default()
                        },
                        measurements: vec![REAL.at(2e8 / v), USER.at(5e7 / v)],
                        ..ResultRecord::default()
                    }],
                };
                store
                    .record_sample(
                        case,
                        &NewSample {
                            results: &results,
                            ..sample(rep, Outcome::Ok)
                        },
                    )
                    .unwrap();
            }
        }
    }
    (dir, store, run)
}

/// The summary a new user reads at the end of `fsbench run`: no line over 120 columns (the
/// tables of several configurations as rows when they would be wider), one line per
/// configuration that was not measured, and the verdict and the ranking with its intervals
/// in the last 30 lines.
#[test]
fn the_quick_summary_fits_120_columns_and_says_each_unsupported_configuration_once() {
    let (_dir, store, run) = quick_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let text = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    for line in text.lines() {
        assert!(
            line.chars().count() <= 120,
            "{} columns: {line}\n{text}",
            line.chars().count()
        );
    }
    // Each configuration not measured: a line of what it cost, its reason whole beneath.
    let lines: Vec<&str> = text.lines().collect();
    for fs in ["jfs", "reiserfs", "f2fs", "nilfs2"] {
        let heads: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].starts_with(&format!("  {fs} ")))
            .collect();
        assert_eq!(heads.len(), 1, "{fs}:\n{text}");
        let head = lines[heads[0]];
        assert!(
            head.ends_with("unsupported ×25 (every workload):"),
            "{head}"
        );
        let reason: Vec<&str> = lines[heads[0] + 1..]
            .iter()
            .take_while(|l| l.starts_with("    "))
            .flat_map(|l| l.split_whitespace())
            .collect();
        assert_eq!(
            reason.join(" "),
            format!("{fs} cannot run on this host: the kernel lacks {fs} (not in /proc/filesystems: not built in and no module loaded); mkfs.{fs}, fsck.{fs} are not installed (apt-get install {fs}-tools)"),
            "{text}"
        );
    }
    assert!(!text.contains('…'), "{text}");
    assert!(!text.contains("ops_rate"), "{text}");
    let last: Vec<&str> = text.lines().rev().take(30).collect();
    let last = last.into_iter().rev().collect::<Vec<_>>().join("\n");
    assert!(last.contains("\nVerdict ("), "{last}");
    assert!(last.contains("\nRanking ("), "{last}");
    // The ranking by points, most first, each with its rank interval beside them.
    let ranking: Vec<(&str, f64, &str)> = last
        .lines()
        .filter(|l| l.contains(" points  rank "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "rank").unwrap();
            (words[0], words[1].parse().unwrap(), words[at + 1])
        })
        .collect();
    assert_eq!(ranking.len(), 6, "{last}");
    assert!(ranking.windows(2).all(|w| w[0].1 >= w[1].1), "{last}");
    // ext2 and ext3 are alike: their ranks overlap, and neither is claimed ahead.
    let rank_of = |fs: &str| {
        ranking
            .iter()
            .find(|r| r.0 == fs)
            .unwrap_or_else(|| panic!("{fs}: {last}"))
            .2
            .to_string()
    };
    assert_eq!(rank_of("ext2"), rank_of("ext3"));
    assert!(rank_of("ext2").contains('–'), "{last}");
    assert_eq!(rank_of("xfs"), "1", "{last}");
    // Streaming: xfs wins, 13 % ahead of ext4, with its interval.
    assert!(
        last.lines()
            .any(|l| l.contains("stream write 16m 1m (throughput)")
                && l.contains("xfs ")
                && l.contains("ahead of ext4 (95 % CI")),
        "{last}"
    );
}

/// Every exporter from one model: the JSON has what the other reports say — each discipline's
/// leaders and lead, the ranks with their intervals and the order they claim, what was not
/// measured per configuration and the configurations themselves.
#[test]
fn the_json_carries_the_verdict_the_rank_intervals_and_what_was_not_measured() {
    let (_dir, store, run) = quick_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&render(&Json, &model)).unwrap();
    let standings = &doc["standings"];
    let stream = standings["disciplines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["workload"] == "stream" && d["row"] == "write 16m 1m")
        .unwrap();
    assert_eq!(stream["leaders"], serde_json::json!(["xfs"]));
    assert_eq!(stream["lead"]["over"], "ext4");
    assert!(
        stream["lead"]["ci95_low"].as_f64().unwrap() > 1.0,
        "{stream}"
    );
    let scores = standings["scores"].as_array().unwrap();
    assert_eq!(scores[0]["label"], "xfs");
    assert_eq!(
        scores[0]["rank"],
        serde_json::json!({"best": 1, "worst": 1})
    );
    let rank = |fs: &str| &scores.iter().find(|s| s["label"] == fs).unwrap()["rank"];
    assert_eq!(rank("ext2"), rank("ext3"));
    let ahead = standings["ahead"].as_array().unwrap();
    assert!(
        ahead.contains(&serde_json::json!(["xfs", "ext4"])),
        "{ahead:?}"
    );
    assert!(!ahead.contains(&serde_json::json!(["ext2", "ext3"])));
    assert!(!ahead.contains(&serde_json::json!(["ext3", "ext2"])));
    let not_measured = doc["not_measured"].as_array().unwrap();
    assert_eq!(not_measured.len(), 4, "{not_measured:?}");
    assert_eq!(not_measured[0]["configuration"], "jfs");
    assert_eq!(not_measured[0]["samples"], 25);
    assert_eq!(not_measured[0]["workloads"].as_array().unwrap().len(), 5);
    let configurations = doc["configurations"].as_array().unwrap();
    assert_eq!(configurations.len(), 10);
    assert_eq!(
        configurations[6],
        serde_json::json!({"run_id": 1, "label": "jfs", "measured": false, "bare": false})
    );
    assert_eq!(doc["runs"][0]["cases"][5]["configuration"], 1);
}

/// The HTML answers first — the verdict, the heat-map of every configuration against the
/// best, then the ranking, the charts, the configurations (collapsed) and what was not
/// measured; no chart puts two workloads side by side; every chart draws a configuration in
/// the colour the legend gives it, and in no other.
#[test]
fn the_quick_report_answers_first_and_draws_each_configuration_in_its_colour() {
    let (_dir, store, run) = quick_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    let at = |part: &str| html.find(part).unwrap_or_else(|| panic!("{part} missing"));
    let order = [
        "<section id=\"verdict\">",
        "<section id=\"heatmap\">",
        "<section id=\"ranking\">",
        "<section id=\"charts\">",
        "<section id=\"configurations\">",
        "<section id=\"not-measured\">",
    ];
    for pair in order.windows(2) {
        assert!(at(pair[0]) < at(pair[1]), "{} before {}", pair[0], pair[1]);
    }
    assert!(html[at("<section id=\"configurations\">")..].contains("<details>"));
    // The heat-map: a row per measured configuration.
    let heatmap = &html[at("<section id=\"heatmap\">")..at("<section id=\"ranking\">")];
    assert_eq!(
        heatmap.matches("<th class=\"config\">").count(),
        6,
        "{heatmap}"
    );
    // Not measured: one row per configuration and reason.
    let missing = &html[at("<section id=\"not-measured\">")..];
    assert_eq!(
        missing
            .matches("<td class=\"bad\">unsupported</td>")
            .count(),
        4
    );
    // The legend's colours.
    let legend: Vec<(String, String)> = model
        .configurations
        .iter()
        .enumerate()
        .filter(|(_, c)| c.measured)
        .map(|(i, c)| (c.label.clone(), crate::charts::colour_hex(i)))
        .collect();
    let workloads = ["stream", "files", "fsync", "clients", "untar"];
    let figures: Vec<&str> = html.split("<figure class=\"chart\">").skip(1).collect();
    assert!(figures.len() > 10, "{} charts", figures.len());
    for figure in figures {
        let svg = &figure[..figure.find("</svg>").unwrap()].to_lowercase();
        let caption = figure.split("<figcaption>").nth(1).unwrap();
        // One workload per chart: its title names it, and no other.
        let named: Vec<&&str> = workloads
            .iter()
            .filter(|w| caption.starts_with(&format!("{w}:")))
            .collect();
        assert_eq!(named.len(), 1, "{caption}");
        // The configurations a chart names are drawn in their colours, and no other
        // configuration's colour appears.
        let shown: Vec<&(String, String)> = legend
            .iter()
            .filter(|(label, _)| svg.contains(&format!("\n{label}\n")))
            .collect();
        for (label, colour) in &legend {
            let used = svg.contains(&format!("\"{colour}\""));
            let named = shown.iter().any(|(l, _)| l == label);
            assert_eq!(used, named, "{label} ({colour}) in {caption}");
        }
    }
}

/// ext4 and xfs, fresh and aged (`old`), 4 rounds each: ext4 leads fresh, aging costs it half
/// its throughput and xfs only a tenth, so xfs leads aged.
fn aged_fixture() -> (tempfile::TempDir, Store, i64) {
    let (dir, mut store, run) = new_run("aged", 16);
    let mut position = 0;
    for (fs, fresh_rate, aged_rate) in [("ext4", 200e6, 100e6), ("xfs", 150e6, 135e6)] {
        for age in ["fresh", "old"] {
            let config = format!(
                r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"default","scheduler":null,"age":"{age}","cache":"warm"}}"#
            );
            let key = if age == "fresh" {
                format!("{fs}.default.default.default.warm.stream")
            } else {
                format!("{fs}.default.default.default.old.warm.stream")
            };
            let case = store
                .add_case(
                    run,
                    &key,
                    position,
                    &typed(&config),
                    r#"{"kind":"matrix","name":"stream"}"#,
                )
                .unwrap();
            position += 1;
            let rate = if age == "fresh" {
                fresh_rate
            } else {
                aged_rate
            };
            for rep in 1..=4u32 {
                let results = [cell("write", 1 << 20, rate * (1.0 + rep as f64 * 1e-3))];
                store
                    .record_sample(
                        case,
                        &NewSample {
                            results: &results,
                            ..sample(rep, Outcome::Ok)
                        },
                    )
                    .unwrap();
            }
        }
    }
    (dir, store, run)
}

/// The model pairs every aged configuration with itself fresh (the penalty, whatever the
/// figure's direction) and says whether aging changes the ranking; the terminal summary and
/// the Markdown show both; a run without aging has none.
#[test]
fn aged_against_fresh_gives_the_penalty_and_whether_the_ranking_changes() {
    let (_dir, store, run) = aged_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let aging = &model.aging;
    assert_eq!(aging.penalties.len(), 2, "{aging:?}");
    let ext4 = &aging.penalties[0];
    assert_eq!(
        (
            ext4.configuration.as_str(),
            ext4.age.as_str(),
            ext4.workload.as_str()
        ),
        ("ext4", "old", "stream")
    );
    assert!((ext4.penalty_percent - 50.0).abs() < 0.1, "{ext4:?}");
    assert!((aging.penalties[1].penalty_percent - 10.0).abs() < 0.1);
    let verdict = ext4.vs_fresh.as_ref().unwrap().verdict;
    assert_eq!(verdict, fsbench_analysis::compare::Verdict::Lower);
    assert_eq!(aging.rankings.len(), 1);
    let ranking = &aging.rankings[0];
    assert!(ranking.changed);
    assert_eq!(ranking.fresh[0].0, "ext4");
    assert_eq!(ranking.aged[0].0, "xfs");
    let terminal = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    assert!(terminal.contains("Aging penalty"), "{terminal}");
    assert!(
        terminal.contains("ext4 age=old: 50.0 % lower"),
        "{terminal}"
    );
    assert!(
        terminal.contains("aging changes 1 of 1 rankings")
            && terminal.contains("fresh ext4 > xfs; aged xfs > ext4"),
        "{terminal}"
    );
    let markdown = render(&crate::Markdown::default(), &model);
    assert!(markdown.contains("## Aged against fresh"), "{markdown}");
    assert!(markdown.contains("| **yes** |"), "{markdown}");
    // Nothing aged, nothing said (and nothing in the JSON).
    let (_dir, store, run) = fixture();
    let plain = ReportModel::load(&store, &[run]).unwrap();
    assert!(plain.aging.is_empty());
    assert!(!render(&Json, &plain).contains("\"aging\""));
}

/// The HTML report has a section "Aged against fresh" from the model's aging (each aged
/// configuration against itself fresh with its interval and verdict, the rankings fresh and
/// aged and whether aging changes them); a run without aging has none.
#[test]
fn the_html_report_sets_each_aged_configuration_against_itself_fresh() {
    let (_dir, store, run) = aged_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let html = render(&crate::Html::default(), &model);
    let section = &html[html
        .find("<section id=\"aging\">")
        .expect("the aging section")..];
    let section = &section[..section.find("</section>").unwrap()];
    for text in [
        "Aged against fresh",
        "<td>stream write 1m 1m (throughput)</td>",
        "<td>ext4</td><td>old</td>",
        "50.0 % lower (95 % CI",
        "<td class=\"bad\">",
        "Aging changes 1 of 1 rankings",
        "<td>ext4 &gt; xfs</td><td>xfs &gt; ext4</td><td class=\"bad\">yes</td>",
    ] {
        assert!(section.contains(text), "{text} missing from {section}");
    }
    // The penalty's means in their unit.
    assert!(section.contains("95.6 MiB&#x2f;s</td>"), "{section}");
    let (_dir, store, run) = fixture();
    let plain = ReportModel::load(&store, &[run]).unwrap();
    assert!(!render(&crate::Html::default(), &plain).contains("id=\"aging\""));
}

/// A case of three repetitions with series, the third disturbed by the host: the report
/// draws the median one over time by default (said why), every one on request and none when
/// asked; the disturbed sample is marked in the verdict and listed with why.
#[test]
fn the_html_report_draws_samples_over_time_and_marks_what_the_host_disturbed() {
    use crate::over_time::{self, SeriesChoice};
    use fsbench_model::series::{Assessment, PhaseVerdict, Point, Series};
    let (dir, mut store, run) = new_run("timeline", 3);
    let case = store
        .add_case(
            run,
            "ext4.default.default.default.warm.stream",
            0,
            &typed(
                r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}"#,
            ),
            r#"{"kind":"matrix","name":"stream"}"#,
        )
        .unwrap();
    for (rep, rate) in [(1u32, 300e6), (2, 100e6), (3, 200e6)] {
        let results = [cell("write", 1 << 20, rate)];
        let points = |v: f64| {
            (0..20)
                .map(|i| Point(i * 100_000_000, 100_000_000, v))
                .collect()
        };
        let one = |source: &str, label: &str, subject: &str, metric: &str, unit, v| Series {
            source: source.into(),
            phase: (source == "workload").then_some(0),
            label: label.into(),
            subject: subject.into(),
            metric: metric.into(),
            unit,
            points: points(v),
        };
        let series = [
            one("workload", "write 1m 1m", "total", "ops", Unit::Count, 10.0),
            one(
                "workload",
                "write 1m 1m",
                "total",
                "bytes",
                Unit::Bytes,
                rate / 10.0,
            ),
            one(
                "workload",
                "write 1m 1m",
                "total",
                "latency_p50",
                Unit::Nanos,
                2e6,
            ),
            one(
                "workload",
                "write 1m 1m",
                "total",
                "latency_p99",
                Unit::Nanos,
                8e6,
            ),
            one("memory", "", "host", "dirty", Unit::Bytes, 5e8),
            one("memory", "", "host", "writeback", Unit::Bytes, 1e7),
            one("disk", "device", "loop7", "busy", Unit::Percent, 60.0),
            one("disk", "disk", "vda", "busy", Unit::Percent, 70.0),
            one("cpu", "", "all", "iowait", Unit::Percent, 20.0),
            one(
                "cpu",
                "",
                "all",
                "steal",
                Unit::Percent,
                if rep == 3 { 9.0 } else { 0.0 },
            ),
        ];
        let assessment = Assessment {
            phases: vec![PhaseVerdict {
                phase: 0,
                label: "write 1m 1m".into(),
                steady: Some(true),
                change_percent: Some(0.0),
                warmup_ns: Some(0),
                finish_ns: None,
            }],
            steal_percent: Some(if rep == 3 { 9.0 } else { 0.0 }),
            disturbed: rep == 3,
            ..Assessment::default()
        };
        store
            .record_sample(
                case,
                &NewSample {
                    results: &results,
                    series: &series,
                    assessment: Some(&assessment),
                    ..sample(rep, Outcome::Ok)
                },
            )
            .unwrap();
    }
    let draw = |choice: SeriesChoice| {
        let mut model = ReportModel::load(&store, &[run]).unwrap();
        over_time::load(&mut model, &store, choice).unwrap();
        // Only what is drawn is read.
        let read = model
            .cases()
            .flat_map(|c| &c.samples)
            .filter(|s| !s.series.is_empty())
            .count();
        let html = render(
            &crate::Html {
                series: choice,
                ..crate::Html::default()
            },
            &model,
        );
        (read, html)
    };
    let (read, html) = draw(SeriesChoice::Representative);
    assert_eq!(read, 1);
    assert_eq!(html.matches("<figure class=\"timeline\">").count(), 1);
    let timeline = &html[html.find("<figure class=\"timeline\">").unwrap()..];
    let timeline = &timeline[..timeline.find("</figure>").unwrap()];
    for text in [
        "stream on ext4: repetition 3 of 3",
        "the median of the 3 repetitions measured by its main figure (throughput)",
        "throughput",
        "MiB/s",
        "latency",
        "dirty",
        "loop7 (the filesystem",
        "steal",
        "time since the sample started [s]",
        "⚠ disturbed by the host: CPU steal 9.0 %",
    ] {
        assert!(timeline.contains(text), "{text} missing from {timeline}");
    }
    // The disturbed sample is marked in the verdict and listed.
    let verdict = &html[html.find("<section id=\"verdict\">").unwrap()..];
    let verdict = &verdict[..verdict.find("</section>").unwrap()];
    assert!(
        verdict.contains(
            "title=\"repetition 3: disturbed by the host: CPU steal 9.0 % of the CPUs&#x27; time\""
        ),
        "{verdict}"
    );
    let host = &html[html.find("<section id=\"host\">").unwrap()..];
    assert!(host.contains("3 samples were watched"), "{host}");
    assert!(host.contains("<td class=\"num\">3</td><td class=\"bad\">disturbed by the host"));
    let (read, html) = draw(SeriesChoice::All);
    assert_eq!(read, 3);
    assert_eq!(html.matches("<figure class=\"timeline\">").count(), 3);
    let (read, html) = draw(SeriesChoice::None);
    assert_eq!(read, 0);
    assert!(!html.contains("<figure class=\"timeline\">"));
    // The marks need no series: they come with the samples.
    assert!(html.contains("<section id=\"host\">"));
    drop(dir);
}

/// A target's record is read typed once, when the run is loaded: the HTML report shows a full
/// one's device, mkfs, mount, scheduler, cache and checks from its fields; a record this
/// fsbench cannot read is no target (with a note), never a failed report, and the JSON export
/// carries either as it was stored.
#[test]
fn target_records_are_read_typed_and_an_unreadable_one_is_no_target() {
    let (_dir, mut store, run) = new_run("p", 2);
    let case = store
        .add_case(
            run,
            "ext4.default.default.default.warm.small",
            0,
            &typed(r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"default","scheduler":null,"cache":"warm"}"#),
            r#"{"kind":"matrix","name":"small"}"#,
        )
        .unwrap();
    let full = r#"{"filesystem":"ext4","device":{"kind":"image","path":"/dev/loop7","size_bytes":1,"image":null,"loop_direct_io":true,"disk":{"name":"vda","model":"QEMU HARDDISK","vendor":null,"rotational":true,"size_bytes":null},"array":{"layout":"md-raid0:2","made_by":"md","members":[{"path":"/dev/loop7","image":null,"size_bytes":1},{"path":"/dev/loop8","image":null,"size_bytes":1}],"made":null,"read_back":null,"listed":[]}},"mountpoint":"/mnt","tool_versions":["mke2fs 1.47.0"],"default_mkfs_options":[],"mkfs":{"command":"mkfs.ext4 /dev/md/x","elapsed_ns":1,"exit_status":0},"readback":null,"mount":{"command":"mount","elapsed_ns":1,"requested":null,"fs_type":"ext4","mount_options":"rw,noatime","super_options":"rw","changed":[],"not_shown":[]},"scheduler":{"sysfs":"/sys","available":[],"previous":"none","requested":null,"in_force":"mq-deadline","note":null,"backing_disk":null},"cache":{"policy":"warm","state":"warm","before":null,"after":null,"note":null},"fsck":{"command":"fsck.ext4 -n","elapsed_ns":2000000000,"exit_status":0,"clean":true,"output_tail":""},"teardown":[]}"#;
    let unreadable = r#"{"filesystem":4,"fsck":{"clean":false,"elapsed_ns":1}}"#;
    for (rep, target) in [(1, full), (2, unreadable)] {
        let results = [cell("write", 65536, 1e6)];
        store
            .record_sample(
                case,
                &NewSample {
                    results: &results,
                    target_json: Some(target),
                    ..sample(rep, Outcome::Ok)
                },
            )
            .unwrap();
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let samples = &model.runs[0].cases[0].samples;
    assert_eq!(samples[0].target_info().unwrap().filesystem, "ext4");
    assert!(samples[1].target_info().is_none());
    let note = samples[1].target.as_ref().unwrap().note.as_deref().unwrap();
    assert!(note.contains("cannot be read"), "{note}");
    let html = render(&crate::Html::default(), &model);
    for shown in [
        "/dev/loop7 (image, md-raid0:2 over 2 members) on vda (QEMU HARDDISK)",
        "mkfs.ext4 /dev/md/x",
        "rw,noatime (rw)",
        "mq-deadline",
        "clean (1 checks)",
        "mke2fs 1.47.0",
    ] {
        let escaped = shown.replace('/', "&#x2f;");
        assert!(html.contains(&escaped), "{escaped}");
    }
    let json: serde_json::Value = serde_json::from_str(&render(&Json, &model)).unwrap();
    let stored = &json["runs"][0]["cases"][0]["samples"];
    assert_eq!(stored[0]["target"].to_string().len(), full.len());
    assert_eq!(stored[1]["target"]["filesystem"], 4);
}

/// A durability result as the workload records it: `per_kind` violations of each kind (in
/// `Kind::ALL`'s order) over `cuts` cuts, recoveries of `p50` and `max` ns, the first
/// violations kept with their sequence.
fn durability_result(cuts: u64, per_kind: [u64; 7], p50: f64, max: f64) -> ResultRecord {
    use fsbench_workload::durability::{BY_KIND, CUTS, RECOVERY, VIOLATIONS};
    let total: u64 = per_kind.iter().sum();
    let mut measurements = vec![VIOLATIONS.at(total as f64), CUTS.at(cuts as f64)];
    measurements.extend(BY_KIND.iter().zip(per_kind).map(|(m, n)| m.at(n as f64)));
    measurements.extend([
        RECOVERY[0].at(p50),
        RECOVERY[1].at(p50),
        RECOVERY[2].at(max),
        RECOVERY[3].at(max),
    ]);
    let kept: Vec<serde_json::Value> = (0..total.min(20))
        .map(|i| {
            let mut v = serde_json::json!({
                "kind": "stale data exposed",
                "path": "B",
                "detail": format!("the block at byte 4096 holds file {i}'s block"),
                // Two violations a cut: the second of each cut shares the first's sequence.
                "cut": 3 + i / 2,
                "family": "seq-2",
                "sequence": ["write B 4k@4k; fsync B", "append d/A 8k; fsync d"],
            });
            // The first of cut 4 reduced to its first operation.
            if i == 2 {
                v["minimal"] = serde_json::json!(["write B 4k@4k; fsync B"]);
                v["reduction"] =
                    "1 of 2 operations still break it (cut after the last), found in 3 replays"
                        .into();
            }
            v
        })
        .collect();
    let mut attributes = serde_json::Map::new();
    attributes.insert("sequences".into(), "seq-1,seq-2,mixed".into());
    attributes.insert("violation_list".into(), serde_json::Value::Array(kept));
    ResultRecord {
        attributes,
        measurements,
        ..ResultRecord::default()
    }
}

/// A run of the plan `safety` (`violations`: the writeback configuration's per repetition):
/// ext4 mount=default, ext4 mount=writeback (data=writeback,nodelalloc), xfs and btrfs, each
/// with a matrix write and the durability workload over 2 rounds. The writeback configuration
/// is the fastest, btrfs the second (its durability could not be cut: failed), xfs the third,
/// ext4 mount=default the slowest.
fn durability_run(store: &mut Store, run: i64, writeback: [u64; 2]) {
    let matrix = r#"{"kind":"matrix","name":"stream"}"#;
    let durability = r#"{"kind":"durability","name":"durability"}"#;
    let configurations = [
        ("ext4", "default", "", 1.0),
        ("ext4", "writeback", "data=writeback,nodelalloc", 3.0),
        ("xfs", "default", "", 2.0),
        ("btrfs", "default", "", 2.5),
    ];
    let mut position = 0;
    for (fs, set, options, speed) in configurations {
        let config = typed(&format!(
            r#"{{"filesystem":"{fs}","mkfs_set":"default","mount_set":"{set}","mount_options":"{options}","scheduler":null,"cache":"warm"}}"#
        ));
        for (name, workload) in [("stream", matrix), ("durability", durability)] {
            let key = format!("{fs}.default.{set}.default.warm.{name}");
            let case = store
                .add_case(run, &key, position, &config, workload)
                .unwrap();
            position += 1;
            for rep in 1..=2u32 {
                let (results, status, reason) = match name {
                    "stream" => (
                        vec![cell(
                            "write",
                            65536,
                            1e9 * speed * (1.0 + rep as f64 * 0.01),
                        )],
                        Outcome::Ok,
                        None,
                    ),
                    _ if fs == "btrfs" => (
                        Vec::new(),
                        Outcome::Failed,
                        Some(
                            "btrfs has no shutdown ioctl on this kernel, so it cannot be cut here",
                        ),
                    ),
                    _ => {
                        let stale = if set == "writeback" {
                            writeback[rep as usize - 1]
                        } else {
                            0
                        };
                        let p50 = if fs == "xfs" { 25e6 } else { 5e6 * rep as f64 };
                        (
                            vec![durability_result(100, [0, 0, 0, 0, 0, stale, 0], p50, 5e7)],
                            Outcome::Ok,
                            None,
                        )
                    }
                };
                store
                    .record_sample(
                        case,
                        &NewSample {
                            results: &results,
                            reason,
                            ..sample(rep, status)
                        },
                    )
                    .unwrap();
            }
        }
    }
}

fn durability_fixture() -> (tempfile::TempDir, Store, i64) {
    let (dir, mut store, run) = new_run("safety", 16);
    durability_run(&mut store, run, [5, 7]);
    (dir, store, run)
}

/// The durability section through every renderer: per configuration its cuts and violations
/// summed over its samples with each sample's count, the kinds that occurred by their names,
/// the recovery in human units and the fsck verdict; btrfs not checked, with why; the first
/// violations with the command that replays their sequence.
#[test]
fn durability_is_reported_per_configuration_in_every_output() {
    use calamine::{Data, Reader, Xlsx as XlsxReader};
    let (_dir, store, run) = durability_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let replay = "fsbench durability --fs ext4 --mount-options data=writeback,nodelalloc --device image:1G --age 30 --cut-at end --sequence 'write B 4k@4k; fsync B; append d/A 8k; fsync d'";

    let text = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    assert!(text.contains("\nDurability (per configuration"), "{text}");
    let line = |start: &str| {
        text.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("{start}: {text}"))
            .to_string()
    };
    let writeback = line("  ext4 mount=writeback  12 violations");
    assert!(
        writeback.contains("12 violations in 200 cuts (2 samples: 5, 7): stale data exposed 12;"),
        "{writeback}"
    );
    let said: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(said.contains("ext4 mount=default 0 violations in 200 cuts (2 samples: 0, 0); recovery median 5.00 ms to 10.0 ms, longest 50.0 ms; fsck clean after every cut ext4 mount=writeback"), "{said}");
    // The command whole, wrapped between words within 120 columns.
    assert!(said.contains(replay), "{said}");
    assert!(said.contains("xfs mount=default 0 violations in 200 cuts (2 samples: 0, 0); recovery median 25.0 ms, longest"), "{said}");
    assert!(
        said.contains("btrfs mount=default not checked: failed ×2: btrfs has no shutdown ioctl on this kernel, so it cannot be cut here"),
        "{said}"
    );
    assert!(
        !text.contains("lost fsync'd data"),
        "only the kinds that occurred: {text}"
    );
    assert!(
        text.contains("ext4 mount=writeback, sample 1, cut 3 (seq-2): stale data exposed: B:"),
        "{text}"
    );
    // A violation reduced is replayed by its minimal sequence, and says what the reduction found.
    let minimal = "fsbench durability --fs ext4 --mount-options data=writeback,nodelalloc --device image:1G --age 30 --cut-at end --sequence 'write B 4k@4k; fsync B'";
    assert!(said.contains(&format!("{minimal} ")), "{said}");
    assert!(
        said.contains(
            "(reduced: 1 of 2 operations still break it (cut after the last), found in 3 replays)"
        ),
        "{said}"
    );
    for line in text.lines() {
        assert!(line.chars().count() <= 120, "{line}");
    }

    let md = render(&crate::Markdown::default(), &model);
    assert!(md.contains("## Durability\n"), "{md}");
    assert!(
        md.contains("| ext4 mount=writeback | 2 samples: 5, 7 | shutdown | 200 | - | **12** | stale data exposed 12 | 5.00 ms to 10.0 ms | 50.0 ms | clean after every cut |"),
        "{md}"
    );
    assert!(md.contains("| xfs mount=default | 2 samples: 0, 0 | shutdown | 200 | - | 0 | none | 25.0 ms | 50.0 ms | clean after every cut |"), "{md}");
    assert!(
        md.contains("- btrfs mount=default: failed ×2: btrfs has no shutdown ioctl"),
        "{md}"
    );
    assert!(
        md.contains(&format!("  ```console\n  {replay}\n  ```\n")),
        "{md}"
    );
    // One example per cut, three at most: cuts 3, 4 and 5 of sample 1.
    assert_eq!(md.matches("fsbench durability --fs").count(), 3, "{md}");

    let html = render(&crate::Html::default(), &model);
    let section = &html[html
        .find("<section id=\"durability\">")
        .expect("the section")..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(
        section.contains("<td class=\"num bad\">12</td>"),
        "{section}"
    );
    assert!(
        section.contains("<td class=\"num win\">0</td>"),
        "{section}"
    );
    assert!(
        section.contains(&format!(
            "<code>{}</code>",
            replay.replace('\'', "&#x27;").replace('/', "&#x2f;")
        )),
        "{section}"
    );
    assert!(
        section.contains("btrfs mount=default: failed ×2"),
        "{section}"
    );

    let doc: serde_json::Value = serde_json::from_str(&render(&Json, &model)).unwrap();
    let checked = doc["durability"]["checked"].as_array().unwrap();
    assert_eq!(checked.len(), 3);
    assert_eq!(checked[1]["configuration"], "ext4 mount=writeback");
    assert_eq!(checked[1]["violations"], 12);
    assert_eq!(checked[1]["per_sample"], serde_json::json!([5, 7]));
    assert_eq!(
        checked[1]["by_kind"],
        serde_json::json!([{"kind": "stale data exposed", "count": 12}])
    );
    assert_eq!(checked[1]["examples"][0]["replay"], replay);
    assert_eq!(checked[1]["examples"][1]["replay"], minimal);
    assert!(checked[1]["examples"][0].get("reduction").is_none());
    assert_eq!(doc["durability"]["not_checked"][0]["status"], "failed");

    let mut bytes = Vec::new();
    crate::Xlsx.write(&model, &mut bytes).unwrap();
    let mut book: XlsxReader<_> = XlsxReader::new(std::io::Cursor::new(bytes)).unwrap();
    assert!(book.sheet_names().contains(&"durability".to_string()));
    let sheet = book.worksheet_range("durability").unwrap();
    assert_eq!(
        sheet.get((2, 0)),
        Some(&Data::String("ext4 mount=writeback".into()))
    );
    assert_eq!(sheet.get((2, 4)), Some(&Data::String("shutdown".into())));
    assert_eq!(sheet.get((2, 7)), Some(&Data::Float(12.0)));
    assert_eq!(
        sheet.get((2, 13)),
        Some(&Data::Float(12.0)),
        "stale data exposed"
    );
    assert_eq!(
        sheet.get((4, 0)),
        Some(&Data::String("btrfs mount=default".into()))
    );
}

/// A power cut's configuration: its crash states counted beside its cuts in every output, the
/// fsck verdict per crash state, the state a violation was found in, and a replay command that
/// cuts by power again (and ignores flushes when the run did).
#[test]
fn power_cuts_are_reported_with_their_crash_states() {
    use calamine::{Data, Reader, Xlsx as XlsxReader};
    use fsbench_workload::durability::CRASH_STATES;
    let (_dir, mut store, run) = new_run("power", 2);
    let config = typed(
        r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"nobarrier","mount_options":"barrier=0","scheduler":null,"cache":"warm"}"#,
    );
    let case = store
        .add_case(
            run,
            "ext4.default.nobarrier.default.warm.power",
            0,
            &config,
            r#"{"kind":"durability","name":"power"}"#,
        )
        .unwrap();
    for rep in 1..=2u32 {
        let mut result = durability_result(10, [rep as u64, 0, 0, 0, 0, 0, 1], 4e6, 9e6);
        result
            .measurements
            .push(CRASH_STATES.at(200.0 + rep as f64));
        result.attributes.insert(
            "cut".into(),
            "power cut of the recording device ignoring flushes: the state at the sequence's \
             start and up to 8 seeded subsets of every write since, mounted and checked"
                .into(),
        );
        let list = result.attributes["violation_list"].as_array_mut().unwrap();
        list[0]["crash_state"] = "at the log's start and 2 of its 9 next writes".into();
        list[0]["crash_state_index"] = 3.into();
        list[0]["bundle"] = "/var/tmp/kept/ext4-1-cut-0a1b2c3d".into();
        store
            .record_sample(
                case,
                &NewSample {
                    results: &[result],
                    ..sample(rep, Outcome::Ok)
                },
            )
            .unwrap();
    }
    let model = ReportModel::load(&store, &[run]).unwrap();
    let text = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    let said: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        said.contains(
            "5 violations in 20 power cuts (flushes ignored) (403 crash states) (2 samples: 2, 3)"
        ),
        "{said}"
    );
    assert!(
        said.contains("fsck errors in 2 of 403 crash states"),
        "{said}"
    );
    assert!(
        said.contains(
            "sample 1, cut 3, crash state at the log's start and 2 of its 9 next writes (seq-2)"
        ),
        "{said}"
    );
    assert!(
        said.contains("--mount-options barrier=0 --device image:1G --age 30 --cut power --flushes ignored --cut-at end"),
        "{said}"
    );
    let image = "fsbench crash-state /var/tmp/kept/ext4-1-cut-0a1b2c3d --state 3 --to state.img";
    assert!(said.contains(image), "{said}");
    let md = render(&crate::Markdown::default(), &model);
    assert!(
        md.contains("| 2 samples: 2, 3 | power, flushes ignored | 20 | 403 | **5** |"),
        "{md}"
    );
    assert!(
        md.contains(&format!("  ```console\n  {image}\n  ```\n")),
        "{md}"
    );
    let doc: serde_json::Value = serde_json::from_str(&render(&Json, &model)).unwrap();
    let checked = &doc["durability"]["checked"][0];
    assert_eq!(checked["crash_states"], 403);
    assert_eq!(checked["cut"], "power, flushes ignored");
    assert_eq!(checked["examples"][0]["state_image"], image);
    let html = render(&crate::Html::default(), &model);
    assert!(
        html.contains(
            "<td>power, flushes ignored</td><td class=\"num\">20</td><td class=\"num\">403</td>"
        ),
        "{html}"
    );
    let mut bytes = Vec::new();
    crate::Xlsx.write(&model, &mut bytes).unwrap();
    let mut book: XlsxReader<_> = XlsxReader::new(std::io::Cursor::new(bytes)).unwrap();
    let sheet = book.worksheet_range("durability").unwrap();
    assert_eq!(
        sheet.get((0, 6)),
        Some(&Data::String("crash states".into()))
    );
    assert_eq!(sheet.get((1, 6)), Some(&Data::Float(403.0)));
}

/// The fastest configuration broke promises and the second fastest was not checked: the
/// fastest that kept its promises is the third, named beside the fastest in the terminal, the
/// Markdown, the HTML and the JSON; the heat-map's durability column shows the counts.
#[test]
fn the_fastest_that_kept_its_promises_skips_violations_and_the_unchecked() {
    let (_dir, store, run) = durability_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&render(&Json, &model)).unwrap();
    let write = &doc["standings"]["disciplines"][0];
    assert_eq!(
        write["leaders"],
        serde_json::json!(["ext4 mount=writeback"])
    );
    let kept = &write["kept_promises"];
    assert_eq!(kept["fastest"], "ext4 mount=writeback");
    assert_eq!(
        kept["fastest_promise"],
        serde_json::json!({"state": "broken", "violations": 12, "cuts": 200})
    );
    assert_eq!(kept["safe"], "xfs mount=default");
    assert_eq!(kept["broken"], 1);
    assert_eq!(kept["not_checked"], 1);

    let text = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    let at = text
        .find("\nFastest that kept its promises (")
        .expect(&text);
    let said: String = text[at..].split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        said.contains(
            "stream write 1m 64k (throughput) xfs mount=default 1.89 GiB/s, 33.3 % lower (95 % CI"
        ),
        "{said}"
    );
    assert!(
        said.contains("; the fastest, ext4 mount=writeback, broke 12 promises in 200 cuts"),
        "{said}"
    );

    let md = render(&crate::Markdown::default(), &model);
    let row = md
        .lines()
        .find(|l| l.starts_with("| stream write 1m 64k (throughput)"))
        .unwrap();
    assert!(
        row.ends_with("; the fastest, ext4 mount=writeback, broke 12 promises in 200 cuts |"),
        "{row}"
    );
    assert!(
        row.contains("| xfs mount=default 1.89 GiB/s, 33.3 % lower"),
        "{row}"
    );

    let html = render(&crate::Html::default(), &model);
    let verdict = &html[html.find("<section id=\"verdict\">").unwrap()..];
    let verdict = &verdict[..verdict.find("</section>").unwrap()];
    assert!(
        verdict.contains("<th>fastest with no violation when cut</th>"),
        "{verdict}"
    );
    assert!(
        verdict.contains("<td class=\"win\">xfs mount=default 1.89 GiB&#x2f;s, 33.3 % lower"),
        "{verdict}"
    );
    let heatmap = &html[html.find("<section id=\"heatmap\">").unwrap()..];
    let heatmap = &heatmap[..heatmap.find("</section>").unwrap()];
    assert!(
        heatmap.contains("<th class=\"group\" colspan=\"1\">durability</th>"),
        "{heatmap}"
    );
    assert!(heatmap.contains("title=\"ext4 mount=writeback: 12 violations in 200 cuts — broke promises when cut\">12</td>"), "{heatmap}");
    assert!(
        heatmap.contains(
            "title=\"xfs mount=default: 0 violations in 200 cuts — kept every promise\">0</td>"
        ),
        "{heatmap}"
    );
    assert!(
        heatmap.contains("btrfs mount=default: not checked for durability: failed ×2"),
        "{heatmap}"
    );

    // When the fastest kept its promises, it is named itself.
    let (_dir, mut store, run) = new_run("safety", 16);
    durability_run(&mut store, run, [0, 0]);
    let model = ReportModel::load(&store, &[run]).unwrap();
    let md = render(&crate::Markdown::default(), &model);
    assert!(
        md.contains("| ext4 mount=writeback itself (kept every promise in 200 cuts) |"),
        "{md}"
    );
}

/// Without a durability result, no report says anything of durability: the verdict's table
/// and the heat-map are as they were.
#[test]
fn without_durability_the_reports_say_nothing_of_it() {
    let (_dir, store, run) = quick_fixture();
    let model = ReportModel::load(&store, &[run]).unwrap();
    let text = render(
        &Terminal {
            db: None,
            all_metrics: false,
            ranking: true,
        },
        &model,
    );
    let md = render(&crate::Markdown::default(), &model);
    let html = render(&crate::Html::default(), &model);
    let json = render(&Json, &model);
    for output in [&text, &md, &html, &json] {
        assert!(!output.contains("urability"), "{output}");
        assert!(!output.contains("violation"), "{output}");
        assert!(!output.contains("kept_promises"), "{output}");
    }
    assert!(md.contains("| discipline | winner, or those that tie for first | value | lead over the rest (95 % CI) |\n|---|---|---:|---|\n"));
    // The section itself writes nothing anywhere, and takes no place in the page.
    use crate::section::Section;
    let section = crate::sections::durability::DurabilitySection;
    let findings = crate::Findings::new(&model, &Default::default());
    let mut written = Vec::new();
    section.terminal(&findings, &mut written).unwrap();
    section.markdown(&findings, &mut written).unwrap();
    assert!(written.is_empty());
    assert!(section.html(&findings).unwrap().is_none());
    assert!(section.json(&findings).unwrap().is_none());
    let mut book = rust_xlsxwriter::Workbook::new();
    let mut used = Vec::new();
    section.workbook(&findings, &mut book, &mut used).unwrap();
    assert!(used.is_empty() && book.worksheets().is_empty());
}

/// Run against run with power cuts: each count says the crash states it was found in.
#[test]
fn compare_says_the_crash_states_of_power_cuts() {
    use fsbench_workload::durability::CRASH_STATES;
    let (_dir, mut store, first) = new_run("power", 2);
    let config = typed(
        r#"{"filesystem":"ext4","mkfs_set":"default","mount_set":"default","mount_options":"","scheduler":null,"cache":"warm"}"#,
    );
    let run_of = |store: &mut Store, run: i64, violations: u64, states: f64| {
        let case = store
            .add_case(
                run,
                "ext4.default.default.default.warm.power",
                0,
                &config,
                r#"{"kind":"durability","name":"power"}"#,
            )
            .unwrap();
        let mut result = durability_result(10, [violations, 0, 0, 0, 0, 0, 0], 4e6, 9e6);
        result.measurements.push(CRASH_STATES.at(states));
        result
            .attributes
            .insert("cut".into(), "power cut of the recording device: …".into());
        store
            .record_sample(
                case,
                &NewSample {
                    results: &[result],
                    ..sample(1, Outcome::Ok)
                },
            )
            .unwrap();
    };
    run_of(&mut store, first, 0, 300.0);
    let second = store
        .begin_run(&fsbench_store::NewRun {
            started_at: "t1",
            plan_name: "power",
            plan_text: "",
            fsbench_version: "0",
            host_json: "{}",
            planned_samples: 2,
            overrides_json: None,
            scale: 1.0,
        })
        .unwrap();
    run_of(&mut store, second, 4, 310.0);
    let model = ReportModel::load(&store, &[first, second]).unwrap();
    let changes = crate::versus::changes(&model);
    let c = changes
        .iter()
        .find(|c| c.metric == "violations")
        .unwrap_or_else(|| panic!("{changes:?}"));
    assert!(
        c.row.starts_with("violations: none in 10 cuts (300 crash states) before, 4 in 10 cuts (310 crash states) now"),
        "{}",
        c.row
    );
    assert!(c.is_worse());
}

/// Run against run: violations are counts — none before and some now is a change for the
/// worse (a regression at any threshold), the reverse a change for the better, whatever the
/// spread; two counts above none compare their rates per cut.
#[test]
fn compare_calls_a_change_of_violations_a_change() {
    use fsbench_analysis::compare::Verdict;
    let changes = |before: [u64; 2], after: [u64; 2]| {
        let (_dir, mut store, first) = new_run("safety", 16);
        durability_run(&mut store, first, before);
        let second = store
            .begin_run(&fsbench_store::NewRun {
                started_at: "t1",
                plan_name: "safety",
                plan_text: "",
                fsbench_version: "0",
                host_json: "{}",
                planned_samples: 16,
                overrides_json: None,
                scale: 1.0,
            })
            .unwrap();
        durability_run(&mut store, second, after);
        let model = ReportModel::load(&store, &[first, second]).unwrap();
        crate::versus::changes(&model)
            .into_iter()
            .filter(|c| c.case_key == "ext4.default.writeback.default.warm.durability")
            .collect::<Vec<_>>()
    };
    let worse = changes([0, 0], [0, 3]);
    assert_eq!(worse.len(), 1);
    let c = &worse[0];
    assert!(c.is_worse() && c.is_regression(1000.0), "{c:?}");
    assert_eq!(
        c.row,
        "violations: none in 200 cuts before, 3 in 200 cuts now — promises kept before are broken now (a count, not a speed: a change, not noise)"
    );
    let better = &changes([2, 1], [0, 0])[0];
    assert!(better.is_better(), "{better:?}");
    assert!(
        better.row.contains("every promise is kept now"),
        "{}",
        better.row
    );
    let same = &changes([0, 0], [0, 0])[0];
    assert_eq!(same.comparison.verdict, Verdict::Tie);
    let noise = &changes([5, 7], [6, 7])[0];
    assert_eq!(noise.comparison.verdict, Verdict::Tie, "{noise:?}");
    let many = &changes([1, 1], [30, 40])[0];
    assert!(many.is_worse(), "{many:?}");
}
