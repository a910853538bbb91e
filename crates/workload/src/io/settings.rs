//! The io workload's settings (fio's names where fio has one) and the plan they resolve to
//! under a context: scaled sizes and times, per-thread rates, checked once, no side effects.

pub use super::sched::Sched;
use crate::data::DataKind;
use crate::workload::Context;
use crate::WorkloadError;
use fsbench_measure::units::{Size, TimeSpan};
use fsbench_model::CachePolicy;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The access pattern (fio's `rw`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads, every block once per pass over the file.
    RandRead,
    /// Random writes, every block once per pass.
    RandWrite,
    /// Sequential reads and writes mixed by `rwmixread` (fio's `rw`, `readwrite`).
    ReadWrite,
    /// Random reads and writes mixed by `rwmixread`.
    RandRw,
}

impl Rw {
    pub const ALL: [Rw; 6] = [
        Rw::Read,
        Rw::Write,
        Rw::RandRead,
        Rw::RandWrite,
        Rw::ReadWrite,
        Rw::RandRw,
    ];

    /// fio's name, the stored `phase`.
    pub const fn name(self) -> &'static str {
        match self {
            Rw::Read => "read",
            Rw::Write => "write",
            Rw::RandRead => "randread",
            Rw::RandWrite => "randwrite",
            Rw::ReadWrite => "rw",
            Rw::RandRw => "randrw",
        }
    }

    pub const fn random(self) -> bool {
        matches!(self, Rw::RandRead | Rw::RandWrite | Rw::RandRw)
    }

    pub const fn reads(self) -> bool {
        !matches!(self, Rw::Write | Rw::RandWrite)
    }

    pub const fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }
}

impl fmt::Display for Rw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Rw {
    type Err = String;
    fn from_str(text: &str) -> Result<Rw, String> {
        let text = text.trim().to_ascii_lowercase();
        let name = if text == "readwrite" { "rw" } else { &text };
        Rw::ALL.into_iter().find(|rw| rw.name() == name).ok_or_else(|| {
            format!("'{text}' is not an access pattern: use read, write, randread, randwrite, rw (readwrite) or randrw")
        })
    }
}

/// How operations are issued (fio's `ioengine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// One pread/pwrite at a time per thread (fio's psync).
    Sync,
    /// io_uring: up to `iodepth` operations in flight per thread, one ring each.
    IoUring,
}

impl Engine {
    pub const fn name(self) -> &'static str {
        match self {
            Engine::Sync => "sync",
            Engine::IoUring => "io_uring",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Engine {
    type Err = String;
    fn from_str(text: &str) -> Result<Engine, String> {
        match text.trim().to_ascii_lowercase().as_str() {
            "sync" | "psync" => Ok(Engine::Sync),
            "io_uring" | "io-uring" | "uring" => Ok(Engine::IoUring),
            "libaio" => Err(
                "libaio is not an engine of fsbench: use io_uring (the same queue depths, and what fio itself recommends on Linux 5.1+)"
                    .to_string(),
            ),
            other => Err(format!(
                "'{other}' is not an engine: use sync (pread/pwrite, fio's psync) or io_uring"
            )),
        }
    }
}

fsbench_model::text_serde!(Rw, Engine);

/// A fio-style job: `threads` threads (fio's jobs), each on a file of its own with a ring of
/// its own, reading or writing `bs` blocks with `iodepth` of them in flight.
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IoSettings {
    /// Access pattern (fio rw): read, write (sequential), randread, randwrite, rw (a sequential
    /// mix, also readwrite) or randrw (a random mix), mixed by --rwmixread.
    #[arg(long, value_name = "PATTERN", default_value_t = IoSettings::default().rw)]
    pub rw: Rw,

    /// Size of each read or write (fio bs).
    #[arg(long, value_name = "SIZE", default_value_t = IoSettings::default().bs)]
    pub bs: Size,

    /// Size of each thread's file (fio size), whole blocks of --bs: a run without --time-based
    /// reads or writes it once. Scaled by --scale.
    #[arg(long, value_name = "SIZE", default_value_t = IoSettings::default().size)]
    pub size: Size,

    /// Percentage of reads in rw and randrw (fio rwmixread).
    #[arg(long, value_name = "PERCENT", default_value_t = IoSettings::default().rwmixread)]
    pub rwmixread: u8,

    /// How operations are issued (fio ioengine): io_uring (asynchronous, --iodepth in flight)
    /// or sync (one pread/pwrite at a time, fio's psync).
    #[arg(long, value_name = "ENGINE", default_value_t = IoSettings::default().engine)]
    pub engine: Engine,

    /// Operations in flight per thread (fio iodepth), 1..1024; the sync engine has 1.
    #[arg(long, value_name = "N", default_value_t = IoSettings::default().iodepth)]
    pub iodepth: u32,

    /// Operations queued before each submission (fio iodepth_batch_submit); 0: every free slot
    /// of the queue at once.
    #[arg(long, value_name = "N", default_value_t = IoSettings::default().iodepth_batch_submit)]
    pub iodepth_batch_submit: u32,

    /// Completions waited for at once when a thread waits (fio iodepth_batch_complete_min);
    /// 0: never sleep in the kernel, poll the completion queue.
    #[arg(long, value_name = "N", default_value_t = IoSettings::default().iodepth_batch_complete)]
    pub iodepth_batch_complete: u32,

    /// CPU scheduling policy of the threads and their io-wq workers (not the device's I/O
    /// scheduler, --scheduler): batch (a thread woken by a
    /// completion does not preempt the kernel thread doing the next operation on its CPU) or
    /// normal (as fio runs; `chrt -b 0 fio` is batch).
    #[arg(long, value_name = "POLICY", default_value_t = IoSettings::default().cpu_sched)]
    pub cpu_sched: Sched,

    /// Bypass the page cache (O_DIRECT, fio direct=1); a filesystem that refuses it makes the
    /// run unsupported, never a buffered run in disguise.
    #[arg(long)]
    pub direct: bool,

    /// Threads, each with its own file (and its own ring) (fio numjobs).
    #[arg(long, short = 't', alias = "numjobs", value_name = "N", default_value_t = IoSettings::default().threads)]
    #[serde(alias = "numjobs")]
    pub threads: u64,

    /// Stop issuing after this long (fio runtime); 0: no limit. Scaled by --scale.
    #[arg(long, value_name = "DURATION", default_value_t = IoSettings::default().runtime)]
    pub runtime: TimeSpan,

    /// Go over the file again and again until --runtime (fio time_based).
    #[arg(long)]
    pub time_based: bool,

    /// At most this many operations per second per thread, evenly paced (fio rate_iops); 0:
    /// no cap.
    #[arg(long, value_name = "N", default_value_t = IoSettings::default().rate_iops)]
    pub rate_iops: u64,

    /// At most this many bytes per second per thread, evenly paced (fio rate; `10m` is 10
    /// MiB/s); 0: no cap.
    #[arg(long, value_name = "SIZE", default_value_t = IoSettings::default().rate)]
    pub rate: Size,

    /// The rate caps are for all threads (and, under mpirun, all ranks) together, split evenly.
    #[arg(long)]
    pub rate_total: bool,

    /// io_uring: register each thread's buffers with its ring once (fio fixedbufs), so the
    /// kernel does not map them at every operation.
    #[arg(long)]
    pub fixedbufs: bool,

    /// io_uring: register each thread's file with its ring (fio registerfiles).
    #[arg(long)]
    pub registerfiles: bool,

    /// io_uring: polled completion (fio hipri, IORING_SETUP_IOPOLL); needs --direct and a device
    /// with poll queues (probed; refused otherwise).
    #[arg(long)]
    pub hipri: bool,

    /// Lay the file out (write it whole, untimed) before a write-only run too, so the timed
    /// writes overwrite written blocks (fio overwrite=1); otherwise a write-only run starts from
    /// an empty (sparse) file and its writes allocate. Reads always find a written file.
    #[arg(long)]
    pub overwrite: bool,

    /// Data written: random (incompressible), zero, or compressible:PERCENT.
    #[arg(long, value_name = "KIND", default_value_t = IoSettings::default().data)]
    pub data: DataKind,

    /// Seed of offsets and data (default: a fresh one per run; stored with the results).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Leave the files in the directory (named on stderr); only in a directory (--dir, a
    /// plan's `dir`), not with --fs, whose filesystem is removed afterwards.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub keep: bool,

    /// Verify what was written: every 4 KiB block written (the layout's too) carries a header
    /// (its offset, the thread's file, the seed, a write sequence number, its payload's
    /// checksum), and after the timed phase each file is synced, dropped from the page cache
    /// and read back, untimed. A block other than written, or older than the phase's write to
    /// it, ends the run `corrupt`, naming the file, the offset, what was expected and found;
    /// the file is kept in a directory (docs/workloads/io.md). bs of whole 4 KiB blocks.
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
}

impl Default for IoSettings {
    fn default() -> IoSettings {
        IoSettings {
            rw: Rw::RandRead,
            bs: Size(4 << 10),
            size: Size(64 << 20),
            rwmixread: 50,
            engine: Engine::IoUring,
            iodepth: 1,
            iodepth_batch_submit: 1,
            iodepth_batch_complete: 1,
            cpu_sched: Sched::Batch,
            direct: false,
            threads: 1,
            runtime: TimeSpan::from_ns(0),
            time_based: false,
            rate_iops: 0,
            rate: Size(0),
            rate_total: false,
            fixedbufs: false,
            registerfiles: false,
            hipri: false,
            overwrite: false,
            data: DataKind::Random,
            seed: None,
            keep: false,
            verify: false,
        }
    }
}

/// The deepest queue a thread may ask for (fio's limit is 65536; io_uring rings go to 32768).
pub const MAX_IODEPTH: u32 = 1024;
/// The most buffer memory one thread may have in flight (iodepth x bs).
pub const MAX_BUFFER_BYTES: u64 = 1 << 30;
/// Direct I/O needs sizes and offsets in whole logical blocks of the device.
pub const DIRECT_ALIGN: u64 = 512;

/// How each thread's file starts out before the timed phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// Written whole with the run's data (reads, and writes with `overwrite`).
    Written,
    /// Its size set, no block written (writes allocate).
    Sparse,
}

/// What the settings resolve to under a context: everything the run needs, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoPlan {
    pub rw: Rw,
    pub engine: Engine,
    pub bs: u64,
    /// Bytes per thread, whole blocks (scaled).
    pub size: u64,
    pub blocks: u64,
    pub iodepth: u32,
    pub batch_submit: u32,
    pub batch_complete: u32,
    pub cpu_sched: Sched,
    pub direct: bool,
    pub threads: u64,
    /// When issuing stops, from the start of the phase (scaled runtime).
    pub runtime_ns: Option<u64>,
    /// Operations per thread when the run is bounded by size (one pass over the file).
    pub ops_per_thread: Option<u64>,
    /// Nanoseconds between two operations of a thread (the tighter of both caps).
    pub interval_ns: Option<f64>,
    /// The caps per thread, as resolved (for the results).
    pub rate_iops_per_thread: Option<f64>,
    pub rate_bytes_per_thread: Option<f64>,
    /// Percentage of reads (100 for read-only patterns, 0 for write-only ones).
    pub read_percent: u8,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub hipri: bool,
    pub layout: Layout,
    pub data: DataKind,
    pub seed: u64,
    pub drop_cache: bool,
    /// Writes carry verifiable headers and the files are read back after the phase.
    pub verify: bool,
}

impl IoSettings {
    /// Validates the settings under `ctx` into a plan. No side effects.
    pub fn plan(&self, ctx: &Context) -> Result<IoPlan, WorkloadError> {
        ctx.check()?;
        let bs = self.bs.0;
        if bs == 0 {
            return Err(WorkloadError::invalid("bs", "must be at least 1 byte"));
        }
        let direct = self.direct || ctx.cache == CachePolicy::Direct;
        if direct && bs % DIRECT_ALIGN != 0 {
            return Err(WorkloadError::invalid(
                "bs",
                format!(
                    "{}: direct I/O needs whole {DIRECT_ALIGN}-byte blocks (4k is safe on every device)",
                    self.bs
                ),
            ));
        }
        if self.rwmixread > 100 {
            return Err(WorkloadError::invalid(
                "rwmixread",
                "must be between 0 and 100",
            ));
        }
        if self.threads == 0 || self.threads > 4096 {
            return Err(WorkloadError::invalid(
                "threads",
                "must be between 1 and 4096",
            ));
        }
        if self.iodepth == 0 || self.iodepth > MAX_IODEPTH {
            return Err(WorkloadError::invalid(
                "iodepth",
                format!("must be between 1 and {MAX_IODEPTH}"),
            ));
        }
        let io_uring_only = |field: &'static str, what: &str| {
            WorkloadError::invalid(
                field,
                format!("{what} needs the io_uring engine (the sync engine issues one pread or pwrite at a time): add --engine io_uring"),
            )
        };
        if self.engine == Engine::Sync {
            if self.iodepth > 1 {
                return Err(io_uring_only("iodepth", "a queue depth above 1"));
            }
            for (field, on) in [
                ("fixedbufs", self.fixedbufs),
                ("registerfiles", self.registerfiles),
                ("hipri", self.hipri),
            ] {
                if on {
                    return Err(io_uring_only(field, field));
                }
            }
        }
        for (field, value) in [
            ("iodepth_batch_submit", self.iodepth_batch_submit),
            ("iodepth_batch_complete", self.iodepth_batch_complete),
        ] {
            if value > self.iodepth {
                return Err(WorkloadError::invalid(
                    field,
                    format!(
                        "{value} is more than iodepth ({}): at most iodepth operations are in flight",
                        self.iodepth
                    ),
                ));
            }
        }
        if self.hipri && !direct {
            return Err(WorkloadError::invalid(
                "hipri",
                "polled completion works only with direct I/O: add --direct",
            ));
        }
        if u64::from(self.iodepth).saturating_mul(bs.next_multiple_of(4096)) > MAX_BUFFER_BYTES {
            return Err(WorkloadError::invalid(
                "iodepth",
                format!(
                    "{} operations of {} in flight need more than {} of buffers per thread; lower iodepth or bs",
                    self.iodepth,
                    self.bs,
                    fsbench_measure::units::human_bytes(MAX_BUFFER_BYTES)
                ),
            ));
        }
        // All threads' buffers at once: at most half the host's memory (a page each at least).
        let total = u64::from(self.iodepth)
            .saturating_mul(bs.next_multiple_of(4096))
            .saturating_mul(self.threads);
        if let Some(memory) = fsbench_measure::host::memory_bytes() {
            if total > memory / 2 {
                return Err(WorkloadError::invalid(
                    "threads",
                    format!(
                        "{} threads with {} operations of {} in flight need {} of buffers, more than half of this host's memory ({}); lower threads, iodepth or bs",
                        self.threads,
                        self.iodepth,
                        self.bs,
                        fsbench_measure::units::human_bytes(total),
                        fsbench_measure::units::human_bytes(memory)
                    ),
                ));
            }
        }
        if self.time_based && self.runtime.ns == 0 {
            return Err(WorkloadError::invalid(
                "time_based",
                "needs a runtime: add --runtime (e.g. 10s)",
            ));
        }
        // Sizes and times scale; a file keeps at least one block, a runtime at least 1 ms.
        let scaled = (self.size.0 as f64 * ctx.scale) as u64;
        let blocks = (scaled / bs).max(1);
        if self.size.0 < bs {
            return Err(WorkloadError::invalid(
                "size",
                format!("{} is less than one block of bs ({})", self.size, self.bs),
            ));
        }
        if self.verify {
            self.check_verify(bs, blocks)?;
        }
        let runtime_ns = (self.runtime.ns > 0)
            .then(|| ((self.runtime.ns as f64 * ctx.scale).ceil() as u64).max(1_000_000));
        // Rate caps, per thread.
        let sharers = if self.rate_total {
            self.threads * ctx.job.map_or(1, |j| u64::from(j.ranks))
        } else {
            1
        };
        let per_thread = |total: u64| (total > 0).then(|| total as f64 / sharers as f64);
        let rate_iops = per_thread(self.rate_iops);
        let rate_bytes = per_thread(self.rate.0);
        if rate_bytes.is_some_and(|r| r < bs as f64 / 3600.0) {
            return Err(WorkloadError::invalid(
                "rate",
                format!(
                    "{} per second is less than one block of {} an hour per thread",
                    self.rate, self.bs
                ),
            ));
        }
        let interval_ns = [
            rate_iops.map(|r| 1e9 / r),
            rate_bytes.map(|r| bs as f64 * 1e9 / r),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::max);
        let read_percent = match self.rw {
            Rw::Read | Rw::RandRead => 100,
            Rw::Write | Rw::RandWrite => 0,
            Rw::ReadWrite | Rw::RandRw => self.rwmixread,
        };
        Ok(IoPlan {
            rw: self.rw,
            engine: self.engine,
            bs,
            size: blocks * bs,
            blocks,
            iodepth: self.iodepth,
            batch_submit: if self.iodepth_batch_submit == 0 {
                self.iodepth
            } else {
                self.iodepth_batch_submit
            },
            batch_complete: self.iodepth_batch_complete,
            cpu_sched: self.cpu_sched,
            direct,
            threads: self.threads,
            runtime_ns,
            ops_per_thread: (!self.time_based).then_some(blocks),
            interval_ns,
            rate_iops_per_thread: rate_iops,
            rate_bytes_per_thread: rate_bytes,
            read_percent,
            fixedbufs: self.fixedbufs,
            registerfiles: self.registerfiles,
            hipri: self.hipri,
            layout: if self.rw.reads() || self.overwrite {
                Layout::Written
            } else {
                Layout::Sparse
            },
            data: self.data,
            seed: self.seed.unwrap_or_else(crate::rng::fresh_seed),
            drop_cache: ctx.cache == CachePolicy::Drop,
            verify: self.verify,
        })
    }

    /// What `verify` cannot check is refused: blocks that are not whole 4 KiB blocks (each
    /// carries its own header), and two writes of one block in flight at once (a queue deeper
    /// than the file has blocks), either of which may land last, or — direct writes split at
    /// the device's sectors — a block torn between them that no single write made.
    fn check_verify(&self, bs: u64, blocks: u64) -> Result<(), WorkloadError> {
        let block = crate::verify::BLOCK as u64;
        if bs % block != 0 {
            return Err(WorkloadError::invalid(
                "verify",
                format!(
                    "verify checks whole 4 KiB blocks and bs {} is not made of them; use a bs of 4k or a multiple of it",
                    self.bs
                ),
            ));
        }
        if u64::from(self.iodepth) > blocks {
            return Err(WorkloadError::invalid(
                "verify",
                format!(
                    "iodepth {} is more than the {blocks} blocks of each file: two writes of one block would be in flight at once, and what lands is not one write's; lower iodepth or raise size",
                    self.iodepth
                ),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Place;

    fn plan(settings: IoSettings) -> Result<IoPlan, String> {
        settings
            .plan(&Context::default())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn names_parse_as_fio_writes_them() {
        assert_eq!("randrw".parse(), Ok(Rw::RandRw));
        assert_eq!("readwrite".parse(), Ok(Rw::ReadWrite));
        assert!("trim".parse::<Rw>().unwrap_err().contains("randread"));
        assert_eq!("psync".parse(), Ok(Engine::Sync));
        assert_eq!("io_uring".parse(), Ok(Engine::IoUring));
        assert!("libaio"
            .parse::<Engine>()
            .unwrap_err()
            .contains("use io_uring"));
        let json = serde_json::to_value(IoSettings::default()).unwrap();
        assert_eq!(json["rw"], "randread");
        assert_eq!(json["engine"], "io_uring");
        assert_eq!(json["rate"], "0");
        assert!(
            json.get("keep").is_none(),
            "keep is said only when asked for"
        );
        let back: IoSettings = serde_json::from_value(serde_json::json!({"numjobs": 4})).unwrap();
        assert_eq!(back.threads, 4, "fio's numjobs is accepted for threads");
        assert!(
            json.get("verify").is_none(),
            "verify is said only when asked for"
        );
        let back: IoSettings = serde_json::from_value(serde_json::json!({"verify": true})).unwrap();
        assert!(back.verify, "the plan key verify");
    }

    #[test]
    fn settings_are_refused_in_their_own_terms() {
        let err = |s: IoSettings| plan(s).unwrap_err();
        assert!(err(IoSettings {
            engine: Engine::Sync,
            iodepth: 8,
            ..IoSettings::default()
        })
        .starts_with("iodepth: a queue depth above 1 needs the io_uring engine"));
        assert!(err(IoSettings {
            iodepth: 2000,
            ..IoSettings::default()
        })
        .contains("between 1 and 1024"));
        assert!(err(IoSettings {
            iodepth: 4,
            iodepth_batch_submit: 8,
            ..IoSettings::default()
        })
        .starts_with("iodepth_batch_submit: 8 is more than iodepth (4)"));
        assert!(err(IoSettings {
            direct: true,
            bs: Size(1000),
            ..IoSettings::default()
        })
        .starts_with("bs: 1000: direct I/O needs whole 512-byte blocks"));
        assert!(err(IoSettings {
            hipri: true,
            ..IoSettings::default()
        })
        .contains("add --direct"));
        assert!(err(IoSettings {
            time_based: true,
            ..IoSettings::default()
        })
        .contains("add --runtime"));
        assert!(err(IoSettings {
            rwmixread: 101,
            ..IoSettings::default()
        })
        .starts_with("rwmixread:"));
        assert!(err(IoSettings {
            iodepth: 1024,
            bs: Size(16 << 20),
            ..IoSettings::default()
        })
        .contains("lower iodepth or bs"));
        assert!(err(IoSettings {
            verify: true,
            bs: Size(6 << 10),
            ..IoSettings::default()
        })
        .starts_with("verify: verify checks whole 4 KiB blocks and bs 6k"));
        assert!(err(IoSettings {
            verify: true,
            iodepth: 8,
            size: Size(16 << 10),
            ..IoSettings::default()
        })
        .starts_with("verify: iodepth 8 is more than the 4 blocks of each file"));
        let verified = plan(IoSettings {
            verify: true,
            bs: Size(8 << 10),
            data: DataKind::Zero,
            ..IoSettings::default()
        })
        .unwrap();
        assert!(verified.verify, "zero data carries headers too");
    }

    #[test]
    fn a_plan_scales_sizes_and_splits_total_rates() {
        let settings = IoSettings {
            size: Size(10 << 20),
            bs: Size(4096),
            runtime: TimeSpan::from_ns(2_000_000_000),
            rate_iops: 8000,
            rate_total: true,
            threads: 2,
            iodepth: 8,
            iodepth_batch_submit: 0,
            ..IoSettings::default()
        };
        let ctx = Context {
            scale: 0.5,
            job: Some(Place { rank: 0, ranks: 2 }),
            ..Context::default()
        };
        let p = settings.plan(&ctx).unwrap();
        assert_eq!((p.size, p.blocks), (5 << 20, 1280));
        assert_eq!(p.runtime_ns, Some(1_000_000_000));
        assert_eq!(p.ops_per_thread, Some(1280), "size-bound: one pass");
        assert_eq!(
            p.rate_iops_per_thread,
            Some(2000.0),
            "8000 over 2 threads x 2 ranks"
        );
        assert_eq!(p.interval_ns, Some(500_000.0));
        assert_eq!(p.batch_submit, 8, "0: every free slot");
        assert_eq!(p.layout, Layout::Written, "reads find a written file");
        // A byte cap tighter than the IOPS cap sets the pace; write-only runs start sparse.
        let p = plan(IoSettings {
            rw: Rw::RandWrite,
            rate_iops: 1000,
            rate: Size(1 << 20),
            ..IoSettings::default()
        })
        .unwrap();
        assert_eq!(p.interval_ns, Some(4096.0 * 1e9 / (1 << 20) as f64));
        assert_eq!((p.layout, p.read_percent), (Layout::Sparse, 0));
        let cached = IoSettings::default()
            .plan(&Context {
                cache: CachePolicy::Direct,
                ..Context::default()
            })
            .unwrap();
        assert!(
            cached.direct,
            "the case's cache policy `direct` asks for O_DIRECT"
        );
    }
}
