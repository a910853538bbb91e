//! `fsbench run`: a campaign from a plan file or a built-in profile, stored sample by sample,
//! ending with a summary; `--dry-run` lists the cases; `--resume RUN` finishes a stored run.
//! Under mpirun (a build with the `mpi` feature) every rank runs the campaign on targets of its
//! own and rank 0 alone stores, shows and reports one run (docs/design/mpi.md §7).

use crate::cli::RunArgs;
use crate::exit::{self, Failure};
use crate::frontend::{database, stop_on_signals, Cli};
use crate::out::note;
use crate::out::say;
use crate::progress::CampaignProgress;
use anyhow::{anyhow, Context};
use fsbench_measure::units::human_duration;
use fsbench_plan::executor::Child;
use fsbench_plan::plan::Overrides;
use fsbench_plan::profiles;
use fsbench_plan::run::{Host, Kind, Run};
use fsbench_plan::Plan;
use fsbench_report::terminal::{fit, printable, printable_path, wrap, WIDTH};
use fsbench_report::{Exporter, ReportModel, Terminal};
use fsbench_scale::Collective;
use fsbench_store::{Outcome, RunState, Store};
use fsbench_testbed::device::DeviceSpec;
use fsbench_testbed::RealSystem;
use fsbench_workload::workload::Describe;

/// The plan to run — a file, a stored run's plan (resume), or a built-in profile — with what
/// the command line sets over its keys (`--dir`, `--scale`, `--repetitions`, `--work-dir`),
/// applied before it is validated.
fn load_plan(args: &RunArgs, store: Option<&Store>) -> Result<(Plan, Overrides), Failure> {
    // --dir runs the workloads in an existing directory; the run keeps it (resume).
    let dir = match &args.dir {
        Some(dir) if !dir.is_dir() => {
            return Err(Failure::usage(anyhow!(
                "--dir {}: not an existing directory (create it, or give another)",
                dir.display()
            )))
        }
        Some(dir) => Some(std::path::absolute(dir).unwrap_or_else(|_| dir.clone())),
        None => None,
    };
    let (text, name, mut overrides) = if let Some(run_id) = args.resume {
        let store = store.expect("a store is open when resuming");
        let (text, overrides) = fsbench_plan::run::resumable(store, run_id)?;
        (text, format!("(plan of run {run_id})"), overrides)
    } else if let Some(path) = &args.plan {
        let text = fsbench_measure::input::read_regular(
            path,
            fsbench_plan::plan::MAX_PLAN_BYTES,
            "a plan",
        )
        .map_err(|e| Failure::usage(anyhow!("--plan: {e}")))?;
        let overrides = Overrides {
            dir,
            scale: args.scale,
            repetitions: args.repetitions,
            ..Overrides::default()
        };
        (text, path.display().to_string(), overrides)
    } else {
        let profile = profiles::by_name(&args.profile).ok_or_else(|| {
            Failure::usage(anyhow!(
                "--profile {}: unknown profile; the built-in ones are {} (`fsbench profiles` says what each does), or pass --plan FILE",
                args.profile,
                profiles::names()
            ))
        })?;
        let overrides = Overrides {
            dir,
            scale: args.scale,
            repetitions: args.repetitions,
            ..Overrides::default()
        };
        (
            profile.text.to_string(),
            format!("(profile {})", profile.name),
            overrides,
        )
    };
    // Where images and state files go is this host's: the command line's, always.
    if args.work_dir.is_some() {
        overrides.work_dir = args.work_dir.clone();
    }
    // The plan as this host will run it (its notes on the workloads, md arrays where the
    // kernel has none): for the dry run as for the campaign.
    let plan = Plan::parse_with(&text, &name, &overrides)
        .map_err(Failure::usage)?
        .on_host(&RealSystem);
    Ok((plan, overrides))
}

fn dry_run(plan: &Plan) -> Result<(), Failure> {
    // The device guard's checks, as the run would make them before touching the device.
    if let DeviceSpec::Block { devices } = &plan.device {
        if plan.dir.is_none() {
            fsbench_testbed::device::check_block_devices(&RealSystem, devices)?;
        }
    }
    let head = format!(
        "Plan \"{}\"{}: {} cases x {} repetitions = {} samples{}, estimated {}",
        printable(&plan.name),
        if plan.scale < 1.0 {
            format!(" at scale {}", plan.scale)
        } else {
            String::new()
        },
        plan.cases.len(),
        plan.repetitions.min,
        plan.sample_count(),
        if plan.repetitions.max > plan.repetitions.min {
            format!(
                " (up to {} repetitions until the 95 % CI is within {:.1} %)",
                plan.repetitions.max,
                plan.repetitions.target_ci.unwrap_or(0.0) * 100.0
            )
        } else {
            String::new()
        },
        human_duration(plan.estimate_ns())
    );
    let words: Vec<String> = head.split(' ').map(String::from).collect();
    for line in wrap("", &words, 2, WIDTH) {
        say!("{line}")?;
    }
    say_notes(plan)?;
    say_workloads(plan)?;
    // The cases: id, filesystem, options and estimate, each column as wide as its widest
    // entry; options elided in their middle when the line would pass 120 columns (the id, a
    // stable key, never is).
    let quote = |s: &str| {
        if s.is_empty() {
            "(default)".to_string()
        } else {
            printable(s).into_owned()
        }
    };
    let rows: Vec<[String; 5]> = plan
        .cases
        .iter()
        .map(|case| {
            [
                printable(&case.key).into_owned(),
                // A filesystem on an array says so: `btrfs raid0:2`; one in place of an md
                // array this host cannot make, that it is on one device.
                match (&case.config.array, &case.config.one_device_for) {
                    (Some(array), _) => format!(
                        "{} {}",
                        printable(&case.config.filesystem),
                        printable(array)
                    ),
                    (None, Some(_)) => {
                        format!("{} one device (no md)", printable(&case.config.filesystem))
                    }
                    (None, None) => printable(&case.config.filesystem).into_owned(),
                },
                quote(&case.config.mkfs_options),
                quote(&case.config.mount_options),
                human_duration(plan.case_estimate_ns(case)),
            ]
        })
        .collect();
    let header = ["id", "fs", "mkfs options", "mount options", "each"].map(String::from);
    let mut widths = [0usize; 5];
    for row in rows.iter().chain([&header]) {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let total = |widths: &[usize; 5]| widths.iter().sum::<usize>() + 2 * 4;
    // The widest of the filesystem (an array's layout) and option columns gives up a column,
    // down to 12 (the id, a stable key, never does).
    while total(&widths) > WIDTH {
        let Some(wider) = [1, 2, 3]
            .into_iter()
            .filter(|&i| widths[i] > 12)
            .max_by_key(|&i| widths[i])
        else {
            break;
        };
        widths[wider] -= 1;
    }
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, w)| {
                let cell = fit(cell, w);
                format!("{cell}{}", " ".repeat(w - cell.chars().count()))
            })
            .collect();
        say!("{}", cells.join("  ").trim_end())?;
    }
    Ok(())
}

/// A setting's or a resolved value's text: numbers, text and booleans as they are (sizes and
/// durations resolved in bytes and nanoseconds, named so, readably), lists joined by commas (a
/// long list of values as its length), an object as its fields; nothing for an empty one.
fn value_text(key: &str, value: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match value {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(items) if items.is_empty() => None,
        Value::String(s) => Some(s.clone()),
        Value::Number(n) if key.ends_with("_bytes") => Some(fsbench_model::size_label(n.as_u64()?)),
        Value::Number(n) if key.ends_with("_ns") => Some(human_duration(n.as_u64()?)),
        Value::Array(items) if items.iter().all(|v| !v.is_object() && !v.is_array()) => {
            if items.len() > 8 {
                Some(format!("[{} values]", items.len()))
            } else {
                Some(
                    items
                        .iter()
                        .filter_map(|v| value_text(key, v))
                        .collect::<Vec<_>>()
                        .join(","),
                )
            }
        }
        Value::Array(items) => Some(format!("[{} entries]", items.len())),
        Value::Object(fields) => Some(format!(
            "{{{}}}",
            fields
                .iter()
                .filter_map(|(k, v)| Some(format!("{k}={}", value_text(k, v)?)))
                .collect::<Vec<_>>()
                .join(" ")
        )),
        other => Some(other.to_string()),
    }
}

/// Each workload of the plan once: its kind, how long a sample of it takes, every setting
/// (defaults included), and what the settings resolve to at the plan's scale (the workload's
/// `describe`: the matrix's cells, the task's tree), within 120 columns.
fn say_workloads(plan: &Plan) -> Result<(), Failure> {
    say!(
        "Workloads (every setting, defaults included; `=>` what they resolve to{}):",
        if plan.scale < 1.0 {
            format!("; at scale {}, sizes, counts, times shrink", plan.scale)
        } else {
            String::new()
        }
    )?;
    let mut seen: Vec<&str> = Vec::new();
    for case in &plan.cases {
        let workload = &case.workload;
        if seen.contains(&workload.name.as_str()) {
            continue;
        }
        seen.push(&workload.name);
        let ctx = plan.context(case);
        let settings = serde_json::to_value(workload).map_err(|e| Failure::failed(anyhow!(e)))?;
        let words: Vec<String> = settings
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| *k != "name" && *k != "kind")
            .filter_map(|(k, v)| {
                Some(printable(&format!("{k}={}", value_text(k, v)?)).into_owned())
            })
            .flat_map(words_of)
            .collect();
        let lead = format!(
            "  {} ({}, {} a sample):",
            printable(&workload.name),
            workload.settings.kind(),
            human_duration(workload.estimate_ns(&ctx))
        );
        for line in wrap(&lead, &words, 6, WIDTH) {
            say!("{line}")?;
        }
        if let Some(resolved) = workload.settings.apply(Describe(&ctx)) {
            let words: Vec<String> = resolved
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| settings.get(k.as_str()) != Some(v))
                .filter_map(|(k, v)| {
                    Some(printable(&format!("{k}={}", value_text(k, v)?)).into_owned())
                })
                .flat_map(words_of)
                .collect();
            if !words.is_empty() {
                for line in wrap("    =>", &words, 6, WIDTH) {
                    say!("{line}")?;
                }
            }
        }
    }
    Ok(())
}

/// A setting as words to wrap: a value with spaces in it (a sentence) may break between them.
fn words_of(setting: String) -> Vec<String> {
    setting.split(' ').map(String::from).collect()
}

/// The plan's notes (a study's profile: what differs from the study here), once each.
fn say_notes(plan: &Plan) -> Result<(), Failure> {
    for note in &plan.notes {
        let words: Vec<String> = printable(note)
            .split_whitespace()
            .map(String::from)
            .collect();
        for line in wrap("Note:", &words, 6, WIDTH) {
            say!("{line}")?;
        }
    }
    Ok(())
}

/// How a finished campaign ended, by the README's rule ("Exit codes"): failed if any sample
/// failed or timed out, unsupported if every sample was, else ok.
fn campaign_outcome(model: &ReportModel) -> Outcome {
    Outcome::of_run(
        model
            .cases()
            .flat_map(|c| c.samples.iter().map(|s| s.status)),
    )
}

pub fn run(args: RunArgs) -> Result<i32, Failure> {
    let job = fsbench_scale::launcher().map_err(|e| Failure::usage(anyhow!(e)))?;
    let mut met = false;
    let result = run_as(args, job.as_deref(), &mut met);
    exit::end_rank(job.as_deref(), met, result)
}

/// The campaign, alone or as one rank of `job`; `met` is set once the ranks have met for the
/// last time.
fn run_as(args: RunArgs, job: Option<&dyn Collective>, met: &mut bool) -> Result<i32, Failure> {
    if job.is_some() && args.resume.is_some() {
        return Err(Failure::usage(anyhow!(
            "--resume under mpirun is not built yet: run the campaign again (the interrupted \
             run keeps what it measured)"
        )));
    }
    let host = Host {
        system: &RealSystem,
        job,
    };
    let lead = host.lead();
    // A plan is validated before anything is made: no database, no work directory.
    let checked = match args.resume {
        None => Some(load_plan(&args, None)?),
        Some(_) => None,
    };
    if let (Some((plan, _)), Some(dir), true) = (&checked, &args.dir, lead && !args.quiet) {
        let fs = plan
            .cases
            .first()
            .map_or("", |c| c.config.filesystem.as_str());
        note!(
            "fsbench run: in {} ({}): no filesystem is made; every configuration is the directory's filesystem ({} cases)",
            printable_path(dir),
            printable(fs),
            plan.cases.len()
        );
    }
    if let (true, Some((plan, _))) = (args.dry_run, &checked) {
        if lead {
            dry_run(plan)?;
        }
        return Ok(exit::OK);
    }
    // In a directory, no filesystem is made: root is needed only for what the plan asks
    // (a dropped cache, a CPU quota), and the workload says so then.
    // (A resumed run's plan is read from the store first.)
    let needs_root = |plan: &Plan| {
        // SAFETY: geteuid has no preconditions.
        if plan.dir.is_none() && unsafe { libc::geteuid() } != 0 {
            return Err(Failure::usage(anyhow!(
                "a campaign prepares filesystems on loop devices and needs root: run it as root (`fsbench run --dry-run` works without)"
            )));
        }
        Ok(())
    };
    if let Some((plan, _)) = &checked {
        needs_root(plan)?;
        Run::check(plan, host)?;
    }
    // Only rank 0's store is kept; the others' runs go to one removed at the end.
    let (store, _scratch) = database(&args.db.path(), lead, "cannot create a temporary directory")?;
    let (plan, overrides) = match checked {
        Some(checked) => checked,
        None => load_plan(&args, Some(&store))?,
    };
    if args.dry_run {
        dry_run(&plan)?;
        return Ok(exit::OK);
    }
    needs_root(&plan)?;
    let kind = Kind::Campaign {
        resume: args.resume,
        overrides: &overrides,
        dir_named: match (&args.dir, args.resume) {
            (Some(_), _) => "--dir",
            (None, Some(_)) => "the resumed run's directory",
            (None, None) => "the plan's dir",
        },
    };
    let stop = stop_on_signals();
    let mut run = Run::begin(plan, store, host, kind, &Cli, stop)?;
    let run_id = run.id;
    let worker = std::env::current_exe()
        .context("cannot find the fsbench binary for the workload processes")?;
    let quiet = args.quiet || !lead;
    let mut progress = CampaignProgress::new(!quiet, run.plan().repetitions.min);
    let end = run.campaign(&Child { worker }, &mut progress);
    progress.finish();
    // The ranks met for the last time in the campaign (a store error at rank 0 ends the job).
    *met = end.is_ok();
    if !lead {
        return match end {
            Ok(Outcome::Interrupted) => Ok(exit::INTERRUPTED),
            Ok(_) => Ok(exit::OK),
            Err(e) => Err(Failure::failed(anyhow!(e))),
        };
    }
    let end = match end {
        Ok(end) => end,
        Err(e) => {
            let _ = run.finish(RunState::Failed);
            let next = if job.is_some() {
                "run the campaign again under mpirun"
            } else {
                "`fsbench run --resume RUN` continues"
            };
            return Err(Failure::failed(anyhow!(
                "{e}; the samples stored so far are kept (run {run_id}); {}",
                next.replace("RUN", &run_id.to_string())
            )));
        }
    };
    let status = match end {
        Outcome::Interrupted => RunState::Interrupted,
        _ => RunState::Complete,
    };
    run.finish(status).map_err(Failure::failed)?;
    let (plan, store) = (run.plan(), run.store());
    let mut model = ReportModel::load(store, &[run_id]).map_err(Failure::failed)?;
    // The report draws each workload and configuration's representative repetition over time;
    // a store that cannot give the series costs only the HTML report (the run is stored).
    let series = fsbench_report::over_time::SeriesChoice::Representative;
    let series_loaded =
        fsbench_report::over_time::load(&mut model, store, series).map_err(Failure::failed);
    // What the terminal and the HTML report say is found once.
    let findings = fsbench_report::Findings::new(&model, &Default::default());
    if !quiet {
        if plan.scale < 1.0 {
            say!(
                "Scale {}: file sizes, minimum times and images were shrunk (--scale); compare only with runs of the same scale.",
                plan.scale
            )?;
        }
        say_notes(plan)?;
        let mut stdout = std::io::stdout().lock();
        let summary = Terminal {
            db: Some(store.path()),
            all_metrics: false,
            ranking: true,
        };
        let written = summary.render(&findings, &mut stdout);
        if let Err(e) = written {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(Failure::failed(anyhow!("cannot write the summary: {e}")));
            }
        }
    }
    // The HTML report next to the database; a directory it cannot be written in costs only
    // the report (the run is stored).
    // Its name is fsbench's, in a directory others may write to: whatever is there is replaced,
    // never written through (crate::outfile).
    let report = crate::cmd::report::report_path(store.path(), run_id);
    let html = fsbench_report::Html {
        series,
        ..fsbench_report::Html::default()
    };
    let written = series_loaded.and_then(|()| {
        crate::outfile::write_file(&report, crate::outfile::Origin::Own, |out| {
            html.render(&findings, out)
        })
    });
    match written {
        Ok(()) if !quiet => say!("Report: {} (open it in a browser)", printable_path(&report))?,
        Ok(()) => {}
        Err(e) => note!(
            "fsbench run: the HTML report was not written: {}",
            printable(&crate::exit::one_line(&e.error))
        ),
    }
    match end {
        Outcome::Interrupted if job.is_some() => {
            note!(
                "fsbench run: interrupted; every finished sample is stored in run {run_id} (a job's run cannot be resumed yet: run the campaign again under mpirun)"
            );
            Ok(Outcome::Interrupted.exit_code())
        }
        Outcome::Interrupted => {
            note!(
                "fsbench run: interrupted; every finished sample is stored in run {run_id}; finish it with `fsbench run --resume {run_id}`"
            );
            Ok(Outcome::Interrupted.exit_code())
        }
        _ => {
            let code = campaign_outcome(&model).exit_code();
            if code == exit::FAILED {
                note!("fsbench run: some samples failed or timed out (run {run_id}; reasons in the summary and `fsbench export {run_id}`)");
            } else if code == exit::UNSUPPORTED {
                note!("fsbench run: this host could run none of the configurations of run {run_id} (every sample unsupported; reasons in the summary)");
            }
            Ok(code)
        }
    }
}
