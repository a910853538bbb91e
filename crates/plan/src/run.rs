//! A run, from its beginning in the store to its end, the same for a campaign (`fsbench run`)
//! and a workload command (a one-case plan whose sample runs in this process): what is refused
//! before anything is made, the checks of the ground it runs on, the host's record, its cases,
//! the guard of what its samples make, its samples, and its end — finished, or discarded when
//! its one sample never ran. The command line keeps its flags and its printing.
//!
//! The order is the security's (docs/failures.md, "Security"): a plan is refused
//! ([`Run::check`]) before the database is opened; the database (opened by the caller: its
//! trust checks are the store's), the work directory and the directory to run in are checked
//! before a run is stored; a resumed run is taken over ([`fsbench_store::Store::claim_run`])
//! only from a database nobody else could have written and whose owner is gone; the guard
//! runs before any target or sample exists.

use crate::executor::Executor;
use crate::plan::{Overrides, Plan};
use crate::runner::{Campaign, CampaignObserver, Recording};
use crate::sample::{Keep, Sampled, Sampler};
use crate::workload::sample_config;
use fsbench_measure::clock::{rfc3339_utc, unix_time_s};
use fsbench_measure::host::{FsInstance, HostInfo, ProbeHost};
use fsbench_model::{Outcome, ResultRecord, RunState};
use fsbench_scale::Collective;
use fsbench_store::{NewRun, Store, StoreError};
use fsbench_testbed::device::SizeSetting;
use fsbench_testbed::guard::Guard;
use fsbench_testbed::{DeviceSpec, System, TargetError};
use fsbench_workload::workload::RunsPrograms;
use fsbench_workload::{Sink, StopFlag};
use std::collections::HashMap;
use std::path::Path;

/// Where a run happens: this host, through `system`, as one process or as one rank of `job`.
#[derive(Clone, Copy)]
pub struct Host<'h> {
    pub system: &'h dyn System,
    /// The MPI job this process is one rank of; None alone. Only rank 0's store is kept.
    pub job: Option<&'h dyn Collective>,
}

impl Host<'_> {
    /// Whether this process speaks for the run: alone, or rank 0 of its job.
    pub fn lead(&self) -> bool {
        self.job.is_none_or(|job| job.rank() == 0)
    }
}

/// What the program that starts a run does for it: fsbench's own processes and its words to
/// the person who started it (the command line's).
pub trait Frontend {
    /// Starts the guard of this process's targets, whose state files go to `state_dir`
    /// (`fsbench guard`); None when it cannot start (said).
    fn guard(&self, state_dir: &Path) -> Option<Guard>;
    /// Says one line to the person who started the run (standard error).
    fn note(&self, line: &str);
}

/// What kind of run, and what it keeps for later.
#[derive(Debug, Clone, Copy)]
pub enum Kind<'a> {
    /// A campaign (`fsbench run`), new or resumed (`resume`): the command line's `overrides`
    /// are stored with it and, when it runs in a directory, which filesystem that is, so
    /// `--resume` rebuilds the same cases on the same filesystem; `dir_named` says who named
    /// the directory (`--dir`, the plan's `dir`), for refusals. Its guard runs whatever it
    /// makes (its samples' cgroups and directories too).
    Campaign {
        resume: Option<i64>,
        overrides: &'a Overrides,
        dir_named: &'a str,
    },
    /// A workload command's one case: never resumed; its guard runs when it makes a target or
    /// its workload starts programs; its work directory is prepared with its target.
    Command,
}

/// Why a run did not begin, or its samples could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A mistake in what was asked, found before anything was measured (exit 2).
    #[error("{0}")]
    Refused(String),
    /// The database refused what was asked of it (a run another process owns, one that does
    /// not exist): a mistake too.
    #[error(transparent)]
    StoreRefused(StoreError),
    /// The ground of the run (its work directory) refused or failed; its outcome says which.
    #[error(transparent)]
    Target(#[from] TargetError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something the run stores could not be written (`what`: the host, the overrides).
    #[error("cannot encode {what}")]
    Encode {
        what: &'static str,
        #[source]
        source: serde_json::Error,
    },
    /// Something stored does not read back.
    #[error("{0}")]
    Failed(String),
    /// The ranks of a job could not agree (one's host record did not read).
    #[error(transparent)]
    Job(#[from] fsbench_scale::JobError),
}

impl RunError {
    /// Whether the error is a mistake in what was asked (exit 2), not a failure (exit 1); a
    /// target's error says for itself ([`TargetError::outcome`]).
    pub fn is_mistake(&self) -> bool {
        matches!(self, RunError::Refused(_) | RunError::StoreRefused(_))
    }
}

/// The plan of a stored run to resume, as it was started: its text and the command line's
/// overrides (the directory and scale it started with). Refused: a database another user
/// could have written (it is never resumed), a workload command's run, a job's.
pub fn resumable(store: &Store, run_id: i64) -> Result<(String, Overrides), RunError> {
    // What another user could have written is never run (such a store is opened read-only,
    // which a resume does not do; said here too, where the plan is read).
    if let Some(why) = store.untrusted() {
        return Err(RunError::Refused(format!("--resume {run_id}: {why}")));
    }
    let run = store.run(run_id).map_err(RunError::StoreRefused)?;
    if Plan::is_one_case(&run.plan_text) {
        return Err(RunError::Refused(format!(
            "run {run_id} is a one-case run of `fsbench {}`, not a campaign: run the command again instead of --resume",
            run.plan_name
        )));
    }
    if let Some(size) = run.host.get("mpi").and_then(|mpi| mpi.get("world_size")) {
        return Err(RunError::Refused(format!(
            "run {run_id} is a campaign of an MPI job of {size} ranks: resuming a job is not \
             built yet; run the campaign again under mpirun"
        )));
    }
    // A resumed run keeps the directory and scale it started with.
    let overrides = match run.overrides {
        Some(stored) => serde_json::from_value(stored).map_err(|e| {
            RunError::Failed(format!("run {run_id}'s stored overrides do not read: {e}"))
        })?,
        None => Overrides::default(),
    };
    Ok((run.plan_text, overrides))
}

/// As root, refuses a directory to run a workload in (`--dir`, a plan's `dir`; `named` says
/// which) that another user could change: theirs, on the way through theirs, or writable by
/// others without the sticky bit (`measure::trust`). Root would make and remove files there
/// that such a user could swap for links (docs/failures.md, "Security").
pub fn check_run_dir(dir: &Path, named: &str) -> Result<(), RunError> {
    if !fsbench_measure::trust::as_root() {
        return Ok(());
    }
    fsbench_measure::trust::check_shared_dir(dir)
        .map_err(|e| RunError::Refused(format!("{named} {}: {e}", dir.display())))
}

/// A run in the store: begun (or taken over), its cases added, its guard running.
pub struct Run<'h> {
    pub id: i64,
    plan: Plan,
    store: Store,
    host: Host<'h>,
    stop: StopFlag,
    /// The run's case ids by key.
    cases: HashMap<String, i64>,
    /// Ends when the run does, after every target is torn down (the run outlives its samples).
    _guard: Option<Guard>,
}

impl<'h> Run<'h> {
    /// What is refused before anything is made, a database included: a plan that makes targets
    /// on a real device, as one rank of a job (every rank would format it).
    pub fn check(plan: &Plan, host: Host<'_>) -> Result<(), RunError> {
        if host.job.is_some()
            && plan.dir.is_none()
            && !matches!(plan.device, DeviceSpec::Image { .. })
        {
            let device = match plan.size_setting {
                SizeSetting::Flag => "--device",
                SizeSetting::Plan => "the plan's [device]",
            };
            return Err(RunError::Refused(format!(
                "{device} under mpirun: every rank would format the same device; drop it (each \
                 rank makes a loop device of its own on its host) or run in a directory (--dir)"
            )));
        }
        Ok(())
    }

    /// Begins a run of `plan` in `store` (or takes the resumed one over): the plan checked
    /// ([`Run::check`], again: a resumed run's plan is read from its database), its ground
    /// checked, the host's record (in a job, every rank's, gathered at rank 0), its cases (in a
    /// job, keyed by its size), its guard started. `stop` is the run's, set by signals.
    pub fn begin(
        mut plan: Plan,
        mut store: Store,
        host: Host<'h>,
        kind: Kind<'_>,
        frontend: &dyn Frontend,
        stop: StopFlag,
    ) -> Result<Run<'h>, RunError> {
        Run::check(&plan, host)?;
        if let Kind::Campaign {
            resume, dir_named, ..
        } = kind
        {
            ground(&store, &plan, host.system, resume, dir_named)?;
        }
        let mut record = host_record(&plan, kind)?;
        if let Some(job) = host.job {
            if let Kind::Campaign { overrides, .. } = kind {
                same_plan_everywhere(job, &plan, overrides)?;
            }
            // A job's results never pool with one process's: its keys name the ranks.
            for case in &mut plan.cases {
                case.key = format!("{}.np{}", case.key, job.size());
            }
            if let Some(all) = fsbench_scale::gather_hosts(job, &record) {
                record = all?;
            }
        }
        let id = stored_run(&mut store, &plan, &record, kind)?;
        let mut cases = HashMap::new();
        for case in &plan.cases {
            let workload = serde_json::to_string(&case.workload).map_err(encode("the workload"))?;
            let position = case.position as i64;
            let case_id = store.add_case(id, &case.key, position, &case.config, &workload)?;
            cases.insert(case.key.clone(), case_id);
        }
        let guard = guard(&plan, kind, frontend);
        Ok(Run {
            id,
            plan,
            store,
            host,
            stop,
            cases,
            _guard: guard,
        })
    }
}

impl Run<'_> {
    /// The plan as it runs (in a job, its cases keyed by the job's size).
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The store the run is in.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Runs (or resumes) a campaign's samples, round by round ([`Campaign`]).
    pub fn campaign(
        &mut self,
        executor: &dyn Executor,
        observer: &mut dyn CampaignObserver,
    ) -> Result<Outcome, StoreError> {
        Campaign {
            plan: &self.plan,
            store: &mut self.store,
            cases: &self.cases,
            system: self.host.system,
            executor,
            stop: self.stop.clone(),
            job: self.host.job,
        }
        .run(self.id, observer)
    }

    /// The one sample of a one-case run (a workload command's), its results and progress to
    /// `sink` as they exist: stored and the run finished when it ran (an interrupted sample
    /// keeps what finished); the run discarded, nothing of it kept, when it was refused (a
    /// mistake in the request) or stopped before its workload started.
    pub fn one_sample(
        &mut self,
        executor: &dyn Executor,
        sink: &mut dyn Sink,
    ) -> Result<Sampled, StoreError> {
        let case = &self.plan.cases[0];
        let (system, job) = (self.host.system, self.host.job);
        let mut sampler = Sampler::new(system, &self.plan, executor, self.stop.clone(), job);
        let mut recording = Recording::begin(
            self.cases[&case.key],
            1,
            sample_config(&case.workload, &sampler.context(case)),
        );
        let sampled = {
            let store = &mut self.store;
            let mut keep = |records: &[ResultRecord]| recording.keep(store, records);
            let lead = job.is_some_and(|j| j.rank() == 0);
            sampler.sample(case, sink, lead.then_some(&mut keep as Keep<'_>))
        };
        let Sampled::Done(result) = &sampled else {
            self.discard();
            return Ok(sampled);
        };
        recording.finish(&mut self.store, result)?;
        self.finish(match result.status {
            Outcome::Interrupted => RunState::Interrupted,
            _ => RunState::Complete,
        })?;
        Ok(sampled)
    }

    /// Marks the run ended, as `state`, now.
    pub fn finish(&self, state: RunState) -> Result<(), StoreError> {
        self.store
            .finish_run(self.id, state, Some(&rfc3339_utc(unix_time_s())))
    }

    /// Removes the run, when nothing of it was measured (best effort: a run left behind is
    /// shown as interrupted).
    fn discard(&self) {
        let _ = self.store.discard_run(self.id);
    }
}

/// A [`RunError::Encode`] of `what`.
fn encode(what: &'static str) -> impl Fn(serde_json::Error) -> RunError {
    move |source| RunError::Encode { what, source }
}

/// This host's record (in a campaign run in a directory, with which filesystem that is, for
/// `--resume` to check).
fn host_record(plan: &Plan, kind: Kind<'_>) -> Result<serde_json::Value, RunError> {
    let mut record = serde_json::to_value(HostInfo::probe()).map_err(encode("the host"))?;
    if let (Kind::Campaign { .. }, Some(instance)) = (
        kind,
        plan.dir.as_deref().and_then(|d| FsInstance::of(d).ok()),
    ) {
        record["dir"] = serde_json::to_value(instance).map_err(encode("the host"))?;
    }
    Ok(record)
}

/// The run in the store: a resumed one taken over (refused while the process that owns it is
/// alive: one process at a time), or a new one begun now with the host's `record` and (a
/// campaign's) the overrides that rebuild the same cases on `--resume`.
fn stored_run(
    store: &mut Store,
    plan: &Plan,
    record: &serde_json::Value,
    kind: Kind<'_>,
) -> Result<i64, RunError> {
    let overrides = match kind {
        Kind::Campaign {
            resume: Some(run_id),
            ..
        } => {
            return match store.claim_run(run_id, plan.sample_count() as u64) {
                Ok(()) => Ok(run_id),
                Err(e @ (StoreError::Busy { .. } | StoreError::NoSuchRun(_))) => {
                    Err(RunError::StoreRefused(e))
                }
                Err(e) => Err(RunError::Store(e)),
            };
        }
        // Where images go is the resuming host's.
        Kind::Campaign { overrides, .. } => Overrides {
            work_dir: None,
            ..overrides.clone()
        },
        Kind::Command => Overrides::default(),
    };
    let overrides_json = (!overrides.is_empty())
        .then(|| serde_json::to_string(&overrides))
        .transpose()
        .map_err(encode("the plan's overrides"))?;
    Ok(store.begin_run(&NewRun {
        started_at: &rfc3339_utc(unix_time_s()),
        plan_name: &plan.name,
        plan_text: &plan.text,
        fsbench_version: env!("CARGO_PKG_VERSION"),
        host_json: &record.to_string(),
        planned_samples: plan.sample_count() as u64,
        overrides_json: overrides_json.as_deref(),
        scale: plan.scale,
    })?)
}

/// The guard of what the run's samples make, should this process be killed: a campaign's
/// always (its targets, its samples' cgroups and, in a directory, their own directories), a
/// command's when it makes a target or its workload starts programs. Whether the samples'
/// programs can be kept in cgroups is found out once, and said when they cannot.
fn guard(plan: &Plan, kind: Kind<'_>, frontend: &dyn Frontend) -> Option<Guard> {
    let runs_programs = plan
        .cases
        .iter()
        .any(|case| case.workload.settings.apply(RunsPrograms));
    let guarded = match kind {
        Kind::Campaign { .. } => true,
        Kind::Command => plan.dir.is_none() || runs_programs,
    };
    let guard = guarded
        .then(|| frontend.guard(&fsbench_testbed::target::state_dir(&plan.work_dir)))
        .flatten();
    if runs_programs {
        programs_cgroup(frontend);
    }
    guard
}

/// A campaign's ground, checked before it is stored: the work directory where it makes
/// targets (only root may change what fsbench makes there), or the directory it runs in —
/// there, one nobody else could change, and for a resumed run the filesystem it ran on.
fn ground(
    store: &Store,
    plan: &Plan,
    system: &dyn System,
    resume: Option<i64>,
    named: &str,
) -> Result<(), RunError> {
    let Some(dir) = &plan.dir else {
        fsbench_testbed::target::prepare_work_dir(system, &plan.work_dir)?;
        return Ok(());
    };
    // The plan's own `dir` (or a resumed run's) must be there: nothing makes it.
    if !dir.is_dir() {
        return Err(RunError::Refused(format!(
            "the plan runs in {}, which is not an existing directory: create it (or mount \
             what belongs there), or give another with --dir",
            dir.display()
        )));
    }
    check_run_dir(dir, named)?;
    let Some(run_id) = resume else {
        return Ok(());
    };
    // Another filesystem mounted there since (a new tmpfs: the same type, options and keys) is
    // another campaign.
    let was = store.run(run_id).map_err(RunError::StoreRefused)?.host["dir"].clone();
    if let (Ok(was), Ok(now)) = (
        serde_json::from_value::<FsInstance>(was),
        FsInstance::of(dir),
    ) {
        if !was.same_as(&now) {
            return Err(RunError::Refused(format!(
                "run {run_id} ran in {} on another filesystem than the one mounted there now (filesystem id {} then, {} now): mount what was there, or start a new run",
                dir.display(),
                was.fsid,
                now.fsid
            )));
        }
    }
    // The keys name the directory's filesystem: another one is another campaign.
    let stored = store.load(run_id)?;
    if let Some(other) = stored
        .cases
        .iter()
        .find(|c| !plan.cases.iter().any(|p| p.key == c.case.key))
    {
        return Err(RunError::Refused(format!(
            "run {run_id} ran in {} on another filesystem (its case {} is not one of this \
             plan's now): mount what was there, or start a new run",
            dir.display(),
            other.case.key
        )));
    }
    Ok(())
}

/// Every rank has the same plan (the same file, scale and directory), or none runs: rank 0
/// names the first rank whose plan differs.
fn same_plan_everywhere(
    job: &dyn Collective,
    plan: &Plan,
    overrides: &Overrides,
) -> Result<(), RunError> {
    let mine = format!(
        "{}\n{:?}\n{:?}\n{:?}",
        plan.text, overrides.dir, overrides.scale, overrides.repetitions
    );
    let first_other = job.gather(mine.as_bytes()).and_then(|all| {
        all.iter()
            .position(|text| text.as_slice() != mine.as_bytes())
    });
    if job.all_ok(first_other.is_none()) {
        return Ok(());
    }
    Err(RunError::Refused(match first_other {
        Some(rank) => format!(
            "rank {rank}'s plan is not rank 0's (another file, --scale or --dir): give every \
             rank the same plan"
        ),
        None => "rank 0 found the ranks' plans differ (its error names the rank)".to_string(),
    }))
}

/// Whether the samples' programs can be kept in cgroups here, found out once by making one
/// (and removing it at once). When none can be made (not root, no cgroup filesystem), says
/// so: the programs are then ended through their process group and as orphans fsbench
/// adopts, which a kill -9 of fsbench does not do.
fn programs_cgroup(frontend: &dyn Frontend) {
    let Err(e) = fsbench_testbed::cgroup::Cgroup::new(None) else {
        return;
    };
    let reason = match e {
        TargetError::Unsupported(reason) => reason,
        other => other.to_string(),
    };
    frontend.note(&format!(
        "note: no cgroup for the processes a sample starts ({reason}): they are ended \
         through their process group and as orphans fsbench adopts, on Ctrl-C and \
         timeouts, but not if fsbench itself is killed (kill -9)"
    ));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::executor::InProcess;
    use crate::one_case::{OneCase, OneTarget};
    use fsbench_measure::series::SeriesInterval;
    use fsbench_model::CachePolicy;
    use fsbench_testbed::RecordingSystem;
    use fsbench_workload::WorkloadSettings;
    use std::cell::RefCell;

    /// A frontend that says what it was asked: the guards it started (none start) and notes.
    #[derive(Default)]
    struct Heard(RefCell<Vec<String>>);

    impl Frontend for Heard {
        fn guard(&self, state_dir: &Path) -> Option<Guard> {
            self.0
                .borrow_mut()
                .push(format!("guard {}", state_dir.display()));
            None
        }
        fn note(&self, line: &str) {
            self.0.borrow_mut().push(line.to_string());
        }
    }

    /// A sink that keeps nothing.
    struct Nothing;
    impl Sink for Nothing {
        fn record(&mut self, _record: ResultRecord, _done: usize, _total: Option<usize>) {}
    }

    fn sleep(duration: &str) -> WorkloadSettings {
        WorkloadSettings::from_kind(
            "sleep",
            toml::Value::Table(toml::Table::from_iter([(
                "duration".to_string(),
                toml::Value::from(duration),
            )])),
        )
        .unwrap()
        .unwrap()
    }

    /// The plan of `fsbench sleep --duration 1ms` in `dir`, or on a device with `--fs ext4`.
    fn command(dir: Option<&Path>, work: &Path, device: Option<DeviceSpec>) -> Plan {
        sleeping("1ms", dir, work, device)
    }

    /// The plan of `fsbench sleep --duration DURATION`.
    fn sleeping(
        duration: &str,
        dir: Option<&Path>,
        work: &Path,
        device: Option<DeviceSpec>,
    ) -> Plan {
        Plan::one_case(&OneCase {
            settings: &sleep(duration),
            sweep: None,
            scale: 1.0,
            interval: SeriesInterval::Auto,
            dir,
            work_dir: work,
            target: device.map(|device| OneTarget {
                fs: "ext4",
                mkfs_options: None,
                mount_options: None,
                scheduler: None,
                cache: CachePolicy::Warm,
                device,
                array: None,
                loop_direct_io: true,
                fsck: true,
                age: None,
            }),
            dir_cache: CachePolicy::Warm,
        })
        .unwrap()
    }

    /// Every rank of a job would format a real device: refused before anything is made, in
    /// the same words for a command and a campaign, naming where the device was set.
    #[test]
    fn a_real_device_under_mpirun_is_refused_naming_where_it_was_set() {
        let work = tempfile::tempdir().unwrap();
        let disk = DeviceSpec::parse("/dev/vdx", Some("/dev/vdx")).unwrap();
        let mut ranks = fsbench_scale::Threads::job(1);
        let job: &dyn Collective = &ranks.remove(0);
        let system = RecordingSystem::new();
        let host = |job| Host {
            system: &system,
            job,
        };
        let plan = command(None, work.path(), Some(disk));
        let e = Run::check(&plan, host(Some(job))).unwrap_err();
        assert!(e.is_mistake());
        assert_eq!(
            e.to_string(),
            "--device under mpirun: every rank would format the same device; drop it (each \
             rank makes a loop device of its own on its host) or run in a directory (--dir)"
        );
        // Alone, or on an image, or in a directory: nothing to refuse.
        Run::check(&plan, host(None)).unwrap();
        let image = DeviceSpec::Image { size_bytes: None };
        Run::check(&command(None, work.path(), Some(image)), host(Some(job))).unwrap();
        Run::check(
            &command(Some(work.path()), work.path(), None),
            host(Some(job)),
        )
        .unwrap();
        let campaign = Plan::parse(
            "name = \"a\"\n[device]\nblock = \"/dev/vdx\"\ndestroy_data_on = \"/dev/vdx\"\n\
             [[filesystems]]\nname = \"ext4\"\n[[workloads]]\nkind = \"sleep\"\n",
            "a.toml",
        )
        .unwrap();
        let e = Run::check(&campaign, host(Some(job))).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the plan's [device] under mpirun: every rank would"),
            "{e}"
        );
    }

    /// A command's run in a directory: begun with its one case and this host's record (no
    /// directory's filesystem: it is never resumed), no guard (it makes no target, starts no
    /// program), its sample stored and the run finished; a campaign's keeps what `--resume`
    /// needs and is guarded whatever it makes.
    #[test]
    fn a_run_begins_with_its_cases_and_ends_with_its_sample() {
        let dir = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let db = tempfile::tempdir().unwrap();
        let system = RecordingSystem::new();
        let host = Host {
            system: &system,
            job: None,
        };
        let heard = Heard::default();
        let plan = command(Some(dir.path()), work.path(), None);
        let store = Store::open(&db.path().join("results.db")).unwrap();
        let mut run =
            Run::begin(plan, store, host, Kind::Command, &heard, StopFlag::new()).unwrap();
        assert!(heard.0.borrow().is_empty(), "{:?}", heard.0.borrow());
        let stored = run.store().run(run.id).unwrap();
        assert_eq!(stored.plan_name, "sleep");
        assert!(stored.host.get("dir").is_none() && stored.overrides.is_none());
        let executor = InProcess { flag_names: true };
        let sampled = run.one_sample(&executor, &mut Nothing).unwrap();
        let Sampled::Done(result) = sampled else {
            panic!("{sampled:?}")
        };
        assert_eq!(result.status, Outcome::Ok, "{:?}", result.reason);
        let loaded = run.store().load(run.id).unwrap();
        assert_eq!(loaded.cases.len(), 1);
        assert_eq!(loaded.cases[0].samples.len(), 1);
        assert_eq!(run.store().run(run.id).unwrap().status, RunState::Complete);

        // A campaign in the directory: its overrides and the directory's filesystem kept.
        let overrides = Overrides {
            dir: Some(dir.path().to_path_buf()),
            work_dir: Some(work.path().to_path_buf()),
            ..Overrides::default()
        };
        let text = "name = \"c\"\n[[workloads]]\nkind = \"sleep\"\nduration = \"1ms\"\n";
        let plan = Plan::parse_with(text, "c.toml", &overrides).unwrap();
        let store = Store::open(&db.path().join("results.db")).unwrap();
        let kind = Kind::Campaign {
            resume: None,
            overrides: &overrides,
            dir_named: "--dir",
        };
        let run = Run::begin(plan, store, host, kind, &heard, StopFlag::new()).unwrap();
        let stored = run.store().run(run.id).unwrap();
        assert!(stored.host.get("dir").is_some(), "{}", stored.host);
        assert_eq!(
            stored.overrides.unwrap()["dir"],
            dir.path().display().to_string()
        );
        assert_eq!(
            *heard.0.borrow(),
            [format!("guard {}", work.path().join("state").display())]
        );
    }

    /// A command's sample stopped at once is kept as interrupted, and so is its run; one that
    /// never ran (its directory gone: a mistake in the request) keeps nothing, its run
    /// discarded.
    #[test]
    fn a_one_case_run_keeps_an_interrupted_sample_and_discards_a_refused_one() {
        let work = tempfile::tempdir().unwrap();
        let db = tempfile::tempdir().unwrap();
        let system = RecordingSystem::new();
        let host = Host {
            system: &system,
            job: None,
        };
        let executor = InProcess { flag_names: true };
        let heard = Heard::default();
        let begin = |dir: &Path, stop: StopFlag| {
            let plan = sleeping("1h", Some(dir), work.path(), None);
            let store = Store::open(&db.path().join("results.db")).unwrap();
            Run::begin(plan, store, host, Kind::Command, &heard, stop).unwrap()
        };
        let dir = tempfile::tempdir().unwrap();
        let stop = StopFlag::new();
        let mut run = begin(dir.path(), stop.clone());
        stop.request();
        let sampled = run.one_sample(&executor, &mut Nothing).unwrap();
        let Sampled::Done(result) = sampled else {
            panic!("{sampled:?}")
        };
        assert_eq!(result.status, Outcome::Interrupted);
        assert_eq!(
            run.store().run(run.id).unwrap().status,
            RunState::Interrupted
        );

        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let mut run = begin(&gone, StopFlag::new());
        std::fs::remove_dir(&gone).unwrap();
        let sampled = run.one_sample(&executor, &mut Nothing).unwrap();
        assert!(matches!(sampled, Sampled::Refused(_)), "{sampled:?}");
        assert!(run.store().run(run.id).is_err(), "the run was kept");
    }
}
