//! One sample's life for a workload command and a campaign alike (issue 24): each behaviour the
//! two used to write apart is run both ways here and compared — what a damaged filesystem
//! says, a cache policy a workload cannot honour, a cache policy that is not one, and a cache
//! dropped before the workload. (Scale-out's, under mpirun, are in tests/mpi.rs.)

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

/// The one sample of run 1 in `db`, as `fsbench export` writes it.
fn only_sample(db: &Path) -> Value {
    let json = db.with_extension("json");
    let out = fsbench()
        .args(["export", "1", "--db"])
        .arg(db)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    let cases = run_cases(&doc);
    assert_eq!(cases.len(), 1, "{cases:?}");
    cases[0]["samples"][0].clone()
}

/// Runs a one-case campaign of `workload` (a `[[workloads]]` table's keys) on `filesystem`
/// with `cache`, stored in a database of its own; returns the run's output and its database.
fn campaign(
    s: &Scratch,
    name: &str,
    filesystem: &str,
    cache: &str,
    workload: &str,
) -> (std::process::Output, std::path::PathBuf) {
    let db = s.path().join(format!("{name}.db"));
    let plan = s.plan(&format!(
        "name = \"{name}\"\nrepetitions = 1\ncache = [\"{cache}\"]\n[device]\nimage = \"512m\"\n[[filesystems]]\nname = \"{filesystem}\"\n[[workloads]]\n{workload}\n"
    ));
    let out = fsbench()
        .args(["run", "--quiet", "--plan"])
        .arg(&plan)
        .arg("--db")
        .arg(&db)
        .arg("--work-dir")
        .arg(s.work())
        .output()
        .unwrap();
    (out, db)
}

/// Runs `fsbench ARGS --fs FS --device image:512m`, stored in a database of its own.
fn command(s: &Scratch, name: &str, args: &[&str]) -> (std::process::Output, std::path::PathBuf) {
    let db = s.path().join(format!("{name}.db"));
    let out = fsbench()
        .args(args)
        .args(["--device", "image:512m", "--quiet", "--db"])
        .arg(&db)
        .arg("--work-dir")
        .arg(s.work())
        .output()
        .unwrap();
    (out, db)
}

/// The shell command of an `exec` task that damages the filesystem it runs on while it is
/// mounted: random bytes over its first block groups' metadata, through the block device.
const DAMAGE: &str = "dev=$(findmnt -n -o SOURCE --target \"$FSBENCH_DIR\") && \
dd if=/dev/urandom of=\"$dev\" bs=4096 seek=5 count=16 conv=notrunc oflag=direct 2>/dev/null";

#[test]
fn a_damaged_filesystem_fails_the_sample_with_the_same_words_both_ways() {
    if !root_or_skip("a_damaged_filesystem_fails_the_sample_with_the_same_words_both_ways") {
        return;
    }
    let s = Scratch::new();
    let (out, db) = campaign(
        &s,
        "damaged",
        "ext2",
        "warm",
        &format!("kind = \"task\"\ntasks = \"exec\"\ncommand = {:?}", DAMAGE),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let by_campaign = only_sample(&db);
    let (out, db) = command(
        &s,
        "damaged-command",
        &["task", "exec", "--command", DAMAGE, "--fs", "ext2"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let by_command = only_sample(&db);
    for sample in [&by_campaign, &by_command] {
        assert_eq!(sample["status"], "failed", "{sample}");
        assert_eq!(sample["target"]["fsck"]["clean"], false, "{sample}");
        assert!(
            !sample["results"].as_array().unwrap().is_empty(),
            "the results are stored: {sample}"
        );
    }
    let reason = |s: &Value| s["reason"].as_str().unwrap().to_string();
    assert!(
        reason(&by_campaign)
            .starts_with("the filesystem check after the run found problems: `e2fsck -f -n"),
        "{}",
        reason(&by_campaign)
    );
    // The same words (the check's own output differs: the damage is random), down to what
    // they say of the results.
    let head = |r: String| {
        r.split_whitespace()
            .map(|w| if w.contains("/dev/loop") { "DEV" } else { w })
            .take_while(|w| !w.starts_with("Some("))
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(head(reason(&by_campaign)), head(reason(&by_command)));
    for sample in [&by_campaign, &by_command] {
        assert!(
            reason(sample).ends_with("; the results are stored, but the filesystem was damaged"),
            "{}",
            reason(sample)
        );
    }
}

#[test]
fn a_cache_policy_the_workload_cannot_honour_is_unsupported_both_ways() {
    if !root_or_skip("a_cache_policy_the_workload_cannot_honour_is_unsupported_both_ways") {
        return;
    }
    let s = Scratch::new();
    let (out, db) = campaign(
        &s,
        "direct",
        "ext4",
        "direct",
        "kind = \"metadata\"\ncount = 10\nops = [\"create\"]",
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let by_campaign = only_sample(&db);
    let (out, db) = command(
        &s,
        "direct-command",
        &[
            "metadata", "-n", "10", "--ops", "create", "--fs", "ext4", "--cache", "direct",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let by_command = only_sample(&db);
    for sample in [&by_campaign, &by_command] {
        assert_eq!(sample["status"], "unsupported", "{sample}");
        assert!(
            sample["results"].as_array().unwrap().is_empty(),
            "nothing measured: {sample}"
        );
        assert!(sample["target"].is_null(), "no target was made: {sample}");
    }
    assert_eq!(by_campaign["reason"], by_command["reason"]);
    assert!(
        by_command["reason"]
            .as_str()
            .unwrap()
            .contains("does not honour the cache policy direct"),
        "{by_command}"
    );
    let images: Vec<_> = entries(&s.work())
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "img"))
        .collect();
    assert!(images.is_empty(), "nothing was made: {images:?}");
}

#[test]
fn a_cache_policy_that_is_not_one_is_refused_with_the_same_words_both_ways() {
    let s = Scratch::new();
    let plan = s.plan(
        "name = \"bogus\"\ncache = [\"lukewarm\"]\n[[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\n",
    );
    let by_plan = fsbench()
        .args(["run", "--dry-run", "--plan"])
        .arg(&plan)
        .output()
        .unwrap();
    let by_flag = fsbench()
        .args(["sleep", "--fs", "ext4", "--cache", "lukewarm", "--no-store"])
        .output()
        .unwrap();
    assert_eq!(by_plan.status.code(), Some(2), "{}", stderr(&by_plan));
    assert_eq!(by_flag.status.code(), Some(2), "{}", stderr(&by_flag));
    let words = "unknown cache policy 'lukewarm': use warm, drop, remount or direct";
    assert!(
        stderr(&by_plan).contains(&format!("cache: {words}")),
        "{}",
        stderr(&by_plan)
    );
    assert!(
        stderr(&by_flag).contains(&format!("--cache: {words}")),
        "{}",
        stderr(&by_flag)
    );
}

#[test]
fn a_dropped_cache_is_dropped_and_said_alike_both_ways() {
    if !root_or_skip("a_dropped_cache_is_dropped_and_said_alike_both_ways") {
        return;
    }
    let s = Scratch::new();
    let (out, db) = campaign(
        &s,
        "drop",
        "ext4",
        "drop",
        "kind = \"sleep\"\nduration = \"10ms\"",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let by_campaign = only_sample(&db);
    let (out, db) = command(
        &s,
        "drop-command",
        &[
            "sleep",
            "--duration",
            "10ms",
            "--fs",
            "ext4",
            "--cache",
            "drop",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let by_command = only_sample(&db);
    for sample in [&by_campaign, &by_command] {
        let cache = &sample["target"]["cache"];
        assert_eq!(cache["policy"], "drop", "{sample}");
        assert_eq!(cache["state"], "dropped", "{sample}");
        assert!(
            cache["before"].is_object() && cache["after"].is_object(),
            "{cache}"
        );
    }
}
