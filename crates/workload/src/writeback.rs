//! The writeback workload: how fast a filesystem turns dirty page cache into data on its
//! device. Each round writes `size` bytes into `files` files, buffered and untimed (the page
//! cache takes them), then times one `syncfs(2)` of the filesystem: the rate is what the
//! filesystem's writeback — allocation, journal, metadata — achieves, which buffered writes
//! hide until the dirty limit is reached. The files go after each round.

use crate::data::{DataKind, DataSource};
use crate::figures::{BYTES, ELAPSED, OPS};
use crate::harness::Harness;
use crate::together::ScratchDir;
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::now_ns;
use fsbench_measure::histogram::Histogram;
use fsbench_measure::units::{human_bytes, Size};
use fsbench_model::{CachePolicy, Category, Direction, Merge, MetricDef, ResultRecord, Stat, Unit};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::path::Path;

/// The writeback workload's settings: its plan table, its command's flags.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WritebackSettings {
    /// Dirty data each round leaves for the sync (scaled by --scale; at least 1 MiB).
    #[arg(long, value_name = "SIZE", default_value_t = WritebackSettings::default().size)]
    pub size: Size,

    /// Files the round's data is spread over.
    #[arg(long, value_name = "N", default_value_t = WritebackSettings::default().files)]
    pub files: u64,

    /// Rounds (each writes, then syncs once).
    #[arg(long, value_name = "N", default_value_t = WritebackSettings::default().rounds)]
    pub rounds: u64,

    /// What is written: random (incompressible), zero, or compressible:PERCENT.
    #[arg(long, value_name = "KIND", default_value_t = WritebackSettings::default().data)]
    pub data: DataKind,

    /// Stamp every 4 KiB block written with a verifiable header and, after each round's sync
    /// (untimed), read every file back from a cold cache and check it; a block other than
    /// written ends the run `corrupt`.
    #[arg(long)]
    pub verify: bool,

    /// Seed of the data (a fresh one per run when unset; stored with the results).
    #[arg(long, value_name = "N")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

impl Default for WritebackSettings {
    fn default() -> WritebackSettings {
        WritebackSettings {
            size: Size(64 << 20),
            files: 1,
            rounds: 5,
            data: DataKind::Random,
            verify: false,
            seed: None,
        }
    }
}

/// Dirty bytes written back per second of `syncfs`: the main figure.
pub const WRITEBACK: MetricDef =
    MetricDef::new("writeback", Unit::BytesPerSec, Direction::Higher).main();
/// How long one round's `syncfs` took.
pub(crate) const SYNC: [MetricDef; 7] = [
    MetricDef::new("sync_min", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::Min)),
    MetricDef::new("sync_mean", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::Mean)),
    MetricDef::new("sync_p50", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::P50)),
    MetricDef::new("sync_p90", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::P90)),
    MetricDef::new("sync_p99", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::P99)),
    MetricDef::new("sync_p99_9", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::P99_9)),
    MetricDef::new("sync_max", Unit::Nanos, Direction::Lower)
        .merged(Merge::Distribution(Stat::Max)),
];

/// Every write call is at most this long (the data pool's record).
const CHUNK: usize = 1 << 20;

impl WritebackSettings {
    /// The dirty bytes of one round at the context's scale, and each file's share (whole 4 KiB
    /// blocks with `verify`).
    fn sizes(&self, ctx: &Context) -> (u64, u64) {
        let total = ((self.size.0 as f64 * ctx.scale) as u64).max(1 << 20);
        let share = total.div_ceil(self.files.max(1));
        let share = if self.verify {
            share.next_multiple_of(crate::verify::BLOCK as u64)
        } else {
            share
        };
        (share * self.files.max(1), share)
    }
}

impl Workload for WritebackSettings {
    const KIND: &'static str = "writeback";
    const ABOUT: &'static str =
        "Writeback: how fast the filesystem flushes dirty data (buffered writes, then a timed syncfs)";
    const LONG_ABOUT: &'static str = "Writeback: how fast the filesystem turns dirty page cache \
into data on its device.\n\nEach round writes --size bytes into --files files, buffered and \
untimed, then times one syncfs(2) of the filesystem: the rate at which its writeback \
(allocation, journal, metadata) empties the page cache, which buffered write figures hide until \
the dirty limit. Reported: the bytes written back per second of sync over every round, and the \
sync's duration per round.";
    const CATEGORY: Option<Category> = Some(Category::Throughput);
    const CACHE_POLICIES: &'static [CachePolicy] =
        &[CachePolicy::Warm, CachePolicy::Drop, CachePolicy::Remount];

    fn table_columns() -> &'static [&'static str] {
        &["writeback", "sync_p50", "sync_max"]
    }

    fn check(&self, _ctx: &Context) -> Result<(), WorkloadError> {
        if self.files == 0 {
            return Err(WorkloadError::invalid("files", "must be at least 1"));
        }
        if self.rounds == 0 {
            return Err(WorkloadError::invalid("rounds", "must be at least 1"));
        }
        Ok(())
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        // Writing at about 2 GB/s into the page cache, writing back at about 200 MB/s.
        let (total, _) = self.sizes(ctx);
        self.rounds * (total / 2 + total * 5)
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let seed = self
            .seed
            .unwrap_or_else(|| now_ns() ^ u64::from(std::process::id()));
        if let Err(e) = self.check(ctx) {
            return End::failed(e, Some(seed));
        }
        ScratchDir::run(dir, "fsbench-writeback", Some(seed), sink, |top, sink| {
            self.rounds(ctx, top, seed, stop, sink, harness)
        })
    }
}

impl WritebackSettings {
    /// Every round in `top`; its one result handed to `sink` at the end.
    fn rounds(
        &self,
        ctx: &Context,
        top: &Path,
        seed: u64,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<bool, WorkloadError> {
        let (total, per_file) = self.sizes(ctx);
        let mut data = DataSource::new(self.data, seed, CHUNK);
        let dir = std::fs::File::open(top).map_err(|e| WorkloadError::io("open", top, e))?;
        let mut syncs = Histogram::new();
        let mut synced_ns = 0u64;
        for round in 0..self.rounds {
            if stop.is_requested() {
                return Ok(false);
            }
            // Untimed: the page cache takes the round's data.
            for f in 0..self.files {
                let path = top.join(format!("round{round}-{f}"));
                let mut file =
                    crate::fileio::open(&path, crate::fileio::OpenMode::CreateNew, false)
                        .map_err(|e| WorkloadError::io("create", &path, e))?;
                let mut at = 0;
                while at < per_file {
                    let len = (per_file - at).min(CHUNK as u64) as usize;
                    let bytes = if self.verify {
                        data.next_verified(len, f as u32, at)
                    } else {
                        data.next(len)
                    };
                    file.write_all(bytes)
                        .map_err(|e| WorkloadError::io("write", &path, e))?;
                    at += len as u64;
                }
            }
            if !harness.phase_start() {
                return Ok(false);
            }
            let started = now_ns();
            // SAFETY: syncfs takes an open descriptor of the filesystem, held by `dir`.
            let rc = unsafe { libc::syncfs(dir.as_raw_fd()) };
            let took = now_ns() - started;
            if rc != 0 {
                return Err(WorkloadError::io(
                    "sync",
                    top,
                    std::io::Error::last_os_error(),
                ));
            }
            syncs.record(took);
            synced_ns += took;
            sink.status(&format!(
                "round {} of {}: {}/s",
                round + 1,
                self.rounds,
                human_bytes((total as f64 / (took.max(1) as f64 / 1e9)) as u64)
            ));
            if self.verify {
                self.verify_round(top, round, per_file, data.seed(), sink, harness)?;
            }
            for f in 0..self.files {
                let path = top.join(format!("round{round}-{f}"));
                std::fs::remove_file(&path).map_err(|e| WorkloadError::io("remove", &path, e))?;
            }
        }
        let written = per_file * self.files * self.rounds;
        let mut measurements = vec![
            WRITEBACK.at(written as f64 / (synced_ns.max(1) as f64 / 1e9)),
            BYTES.at(written as f64),
            OPS.at(self.rounds as f64),
            ELAPSED.at(synced_ns as f64),
        ];
        measurements.extend(crate::figures::distribution(&SYNC, &syncs.summary()));
        let record = ResultRecord {
            measurements,
            ..ResultRecord::default()
        };
        sink.record(record, 1, Some(1));
        Ok(true)
    }
}

impl WritebackSettings {
    /// `verify`, after a round's sync (untimed): the cache made cold (a filesystem fsbench made
    /// is remounted; elsewhere every cache dropped, or each file evicted where that cannot be),
    /// and every file of the round read back, each block checked against what was written.
    fn verify_round(
        &self,
        top: &Path,
        round: u64,
        per_file: u64,
        seed: u64,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> Result<(), WorkloadError> {
        let cold = harness.cold();
        if round == 0 {
            sink.warning(&match &cold {
                Ok(how) => format!(
                    "--verify: each round's files were read back once the cache was made cold \
                     ({how})"
                ),
                Err(why) => format!(
                    "--verify: the cache could not be made cold ({why}): each file was evicted \
                     on its own (fadvise) before it was read back"
                ),
            });
        }
        for f in 0..self.files {
            let path = top.join(format!("round{round}-{f}"));
            // Never through a symlink: a name in the directory under test is not proof of a file.
            let file = crate::fileio::open(&path, crate::fileio::OpenMode::Read, false)
                .map_err(|e| WorkloadError::io("open for verifying", &path, e))?;
            if cold.is_err() {
                // SAFETY: advice on a descriptor `file` owns; the round's sync left it clean.
                unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
            }
            let expect = crate::verify::Expect {
                file: f as u32,
                seed,
                fresh_from: None,
            };
            match crate::verify::check(&file, &path, expect, 0, per_file) {
                Ok(Ok(_)) => {}
                Ok(Err(corruption)) => {
                    return Err(WorkloadError::Corrupt(format!(
                        "{corruption} (after round {})",
                        round + 1
                    )))
                }
                Err(e) => return Err(WorkloadError::io("read back", &path, e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::Detached;
    use crate::workload::Collect;

    /// Every round's bytes are written back and counted once; the files go; a stop before a
    /// round ends the run as interrupted.
    #[test]
    fn every_rounds_bytes_are_written_back_and_counted_once() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let settings = WritebackSettings {
            size: Size(3 << 20),
            files: 2,
            rounds: 3,
            ..WritebackSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
        let r = &sink.records[0];
        assert_eq!(
            r.measurement("bytes").unwrap().value,
            3.0 * 2.0 * (1.5 * 1048576.0)
        );
        assert_eq!(r.measurement("ops").unwrap().value, 3.0);
        assert!(r.main().unwrap().value > 0.0);
        assert_eq!(sink.statuses.len(), 3, "one word per round");
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        let stop = StopFlag::new();
        stop.request();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &stop,
            &mut sink,
            &mut Detached,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Interrupted);
        assert!(settings
            .check(&Context::default())
            .is_ok_and(|()| WritebackSettings {
                files: 0,
                ..settings.clone()
            }
            .check(&Context::default())
            .is_err()));
    }

    /// `verify`: every round's files read back as written (no harness: each evicted on its
    /// own, said once); a file changed before its read-back ends the run corrupt, naming it.
    #[test]
    fn verified_rounds_read_back_as_written_and_a_changed_block_is_found() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let settings = WritebackSettings {
            size: Size(3 << 20),
            files: 2,
            rounds: 2,
            verify: true,
            seed: Some(4),
            ..WritebackSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut Detached,
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Ok, "{:?}", end.error);
        assert_eq!(sink.warnings.len(), 1, "{:?}", sink.warnings);
        assert!(sink.warnings[0].contains("evicted on its own"));
        /// A harness whose cold cache overwrites block 5 of the round's second file.
        struct Damaging(std::path::PathBuf);
        impl Harness for Damaging {
            fn cold(&mut self) -> Result<String, String> {
                let entry = std::fs::read_dir(&self.0)
                    .unwrap()
                    .next()
                    .unwrap()
                    .unwrap()
                    .path();
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(entry.join("round0-1"))
                    .unwrap();
                std::os::unix::fs::FileExt::write_all_at(&f, &[7u8; 16], 5 * 4096 + 100).unwrap();
                Ok("damaged".into())
            }
            fn drop_caches(&mut self) -> Result<String, String> {
                Err("no".into())
            }
            fn evict(&mut self, _: &Path, _: u64, _: u64) -> Result<Option<f64>, String> {
                Err("no".into())
            }
            fn resident(&mut self, _: &Path, _: u64, _: u64) -> Result<f64, String> {
                Err("no".into())
            }
        }
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut Collect::default(),
            &mut Damaging(dir.path().to_path_buf()),
        );
        assert_eq!(end.outcome, fsbench_model::Outcome::Corrupt);
        let said = end.error.unwrap().to_string();
        assert!(
            said.contains("round0-1: the block at byte 20480") && said.contains("after round 1"),
            "{said}"
        );
    }
}
