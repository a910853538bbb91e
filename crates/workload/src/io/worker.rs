//! One thread of the io workload and its timed loop, for each engine.
//!
//! The clock ([`Clock`]) is read once per event, never per operation for its own sake: the
//! sync engine reads it after each call (the end of one operation is the start of the next,
//! as the matrix's recorder does); io_uring reads it once after each submission (the issue
//! time of the batch, and the end of its operations' submission latency, fio's slat) and once
//! after each reaping that found completions (their completion, fio's clat from issue to
//! completion); a full queue's spin before it sleeps ([`Spin`]) reads it only to end the spin.
//! Buffers, slots, histograms and `verify`'s bit per written block exist before the loop
//! (a verified write costs its headers and one bit more); the loop allocates,
//! locks and prints nothing, and looks at the stop and abort flags once per round.

use super::pace::{tight_timer_slack, Pace, SPIN_NS};
use super::settings::IoPlan;
use crate::data::DataSource;
use crate::fileio::{raw, AlignedBuf, BUFFER_ALIGN};
use crate::placement::Placement;
use crate::rng::{Permutation, Rng};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::Clock;
use fsbench_measure::histogram::Histogram;
use fsbench_measure::series::{NoTap, Probe, Tap};
use io_uring::{opcode, squeue, types, IoUring};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What every thread of a run shares.
pub struct Control<'a> {
    pub stop: &'a StopFlag,
    /// A thread failed: the others stop issuing and drain what they have in flight.
    pub abort: AtomicBool,
    /// The phase's start: the first thread to run after the release.
    pub start: crate::together::SharedStart,
    pub clock: Clock,
}

/// Reads (0) or writes (1): what one direction of a thread did.
#[derive(Default)]
pub struct Direction {
    /// Issue to completion (fio's clat); for the sync engine, the whole call.
    pub clat: Histogram,
    /// Queued to submitted (fio's slat); empty for the sync engine.
    pub slat: Histogram,
    pub ops: u64,
    pub bytes: u64,
}

/// What a thread measured.
#[derive(Default)]
pub struct Stats {
    pub dir: [Direction; 2],
    /// Operations in flight right after a submission: the most, and their sum over submissions.
    pub in_flight_max: u32,
    pub in_flight_sum: u64,
    pub submissions: u64,
    /// The CPU scheduling policy the thread ran under (see `cpu_sched`).
    pub cpu_sched: &'static str,
    /// The phase's start and this thread's last clock reading, in ticks.
    pub started: u64,
    pub ended: u64,
    /// Stopped by a stop request (Ctrl-C, another rank) before its end.
    pub stopped: bool,
    /// The ring ran completions as deferred task work (the kernel took fio's ring flags).
    pub deferred: bool,
}

/// Which block comes next.
enum Offsets {
    Sequential { next: u64, blocks: u64 },
    Random(Permutation),
}

impl Offsets {
    #[inline(always)]
    fn next(&mut self) -> u64 {
        match self {
            Offsets::Sequential { next, blocks } => {
                let block = *next;
                *next = if block + 1 == *blocks { 0 } else { block + 1 };
                block
            }
            // A full-period sequence: every block once per pass, the same order each pass.
            Offsets::Random(p) => p.next_index(),
        }
    }
}

/// Where the operations of a thread go and what they write.
struct Source {
    offsets: Offsets,
    rng: Rng,
    /// Reads per hundred operations.
    read_percent: u64,
    base: u64,
    bs: u64,
}

impl Source {
    /// Whether the next operation writes (fio's per-operation choice for mixes).
    #[inline(always)]
    fn write(&mut self) -> bool {
        match self.read_percent {
            100 => false,
            0 => true,
            p => self.rng.next_u64() % 100 >= p,
        }
    }

    /// The next operation's block (its index in the file) and byte offset.
    #[inline(always)]
    fn next(&mut self) -> (u64, u64) {
        let block = self.offsets.next();
        (block, self.base + block * self.bs)
    }
}

/// `verify`: what a thread's timed phase wrote, for the check after it.
pub struct Written {
    /// The thread's file number in the stamps.
    pub file: u32,
    /// The sequence number of the phase's first write: a block the phase wrote holds one of
    /// its writes, at least this recent.
    pub first_write: u64,
    /// A bit per block of the file, set when the phase writes the block (made before the loop).
    bits: Vec<u64>,
}

impl Written {
    pub fn new(file: u32, blocks: u64, first_write: u64) -> Written {
        Written {
            file,
            first_write,
            bits: vec![0; blocks.div_ceil(64) as usize],
        }
    }

    #[inline(always)]
    fn mark(&mut self, block: u64) {
        self.bits[(block / 64) as usize] |= 1 << (block % 64);
    }

    /// Whether the phase wrote `block`.
    pub fn has(&self, block: u64) -> bool {
        self.bits
            .get((block / 64) as usize)
            .is_some_and(|word| word & (1 << (block % 64)) != 0)
    }
}

/// An io_uring instance with its slots: a buffer per operation in flight.
pub struct Ring {
    ring: IoUring,
    bufs: AlignedBuf,
    slot_len: usize,
    /// Where each slot's buffer starts past its page (`crate::placement`).
    buf_offset: usize,
    depth: u32,
    batch_submit: u32,
    batch_complete: u32,
    fixed_file: bool,
    fixed_bufs: bool,
    iopoll: bool,
    /// Made with the task-work flags (below): disabled until its thread enables it.
    owned: bool,
    /// Submitted and not yet reaped: drained before the buffers may go (see Drop).
    in_flight: u32,
    /// `verify`: the payload checksum of every 4 KiB block of every slot, slot after slot, as
    /// its last write left it (a slot written again keeps its payloads and gets new headers;
    /// a read lands in the same buffer, so a slot's first write after one, or its first
    /// write, copies the pool's bytes in again and takes their checksums from their headers).
    payload_crcs: Vec<u32>,
}

impl Engine {
    /// The sync engine's buffer: reads land where this CPU copies fastest; writes are copied
    /// out of the data pool, its records placed likewise (page-aligned for O_DIRECT).
    pub fn sync(plan: &IoPlan, data: &mut DataSource, placement: Placement) -> Engine {
        let offset = placement.read;
        data.place(placement.write);
        let mut buf = AlignedBuf::new(plan.bs as usize + crate::placement::ROOM);
        buf.as_mut_slice()[offset..offset + plan.bs as usize]
            .copy_from_slice(data.next(plan.bs as usize));
        Engine::Sync { buf, offset }
    }
}

/// How the thread issues its operations.
pub enum Engine {
    /// Its one buffer, reads landing `offset` bytes past its page.
    Sync {
        buf: AlignedBuf,
        offset: usize,
    },
    Uring(Box<Ring>),
}

/// A failure that ends the run: which operation, and what the kernel said.
pub struct Failure {
    pub write: bool,
    pub offset: u64,
    pub error: io::Error,
}

impl Failure {
    pub fn into_error(self, path: &std::path::Path) -> WorkloadError {
        let action = if self.write { "write" } else { "read" };
        WorkloadError::io(action, path, self.error).during(format!("at offset {}", self.offset))
    }
}

/// One thread: its file, its engine, its statistics.
pub struct Worker {
    pub path: PathBuf,
    file: File,
    source: Source,
    data: DataSource,
    engine: Engine,
    pub stats: Stats,
    pub failure: Option<Failure>,
    /// Where each completion is also published for the phase's series (None: no series).
    pub probe: Option<Arc<Probe>>,
    /// `verify`: the blocks the phase wrote (None: writes carry no headers).
    pub written: Option<Written>,
}

/// A short transfer: a read past the end of the file, a write the device took only part of.
fn short(write: bool, done: u64, bs: u64) -> io::Error {
    if write {
        io::Error::new(
            io::ErrorKind::WriteZero,
            format!("short write: {done} of {bs} bytes written"),
        )
    } else {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("short read: {done} of {bs} bytes read (the file ended there)"),
        )
    }
}

impl Ring {
    /// A ring of `plan.iodepth` entries for `fd`, with a buffer per slot (filled from `data`,
    /// every slot's content distinct), registered as the plan asks. Errors name the setting
    /// that cannot be honoured.
    pub fn new(
        plan: &IoPlan,
        fd: RawFd,
        data: &mut DataSource,
        placement: Placement,
    ) -> Result<Ring, RingError> {
        // As fio sets its rings up: completions are run as task work when the thread asks for
        // them (DEFER_TASKRUN, COOP_TASKRUN), not by interrupting it, and only its thread
        // submits (SINGLE_ISSUER) — so the ring is made disabled here and enabled by the thread
        // that uses it. A kernel before 6.1 refuses the flags: then a plain ring.
        let build = |owned: bool| {
            let mut builder = IoUring::builder();
            if plan.hipri {
                builder.setup_iopoll();
            }
            if owned {
                builder
                    .setup_coop_taskrun()
                    .setup_taskrun_flag()
                    .setup_single_issuer()
                    .setup_defer_taskrun()
                    .setup_r_disabled();
            }
            builder.build(plan.iodepth.next_power_of_two())
        };
        let (ring, owned) = match build(true) {
            Ok(ring) => (ring, true),
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                (build(false).map_err(RingError::Setup)?, false)
            }
            Err(e) => return Err(RingError::Setup(e)),
        };
        // Each slot's buffer `offset` bytes past its page: reads land where this CPU copies
        // fastest (writes are copied from the same place); page-aligned for O_DIRECT.
        let offset = if plan.rw.reads() {
            placement.read
        } else {
            placement.write
        };
        let slot_len = (plan.bs as usize + offset).next_multiple_of(BUFFER_ALIGN);
        let mut bufs = AlignedBuf::new(slot_len * plan.iodepth as usize);
        for slot in bufs.as_mut_slice().chunks_mut(slot_len) {
            slot[offset..offset + plan.bs as usize].copy_from_slice(data.next(plan.bs as usize));
        }
        let payload_crcs = if plan.verify {
            vec![0; plan.iodepth as usize * plan.bs as usize / crate::verify::BLOCK]
        } else {
            Vec::new()
        };
        if plan.fixedbufs {
            let base = bufs.as_mut_slice().as_mut_ptr();
            let iovecs: Vec<libc::iovec> = (0..plan.iodepth as usize)
                .map(|slot| libc::iovec {
                    // SAFETY: slot * slot_len is within the buffer (iodepth slots).
                    iov_base: unsafe { base.add(slot * slot_len) }.cast(),
                    iov_len: slot_len,
                })
                .collect();
            // SAFETY: the buffers live in `bufs`, which the Ring owns and frees only after the
            // ring itself is gone (field order).
            unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(RingError::Buffers)?;
        }
        if plan.registerfiles {
            ring.submitter()
                .register_files(&[fd])
                .map_err(RingError::Files)?;
        }
        Ok(Ring {
            ring,
            bufs,
            slot_len,
            buf_offset: offset,
            depth: plan.iodepth,
            batch_submit: plan.batch_submit,
            batch_complete: plan.batch_complete,
            fixed_file: plan.registerfiles,
            fixed_bufs: plan.fixedbufs,
            iopoll: plan.hipri,
            owned,
            in_flight: 0,
            payload_crcs,
        })
    }
}

impl Drop for Ring {
    /// The kernel may still be writing into the slots of operations in flight (a thread that
    /// ended early): wait for them before the buffers are freed. A ring that no longer takes
    /// calls keeps them: its buffers are leaked rather than handed back while in use.
    fn drop(&mut self) {
        while self.in_flight > 0 {
            if self.ring.submit_and_wait(1).is_err() {
                std::mem::forget(std::mem::replace(&mut self.bufs, AlignedBuf::new(0)));
                return;
            }
            let reaped = self.ring.completion().count() as u32;
            self.in_flight = self.in_flight.saturating_sub(reaped);
        }
    }
}

/// Whether polled completion works for `fd`: one read of `len` bytes at `offset` on a ring of
/// its own set up for polling (the kernel fails it with EOPNOTSUPP where the file cannot be
/// polled). A polled ring completes only while asked: it is asked until the read is reaped.
pub fn probe_polling(fd: RawFd, offset: u64, len: u32) -> io::Result<()> {
    let mut ring: IoUring = IoUring::builder().setup_iopoll().build(2)?;
    let mut buf = AlignedBuf::new(len as usize);
    let entry = opcode::Read::new(types::Fd(fd), buf.as_mut_slice().as_mut_ptr(), len)
        .offset(offset)
        .build();
    // SAFETY: the buffer outlives the operation, which is waited for here.
    unsafe { ring.submission().push(&entry) }
        .map_err(|_| io::Error::other("the submission queue is full"))?;
    let cqe = loop {
        ring.submit_and_wait(1)?;
        if let Some(cqe) = ring.completion().next() {
            break cqe;
        }
    };
    if cqe.result() < 0 {
        return Err(io::Error::from_raw_os_error(-cqe.result()));
    }
    Ok(())
}

/// Why a ring could not be made as asked.
pub enum RingError {
    Setup(io::Error),
    Buffers(io::Error),
    Files(io::Error),
}

impl Worker {
    pub fn new(
        path: PathBuf,
        file: File,
        base: u64,
        plan: &IoPlan,
        thread: u64,
        data: DataSource,
        engine: Engine,
    ) -> Worker {
        let mut rng = Rng::new(plan.seed ^ thread.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let offsets = if plan.rw.random() {
            Offsets::Random(Permutation::new(plan.blocks, &mut rng))
        } else {
            Offsets::Sequential {
                next: 0,
                blocks: plan.blocks,
            }
        };
        Worker {
            path,
            file,
            source: Source {
                offsets,
                rng,
                read_percent: u64::from(plan.read_percent),
                base,
                bs: plan.bs,
            },
            // The phase's writes come after every sequence number the layout and the
            // engine's buffers took.
            written: plan
                .verify
                .then(|| Written::new(thread as u32, plan.blocks, data.sequence())),
            data,
            engine,
            stats: Stats::default(),
            failure: None,
            probe: None,
        }
    }

    /// The seed of this thread's data (its stamps say it).
    pub fn seed(&self) -> u64 {
        self.data.seed()
    }

    /// The timed phase of this thread: issues operations until the plan's end (its bytes, its
    /// runtime), a stop request or another thread's failure, and waits for every one in
    /// flight. A failed operation ends it (and, through `abort`, the others).
    pub fn run(&mut self, plan: &IoPlan, ctl: &Control<'_>) {
        // Before the first submission, which starts the thread's io-wq: its workers inherit it.
        self.stats.cpu_sched = plan.cpu_sched.apply();
        if plan.interval_ns.is_some() {
            tight_timer_slack();
        }
        let clock = ctl.clock;
        let start = ctl.start.get(clock);
        let ticks_per_ns = clock.ticks_per_ns();
        let bound = Bound {
            ops: plan.ops_per_thread.unwrap_or(u64::MAX),
            // Saturating: a runtime no clock reaches (584 years) is no deadline, not one that
            // wrapped into the past.
            deadline: plan.runtime_ns.map_or(u64::MAX, |ns| {
                start.saturating_add((ns as f64 * ticks_per_ns) as u64)
            }),
            pace: plan.interval_ns.map(|ns| Pace::new(start, ns, clock)),
        };
        self.stats.started = start;
        let fd = self.file.as_raw_fd();
        // Each loop is made with the series' probe and without: no series costs nothing.
        let (src, data, stats) = (&mut self.source, &mut self.data, &mut self.stats);
        let written = &mut self.written;
        let failure = match (&mut self.engine, self.probe.as_deref()) {
            (Engine::Sync { buf, offset }, Some(probe)) => {
                let buf = &mut buf.as_mut_slice()[*offset..*offset + src.bs as usize];
                run_sync(fd, buf, src, data, written, stats, &bound, ctl, probe)
            }
            (Engine::Sync { buf, offset }, None) => {
                let buf = &mut buf.as_mut_slice()[*offset..*offset + src.bs as usize];
                run_sync(fd, buf, src, data, written, stats, &bound, ctl, &NoTap)
            }
            (Engine::Uring(ring), Some(probe)) => {
                run_uring(fd, ring, src, data, written, stats, &bound, ctl, probe)
            }
            (Engine::Uring(ring), None) => {
                run_uring(fd, ring, src, data, written, stats, &bound, ctl, &NoTap)
            }
        };
        if failure.is_some() {
            ctl.abort.store(true, Ordering::Relaxed);
        }
        self.failure = failure;
    }
}

/// When a thread stops issuing, and how it paces.
struct Bound {
    /// Operations to issue (one pass over the file), or u64::MAX.
    ops: u64,
    /// The runtime's end, in ticks, or u64::MAX.
    deadline: u64,
    pace: Option<Pace>,
}

/// Looked at once per round of a timed loop (two relaxed loads).
#[inline(always)]
fn told_to_stop(ctl: &Control<'_>) -> bool {
    ctl.stop.is_requested() || ctl.abort.load(Ordering::Relaxed)
}

/// One pread or pwrite at a time: the clock read after each is the end of this operation and
/// the start of the next (after a paced wait, the wait's end).
#[allow(clippy::too_many_arguments)]
fn run_sync<T: Tap>(
    fd: RawFd,
    buf: &mut [u8],
    src: &mut Source,
    data: &mut DataSource,
    written: &mut Option<Written>,
    stats: &mut Stats,
    bound: &Bound,
    ctl: &Control<'_>,
    tap: &T,
) -> Option<Failure> {
    let clock = ctl.clock;
    let bs = src.bs;
    let mut previous = clock.ticks();
    let mut issued = 0u64;
    let mut failure = None;
    while issued < bound.ops && previous < bound.deadline {
        // The flags every 256 operations: a 4 KiB cached read takes under a microsecond.
        if issued % 256 == 0 && told_to_stop(ctl) {
            stats.stopped = true;
            break;
        }
        if let Some(pace) = &bound.pace {
            let due = pace.due(issued);
            if previous < due {
                previous = pace.wait_until(due);
            }
        }
        let write = src.write();
        let (block, offset) = src.next();
        let done = if write {
            // Verified: a header over each 4 KiB block, and the block marked written.
            let bytes = match written {
                Some(w) => {
                    w.mark(block);
                    data.next_verified(bs as usize, w.file, offset)
                }
                None => data.next(bs as usize),
            };
            raw::pwrite_all(fd, bytes, offset)
        } else {
            raw::pread_exact(fd, buf, offset)
        };
        let now = clock.ticks();
        issued += 1;
        if let Err(error) = done {
            failure = Some(Failure {
                write,
                offset,
                error,
            });
            break;
        }
        let d = &mut stats.dir[usize::from(write)];
        let latency = clock.ns(now.saturating_sub(previous));
        d.clat.record(latency);
        d.ops += 1;
        d.bytes += bs;
        tap.op(bs, latency);
        previous = now;
    }
    stats.in_flight_max = u32::from(issued > 0);
    stats.in_flight_sum = issued;
    stats.submissions = issued;
    stats.ended = previous;
    failure
}

/// io_uring_enter's IORING_ENTER_GETEVENTS (the crate keeps its flag type private).
const ENTER_GETEVENTS: u32 = 1;

/// How a round of the io_uring loop waits for completions.
enum Wait {
    /// Take what is there (a polled ring is asked to poll).
    No,
    /// Sleep in the kernel until this many have completed (0: poll the queue instead).
    For(u32),
    /// Until a completion or the next paced operation's time (ticks), whichever is first.
    Until(u64),
}

/// How long a thread with a full queue looks at its ring before it sleeps for a completion:
/// about what a sleep and its wake-up cost here (the submitter's and the io-wq worker's that
/// wakes it), so a completion that comes sooner is taken for less than a sleep would cost.
pub const WAIT_SPIN_NS: u64 = 5_000;

/// Whether a full queue spins before it sleeps. Completions that come within the spin (a
/// cached file, whose reads and writes io-wq workers do in microseconds) spare the submitter
/// a sleep and the worker a wake-up; on a device slower than the spin, a spin that finds
/// nothing doubles the number of waits that sleep at once before the next try (up to 1024),
/// so spinning there costs next to nothing. What is measured does not change: a completion
/// is timed when it is reaped, and a spin reaps it sooner.
struct Spin {
    /// The spin's length in ticks; 0: never.
    ticks: u64,
    /// Waits left that sleep at once.
    skip: u32,
    /// Spins in a row that found nothing.
    misses: u32,
}

impl Spin {
    fn new(enabled: bool, clock: Clock) -> Spin {
        let ticks = if enabled {
            (WAIT_SPIN_NS as f64 * clock.ticks_per_ns()) as u64
        } else {
            0
        };
        Spin {
            ticks,
            skip: 0,
            misses: 0,
        }
    }

    /// Whether this wait spins first.
    #[inline(always)]
    fn now(&mut self) -> bool {
        if self.ticks == 0 {
            return false;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return false;
        }
        true
    }

    #[inline(always)]
    fn found(&mut self) {
        self.misses = 0;
    }

    #[inline(always)]
    fn missed(&mut self) {
        self.misses = (self.misses + 1).min(10);
        self.skip = 1 << self.misses;
    }
}

/// Up to `iodepth` operations in flight: queue while slots are free (a submission every
/// `batch_submit` operations), submit, then reap — waiting only when the queue is full, the
/// thread is draining, or the next paced operation is not due yet.
#[allow(clippy::too_many_arguments)]
fn run_uring<T: Tap>(
    fd: RawFd,
    ring: &mut Ring,
    src: &mut Source,
    data: &mut DataSource,
    written: &mut Option<Written>,
    stats: &mut Stats,
    bound: &Bound,
    ctl: &Control<'_>,
    tap: &T,
) -> Option<Failure> {
    let clock = ctl.clock;
    let bs = src.bs;
    let depth = ring.depth;
    let slots = depth as usize;
    // Per slot: when it was queued, when submitted, what it does. Made before the loop.
    let mut queued_at = vec![0u64; slots];
    let mut issued_at = vec![0u64; slots];
    let mut writes = vec![false; slots];
    let mut offsets = vec![0u64; slots];
    let mut free: Vec<u16> = (0..depth as u16).rev().collect();
    let mut batch: Vec<u16> = Vec::with_capacity(slots);
    let (slot_len, fixed_file, fixed_bufs, iopoll) =
        (ring.slot_len, ring.fixed_file, ring.fixed_bufs, ring.iopoll);
    let (batch_submit, batch_complete) = (ring.batch_submit as usize, ring.batch_complete);
    // SAFETY: the offset lies within the first slot (a slot has room for it and the block).
    let bufs = unsafe { ring.bufs.as_mut_slice().as_mut_ptr().add(ring.buf_offset) };
    // `verify`: a slot's payload checksums, one per 4 KiB block of it.
    let crcs_per_slot = bs as usize / crate::verify::BLOCK;
    let payload_crcs = &mut ring.payload_crcs[..];
    let mut in_flight = 0u32;
    stats.deferred = ring.owned;
    if ring.owned {
        // This thread becomes the ring's one submitter.
        if let Err(error) = ring.ring.submitter().register_enable_rings() {
            stats.ended = stats.started;
            return Some(Failure {
                write: false,
                offset: 0,
                error,
            });
        }
    }
    let (submitter, mut sq, mut cq) = ring.ring.split();
    let mut now = clock.ticks();
    let mut issued = 0u64;
    let mut issuing = true;
    // Only a ring whose completions wait as flagged task work can be watched from here.
    let mut spin = Spin::new(ring.owned && !iopoll, clock);
    let mut failure: Option<Failure> = None;
    loop {
        if issuing && told_to_stop(ctl) {
            issuing = false;
            stats.stopped = true;
        }
        // Queue.
        while issuing && in_flight as usize + batch.len() < slots {
            if issued == bound.ops || now >= bound.deadline {
                issuing = false;
                break;
            }
            if bound.pace.is_some_and(|p| now < p.due(issued)) {
                break;
            }
            let slot = free.pop().expect("a slot is free") as usize;
            let write = src.write();
            let (block, offset) = src.next();
            // SAFETY: slot < depth, so the slot lies within the buffers.
            let buf = unsafe { bufs.add(slot * slot_len) };
            if write {
                // SAFETY: the slot is free (its last operation reaped, or none yet): neither
                // the kernel nor anything else uses its bytes until it is queued below.
                let bytes = unsafe { std::slice::from_raw_parts_mut(buf, bs as usize) };
                match written {
                    // The slot's last operation was a write: its payloads are as it left
                    // them, and only the headers change.
                    Some(w) if writes[slot] => {
                        let crcs = &payload_crcs[slot * crcs_per_slot..][..crcs_per_slot];
                        data.stamp_verified(bytes, crcs, w.file, offset);
                    }
                    // Its first write, or a read landed in it since: the pool's bytes again.
                    Some(w) => {
                        bytes.copy_from_slice(data.next_verified(bs as usize, w.file, offset));
                        let crcs = &mut payload_crcs[slot * crcs_per_slot..][..crcs_per_slot];
                        for (crc, block) in crcs.iter_mut().zip(bytes.chunks_exact(4096)) {
                            *crc = crate::verify::Stamp::payload_crc_of(block);
                        }
                    }
                    None => data.stamp(bytes),
                }
            }
            let entry = sqe(
                write, fixed_file, fixed_bufs, fd, buf, bs as u32, offset, slot,
            );
            // SAFETY: the slot's buffer lives in the ring's `bufs` until every operation is
            // reaped (this loop drains; Ring's Drop waits for any left). The queue has room:
            // at most `depth` entries are queued or in flight.
            if unsafe { sq.push(&entry) }.is_err() {
                free.push(slot as u16);
                break;
            }
            if let (true, Some(w)) = (write, written.as_mut()) {
                // Queued: it will be written (or the run fails).
                w.mark(block);
            }
            queued_at[slot] = now;
            writes[slot] = write;
            offsets[slot] = offset;
            batch.push(slot as u16);
            issued += 1;
            if batch.len() >= batch_submit {
                break;
            }
        }
        // Submit.
        if !batch.is_empty() {
            sq.sync();
            let submitted = loop {
                // With GETEVENTS, as fio commits: the same call runs the completions waiting as
                // task work, so a full queue usually finds some to reap without a second call.
                // SAFETY: io_uring_enter with plain arguments and no extended argument.
                let entered = unsafe {
                    submitter.enter::<libc::sigset_t>(sq.len() as u32, 0, ENTER_GETEVENTS, None)
                };
                match entered {
                    Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
                    other => break other,
                }
            };
            now = clock.ticks();
            // The queue's view of what the kernel has taken, for the next pushes.
            sq.sync();
            match submitted {
                // EAGAIN, EBUSY: the kernel takes them with the next call (they stay queued).
                Ok(_) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN | libc::EBUSY)) => {}
                Err(error) => {
                    // The ring refuses calls: what is queued stays counted as in flight, so
                    // the buffers outlive it whatever the kernel does with it (see Drop).
                    failure.get_or_insert(Failure {
                        write: writes[batch[0] as usize],
                        offset: offsets[batch[0] as usize],
                        error,
                    });
                    in_flight += batch.len() as u32;
                    break;
                }
            }
            for &slot in &batch {
                let slot = slot as usize;
                stats.dir[usize::from(writes[slot])]
                    .slat
                    .record(clock.ns(now.saturating_sub(queued_at[slot])));
                issued_at[slot] = now;
            }
            in_flight += batch.len() as u32;
            ring_count(&mut stats.in_flight_max, in_flight);
            stats.in_flight_sum += u64::from(in_flight);
            stats.submissions += u64::from(!batch.is_empty());
            batch.clear();
        }
        if in_flight == 0 {
            if !issuing {
                break;
            }
            // Nothing in flight and nothing due: sleep to the next operation's time.
            if let Some(pace) = &bound.pace {
                let due = pace.due(issued);
                if now < due {
                    now = pace.wait_until(due.min(bound.deadline));
                }
            }
            continue;
        }
        // Reap.
        let wait = if in_flight as usize >= slots || !issuing {
            Wait::For(batch_complete.min(in_flight))
        } else {
            match &bound.pace {
                Some(pace) if now < pace.due(issued) => {
                    Wait::Until(pace.due(issued).min(bound.deadline))
                }
                _ => Wait::No,
            }
        };
        let waited = match wait {
            // Take what is there: the next submission (GETEVENTS) runs what waits as task
            // work. A polled ring must be asked to poll.
            Wait::No if !iopoll => Ok(0),
            // Polling the queue: ask the ring when it is polled, or when completions wait as
            // task work (the kernel flags it).
            Wait::For(0) if !iopoll && !sq.taskrun() => Ok(0),
            Wait::No | Wait::For(0) => submitter.submit(),
            Wait::For(n) => {
                // What the last call already made complete spares a call.
                cq.sync();
                if cq.len() >= n as usize {
                    Ok(0)
                } else if spin.now() {
                    let until = clock.ticks() + spin.ticks;
                    loop {
                        // Completions waiting as task work are flagged: one call runs them.
                        if sq.taskrun() {
                            // SAFETY: io_uring_enter with plain arguments, nothing to submit.
                            let _ = unsafe {
                                submitter.enter::<libc::sigset_t>(0, 0, ENTER_GETEVENTS, None)
                            };
                            cq.sync();
                            if cq.len() >= n as usize {
                                spin.found();
                                break Ok(0);
                            }
                        }
                        if clock.ticks() >= until {
                            spin.missed();
                            break submitter.submit_and_wait(n as usize);
                        }
                        std::hint::spin_loop();
                    }
                } else {
                    submitter.submit_and_wait(n as usize)
                }
            }
            Wait::Until(due) => {
                let left = clock.ns(due.saturating_sub(now));
                if left > SPIN_NS {
                    let sleep = left - SPIN_NS;
                    let ts = types::Timespec::new()
                        .sec(sleep / 1_000_000_000)
                        .nsec((sleep % 1_000_000_000) as u32);
                    submitter.submit_with_args(1, &types::SubmitArgs::new().timespec(&ts))
                } else {
                    // The last microseconds: spin, looking at the completion queue.
                    loop {
                        if iopoll || sq.taskrun() {
                            let _ = submitter.submit();
                        }
                        cq.sync();
                        if !cq.is_empty() || clock.ticks() >= due {
                            break Ok(0);
                        }
                        std::hint::spin_loop();
                    }
                }
            }
        };
        if let Err(e) = waited {
            // Interrupted, timed out, or busy: the round goes on. Anything else: the ring
            // refuses calls, and the thread ends with what it has in flight counted (Drop).
            let transient = matches!(
                e.raw_os_error(),
                Some(libc::EINTR | libc::ETIME | libc::EAGAIN | libc::EBUSY)
            );
            if !transient {
                failure.get_or_insert(Failure {
                    write: false,
                    offset: 0,
                    error: e,
                });
                break;
            }
        }
        cq.sync();
        if cq.is_empty() {
            now = if matches!(wait, Wait::Until(_)) {
                clock.ticks()
            } else {
                now
            };
            continue;
        }
        now = clock.ticks();
        for cqe in &mut cq {
            let slot = cqe.user_data() as usize;
            let write = writes[slot];
            let result = cqe.result();
            if result as i64 == bs as i64 {
                let d = &mut stats.dir[usize::from(write)];
                let latency = clock.ns(now.saturating_sub(issued_at[slot]));
                d.clat.record(latency);
                d.ops += 1;
                d.bytes += bs;
                tap.op(bs, latency);
            } else if failure.is_none() {
                failure = Some(Failure {
                    write,
                    offset: offsets[slot],
                    error: if result < 0 {
                        io::Error::from_raw_os_error(-result)
                    } else {
                        short(write, result as u64, bs)
                    },
                });
                issuing = false;
            }
            free.push(slot as u16);
            in_flight -= 1;
        }
        cq.sync();
    }
    ring.in_flight = in_flight;
    stats.ended = now;
    failure
}

#[inline(always)]
fn ring_count(max: &mut u32, in_flight: u32) {
    if in_flight > *max {
        *max = in_flight;
    }
}

/// The submission of one operation: read or write, through a registered buffer and file or
/// plain ones, tagged with its slot.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn sqe(
    write: bool,
    fixed_file: bool,
    fixed_buf: bool,
    fd: RawFd,
    buf: *mut u8,
    len: u32,
    offset: u64,
    slot: usize,
) -> squeue::Entry {
    let index = slot as u16;
    macro_rules! build {
        ($file:expr) => {
            match (write, fixed_buf) {
                (false, false) => opcode::Read::new($file, buf, len).offset(offset).build(),
                (true, false) => opcode::Write::new($file, buf, len).offset(offset).build(),
                (false, true) => opcode::ReadFixed::new($file, buf, len, index)
                    .offset(offset)
                    .build(),
                (true, true) => opcode::WriteFixed::new($file, buf, len, index)
                    .offset(offset)
                    .build(),
            }
        };
    }
    let entry = if fixed_file {
        build!(types::Fixed(0))
    } else {
        build!(types::Fd(fd))
    };
    entry.user_data(slot as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spin that finds nothing makes the next waits sleep at once, twice as many after each
    /// miss and at most 1024; one that finds a completion makes the next wait spin; a ring that
    /// cannot be watched never spins.
    #[test]
    fn a_spin_that_finds_nothing_backs_off_and_one_that_finds_something_spins_again() {
        let clock = Clock::monotonic();
        let mut spin = Spin::new(true, clock);
        assert_eq!(
            spin.ticks, WAIT_SPIN_NS,
            "the monotonic clock ticks in nanoseconds"
        );
        assert!(spin.now());
        spin.missed();
        assert!(
            !spin.now() && !spin.now(),
            "two waits sleep at once after a miss"
        );
        assert!(spin.now());
        spin.missed();
        assert_eq!((0..4).filter(|_| !spin.now()).count(), 4, "then four");
        assert!(spin.now());
        spin.found();
        assert!(
            spin.now() && spin.now(),
            "a found completion: spinning again"
        );
        for _ in 0..20 {
            spin.missed();
        }
        assert_eq!(spin.skip, 1024);
        assert_eq!((0..1024).filter(|_| !spin.now()).count(), 1024);
        assert!(spin.now());
        let mut never = Spin::new(false, clock);
        assert!((0..10).all(|_| !never.now()));
    }
}
