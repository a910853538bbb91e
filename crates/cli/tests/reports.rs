//! Reports of stored campaigns end to end: `fsbench run` writes its HTML report next to the
//! database; `fsbench report` writes HTML, Markdown and XLSX and refuses bad options; the HTML
//! renders in headless Chromium with charts drawn and no console errors; `fsbench compare`
//! finds a real slowdown and `--fail-on-regression` turns it into exit 1; a study's published
//! figures sit beside the run's in the summary, the Markdown and the HTML (which Chromium
//! renders). Every output file is written whole, never through a link at its path; names from
//! a plan reach the terminal, the Markdown and the CSV as text; a reader that stops early is no
//! error.

mod common;

use common::{closed_pipe, entries, fsbench, root_or_skip, stderr, stdout, Scratch, ScratchMount};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// Two tmpfs configurations, the metadata loops, three interleaved rounds.
const PLAN: &str = r#"
name = "report-test"
repetitions = 3
[[filesystems]]
name = "tmpfs"
mount_options = { default = "", big = "size=512m" }
[[workloads]]
kind = "metadata"
name = "meta"
count = 300
ops = ["create", "stat", "unlink"]
"#;

fn report(s: &Scratch, args: &[&str]) -> std::process::Output {
    fsbench()
        .arg("report")
        .args(args)
        .arg("--db")
        .arg(s.db())
        .output()
        .unwrap()
}

#[test]
fn reports_are_written_in_every_format_and_bad_options_are_refused() {
    if !root_or_skip("reports_are_written_in_every_format_and_bad_options_are_refused") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(PLAN);
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    // `fsbench run` wrote its HTML report next to the database and said where.
    let written = s.path().join("report-run-1.html");
    assert!(
        stdout(&output).contains(&format!(
            "Report: {} (open it in a browser)",
            written.display()
        )),
        "{}",
        stdout(&output)
    );
    assert!(std::fs::read_to_string(&written).unwrap().contains("<svg"));

    let (html, md, xlsx) = (
        s.path().join("r.html"),
        s.path().join("r.md"),
        s.path().join("r.xlsx"),
    );
    let output = report(
        &s,
        &[
            "1",
            "--html",
            html.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
            "--xlsx",
            xlsx.to_str().unwrap(),
            "--weight",
            "metadata=2",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&md).unwrap();
    for part in [
        "## Verdict",
        "## Ranking",
        "metadata points (weight 2)",
        "meta create",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    for label in [
        "tmpfs mount=default",
        "tmpfs mount=big",
        "meta: create threads=1: latency percentiles",
    ] {
        assert!(page.contains(label), "{label}");
    }
    assert!(
        std::fs::read(&xlsx).unwrap().starts_with(b"PK"),
        "an XLSX is a zip"
    );
    // Without a file, the Markdown goes to standard output.
    let output = report(&s, &["1"]);
    assert!(stdout(&output).starts_with("# fsbench report: run 1 \"report-test\""));

    let output = report(&s, &["1", "--baseline", "ext9"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).contains("--baseline ext9: no configuration has that label; the report's are: tmpfs mount=big, tmpfs mount=default"),
        "{}",
        stderr(&output)
    );
    let output = report(&s, &["1", "--weight", "speed=2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unknown category 'speed'"));
    let output = report(&s, &["7"]);
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));

    render_in_chromium(&html);
    s.assert_clean();
}

/// The document headless Chromium made of the report once loaded (`--dump-dom`), with no
/// console errors in its log; None without Chromium.
fn dom_in_chromium(html: &Path) -> Option<String> {
    let chromium = chromium()?;
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-logging=stderr",
            "--v=0",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let log = stderr(&output);
    assert!(
        !log.lines()
            .any(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught"))),
        "console errors: {log}"
    );
    Some(stdout(&output))
}

/// Headless Chromium renders the report: the screenshot has charts (coloured pixels, not a
/// blank page) and the log has no console errors.
fn render_in_chromium(html: &Path) {
    let Some(chromium) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let shot = dir.path().join("shot.png");
    let output = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1300,6000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            dir.path().join("profile").display()
        ))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let log = stderr(&output);
    assert!(
        !log.lines()
            .any(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("Uncaught"))),
        "console errors: {log}"
    );
    let decoder = png::Decoder::new(std::fs::File::open(&shot).expect("a screenshot"));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    let (mut ink, mut colour) = (0usize, 0usize);
    for px in pixels.chunks(channels) {
        let (r, g, b) = (px[0] as i32, px[1] as i32, px[2] as i32);
        if r < 240 || g < 240 || b < 240 {
            ink += 1;
        }
        // Bars and lines are drawn in the palette's colours; text and axes are grey.
        if (r - g).abs() > 60 || (g - b).abs() > 60 || (r - b).abs() > 60 {
            colour += 1;
        }
    }
    let total = pixels.len() / channels;
    assert!(
        ink * 50 > total,
        "the page is nearly blank: {ink} of {total} pixels"
    );
    assert!(colour > 20_000, "no chart drawn: {colour} coloured pixels");
}

/// The report plan with a study's published figure and a claim on its metadata loops.
const STUDY_PLAN: &str = r#"
[[published]]
title = "creates per second"
source = "000_54e63b6255832411.txt:415"
workload = "meta"
metric = "ops_rate"
match = { operation = "create" }
unit = "ops/s"
direction = "higher"
reference = "tmpfs mount=default"
values = { "tmpfs mount=default" = 1000, "tmpfs mount=big" = 1100 }

[[claims]]
text = "stat is as fast on both"
source = "000_54e63b6255832411.txt:416"
workload = "meta"
metric = "ops_rate"
match = { operation = "stat" }
config = "tmpfs mount=big"
against = "tmpfs mount=default"
finding = "equal"
"#;

/// A run of a plan with a study's published figures: its summary, the Markdown and the HTML
/// report set the run's ratios beside the study's with a verdict each, and headless Chromium
/// renders the HTML's then-and-now section, its table and rows.
#[test]
fn the_then_and_now_table_renders_in_markdown_and_in_chromium() {
    if !root_or_skip("the_then_and_now_table_renders_in_markdown_and_in_chromium") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(&format!("{PLAN}{STUDY_PLAN}"));
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    assert!(
        summary.contains("\nThen and now (")
            && summary.contains("  creates per second (000_54e63b6255832411.txt:415); now: meta create threads=1 (operations/s)\n")
            && summary.contains("    tmpfs mount=big      then 1.10×, now "),
        "{summary}"
    );
    // The verdicts a configuration or an "equal" claim can get here (a different size says
    // both ratios after its name).
    let verdicts = [
        "agrees",
        "contradicts",
        "inconclusive",
        "same direction, different size (then 1.10×, now ",
    ];
    let (html, md) = (s.path().join("r.html"), s.path().join("r.md"));
    let output = report(
        &s,
        &[
            "1",
            "--html",
            html.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Then and now\n"), "{text}");
    assert!(
        text.contains("| configuration | then | then / tmpfs mount=default | now | now / tmpfs mount=default (95 % CI) | verdict |"),
        "{text}"
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("| tmpfs mount=big | 1100 ops/s | 1.10× | "))
        .unwrap_or_else(|| panic!("{text}"));
    // The run's ratio with its interval (brackets escaped, as in every text), and a verdict.
    assert!(
        row.contains("× \\[") && verdicts.iter().any(|v| row.contains(&format!("\\] | {v}"))),
        "{row}"
    );
    let claim = text
        .lines()
        .find(|l| {
            l.starts_with(
                "| stat is as fast on both | 000\\_54e63b6255832411.txt:416 | about equal (±5 %) | ",
            )
        })
        .unwrap_or_else(|| panic!("{text}"));
    // An "equal" claim: equal within ±5 %, apart beyond it, or not told apart.
    assert!(
        ["agrees", "contradicts", "inconclusive"]
            .iter()
            .any(|v| claim.ends_with(&format!("against tmpfs mount=default | {v} |"))),
        "{claim}"
    );

    let Some(dom) = dom_in_chromium(&html) else {
        return;
    };
    let section = &dom[dom
        .find("<section id=\"then-and-now\"")
        .unwrap_or_else(|| panic!("no then-and-now section: {dom}"))..];
    let section = &section[..section.find("</section>").expect("the section ends")];
    for part in [
        "<h2>Then and now</h2>",
        "<th>now / tmpfs mount=default (95 % CI)</th>",
        "<td>tmpfs mount=big</td><td class=\"num\">1100 ops/s</td><td class=\"num\">1.10×</td>",
        "<td>stat is as fast on both</td>",
    ] {
        assert!(section.contains(part), "{part}: {section}");
    }
    // One verdict per configuration but the reference, and one for the claim.
    let shown = verdicts
        .iter()
        .map(|v| section.matches(&format!("\">{v}")).count())
        .sum::<usize>();
    assert_eq!(shown, 2, "{section}");
    s.assert_clean();
}

fn sleep_plan(duration: &str) -> String {
    format!(
        r#"
name = "naps"
repetitions = 3
[[filesystems]]
name = "tmpfs"
[[workloads]]
kind = "sleep"
name = "nap"
duration = "{duration}"
"#
    )
}

/// The same plan twice, the second three times slower: compare calls it worse with an
/// interval, and --fail-on-regression exits 1 beyond the threshold, 0 within it.
#[test]
fn compare_finds_a_real_slowdown_and_fails_on_regression() {
    if !root_or_skip("compare_finds_a_real_slowdown_and_fails_on_regression") {
        return;
    }
    let s = Scratch::new();
    for duration in ["30ms", "90ms"] {
        let plan = s.plan(&sleep_plan(duration));
        let output = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let compare = |extra: &[&str]| {
        fsbench()
            .args(["compare", "1", "2"])
            .args(extra)
            .arg("--db")
            .arg(s.db())
            .output()
            .unwrap()
    };
    let output = compare(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.starts_with("tmpfs.default.default.default.warm.nap"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("(lower is better)") && line.ends_with("worse"),
        "{line}"
    );
    assert!(
        text.contains("1 figures: 1 significantly worse, 0 significantly better"),
        "{text}"
    );
    let output = compare(&["--fail-on-regression", "50"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("1 figures regressed by more than 50 %"),
        "{}",
        stderr(&output)
    );
    let output = compare(&["--fail-on-regression", "500"]);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    // Runs of different plans share nothing to compare.
    let plan = s.plan(PLAN.replace("report-test", "other").as_str());
    let _ = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
    let output = fsbench()
        .args(["compare", "1", "3", "--db"])
        .arg(s.db())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(stderr(&output).contains("share no measured case"));
    s.assert_clean();
}

/// A plan of one 10 ms nap named `name`, whose workload is called `workload`, for a campaign in
/// a directory (no root needed); the directory is `s`'s `dir`.
fn nap_plan(s: &Scratch, name: &str, workload: &str) -> (PathBuf, PathBuf) {
    let dir = s.path().join("dir");
    std::fs::create_dir_all(&dir).unwrap();
    // A JSON string is a TOML basic string (escapes included).
    let quote = |text: &str| serde_json::to_string(text).unwrap();
    let plan = s.plan(&format!(
        "name = {}\nrepetitions = 1\n[[workloads]]\nkind = \"sleep\"\nname = {}\nduration = \"10ms\"\n",
        quote(name),
        quote(workload)
    ));
    (plan, dir)
}

/// Run 1 of `s`: a 10 ms nap in a directory, with its report written next to the database.
fn one_nap(s: &Scratch) -> std::process::Output {
    let (plan, dir) = nap_plan(s, "naps", "nap");
    let output = s.run(&[
        "--quiet",
        "--plan",
        plan.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    output
}

/// A symbolic link planted at `report-run-N.html` (a predictable name beside the database) or
/// at a path given to --html is replaced by the report; the file it points to is untouched.
#[test]
fn a_link_at_a_reports_path_is_replaced_and_the_file_it_names_is_untouched() {
    let s = Scratch::new();
    let victim = s.path().join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let own = s.path().join("report-run-1.html");
    std::os::unix::fs::symlink(&victim, &own).unwrap();
    let output = one_nap(&s);
    let untouched = || std::fs::read_to_string(&victim).unwrap() == "keep me";
    assert!(untouched(), "the file the link names was written");
    assert!(!std::fs::symlink_metadata(&own).unwrap().is_symlink());
    assert!(std::fs::read_to_string(&own)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
    assert!(
        stderr(&output).contains("report-run-1.html was a symbolic link"),
        "{}",
        stderr(&output)
    );

    let named = s.path().join("mine.html");
    std::os::unix::fs::symlink(&victim, &named).unwrap();
    let output = report(&s, &["1", "--html", named.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(untouched(), "the file the link names was written");
    assert!(std::fs::read_to_string(&named)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}

/// An output that cannot be written costs only itself: the others are written and the exit
/// code says one failed; the file it was to replace keeps its content (a full disk once
/// truncated it to 0 bytes). Two outputs naming one file are refused before anything is written.
#[test]
fn a_failed_output_keeps_the_old_file_and_the_others_are_still_written() {
    let s = Scratch::new();
    one_nap(&s);
    let md = s.path().join("r.md");
    let not_a_dir = s.path().join("file");
    std::fs::write(&not_a_dir, "").unwrap();
    let xlsx_and_markdown = |xlsx: &Path, md: &Path| {
        report(
            &s,
            &[
                "1",
                "--xlsx",
                xlsx.to_str().unwrap(),
                "--markdown",
                md.to_str().unwrap(),
            ],
        )
    };
    let output = xlsx_and_markdown(&not_a_dir.join("r.xlsx"), &md);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(stderr(&output).contains("r.xlsx"), "{}", stderr(&output));
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("# fsbench report: run 1"));

    let json = s.path().join("x.out");
    let again = s.path().join(".").join("x.out");
    let output = fsbench()
        .args(["export", "1", "--json"])
        .arg(&json)
        .arg("--csv")
        .arg(&again)
        .arg("--db")
        .arg(s.db())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("are the same file"),
        "{}",
        stderr(&output)
    );
    assert!(!json.exists());

    if !root_or_skip("a_failed_output_keeps_the_old_file_and_the_others_are_still_written") {
        return;
    }
    let mount = ScratchMount::tmpfs("size=64k");
    let old = mount.path().join("old.xlsx");
    std::fs::write(&old, b"PK an old workbook").unwrap();
    let _ = std::fs::write(mount.path().join("fill"), vec![0u8; 1 << 20]);
    let md = s.path().join("r2.md");
    let output = xlsx_and_markdown(&old, &md);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert_eq!(std::fs::read(&old).unwrap(), b"PK an old workbook");
    assert!(md.exists(), "the Markdown was skipped");
    let mut left: Vec<PathBuf> = entries(mount.path());
    left.sort();
    assert_eq!(
        left,
        [mount.path().join("fill"), old],
        "a temporary file is left"
    );
}

/// Names and notes from a plan (HTML, terminal codes, a newline, what a spreadsheet could
/// take for a formula) are shown as text: escaped on the terminal (`runs`, `run` and its dry
/// run, `report`), as HTML entities in the Markdown, with a leading `'` in the CSV. A name that
/// is part of the cases' keys (a workload's) is refused unless it is one word of letters,
/// digits, `-` and `_`.
#[test]
fn names_from_a_plan_reach_the_terminal_markdown_and_csv_as_text() {
    let s = Scratch::new();
    let name = "<script>alert(1)</script>\u{1b}[31mred\nsecond";
    let (plan, dir) = nap_plan(&s, name, "=cmd|calc!A0<img/src=x/onerror=alert(1)>\u{1b}");
    let refused = s.run(&[
        "--dry-run",
        "--plan",
        plan.to_str().unwrap(),
        "--dir",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains(
            "workloads.name: \"=cmd|calc!A0<img/src=x/onerror=alert(1)>\\u{1b}\" is not a name"
        ),
        "{}",
        stderr(&refused)
    );
    let workload = "-nap";
    let (plan, dir) = nap_plan(&s, name, workload);
    let note = "a note in \u{1b}[31mred\u{7}";
    let text = std::fs::read_to_string(&plan).unwrap();
    let quoted = serde_json::to_string(note).unwrap();
    std::fs::write(&plan, format!("notes = [{quoted}]\n{text}")).unwrap();
    let (plan, dir) = (plan.to_str().unwrap(), dir.to_str().unwrap());
    let escaped = "<script>alert(1)</script>\\u{1b}[31mred\\nsecond";
    let mut seen = String::new();
    let run = s.run(&["--plan", plan, "--dir", dir]);
    assert!(run.status.success(), "{}", stderr(&run));
    let dry = s.run(&["--dry-run", "--plan", plan, "--dir", dir]);
    assert!(
        stdout(&dry).starts_with(&format!("Plan \"{escaped}\": 1 cases")),
        "{}",
        stdout(&dry)
    );
    for output in [&run, &dry] {
        assert!(
            stdout(output).contains("Note: a note in \\u{1b}[31mred\\u{7}\n"),
            "{}",
            stdout(output)
        );
    }
    let runs = s.runs();
    assert!(
        runs.lines()
            .any(|l| l.contains(escaped) && l.ends_with('1')),
        "{runs}"
    );
    let markdown = report(&s, &["1"]);
    let md = stdout(&markdown);
    assert!(
        md.starts_with("# fsbench report: run 1 \"&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{md}"
    );
    assert!(!md.contains("<script>"), "{md}");
    let csv = fsbench()
        .args(["export", "1", "--csv", "-", "--db"])
        .arg(s.db())
        .output()
        .unwrap();
    assert!(
        stdout(&csv).contains(&format!(",'{workload},")),
        "{}",
        stdout(&csv)
    );
    for output in [&refused, &run, &dry, &markdown, &csv] {
        seen.push_str(&stdout(output));
        seen.push_str(&stderr(output));
    }
    seen.push_str(&runs);
    assert!(
        !seen.contains('\u{1b}') && !seen.contains('\u{7}'),
        "{seen}"
    );
}

/// `fsbench report N | head -1` and `fsbench export N --json - | head -1`: a reader that stops
/// early ends the command quietly with success (docs/failures.md), and the other outputs are
/// still written.
#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    let s = Scratch::new();
    one_nap(&s);
    let csv = s.path().join("r.csv");
    for args in [
        vec!["report", "1"],
        vec!["export", "1", "--json", "-"],
        vec!["export", "1", "--json", "-", "--csv", csv.to_str().unwrap()],
    ] {
        let output = fsbench()
            .args(&args)
            .arg("--db")
            .arg(s.db())
            .stdout(Stdio::from(closed_pipe()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert_eq!(
            output.status.code(),
            Some(0),
            "{args:?}: {}",
            stderr(&output)
        );
        assert_eq!(stderr(&output), "", "{args:?}");
    }
    assert!(std::fs::read_to_string(&csv)
        .unwrap()
        .starts_with("run_id,"));
    // A document larger than the writer's buffer: the pipe closes in the middle of the JSON
    // (serde's write), not at its flush.
    let dir = tempfile::tempdir().unwrap();
    let output = fsbench()
        .args(["metadata", "-n", "50", "--no-store", "--json", "-", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::from(closed_pipe()))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    assert!(
        !stderr(&output).contains("Broken pipe"),
        "{}",
        stderr(&output)
    );
}

/// The filesystems of the quick profile: the first six measured here, the last four
/// unsupported (as a host without them reports them).
const QUICK_FILESYSTEMS: [&str; 10] = [
    "ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "jfs", "reiserfs", "f2fs", "nilfs2",
];

/// A stored run shaped as the quick profile's on a host with six of its filesystems: the
/// quick profile's workloads run for real in a directory at a small scale (run 1, 5 rounds),
/// then run 2 is made of it — each of the six filesystems with those samples scaled by a
/// factor of its own and a little noise per round (ext2 and ext3 alike, the others apart),
/// each with a target read-back, and the last four unsupported with the reason this host
/// would give. Returns run 2's id.
fn quick_shaped_run(s: &Scratch) -> i64 {
    use fsbench_model::Direction;
    use fsbench_store::{NewRun, NewSample, Outcome, RunState, Store};
    let dir = s.path().join("dir");
    std::fs::create_dir_all(&dir).unwrap();
    let output = s.run(&[
        "--profile",
        "quick",
        "--dir",
        dir.to_str().unwrap(),
        "--scale",
        "0.05",
        "--quiet",
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let mut store = Store::open(&s.db()).unwrap();
    let measured = store.load(1).unwrap();
    let run = store
        .begin_run(&NewRun {
            started_at: &measured.run.started_at,
            plan_name: "quick",
            plan_text: &measured.run.plan_text,
            fsbench_version: &measured.run.fsbench_version,
            host_json: &measured.run.host.to_string(),
            planned_samples: 250,
            overrides_json: None,
            scale: 0.05,
        })
        .unwrap();
    let factors = [1.0, 1.0, 1.15, 1.3, 0.8, 0.55];
    let mut position = 0;
    for (f, fs) in QUICK_FILESYSTEMS.iter().enumerate() {
        for case in &measured.cases {
            let workload = case.case.key.rsplit('.').next().unwrap();
            let mut config = case.case.config.clone();
            config.filesystem = fs.to_string();
            config.mkfs_set = "default".into();
            config.mount_set = "default".into();
            config.mkfs_options = String::new();
            config.mount_options = String::new();
            let key = format!("{fs}.default.default.default.warm.{workload}");
            let id = store
                .add_case(
                    run,
                    &key,
                    position,
                    &config,
                    &case.case.workload.to_string(),
                )
                .unwrap();
            position += 1;
            for sample in &case.samples {
                let rep = sample.repetition;
                if f >= factors.len() {
                    let reason = format!(
                        "{fs} cannot run on this host: the kernel lacks {fs} (not in /proc/filesystems: not built in and no module loaded); mkfs.{fs}, fsck.{fs} are not installed (apt-get install {fs}-tools)"
                    );
                    store
                        .record_sample(
                            id,
                            &NewSample {
                                repetition: rep,
                                status: Outcome::Unsupported,
                                reason: Some(&reason),
                                not_retried: rep > 1,
                                started_at: &sample.started_at,
                                elapsed_ns: 0,
                                target_json: None,
                                results: &[],
                                seed: None,
                                warnings: &[],
                                config_json: None,
                                series: &[],
                                assessment: None,
                            },
                        )
                        .unwrap();
                    continue;
                }
                // A little noise of the configuration's own per round, deterministic.
                let noise = 1.0 + 0.02 * (((f * 7 + rep as usize * 3) % 5) as f64 - 2.0) / 2.0;
                let factor = factors[f] * noise;
                let mut results = sample.results.clone();
                for m in results.iter_mut().flat_map(|r| &mut r.measurements) {
                    match m.direction {
                        Direction::Higher => m.value *= factor,
                        Direction::Lower => m.value /= factor,
                        Direction::None => {}
                    }
                }
                let loop_dev = format!("/dev/loop{}", 10 + f);
                let target = serde_json::json!({
                    "filesystem": fs,
                    "device": { "kind": "image", "path": loop_dev, "size_bytes": 107374182,
                                "disk": { "name": "vda", "model": "QEMU HARDDISK" } },
                    "mkfs": { "command": format!("mkfs.{fs} -F -E lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0,discard -O ^has_journal,extent,huge_file,flex_bg,metadata_csum,64bit,dir_nlink,extra_isize {loop_dev}") },
                    "mount": { "mount_options": "rw,relatime,seclabel,errors=remount-ro,user_xattr,acl,barrier=1,data=ordered,commit=5", "super_options": "rw" },
                    "scheduler": { "in_force": "mq-deadline" },
                    "cache": { "state": "warm" },
                    "fsck": { "clean": true, "command": format!("fsck.{fs} -f -n {loop_dev}") },
                });
                store
                    .record_sample(
                        id,
                        &NewSample {
                            repetition: rep,
                            status: sample.status,
                            reason: sample.reason.as_deref(),
                            not_retried: false,
                            started_at: &sample.started_at,
                            elapsed_ns: sample.elapsed_ns,
                            target_json: Some(&target.to_string()),
                            results: &results,
                            seed: sample.seed,
                            warnings: &sample.warnings,
                            config_json: None,
                            series: &[],
                            assessment: None,
                        },
                    )
                    .unwrap();
            }
        }
    }
    store
        .finish_run(run, RunState::Complete, Some(&measured.run.started_at))
        .unwrap();
    run
}

/// What a script injected into a copy of the report measures in headless Chromium at
/// 1400×900: the first screen's sections, what is wider than the viewport, and each chart's
/// colour per configuration next to the legend's. Written into the page as percent-encoded
/// JSON, read back from `--dump-dom`.
const MEASURE: &str = r#"
<script>
(function () {
  const box = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; };
  const hex = (c) => { const m = c.match(/\d+/g); if (!m) return c.toLowerCase();
    return '#' + m.slice(0, 3).map((v) => (+v).toString(16).padStart(2, '0')).join(''); };
  const out = { width: innerWidth, height: innerHeight,
    verdict: box('#verdict table'), heatmap: box('#heatmap table') };
  // Every element as wide as it lays out, with the configurations opened.
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const clipped = (e) => { for (let p = e.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX; if (o === 'auto' || o === 'scroll' || o === 'hidden') return true; }
    return false; };
  out.scroll_width = document.documentElement.scrollWidth;
  out.wide = [];
  document.querySelectorAll('body *').forEach((e) => {
    const r = e.getBoundingClientRect();
    if (r.width > 0 && r.right > innerWidth + 0.5 && !clipped(e)) out.wide.push(e.tagName + ' ' + Math.round(r.right));
  });
  const legend = {};
  document.querySelectorAll('.legend .item').forEach((i) => {
    legend[i.textContent.trim()] = hex(getComputedStyle(i.querySelector('.swatch')).backgroundColor); });
  out.legend = legend;
  out.charts = [];
  document.querySelectorAll('figure.chart svg').forEach((svg, n) => {
    const seen = [];
    const rects = [...svg.querySelectorAll('rect')].filter((r) => {
      const f = (r.getAttribute('fill') || '').toLowerCase();
      return f !== '#ffffff' && f !== '#000000' && f !== 'none' && r.getBBox().width > 2; });
    svg.querySelectorAll('text').forEach((t) => {
      const label = t.textContent.trim();
      if (!(label in legend)) return;
      const fill = (t.getAttribute('fill') || '').toLowerCase();
      if (fill && fill !== '#000000') { seen.push([label, fill]); return; }
      // A bar's name under it: the bar whose middle is nearest.
      const b = t.getBBox(); const mid = b.x + b.width / 2;
      let best = null, gap = Infinity;
      rects.forEach((r) => { const rb = r.getBBox(); const d = Math.abs(rb.x + rb.width / 2 - mid);
        if (d < gap) { gap = d; best = r; } });
      if (best && gap < 20) seen.push([label, best.getAttribute('fill').toLowerCase()]);
    });
    out.charts.push({ n: n, seen: seen });
  });
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = encodeURIComponent(JSON.stringify(out));
  document.body.appendChild(pre);
})();
</script>
"#;

/// Percent-decoding of what `encodeURIComponent` wrote.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
            out.push(u8::from_str_radix(hex, 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// The issue's test of the report a new user opens: the quick profile's report (of a run
/// shaped as it, with four filesystems unsupported) rendered by headless Chromium at 1400×900
/// has the verdict and the heat-map on its first screen, nothing wider than the window (the
/// configurations' read-back opened too), and every chart draws each configuration in the
/// colour the legend gives it.
#[test]
fn the_quick_report_answers_on_the_first_screen_at_1400_by_900() {
    if !root_or_skip("the_quick_report_answers_on_the_first_screen_at_1400_by_900") {
        return;
    }
    let Some(chromium) = chromium() else { return };
    let s = Scratch::new();
    let run = quick_shaped_run(&s);
    let html = s.path().join("quick.html");
    let output = report(&s, &[&run.to_string(), "--html", html.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(!page.contains("<script"), "the report runs no script");
    let probe = s.path().join("probe.html");
    std::fs::write(
        &probe,
        page.replace("</body>", &format!("{MEASURE}</body>")),
    )
    .unwrap();
    let profile = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,900",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    let dom = stdout(&output);
    let encoded = dom
        .split("<pre id=\"measured\">")
        .nth(1)
        .and_then(|rest| rest.split("</pre>").next())
        .unwrap_or_else(|| panic!("nothing measured: {}", stderr(&output)));
    let m: serde_json::Value = serde_json::from_str(&percent_decode(encoded)).unwrap();
    // The page's layout depends on the window's width, not its height (no unit of the
    // stylesheet is relative to it): at 1400 wide, the first screen is its top 900 pixels.
    // (--dump-dom keeps room for a browser's frame: its inner height is below 900.)
    let (width, height) = (m["width"].as_f64().unwrap(), 900.0);
    assert_eq!(width, 1400.0, "{m}");
    for section in ["verdict", "heatmap"] {
        let bottom = m[section]["bottom"].as_f64().unwrap_or(f64::INFINITY);
        assert!(
            m[section]["top"].as_f64().unwrap() >= 0.0 && bottom <= height,
            "{section} is not on the first screen: {}",
            m[section]
        );
    }
    assert!(m["scroll_width"].as_f64().unwrap() <= width, "{m}");
    assert_eq!(m["wide"], serde_json::json!([]), "wider than the window");
    let legend = m["legend"].as_object().unwrap();
    let labels: Vec<&str> = legend.keys().map(String::as_str).collect();
    assert_eq!(labels.len(), 6, "{labels:?}");
    let charts = m["charts"].as_array().unwrap();
    assert!(charts.len() > 10, "{} charts", charts.len());
    let mut checked = 0;
    for chart in charts {
        for seen in chart["seen"].as_array().unwrap() {
            let (label, colour) = (seen[0].as_str().unwrap(), seen[1].as_str().unwrap());
            assert_eq!(legend[label], colour, "{label} in chart {}", chart["n"]);
            checked += 1;
        }
    }
    // Every bar chart and line chart named its configurations: most charts have six.
    assert!(
        checked >= 6 * 10,
        "only {checked} configurations found in the charts"
    );
    s.assert_nothing_mounted();
}

/// The headless browser of the rendering checks; None (the check skipped) without one,
/// except on CI, which must have it.
fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must render the report: scripts/install-deps.sh installs chromium"
        );
        eprintln!("skipping the rendering check: no chromium");
    }
    found
}

/// A configuration the host cannot run (a mount option the kernel rejects) is said once on
/// the way, with its reason and the samples it costs, not once per sample; the summary at the
/// end has one line of what it cost, its reason beneath, and no line over 120 columns.
#[test]
fn an_unsupported_configuration_is_said_once_and_the_summary_fits_120_columns() {
    if !root_or_skip("an_unsupported_configuration_is_said_once_and_the_summary_fits_120_columns") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "naps"
repetitions = 3
[[filesystems]]
name = "tmpfs"
mount_options = { default = "", bogus = "fsbench_no_such_option" }
[[workloads]]
kind = "sleep"
name = "nap"
duration = "10ms"
[[workloads]]
kind = "sleep"
name = "doze"
duration = "10ms"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let progress = stderr(&output);
    let said: Vec<&str> = progress
        .lines()
        .filter(|l| l.contains("tmpfs.default.bogus"))
        .collect();
    assert_eq!(said.len(), 1, "{progress}");
    assert!(
        said[0].contains(
            "] tmpfs.default.bogus.default.warm: unsupported, 6 samples (2 cases × 3 rounds) not run: the kernel rejected"
        ),
        "{progress}"
    );
    assert!(
        progress.contains("Unknown parameter 'fsbench_no_such_option'"),
        "{progress}"
    );
    for line in progress.lines().chain(stdout(&output).lines()) {
        assert!(line.chars().count() <= 120, "{line}");
    }
    let summary = stdout(&output);
    let lines: Vec<&str> = summary.lines().collect();
    let heads: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].contains("mount=bogus"))
        .collect();
    assert_eq!(heads.len(), 1, "{summary}");
    assert_eq!(
        lines[heads[0]], "  tmpfs mount=bogus  unsupported ×6 (every workload):",
        "{summary}"
    );
    assert!(
        lines[heads[0] + 1].starts_with("    the kernel rejected"),
        "{summary}"
    );
    s.assert_clean();
}

/// The mount option sets of [`the_answer_is_read_whole`]: names as long as a plan may give.
const LONG_SETS: [&str; 3] = [
    "committing-its-journal-every-five-seconds",
    "noatime-and-no-directory-access-times",
    "at-most-a-hundred-thousand-inodes",
];

/// The issue's test of the answer read whole: a real campaign of the quick profile's metadata
/// workloads (operations/s, stored as `ops_rate`) under long names, on ext4 (a loop device)
/// and tmpfs, each configuration with a mount option set of a long name, and one the kernel
/// refuses. The summary has no line over 120 columns, no "…", no stored metric name; every
/// verdict names its discipline, its leaders and whom they lead whole (wrapped between
/// words), the ranking is ordered by its points with the rank interval beside them, and the
/// refused configuration's reason is there whole.
#[test]
fn the_answer_is_read_whole() {
    if !root_or_skip("the_answer_is_read_whole") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(&format!(
        r#"
name = "answer-read-whole"
repetitions = 3
remake_target = "configuration"
[device]
image = "128m"
[[filesystems]]
name = "ext4"
mount_options = {{ {} = "commit=5" }}
[[filesystems]]
name = "tmpfs"
mount_options = {{ {} = "noatime,nodiratime", {} = "nr_inodes=100000", an-option-this-kernel-has-never-heard-of = "fsbench_no_such_option" }}
[[workloads]]
kind = "metadata"
name = "small-files-created-listed-and-removed-by-one-thread"
count = 500
ops = ["create", "stat", "readdir", "unlink"]
[[workloads]]
kind = "metadata"
name = "small-files-each-written-and-fsynced-before-its-close"
count = 100
ops = ["create"]
create_size = "4k"
fsync_file = true
"#,
        LONG_SETS[0], LONG_SETS[1], LONG_SETS[2]
    ));
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    for line in summary.lines() {
        assert!(line.chars().count() <= 120, "{line}\n{summary}");
    }
    assert!(!summary.contains('…'), "{summary}");
    assert!(!summary.contains("ops_rate"), "{summary}");
    // A section's words, from its heading to the next blank line, as one text.
    let section = |heading: &str| -> String {
        let start = summary
            .find(&format!("\n{heading}"))
            .unwrap_or_else(|| panic!("no {heading}: {summary}"));
        let rest = &summary[start + 1..];
        let end = rest.find("\n\n").unwrap_or(rest.len());
        rest[..end].split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let verdict = section("Verdict (");
    for op in ["create", "stat", "readdir", "unlink"] {
        let title = format!(
            "small-files-created-listed-and-removed-by-one-thread {op} threads=1 (operations/s)"
        );
        assert!(verdict.contains(&title), "{title}\n{summary}");
    }
    assert!(
        verdict.contains(
            "small-files-each-written-and-fsynced-before-its-close create threads=1 (operations/s)"
        ),
        "{summary}"
    );
    // Every configuration named in the verdict is named whole.
    for word in verdict.split(' ').filter(|w| w.starts_with("mount=")) {
        let set = word
            .trim_start_matches("mount=")
            .trim_end_matches([',', ';']);
        assert!(LONG_SETS.contains(&set), "{word} is cut: {summary}");
    }
    // The ranking: most points first, each with its rank interval beside them.
    let start = summary.find("\nRanking (").unwrap();
    let ranking: Vec<f64> = summary[start..]
        .lines()
        .filter(|l| l.contains(" points  rank "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let at = words.iter().position(|w| *w == "points").unwrap();
            words[at - 1].parse().unwrap()
        })
        .collect();
    assert_eq!(ranking.len(), 3, "{summary}");
    assert!(ranking.windows(2).all(|w| w[0] >= w[1]), "{summary}");
    assert!(
        section("Ranking (").contains("most points first"),
        "{summary}"
    );
    let not_measured = section("Not measured (");
    assert!(
        not_measured.contains(
            "tmpfs mount=an-option-this-kernel-has-never-heard-of unsupported ×6 (every workload): the kernel rejected the mount options 'fsbench_no_such_option' for tmpfs: the kernel said: tmpfs: Unknown parameter 'fsbench_no_such_option'"
        ),
        "{summary}"
    );
    s.assert_clean();
}

/// A campaign on ext4 (a loop device) of a nap whose rate falls to a fifth two thirds in and
/// a second of 4 KiB direct random writes, two rounds: the HTML report `fsbench run` writes
/// draws each workload's representative repetition over time; `fsbench report --series all`
/// draws every repetition, and headless Chromium shows each chart's panels with their axes
/// labelled in units — the rate (MiB/s, ops/s), the latency, the memory, the device and the
/// disk under it, the CPUs' iowait and steal, on a time axis in seconds — and the nap's
/// repetitions marked not steady; `--series none` draws none.
#[test]
fn the_html_report_draws_each_sample_over_time_with_the_host_beneath() {
    if !root_or_skip("the_html_report_draws_each_sample_over_time_with_the_host_beneath") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(
        r#"
name = "seen"
repetitions = 2
interval = "100ms"
[device]
image = "256m"
[[filesystems]]
name = "ext4"
[[workloads]]
kind = "sleep"
name = "nap"
pattern = "10ms*90,50ms*12"
[[workloads]]
kind = "io"
name = "wr"
rw = "randwrite"
direct = true
size = "16m"
time_based = true
runtime = "1s"
"#,
    );
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    s.assert_clean();
    let timelines = |page: &str| page.matches("<figure class=\"timeline\">").count();
    // The run's own report: one repetition per workload, said which and why.
    let page = std::fs::read_to_string(s.path().join("report-run-1.html")).unwrap();
    assert_eq!(timelines(&page), 2, "{page}");
    assert!(
        page.contains("(the median of the 2 repetitions measured by its main figure"),
        "{page}"
    );
    let html = |name: &str, series: &str| {
        let path = s.path().join(name);
        let output = report(
            &s,
            &["1", "--html", path.to_str().unwrap(), "--series", series],
        );
        assert!(output.status.success(), "{}", stderr(&output));
        path
    };
    let all = html("all.html", "all");
    let page = std::fs::read_to_string(&all).unwrap();
    assert_eq!(timelines(&page), 4);
    let none = html("none.html", "none");
    assert_eq!(timelines(&std::fs::read_to_string(&none).unwrap()), 0);
    let output = report(&s, &["1", "--series", "some"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("'some' is not a choice of series"));
    let Some(dom) = dom_in_chromium(&all) else {
        return;
    };
    let figures: Vec<&str> = dom
        .split("<figure class=\"timeline\">")
        .skip(1)
        .map(|f| &f[..f.find("</figure>").unwrap()])
        .collect();
    assert_eq!(figures.len(), 4);
    // Tick labels are the text of their own elements: "\n0.5 s\n".
    let tick = |f: &str, unit: &str| {
        f.split("</text>").any(|t| {
            let label = t.rsplit('>').next().unwrap_or("").trim();
            label.ends_with(unit) && label.trim_end_matches(unit).trim().parse::<f64>().is_ok()
        })
    };
    for f in &figures {
        for text in [
            "time since the sample started [s]",
            "latency",
            "memory",
            "dirty",
            "writeback",
            "device busy",
            "(the filesystem's device)",
            "CPU (all)",
            "iowait",
            "steal",
        ] {
            assert!(f.contains(text), "{text} missing from {f}");
        }
        assert!(tick(f, " s") && tick(f, " %"), "{f}");
        assert!(
            tick(f, " ms") || tick(f, " µs"),
            "the latency axis in its unit: {f}"
        );
        let nap = f.contains("nap on ext4");
        if nap {
            assert!(f.contains("operation rate") && tick(f, " ops/s"), "{f}");
            assert!(f.contains("naps (not steady)"), "{f}");
            assert!(f.contains("⚠ not steady: 1 of 1 phases"), "{f}");
        } else {
            assert!(f.contains("wr on ext4"), "{f}");
            assert!(
                f.contains("throughput") && (tick(f, " MiB/s") || tick(f, " KiB/s")),
                "{f}"
            );
        }
    }
    // The nap's repetitions are listed among the marks.
    let host = &dom[dom.find("<section id=\"host\">").expect("the host's marks")..];
    let host = &host[..host.find("</section>").unwrap()];
    assert!(host.matches("<td>nap</td>").count() == 2, "{host}");
    render_in_chromium(&all);
}

/// ext4 with its defaults against ext4 with `data=writeback,nodelalloc` (which exposes stale
/// data after a cut, about 1 cut in 10 here), each cut 100 times and run through a tiny matrix.
const SAFETY_PLAN: &str = r#"
name = "safety"
repetitions = 2
[[filesystems]]
name = "ext4"
[filesystems.mount_options]
default = ""
writeback = "data=writeback,nodelalloc"
[[workloads]]
kind = "durability"
cuts = 100
seed = 1
[[workloads]]
kind = "matrix"
file_sizes = "4m"
record_sizes = "64k"
tests = ["write", "read"]
"#;

/// A campaign with durability: the summary and the Markdown have the durability table and,
/// beside each discipline's fastest, the fastest configuration with no violation — the one
/// the durability results say (checked against the JSON export's figures); headless Chromium
/// renders the durability section and the heat-map's durability column.
#[test]
fn durability_is_reported_beside_the_fastest_and_renders_in_chromium() {
    if !root_or_skip("durability_is_reported_beside_the_fastest_and_renders_in_chromium") {
        return;
    }
    let s = Scratch::new();
    let plan = s.plan(SAFETY_PLAN);
    let output = s.run(&["--plan", plan.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let summary = stdout(&output);
    for part in [
        "\nDurability (per configuration, summed over its samples:",
        "\n  ext4 mount=default    0 violations in 200 cuts (2 samples: 0, 0)",
        "\n  ext4 mount=writeback  ",
        "\nFastest that kept its promises (per discipline:",
    ] {
        assert!(summary.contains(part), "{part}: {summary}");
    }
    let (html, md, json) = (
        s.path().join("r.html"),
        s.path().join("r.md"),
        s.path().join("r.json"),
    );
    let output = report(
        &s,
        &[
            "1",
            "--html",
            html.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Durability\n"), "{text}");
    assert!(
        text.contains("| configuration | samples (violations each) | cut | cuts | crash states | violations | by kind | recovery median | recovery longest | fsck |"),
        "{text}"
    );
    assert!(
        text.contains("| ext4 mount=default | 2 samples: 0, 0 | shutdown | 200 | - | 0 | none | "),
        "{text}"
    );
    assert!(
        text.contains("| lead over the rest (95 % CI) | fastest with no violation when cut |"),
        "{text}"
    );
    // Each discipline names the fastest configuration with no violation: the fastest of those
    // the durability figures say kept every promise.
    let output = fsbench()
        .args(["export", "1", "--json"])
        .arg(&json)
        .arg("--db")
        .arg(s.db())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let violations = |label: &str| -> u64 {
        let cases = doc["runs"][0]["cases"].as_array().unwrap();
        cases
            .iter()
            .filter(|c| c["kind"] == "durability")
            .filter(|c| {
                let set = c["config"]["mount_set"].as_str().unwrap();
                label == format!("ext4 mount={set}")
            })
            .flat_map(|c| c["samples"].as_array().unwrap())
            .flat_map(|s| s["results"].as_array().unwrap())
            .flat_map(|r| r["measurements"].as_array().unwrap())
            .filter(|m| m["metric"] == "violations")
            .map(|m| m["value"].as_f64().unwrap() as u64)
            .sum()
    };
    assert_eq!(violations("ext4 mount=default"), 0);
    let writeback = violations("ext4 mount=writeback");
    let page = std::fs::read_to_string(&html).unwrap();
    let disciplines = text
        .lines()
        .filter(|l| l.starts_with("| matrix "))
        .collect::<Vec<_>>();
    assert_eq!(disciplines.len(), 4, "{text}");
    for row in disciplines {
        let cells: Vec<&str> = row.split(" | ").collect();
        // The leaders best first: the first is the fastest.
        let (winner, kept) = (cells[1], cells[cells.len() - 1]);
        let fastest = if winner.starts_with("ext4 mount=writeback") {
            "ext4 mount=writeback"
        } else {
            "ext4 mount=default"
        };
        if writeback > 0 {
            // Only ext4 mount=default kept every promise.
            assert!(kept.starts_with("ext4 mount=default "), "{row}");
        }
        let said = if fastest == "ext4 mount=writeback" && writeback > 0 {
            format!("; the fastest, ext4 mount=writeback, broke {writeback} promise")
        } else {
            format!("{fastest} itself (kept every promise in 200 cuts)")
        };
        assert!(kept.contains(&said), "{said}: {row}");
    }
    assert!(page.contains("<section id=\"durability\">"));

    let Some(dom) = dom_in_chromium(&html) else {
        return;
    };
    let section = &dom[dom
        .find("<section id=\"durability\"")
        .unwrap_or_else(|| panic!("no durability section: {dom}"))..];
    let section = &section[..section.find("</section>").expect("the section ends")];
    for part in [
        "<h2>Durability: the promises each configuration kept when it was cut</h2>",
        "<td class=\"num win\">0</td>",
        "ext4 mount=writeback</td><td>2 samples: ",
    ] {
        assert!(section.contains(part), "{part}: {section}");
    }
    let heatmap = &dom[dom.find("<section id=\"heatmap\"").expect("the heat-map")..];
    let heatmap = &heatmap[..heatmap.find("</section>").unwrap()];
    assert!(
        heatmap.contains("<th class=\"group\" colspan=\"1\">durability</th>"),
        "{heatmap}"
    );
    assert!(
        heatmap.contains(
            "title=\"ext4 mount=default: 0 violations in 200 cuts — kept every promise\">0</td>"
        ),
        "{heatmap}"
    );
    s.assert_clean();
}

/// A plan of ext4 with the mount option set `m` as `options`, cut 100 times a round.
fn cut_plan(options: &str) -> String {
    format!(
        r#"
name = "cuts"
repetitions = 2
[[filesystems]]
name = "ext4"
mount_options = {{ m = "{options}" }}
[[workloads]]
kind = "durability"
cuts = 100
seed = 1
"#
    )
}

/// The same case kept every promise in one run and broke some in the next (its mount options
/// changed under the same name): `fsbench compare` says so plainly, as a change for the worse
/// rather than noise, and `--fail-on-regression` fails at any threshold.
#[test]
fn compare_calls_violations_appearing_a_change_for_the_worse() {
    if !root_or_skip("compare_calls_violations_appearing_a_change_for_the_worse") {
        return;
    }
    let s = Scratch::new();
    for options in ["", "data=writeback,nodelalloc"] {
        let plan = s.plan(&cut_plan(options));
        let output = s.run(&["--plan", plan.to_str().unwrap(), "--quiet"]);
        assert!(output.status.success(), "{}", stderr(&output));
    }
    let compare = |extra: &[&str]| {
        fsbench()
            .args(["compare", "1", "2"])
            .args(extra)
            .arg("--db")
            .arg(s.db())
            .output()
            .unwrap()
    };
    let output = compare(&[]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let line = text
        .lines()
        .find(|l| l.starts_with("ext4.default.m.default.warm.durability"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        line.contains("durability violations: none in 200 cuts before, "),
        "{line}"
    );
    if line.contains(", none in 200 cuts now") {
        // No violation this time (about 1 cut in 10 shows one): unchanged, and said so.
        assert!(line.ends_with(" tie"), "{line}");
        return;
    }
    assert!(
        line.contains(" in 200 cuts now — promises kept before are broken now (a count, not a speed: a change, not noise)")
            && line.ends_with(" worse")
            // Counts, not a ratio of speeds: no percentage of a change from none.
            && !line.contains("inf"),
        "{line}"
    );
    let output = compare(&["--fail-on-regression", "100000"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("violations: none in 200 cuts before")
            && !stderr(&output).contains("inf"),
        "{}",
        stderr(&output)
    );
    s.assert_clean();
}
