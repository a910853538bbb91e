//! Every command the documentation shows runs in CI, and does what the documentation says.
//!
//! README.md and docs/*.md show commands in ```console blocks: `$ fsbench …`, then `? CODE`
//! when the exit code is not 0, then what it prints, with `...` (any lines) and `[..]` (any
//! text on a line) where figures vary. trycmd runs each file's blocks in order and fails when a
//! command's output or exit code no longer matches.
//!
//! The rule that keeps this quick is mechanical and documented in README.md: every command runs
//! as written with `FSBENCH_SCALE=0.05` in its environment (file sizes, minimum times and image
//! sizes shrunk; records, tests, repetitions and options unchanged), in a scratch directory
//! (with `examples/` linked into it) and with its own results database and work directory.
//! The unscaled default matrix runs in `matrix.rs`. Commands that need a real spare block
//! device are the only ones shown in ```sh blocks, and `no_command_escapes_the_doc_tests`
//! checks that no other command does.

mod common;

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The scale documented in README.md ("Documented commands are tests").
const DOC_SCALE: &str = "0.05";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every page in docs/ and docs/workloads/, in a stable order.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = ["docs", "docs/workloads"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(repo().join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, repo().join("README.md"));
    docs
}

/// The lines of fenced blocks: (info string of the block, line number, line).
fn fenced_lines(text: &str) -> Vec<(String, usize, String)> {
    let mut lines = Vec::new();
    let mut info: Option<String> = None;
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim_start().strip_prefix("```") {
            info = match info {
                None => Some(rest.trim().to_string()),
                Some(_) => None,
            };
            continue;
        }
        if let Some(info) = &info {
            lines.push((info.clone(), n + 1, line.to_string()));
        }
    }
    lines
}

#[test]
fn documented_commands_do_what_the_docs_say() {
    if !common::root_or_skip("documented_commands_do_what_the_docs_say") {
        return;
    }
    // trycmd runs commands in the test's working directory: a scratch one, with the
    // repository's example plans where the docs expect them, so exports land in it.
    let scratch = tempfile::Builder::new()
        .prefix("fsbench-test-docs")
        .tempdir()
        .unwrap();
    std::os::unix::fs::symlink(repo().join("examples"), scratch.path().join("examples")).unwrap();
    std::env::set_current_dir(scratch.path()).unwrap();
    let path = format!(
        "{}:/usr/sbin:/sbin",
        std::env::var("PATH").unwrap_or_default()
    );
    let mut failed = Vec::new();
    for (i, doc) in documents().iter().enumerate() {
        let text = std::fs::read_to_string(doc).unwrap();
        if !fenced_lines(&text)
            .iter()
            .any(|(info, ..)| info == "console")
        {
            continue;
        }
        // Each page starts from an empty database and work directory, so run ids are as shown.
        let db = scratch.path().join(format!("db-{i}/results.db"));
        let work = scratch.path().join(format!("fsbench-test-work-{i}"));
        // trycmd panics on a mismatch; every page is still tried, then all are named.
        let checked = std::panic::catch_unwind(|| {
            trycmd::TestCases::new()
                .register_bin("fsbench", trycmd::cargo::cargo_bin!("fsbench"))
                .env("FSBENCH_SCALE", DOC_SCALE)
                .env("FSBENCH_DB", db.display().to_string())
                .env("FSBENCH_WORK_DIR", work.display().to_string())
                .env("PATH", &path)
                .env("NO_COLOR", "1")
                .timeout(Duration::from_secs(600))
                .case(doc)
                .run();
        });
        if checked.is_err() {
            failed.push(doc.display().to_string());
        }
    }
    std::env::set_current_dir(repo()).unwrap();
    assert!(
        failed.is_empty(),
        "documented commands no longer do what these pages say: {failed:?}"
    );
}

/// A command shown outside a ```console block would not be tested: only commands that need a
/// real spare block device may be (they are shown in ```sh blocks, and say so).
#[test]
fn no_command_escapes_the_doc_tests() {
    let mut escaped = Vec::new();
    let mut tested = 0;
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (info, n, line) in fenced_lines(&text) {
            let command = line
                .trim()
                .trim_start_matches("$ ")
                .trim_start_matches("sudo ");
            if !command.starts_with("fsbench ") && command != "fsbench" {
                continue;
            }
            if info == "console" {
                tested += 1;
            } else if !command.contains("/dev/sd") {
                escaped.push(format!("{}:{n}: {}", doc.display(), line.trim()));
            }
        }
    }
    assert!(
        escaped.is_empty(),
        "commands shown outside ```console blocks are never run; move them into one:\n{}",
        escaped.join("\n")
    );
    assert!(tested >= 10, "only {tested} documented commands found");
}

/// Every workload of the registry has its page, docs/workloads/<kind>.md, and the page names
/// every setting as its plan key and as its flag.
#[test]
fn every_workload_setting_is_documented() {
    let mut missing = Vec::new();
    let commands = fsbench_workload::WorkloadSettings::commands(|c| c);
    for (settings, command) in fsbench_workload::WorkloadSettings::defaults()
        .into_iter()
        .zip(commands)
    {
        let kind = settings.kind();
        let page = repo().join(format!("docs/workloads/{kind}.md"));
        let Ok(text) = std::fs::read_to_string(&page) else {
            missing.push(format!("{}: no page", page.display()));
            continue;
        };
        let json = serde_json::to_value(&settings).unwrap();
        for key in json.as_object().unwrap().keys().filter(|k| *k != "kind") {
            // A positional setting (the task chain) is named by its value name instead.
            let positional = command
                .get_arguments()
                .find(|a| a.get_id() == key.as_str())
                .filter(|a| a.is_positional())
                .and_then(|a| a.get_value_names().and_then(|v| v.first().cloned()));
            let flag = match positional {
                Some(name) => name.to_string(),
                None => format!("--{}", key.replace('_', "-")),
            };
            if !text.contains(&format!("`{key}`")) || !text.contains(&flag) {
                missing.push(format!("{kind}: `{key}` / {flag}"));
            }
        }
    }
    assert!(missing.is_empty(), "undocumented settings: {missing:?}");
}
