//! Reports of stored campaigns end to end: `fsbench run` writes its HTML report next to the
//! database; `fsbench report` writes HTML, Markdown and XLSX and refuses bad options; the HTML
//! renders in headless Chromium with charts drawn and no console errors; `fsbench compare`
//! finds a real slowdown and `--fail-on-regression` turns it into exit 1. Every output file is
//! written whole, never through a link at its path; names from a plan reach the terminal, the
//! Markdown and the CSV as text; a reader that stops early is no error.

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
        "## Winners",
        "## Rankings",
        "metadata points (weight 2)",
        "meta create",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    let page = std::fs::read_to_string(&html).unwrap();
    for label in [
        "tmpfs mount=default",
        "tmpfs mount=big",
        "create threads=1: latency percentiles",
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

/// Headless Chromium renders the report: the screenshot has charts (coloured pixels, not a
/// blank page) and the log has no console errors.
fn render_in_chromium(html: &Path) {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| {
            std::process::Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    let Some(chromium) = chromium else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must render the report: scripts/install-deps.sh installs chromium"
        );
        eprintln!("skipping the rendering check: no chromium");
        return;
    };
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

/// Names from a plan (HTML, terminal codes, a newline, a spreadsheet formula) are shown as
/// text: escaped on the terminal (`runs`, `run` and its dry run, `report`), as HTML entities in
/// the Markdown, with a leading `'` in the CSV.
#[test]
fn names_from_a_plan_reach_the_terminal_markdown_and_csv_as_text() {
    let s = Scratch::new();
    let name = "<script>alert(1)</script>\u{1b}[31mred\nsecond";
    let workload = "=cmd|calc!A0<img/src=x/onerror=alert(1)>";
    let (plan, dir) = nap_plan(&s, name, workload);
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
    assert!(!md.contains("<script>") && !md.contains("<img"), "{md}");
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
    for output in [&run, &dry, &markdown, &csv] {
        seen.push_str(&stdout(output));
        seen.push_str(&stderr(output));
    }
    seen.push_str(&runs);
    assert!(!seen.contains('\u{1b}'), "{seen}");
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
