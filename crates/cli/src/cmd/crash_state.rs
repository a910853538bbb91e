//! `fsbench crash-state`: a power cut kept as a crash bundle, replayed for a developer — its
//! states listed, or one written to a new image with how to mount (or, for zfs, import) and
//! check it.

use crate::cli::CrashStateArgs;
use crate::exit::{self, Failure};
use crate::out::say;
use fsbench_measure::units::human_bytes;
// What a bundle's manifest says (its states, options) is shown as text: a control character
// in it is escaped, never sent to the terminal.
use fsbench_report::terminal::{printable, printable_path};
use fsbench_report::text::shell_word;
use fsbench_testbed::recorder::bundle::{Bundle, BundleError};
use fsbench_testbed::system::Cmd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

pub fn run(args: CrashStateArgs) -> Result<i32, Failure> {
    // Not a bundle (missing, incomplete, another version): a mistake in what was given.
    let bundle = Bundle::open(&args.bundle).map_err(Failure::usage)?;
    match (args.state, &args.to) {
        (Some(index), Some(to)) => write(&bundle, index, to),
        _ => list(&bundle),
    }
}

/// "1 flush", "2 flushes".
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "mark 3", or "nothing" before the workload's first mark.
fn promise(promised: Option<u64>) -> String {
    promised.map_or_else(|| "nothing".to_string(), |n| format!("mark {n}"))
}

fn list(bundle: &Bundle) -> Result<i32, Failure> {
    let m = bundle.manifest();
    let c = bundle.log().counts();
    say!(
        "crash bundle {} (format version {}, written by fsbench {})",
        printable_path(bundle.dir()),
        m.version,
        printable(&m.fsbench)
    )?;
    say!(
        "filesystem: {} on a {} image",
        printable(&m.filesystem),
        human_bytes(m.image_bytes)
    )?;
    match &m.mkfs_command {
        Some(cmd) => say!("made by: `{}`", printable(cmd))?,
        None => say!("mkfs options: {}", printable(&m.mkfs_options.join(" ")))?,
    }
    say!(
        "mount options: {}",
        printable(m.mount_options.as_deref().unwrap_or("(none)"))
    )?;
    say!(
        "log: {}: {} ({} written, {} kept), {}, {}, {}",
        count(m.records, "record", "records"),
        count(c.writes, "write", "writes"),
        human_bytes(c.written),
        human_bytes(c.kept),
        count(c.flushes, "flush", "flushes"),
        count(c.discards, "discard", "discards"),
        count(c.marks, "mark", "marks")
    )?;
    say!(
        "budget: {} states per flush, seed {}{}",
        m.budget.per_flush,
        m.budget.seed,
        if m.budget.ignore_flushes {
            ", flushes ignored"
        } else {
            ""
        }
    )?;
    say!(
        "{}:",
        count(m.states.len() as u64, "crash state", "crash states")
    )?;
    say!("{:>7}  {:<10}  what", "state", "promises")?;
    for s in &m.states {
        say!(
            "{:>7}  {:<10}  {}",
            s.index,
            promise(s.promised),
            printable(&s.what)
        )?;
    }
    say!(
        "write one to an image: fsbench crash-state {} --state N --to IMAGE",
        printable_path(bundle.dir())
    )?;
    Ok(exit::OK)
}

fn write(bundle: &Bundle, index: usize, to: &Path) -> Result<i32, Failure> {
    bundle.materialise(index, to).map_err(|e| match e {
        BundleError::Io { .. } => Failure::failed(e),
        e => Failure::usage(e),
    })?;
    let m = bundle.manifest();
    let state = &m.states[index];
    let on_disk = std::fs::metadata(to).map_or(0, |meta| meta.blocks() * 512);
    say!(
        "state {index} ({}; promises {}) written to {} ({} image, {} of it on disk)",
        printable(&state.what),
        promise(state.promised),
        printable_path(to),
        human_bytes(m.image_bytes),
        human_bytes(on_disk)
    )?;
    let image = to.display().to_string();
    if m.filesystem == "zfs" {
        // A pool, not a mount: imported from a directory holding only the state's device (the
        // bundle's other images hold the same pool), then scrubbed as fsbench checked it.
        let pool = m
            .mkfs_command
            .as_deref()
            .and_then(|c| c.split_whitespace().find(|w| w.starts_with("fsbench-")))
            .unwrap_or("POOL")
            .to_string();
        say!("import its pool as root (zfs-fuse running; the pool's recovery runs then), as fsbench did:")?;
        say!(
            "  mkdir /tmp/state-dev && ln -s \"$(losetup -f --show {})\" /tmp/state-dev/",
            printable(&shell_word(&image))
        )?;
        say!(
            "  zpool import -d /tmp/state-dev -f -R /mnt {}",
            printable(&pool)
        )?;
        say!(
            "then check it as fsbench did: zpool scrub {0}; zpool status -x {0}",
            printable(&pool)
        )?;
        return Ok(exit::OK);
    }
    let options = match &m.mount_options {
        Some(o) => format!("loop,{o}"),
        None => "loop".to_string(),
    };
    let mount = Cmd::new("mount")
        .args(["-o", &options, &image, "/mnt"])
        .to_string();
    say!("mount it as root (the filesystem's recovery runs then), as fsbench mounted it:")?;
    say!("  {}", printable(&mount))?;
    let check = fsbench_testbed::fs::by_name(&m.filesystem).and_then(|fs| fs.fsck(to));
    match check {
        Some(check) => {
            say!("then unmount it and check it read-only, as fsbench did:")?;
            say!("  umount /mnt && {}", printable(&check.to_string()))?;
        }
        None => say!(
            "{} has no check tool fsbench runs",
            printable(&m.filesystem)
        )?,
    }
    Ok(exit::OK)
}
