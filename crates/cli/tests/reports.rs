//! Reports of stored campaigns end to end: `fsbench run` writes its HTML report next to the
//! database; `fsbench report` writes HTML, Markdown and XLSX and refuses bad options; the HTML
//! renders in headless Chromium with charts drawn and no console errors; `fsbench compare`
//! finds a real slowdown and `--fail-on-regression` turns it into exit 1.

mod common;

use common::{fsbench, root_or_skip, stderr, stdout, Scratch};
use std::path::Path;

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
