//! `fsbench cleanup`: undo what killed runs left behind, from their state files, and remove the
//! job files of campaigns that are gone; list the cached aged images (and, asked, remove them); and the guard process, which does it for one process
//! the moment that process is killed.

use crate::cli::{CleanupArgs, GuardArgs};
use crate::exit::{self, Failure};
use crate::out::{note, say};
use anyhow::anyhow;
use fsbench_measure::units::human_bytes;
// What a ledger or a cached image's record says (paths, a spec, a date) is shown as text: a
// control character in it is escaped, never sent to the terminal.
use fsbench_report::terminal::{printable, printable_path};
use fsbench_testbed::target::state_dir;
use fsbench_testbed::RealSystem;
use fsbench_testbed::{images, undo};

pub fn run(args: CleanupArgs) -> Result<i32, Failure> {
    let dir = state_dir(&args.work.work_dir);
    let mut report = undo::cleanup(&RealSystem, &args.work.work_dir);
    if let Some(refused) = report.refused {
        return Err(Failure::usage(anyhow!("{}", printable(&refused))));
    }
    report
        .done
        .extend(fsbench_plan::runner::remove_stale_jobs(&args.work.work_dir));
    // Aged images are kept for the runs that use them again, unless asked.
    let cached = images::list(&args.work.work_dir);
    if args.aged_images {
        match images::remove_all(&RealSystem, &args.work.work_dir) {
            Ok(done) => report.done.extend(done),
            Err(e) => report.failed.push(e),
        }
    }
    for note in &report.done {
        say!("{}", printable(note))?;
    }
    for pid in &report.live {
        say!("fsbench {pid} is still running: its resources were left alone")?;
    }
    if report.done.is_empty() && report.failed.is_empty() {
        say!("nothing to clean up in {}", printable_path(&dir))?;
    }
    if !args.aged_images && !cached.is_empty() {
        say!(
            "kept {} cached aged image{} in {} ({}), for the runs that use them again:",
            cached.len(),
            if cached.len() == 1 { "" } else { "s" },
            printable_path(&images::cache_dir(&args.work.work_dir)),
            human_bytes(cached.iter().map(|c| c.disk_bytes).sum())
        )?;
        for c in &cached {
            say!(
                "  {} {} aged {} ({} on disk, made {})",
                printable(&c.record.filesystem),
                human_bytes(c.record.image_bytes),
                printable(&c.record.spec.to_string()),
                human_bytes(c.disk_bytes),
                printable(&c.record.made_at)
            )?;
        }
        say!("`fsbench cleanup --aged-images` removes them")?;
    }
    if report.failed.is_empty() {
        Ok(exit::OK)
    } else {
        Err(Failure::failed(anyhow!(
            "could not undo everything: {}; run `fsbench cleanup` again once the cause is fixed",
            printable(&report.failed.join("; "))
        )))
    }
}

/// `fsbench guard` (internal, started by [`crate::target::guard`]): waits on standard input
/// for the guarded process to end; when it was killed, undoes what its ledger lists and says
/// so on standard error (the guarded process's terminal or job log).
pub fn guard(args: GuardArgs) -> Result<i32, Failure> {
    let work_dir = args.state_dir.parent().unwrap_or(&args.state_dir);
    let Some(report) = fsbench_testbed::guard::watch(
        &RealSystem,
        &mut std::io::stdin().lock(),
        work_dir,
        args.pid,
    ) else {
        return Ok(exit::OK);
    };
    if let Some(refused) = &report.refused {
        note!(
            "fsbench guard: process {} was killed; {}",
            args.pid,
            printable(refused)
        );
    }
    for line in &report.done {
        note!(
            "fsbench guard: process {} was killed; {}",
            args.pid,
            printable(line)
        );
    }
    for line in &report.failed {
        note!(
            "fsbench guard: process {} was killed; {}: run `fsbench cleanup`",
            args.pid,
            printable(line)
        );
    }
    if !report.live.is_empty() {
        note!(
            "fsbench guard: process {} still runs after 30 s (it did not end, or its pid was \
             taken by another process); its state files are left: run `fsbench cleanup` once \
             it has ended",
            args.pid
        );
    }
    Ok(
        if report.failed.is_empty() && report.live.is_empty() && report.refused.is_none() {
            exit::OK
        } else {
            exit::FAILED
        },
    )
}
