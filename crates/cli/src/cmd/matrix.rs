//! `fsbench matrix`: settings -> plan -> preflight -> run -> terminal / JSON / CSV.

use crate::cli::RunOptions;
use crate::exit::{self, Failure};
use crate::out::note;
use crate::progress::MatrixProgress;
use crate::target::{spec_from as target_spec_from, stop_on_signals};
use anyhow::{anyhow, Context};
use fsbench_measure::clock::{rfc3339_utc, unix_time_s};
use fsbench_measure::host::{mount_of, HostInfo};
use fsbench_measure::units::human_duration;
use fsbench_model::Outcome;
use fsbench_report::matrix::{Directory, MatrixDocument};
use fsbench_report::DisplayUnit;
use fsbench_testbed::{CachePolicy, RealSystem, Target, TargetError};
use fsbench_workload::matrix::{self, MatrixOutcome, MatrixPlan, MatrixSettings};
use fsbench_workload::{Context as WorkloadContext, WorkloadError};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// A workload error on the command line: a setting is named by its flag (`--file-sizes`).
pub fn usage_error(error: WorkloadError) -> Failure {
    let message = error.naming(|field| format!("--{}", field.replace('_', "-")));
    Failure::usage(anyhow!(message))
}

/// With --json, records a configuration that could not run (unsupported, or failed while being
/// prepared) as a result of its own: status, reason, and the request; no measurements.
fn record_not_run(
    args: &RunOptions,
    plan: &MatrixPlan,
    error: &TargetError,
) -> Result<(), Failure> {
    let status = match error.outcome() {
        Some(outcome @ (Outcome::Unsupported | Outcome::Failed)) => outcome,
        _ => return Ok(()),
    };
    let Some(path) = args.json.as_deref() else {
        return Ok(());
    };
    let file = create_export(path, "--json")?;
    let outcome = MatrixOutcome {
        results: Vec::new(),
        warnings: Vec::new(),
        elapsed_ns: 0,
        status: Outcome::Failed,
        failure: None,
        test_file: PathBuf::new(),
    };
    let host = HostInfo::probe();
    let mut document = MatrixDocument::new(
        plan,
        &outcome,
        &host,
        Directory {
            path: &args.target.work.work_dir,
            mount: None,
        },
        rfc3339_utc(unix_time_s()),
    );
    document.status = status;
    // The status says "unsupported" already: the reason is the rest.
    document.error = Some(match error {
        TargetError::Unsupported(reason) => reason.clone(),
        other => other.to_string(),
    });
    let mut out = BufWriter::new(file);
    document
        .write_json(&mut out)
        .and_then(|_| out.flush())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// True when an export path means standard output.
fn is_stdout(path: Option<&Path>) -> bool {
    path == Some(Path::new("-"))
}

/// Opens an export file before the run, so a bad path fails in a second, not after an hour;
/// `-` is standard output.
fn create_export(path: &Path, flag: &str) -> Result<File, Failure> {
    if is_stdout(Some(path)) {
        use std::os::fd::AsFd;
        return std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .map(File::from)
            .map_err(|e| Failure::usage(anyhow!("{flag} -: cannot use standard output ({e})")));
    }
    File::create(path).map_err(|e| {
        Failure::usage(anyhow!(
            "{flag} {}: cannot create the file ({e}); pass a writable path",
            path.display()
        ))
    })
}

pub fn run(settings: MatrixSettings, args: RunOptions) -> Result<i32, Failure> {
    let unit: DisplayUnit = args
        .unit
        .parse()
        .map_err(|e| Failure::usage(anyhow!("--unit: {e}")))?;
    if settings.keep && args.target.fs.is_some() {
        return Err(Failure::usage(anyhow!(
            "--keep: the filesystem of --fs is removed after the run; use --dir to keep the file"
        )));
    }
    let target_spec = target_spec_from(&args.target)?;
    let ctx = WorkloadContext {
        scale: args.scale,
        cache: target_spec.as_ref().map_or(CachePolicy::Warm, |t| t.cache),
    };
    let plan = settings.plan(&ctx).map_err(usage_error)?;
    let stop = stop_on_signals();

    // The filesystem under test: prepared by fsbench (--fs), or the directory's own.
    let system = RealSystem;
    let mut target = match target_spec {
        Some(target_spec) => match Target::prepare(&system, target_spec, &|| stop.is_requested()) {
            Ok(target) => Some(target),
            Err(TargetError::Interrupted) => {
                note!("fsbench matrix: interrupted while preparing the target; everything made was undone");
                return Ok(exit::INTERRUPTED);
            }
            Err(error) => {
                record_not_run(&args, &plan, &error)?;
                return Err(error.into());
            }
        },
        None => None,
    };
    if let Some(target) = target.as_mut() {
        target.apply_cache_policy()?;
    }

    // The directory: the target's mount point, the user's, or a temporary one removed afterwards.
    let temporary = match (&args.dir, &target) {
        (Some(_), _) | (None, Some(_)) => None,
        (None, None) => Some(
            tempfile::Builder::new()
                .prefix("fsbench-matrix-")
                .tempdir()
                .context("cannot create a temporary directory; pass --dir")?,
        ),
    };
    let dir = match (&args.dir, &target, &temporary) {
        (Some(dir), _, _) => dir.clone(),
        (None, Some(target), _) => target.mountpoint().to_path_buf(),
        (None, None, Some(tmp)) => tmp.path().to_path_buf(),
        (None, None, None) => unreachable!("a temporary directory exists without --dir and --fs"),
    };
    plan.preflight(&dir).map_err(usage_error)?;
    let mut json = args
        .json
        .as_deref()
        .map(|p| create_export(p, "--json"))
        .transpose()?;
    let mut csv = args
        .csv
        .as_deref()
        .map(|p| create_export(p, "--csv"))
        .transpose()?;

    let host = HostInfo::probe();
    let mount = mount_of(&dir);
    let started_at = rfc3339_utc(unix_time_s());
    let mut progress = MatrixProgress::new(!args.quiet);
    let outcome = matrix::run(&plan, &dir, &stop, &mut progress);
    progress.finish();
    // Before teardown: is the disk under the image full (then that, not the target, is why)?
    let host_full = target.as_ref().and_then(Target::host_full_hint);
    // Unmount, fsck, restore, detach, remove: the verdict goes with the results.
    let target_info = target.map(Target::finish);

    let mut document = MatrixDocument::new(
        &plan,
        &outcome,
        &host,
        Directory { path: &dir, mount },
        started_at,
    );
    document.target = target_info.as_ref();
    if let (Some(file), Some(path)) = (json.as_mut(), args.json.as_deref()) {
        let mut out = BufWriter::new(file);
        document
            .write_json(&mut out)
            .and_then(|_| out.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if let (Some(file), Some(path)) = (csv.as_mut(), args.csv.as_deref()) {
        let mut out = BufWriter::new(file);
        document
            .write_csv(&mut out)
            .and_then(|_| out.flush())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    // The grid comes after the exports: a closed pipe (`| head`) must not cost the results.
    // An export on standard output takes its place.
    let exports_on_stdout = is_stdout(args.json.as_deref()) || is_stdout(args.csv.as_deref());
    if !args.quiet && !exports_on_stdout && !outcome.results.is_empty() {
        let mut stdout = std::io::stdout().lock();
        let written = document
            .write_terminal(&mut stdout, unit, !args.no_spread)
            .and_then(|_| stdout.flush());
        match written {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            other => other.context("cannot write to standard output")?,
        }
    }
    if settings.keep && outcome.status == Outcome::Ok {
        note!("kept the last test file: {}", outcome.test_file.display());
        if let Some(tmp) = temporary {
            let _ = tmp.keep();
        }
    }
    let summary = format!(
        "{} of {} results in {} (wall clock)",
        outcome.results.len(),
        plan.result_count(),
        human_duration(outcome.elapsed_ns)
    );
    for note in target_info.iter().flat_map(|t| t.teardown.iter()) {
        if note.starts_with("error") {
            note!("warning: teardown: {note}; run `fsbench cleanup`");
        }
    }
    let fsck_problem = target_info
        .as_ref()
        .and_then(|t| t.fsck.as_ref())
        .filter(|f| !f.clean)
        .map(|f| {
            format!(
                "`{}` exited {:?}: {}",
                f.command,
                f.exit_status,
                f.output_tail.replace('\n', " / ")
            )
        });
    match outcome.status {
        Outcome::Ok => {
            if let Some(problem) = fsck_problem {
                return Err(Failure::failed(anyhow!(
                    "the filesystem check after the run found problems ({problem}); the results are stored, but the filesystem was damaged"
                )));
            }
            if !args.quiet {
                note!("fsbench matrix: {summary}");
            }
            Ok(exit::OK)
        }
        Outcome::Interrupted => {
            note!("fsbench matrix: interrupted; {summary}; the test file was removed");
            Ok(exit::INTERRUPTED)
        }
        _ => {
            let error = outcome
                .failure
                .map(anyhow::Error::from)
                .unwrap_or_else(|| anyhow!("the run failed"));
            let error = match host_full {
                Some(hint) => anyhow!("{hint} (the workload saw: {})", exit::one_line(&error)),
                None => error,
            };
            Err(Failure::failed(error.context(format!(
                "matrix stopped after {summary}; the test file was removed"
            ))))
        }
    }
}
