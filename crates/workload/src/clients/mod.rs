//! Client load replay (dbench): N clients, each in its own directory, replay a loadfile in
//! dbench's format — dbench's own `client.txt` where it is installed, a file given, or the
//! built-in one — over and over for a time, each operation mapped to POSIX calls as dbench's
//! fileio backend maps it. Throughput is counted as dbench counts it: the bytes every ReadX and
//! WriteX asked for, over the measured time (after the warm-up), in MB/s; per operation its
//! count, mean and maximum latency; per client its throughput. With `method = "tool"` dbench
//! itself runs the load instead ([`dbench`]), its figures read from its output.

mod dbench;
mod loadfile;
mod verify;

pub use loadfile::{parse, LoadOp, NAMES};

use crate::figures::{LATENCY_MAX, LATENCY_MEAN, LATENCY_P99, OPS, OPS_RATE};
use crate::fileio::at;
use crate::harness::Harness;
pub use crate::task::Method;
use crate::together::{run_together, ScratchDir};
use crate::workload::{Context, End, Sink, Workload};
use crate::{StopFlag, WorkloadError};
use fsbench_measure::clock::Clock;
use fsbench_measure::histogram::Histogram;
use fsbench_measure::series::{NoTap, Probe, Tap};
use fsbench_measure::units::TimeSpan;
use fsbench_model::{Dims, Direction, MetricDef, ResultRecord, Unit};
use loadfile::{for_dbench, Base, Line, LoadPath};
use serde::{Deserialize, Serialize};
use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The built-in loadfile (docs/workloads/clients.md says what it models).
pub const BUILTIN: &str = include_str!("builtin.txt");

/// Bytes asked for by ReadX and WriteX per second, as dbench counts them: the main figure.
pub const THROUGHPUT: MetricDef = crate::figures::THROUGHPUT.main();
/// Lines whose outcome was not the status the loadfile expects (dbench prints them).
pub const UNEXPECTED: MetricDef = MetricDef::new("unexpected", Unit::Count, Direction::Lower);
/// Lines replayed while measuring (dbench's "did N lines").
pub const LINES: MetricDef = MetricDef::new("lines", Unit::Count, Direction::None);
/// Times a client reached the end of the loadfile while measuring (and began it again).
pub const LOOPS: MetricDef = MetricDef::new("loops", Unit::Count, Direction::None);

/// Where dbench's packages put its own loadfile (Debian's `dbench`; a build from source).
pub const DBENCH_LOADFILES: [&str; 2] = [
    "/usr/share/dbench/client.txt",
    "/usr/local/share/dbench/client.txt",
];

/// The loadfile a run replays: dbench's own where it is installed, or a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadFile {
    /// dbench's `client.txt` at the first of [`DBENCH_LOADFILES`] that exists; where none
    /// does, the built-in load runs and the sample says so.
    Dbench,
    /// A loadfile in dbench's format.
    Path(PathBuf),
}

impl std::fmt::Display for LoadFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadFile::Dbench => f.write_str("dbench"),
            LoadFile::Path(p) => write!(f, "{}", p.display()),
        }
    }
}

impl std::str::FromStr for LoadFile {
    type Err = String;
    fn from_str(s: &str) -> Result<LoadFile, String> {
        match s.trim() {
            "" => Err("give a loadfile: a path, or dbench for dbench's own client.txt".into()),
            "dbench" => Ok(LoadFile::Dbench),
            path => Ok(LoadFile::Path(PathBuf::from(path))),
        }
    }
}

fsbench_model::text_serde!(LoadFile);

/// The largest loadfile read (client.txt is 25 MiB); a larger one, or one that is not a
/// regular file, is refused before it is read (`measure::input::read_regular`).
pub const LOADFILE_LIMIT: u64 = 64 << 20;

/// The load a run replays, read: what runs, where it came from, and what the reader must know
/// about it (dbench's file was asked for and is not installed).
pub struct Load {
    pub script: Script,
    /// The file's path, or None for the built-in load.
    pub path: Option<PathBuf>,
    pub warning: Option<String>,
}

/// What runs of a load, read once (`loadfile` module): the lines for fsbench's replay, or for
/// dbench (method `tool`) the copy of them that it reads — never the file given, so what
/// dbench runs is what was checked, even if the file changes after.
pub enum Script {
    Replay(Vec<Line>),
    Dbench(String),
}

impl Load {
    /// What the results name the load by: its path, or `built-in`.
    pub fn name(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "built-in".to_string(), |p| p.display().to_string())
    }
}

/// Client load replay (dbench).
#[derive(Debug, Clone, PartialEq, clap::Args, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientsSettings {
    /// Clients, each a thread replaying the loadfile in its own directory.
    #[arg(long, short = 'n', value_name = "N", default_value_t = ClientsSettings::default().clients)]
    pub clients: u64,

    /// How long the measured replay runs (after the warm-up); scaled by --scale.
    #[arg(long, value_name = "DURATION", default_value_t = ClientsSettings::default().duration)]
    pub duration: TimeSpan,

    /// How long the clients replay before measuring starts; scaled by --scale.
    #[arg(long, value_name = "DURATION", default_value_t = ClientsSettings::default().warmup)]
    pub warmup: TimeSpan,

    /// A loadfile in dbench's format, or `dbench` for dbench's own client.txt where it is
    /// installed (/usr/share/dbench/client.txt; where it is not, the built-in load runs and the
    /// sample says so); default: the built-in one.
    #[arg(long, value_name = "FILE|dbench")]
    pub loadfile: Option<LoadFile>,

    /// native: fsbench's replay, the clients threads of one process; tool: dbench itself
    /// (`dbench -c LOADFILE -t SECONDS -D DIR N`), its throughput and per-operation table read
    /// from its output.
    #[arg(long, value_name = "METHOD", default_value_t = ClientsSettings::default().method)]
    pub method: Method,

    /// Verified data (fio's `verify`): every write carries the pattern of its file and offset
    /// (a header per 4 KiB block position: seed, client, the file's incarnation, offset,
    /// payload checksum), and after the replay (untimed) the cache is made cold and every file
    /// the clients left is read back and checked byte for byte; a byte that is not what was
    /// written ends the sample `corrupt`. Native method only (docs/workloads/clients.md).
    #[arg(long)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub verify: bool,
}

impl Default for ClientsSettings {
    fn default() -> ClientsSettings {
        ClientsSettings {
            clients: 2,
            duration: TimeSpan::from_ns(10_000_000_000),
            warmup: TimeSpan::from_ns(1_000_000_000),
            loadfile: None,
            method: Method::Native,
            verify: false,
        }
    }
}

impl ClientsSettings {
    /// The loadfile asked for: None for the built-in load, or the path of a file (dbench's
    /// own, where it is installed), and the warning when dbench's was asked for and is absent.
    pub fn loadfile_path(&self) -> (Option<PathBuf>, Option<String>) {
        match &self.loadfile {
            None => (None, None),
            Some(LoadFile::Path(path)) => (Some(path.clone()), None),
            Some(LoadFile::Dbench) => dbench_loadfile(&DBENCH_LOADFILES),
        }
    }

    /// The load, read and parsed (for dbench, its copy written); a file that is not a regular
    /// file of at most [`LOADFILE_LIMIT`] is refused unread, a line that cannot be read with
    /// its number.
    pub fn load(&self) -> Result<Load, WorkloadError> {
        let (path, warning) = self.loadfile_path();
        let text = match &path {
            None => None,
            Some(path) => Some(
                fsbench_measure::input::read_regular(path, LOADFILE_LIMIT, "a loadfile")
                    .map_err(|e| WorkloadError::invalid("loadfile", e.to_string()))?,
            ),
        };
        let (text, name) = match (&text, &path) {
            (Some(text), Some(path)) => (text.as_str(), path.display().to_string()),
            _ => (BUILTIN, "(built-in loadfile)".to_string()),
        };
        let script = match self.method {
            Method::Native => parse(text, &name).map(Script::Replay),
            Method::Tool => for_dbench(text, &name).map(Script::Dbench),
        }
        .map_err(|e| WorkloadError::invalid("loadfile", e))?;
        if let (true, Script::Replay(lines)) = (self.verify, &script) {
            if let Some(why) = verify::refused(lines) {
                return Err(WorkloadError::invalid("verify", why));
            }
        }
        Ok(Load {
            script,
            path,
            warning,
        })
    }

    fn check_counts(&self, ctx: &Context) -> Result<(u64, u64), WorkloadError> {
        ctx.check()?;
        if self.clients == 0 || self.clients > 4096 {
            return Err(WorkloadError::invalid(
                "clients",
                "must be between 1 and 4096",
            ));
        }
        if self.duration.ns == 0 {
            return Err(WorkloadError::invalid("duration", "must be longer than 0"));
        }
        if self.verify && self.method == Method::Tool {
            return Err(WorkloadError::invalid(
                "verify",
                "needs method native: dbench writes its own data, which cannot be checked",
            ));
        }
        let duration = ((self.duration.ns as f64 * ctx.scale) as u64).max(1_000_000);
        let warmup = (self.warmup.ns as f64 * ctx.scale) as u64;
        Ok((duration, warmup))
    }
}

/// One client: its directory, its open handles, a buffer, and per operation its tally.
struct Client {
    id: u64,
    top: RawFd,
    dir: Option<OwnedFd>,
    dir_path: PathBuf,
    handles: Vec<(u32, RawFd)>,
    /// What reads land in and writes copy from, `at` bytes past a page: where this CPU copies
    /// fastest (`crate::placement`).
    buffer: crate::fileio::AlignedBuf,
    at: usize,
    counting: bool,
    /// Bytes read and written while counting; `moved`: since the start, warm-up included.
    bytes: u64,
    moved: u64,
    unexpected: u64,
    /// Lines replayed while counting, and times the end of the loadfile was reached then.
    lines: u64,
    loops: u64,
    counts: Vec<Histogram>,
    failure: Option<Failure>,
    /// The first NTCreateX that opened a handle still open (handle, line).
    reopened: Option<(u32, usize)>,
    /// Where each line is also published for the run's series, warm-up included (None: no
    /// series).
    probe: Option<Arc<Probe>>,
    /// `verify`: what the client wrote where, and the pattern writes copy (None: no verify,
    /// and nothing of it is done).
    verify: Option<Box<verify::Tracker>>,
}

/// Why a client could not go on: what happened at which line, and the system's errno if
/// there was one (kept, so the advice can tell a full disk from no inodes).
#[derive(Debug)]
struct Failure {
    message: String,
    errno: Option<i32>,
}

impl From<String> for Failure {
    fn from(message: String) -> Failure {
        Failure {
            message,
            errno: None,
        }
    }
}

impl Client {
    fn base(&self, path: &LoadPath) -> RawFd {
        match (path.base, &self.dir) {
            (Base::Client, Some(dir)) => dir.as_raw_fd(),
            _ => self.top,
        }
    }

    fn fd(&self, handle: u32) -> Option<RawFd> {
        self.handles.iter().find(|h| h.0 == handle).map(|h| h.1)
    }

    /// dbench's name resolution (its pvfs_resolve_name simulation), done before every
    /// operation on a path: a stat, and when the name does not exist, a listing of its
    /// directory (where a case-insensitive server would look for it).
    fn resolve(&mut self, path: &LoadPath) {
        // SAFETY: stat is plain data; all zeroes is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let base = self.base(path);
        if at::fstatat(base, &path.rel, &mut st).is_err() {
            let parent = parent_of(&path.rel);
            let _ = list(base, &parent, u32::MAX, self.buffer.as_mut_slice());
        }
    }

    /// The client's directory, opened (again) after a Deltree or an NTCreateX made it.
    fn reopen(&mut self) -> Result<(), String> {
        self.dir = None;
        let dir = at::open_dir(&self.dir_path).map_err(|e| {
            too_many(&e).unwrap_or_else(|| format!("cannot open {} ({e})", self.dir_path.display()))
        })?;
        self.dir = Some(dir);
        Ok(())
    }

    /// One line; Err only for what dbench treats as fatal (a write that fails, an unlink,
    /// rename or rmdir whose outcome is not the expected one).
    fn op(&mut self, index: usize, line: &Line) -> Result<(), Failure> {
        let fatal = |what: &str, e: Option<io::Error>| Failure {
            message: format!(
                "line {}: {what}, expected {}",
                line.number,
                if line.expect_ok { "success" } else { "failure" }
            ),
            errno: e.and_then(|e| e.raw_os_error()),
        };
        let outcome = |ok: bool| ok == line.expect_ok;
        match &line.op {
            LoadOp::NtCreateX {
                path,
                directory,
                create,
                overwrite,
                handle,
            } => {
                self.resolve(path);
                let base = self.base(path);
                let mut flags = libc::O_RDWR;
                if *create {
                    flags |= libc::O_CREAT;
                }
                if *overwrite {
                    flags |= libc::O_CREAT | libc::O_TRUNC;
                }
                if *directory {
                    let _ = at::mkdirat(base, &path.rel);
                    flags = libc::O_RDONLY | libc::O_DIRECTORY;
                }
                let mut opened = at::openat(base, &path.rel, flags, 0o600);
                let mut is_dir = *directory;
                if let Err(e) = &opened {
                    if e.raw_os_error() == Some(libc::EISDIR) {
                        opened = at::openat(base, &path.rel, libc::O_RDONLY | libc::O_DIRECTORY, 0);
                        is_dir = true;
                    }
                }
                if let (Some(tracker), Ok(fd)) = (&mut self.verify, &opened) {
                    let id = tracker.ids(index)[0];
                    let keep = line.expect_ok.then_some(*handle);
                    tracker.opened(id, *fd, is_dir, *overwrite && !is_dir, keep);
                }
                match opened {
                    Ok(fd) if line.expect_ok => {
                        // A handle opened again before its Close (a trace that lost the
                        // Close): the handle names the new file and the earlier descriptor
                        // is closed, so none leaks. dbench keeps both, uses the first, and
                        // stops when 200 are open.
                        match self.handles.iter_mut().find(|h| h.0 == *handle) {
                            Some(open) => {
                                let _ = at::close(std::mem::replace(&mut open.1, fd));
                                self.reopened.get_or_insert((*handle, line.number));
                            }
                            None => self.handles.push((*handle, fd)),
                        }
                        if path.base == Base::Client && path.rel.as_bytes() == b"." {
                            self.reopen()?;
                        }
                    }
                    Ok(fd) => {
                        self.unexpected += 1;
                        let _ = at::close(fd);
                    }
                    Err(e) => {
                        // Out of descriptors is the host's limit, not the loadfile's outcome.
                        if let Some(message) = too_many(&e) {
                            return Err(format!("line {}: {message}", line.number).into());
                        }
                        if line.expect_ok {
                            self.unexpected += 1;
                        }
                    }
                }
                Ok(())
            }
            LoadOp::Close { handle } => {
                if let Some(tracker) = &mut self.verify {
                    tracker.closed(*handle);
                }
                if let Some(i) = self.handles.iter().position(|h| h.0 == *handle) {
                    let (_, fd) = self.handles.swap_remove(i);
                    let _ = at::close(fd);
                }
                Ok(())
            }
            LoadOp::Rename { from, to } => {
                self.resolve(from);
                self.resolve(to);
                let done = at::rename_between(self.base(from), &from.rel, self.base(to), &to.rel);
                if let (Some(tracker), Ok(())) = (&mut self.verify, &done) {
                    let [from, to] = tracker.ids(index);
                    tracker.renamed(from, to);
                }
                match done {
                    Ok(()) if outcome(true) => Ok(()),
                    Err(_) if outcome(false) => Ok(()),
                    Ok(()) => Err(fatal("rename succeeded", None)),
                    Err(e) => Err(fatal("rename failed", Some(e))),
                }
            }
            LoadOp::Unlink { path } | LoadOp::Rmdir { path } => {
                self.resolve(path);
                let flags = if matches!(line.op, LoadOp::Rmdir { .. }) {
                    libc::AT_REMOVEDIR
                } else {
                    0
                };
                let done = at::unlinkat(self.base(path), &path.rel, flags);
                if let (Some(tracker), Ok(())) = (&mut self.verify, &done) {
                    tracker.unlinked(tracker.ids(index)[0]);
                }
                match done {
                    Ok(()) if outcome(true) => Ok(()),
                    Err(_) if outcome(false) => Ok(()),
                    Ok(()) => Err(fatal("unlink succeeded", None)),
                    Err(e) => Err(fatal("unlink failed", Some(e))),
                }
            }
            LoadOp::Deltree { path } => {
                let target = match path.base {
                    Base::Client => self.dir_path.join(cstr_path(&path.rel)),
                    Base::Top => self
                        .dir_path
                        .parent()
                        .unwrap_or(Path::new("."))
                        .to_path_buf(),
                };
                // The client's own directory goes with its contents, as in dbench (which
                // unlinks the files and leaves the directories to NTCreateX's mkdir), never
                // across a mount: a mount point inside stays with the directories to it.
                let _ = fsbench_measure::walk::remove_tree(&target);
                if let Some(tracker) = &mut self.verify {
                    tracker.deltree(tracker.ids(index)[0]);
                }
                if path.base == Base::Client && path.rel.as_bytes() == b"." {
                    let _ = std::fs::create_dir(&self.dir_path);
                    self.reopen()?;
                }
                Ok(())
            }
            LoadOp::Mkdir { path } => {
                self.resolve(path);
                let _ = at::mkdirat(self.base(path), &path.rel);
                Ok(())
            }
            LoadOp::QueryPath { path } => {
                self.resolve(path);
                Ok(())
            }
            LoadOp::QueryFile { handle } | LoadOp::SetFile { handle } => {
                if let Some(fd) = self.fd(*handle) {
                    // SAFETY: stat is plain data; fstat fills it.
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    // SAFETY: fd is open; st is valid and writable.
                    unsafe { libc::fstat(fd, &mut st) };
                    if matches!(line.op, LoadOp::SetFile { .. }) {
                        let times = [
                            libc::timespec {
                                tv_sec: st.st_atime - 10,
                                tv_nsec: 0,
                            },
                            libc::timespec {
                                tv_sec: st.st_mtime - 12,
                                tv_nsec: 0,
                            },
                        ];
                        // SAFETY: fd is open; times holds two timespecs.
                        unsafe { libc::futimens(fd, times.as_ptr()) };
                    }
                }
                Ok(())
            }
            LoadOp::QueryFs => {
                // SAFETY: statvfs is plain data; fstatvfs fills it.
                let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
                let fd = self.dir.as_ref().map_or(self.top, |d| d.as_raw_fd());
                // SAFETY: fd is an open directory; st is valid and writable.
                unsafe { libc::fstatvfs(fd, &mut st) };
                Ok(())
            }
            LoadOp::FindFirst { path, max } => {
                self.resolve(path);
                let wildcard = path.rel.as_bytes().iter().any(|b| b"<>*?\"".contains(b));
                if wildcard {
                    let parent = parent_of(&path.rel);
                    let _ = list(self.base(path), &parent, *max, self.buffer.as_mut_slice());
                }
                Ok(())
            }
            LoadOp::WriteX {
                handle,
                offset,
                size,
                expect,
            } => {
                let Some(fd) = self.fd(*handle) else {
                    return Err(format!("line {}: handle {handle} is not open", line.number).into());
                };
                let data = match &mut self.verify {
                    Some(tracker) => tracker.write(*handle, *offset, *size as usize),
                    None => &self.buffer.as_slice()[self.at..self.at + *size as usize],
                };
                // SAFETY: data is valid for size bytes.
                let n =
                    unsafe { libc::pwrite(fd, data.as_ptr().cast(), data.len(), *offset as i64) };
                if n < 0 {
                    return Err(fatal("write failed", Some(io::Error::last_os_error())));
                }
                if n as u32 != *expect {
                    return Err(format!(
                        "line {}: wrote {n} bytes, expected {expect}",
                        line.number
                    )
                    .into());
                }
                self.moved += *size as u64;
                if self.counting {
                    self.bytes += *size as u64;
                }
                Ok(())
            }
            LoadOp::ReadX {
                handle,
                offset,
                size,
                expect,
            } => {
                if let Some(fd) = self.fd(*handle) {
                    let buf = &mut self.buffer.as_mut_slice()[self.at..self.at + *size as usize];
                    // SAFETY: buf is valid and writable for size bytes.
                    let n = unsafe {
                        libc::pread(fd, buf.as_mut_ptr().cast(), buf.len(), *offset as i64)
                    };
                    if n != *expect as isize {
                        self.unexpected += 1;
                    }
                }
                self.moved += *size as u64;
                if self.counting {
                    self.bytes += *size as u64;
                }
                Ok(())
            }
            LoadOp::LockX {
                handle,
                offset,
                size,
            }
            | LoadOp::UnlockX {
                handle,
                offset,
                size,
            } => {
                if let Some(fd) = self.fd(*handle) {
                    let kind = if matches!(line.op, LoadOp::LockX { .. }) {
                        libc::F_WRLCK
                    } else {
                        libc::F_UNLCK
                    };
                    // SAFETY: flock is plain data.
                    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
                    lock.l_type = kind as i16;
                    lock.l_whence = libc::SEEK_SET as i16;
                    lock.l_start = *offset as i64;
                    lock.l_len = *size as i64;
                    // SAFETY: fd is open; lock is a valid flock.
                    unsafe { libc::fcntl(fd, libc::F_SETLKW, &lock) };
                }
                Ok(())
            }
            LoadOp::Flush { handle } => {
                if let Some(fd) = self.fd(*handle) {
                    let _ = at::fsync(fd);
                }
                Ok(())
            }
        }
    }

    /// Replays the loadfile from `start` (ticks) until `end_ns` after it; whether stopped.
    fn replay(
        &mut self,
        lines: &[Line],
        start: u64,
        warmup_ns: u64,
        total_ns: u64,
        stop: &StopFlag,
    ) -> bool {
        // Made with the series' probe and without: no series costs nothing.
        match self.probe.clone() {
            Some(probe) => self.replay_tapped(lines, start, warmup_ns, total_ns, stop, &*probe),
            None => self.replay_tapped(lines, start, warmup_ns, total_ns, stop, &NoTap),
        }
    }

    fn replay_tapped<T: Tap>(
        &mut self,
        lines: &[Line],
        start: u64,
        warmup_ns: u64,
        total_ns: u64,
        stop: &StopFlag,
        tap: &T,
    ) -> bool {
        let clock = Clock::get();
        self.counting = warmup_ns == 0;
        // Its directory, opened here rather than before the clients start: one that runs out
        // of descriptors fails as a line that could not go on would, the others' figures kept.
        if let Err(e) = self.reopen() {
            self.failure = Some(e.into());
            return true;
        }
        let mut n = 0u64;
        loop {
            for (index, line) in lines.iter().enumerate() {
                let before = clock.ticks();
                let since = clock.ns(before.saturating_sub(start));
                if since >= total_ns {
                    return true;
                }
                if !self.counting && since >= warmup_ns {
                    self.counting = true;
                }
                n += 1;
                if n % 1024 == 0 && stop.is_requested() {
                    return false;
                }
                let moved = self.moved;
                if let Err(e) = self.op(index, line) {
                    self.failure = Some(e);
                    return true;
                }
                let latency = clock.ns(clock.ticks().saturating_sub(before));
                tap.op(self.moved - moved, latency);
                if self.counting {
                    self.counts[line.op.kind()].record(latency);
                    self.lines += 1;
                }
            }
            if self.counting {
                self.loops += 1;
            }
        }
    }

    fn close_all(&mut self) {
        for (_, fd) in self.handles.drain(..) {
            let _ = at::close(fd);
        }
        if let Some(tracker) = &mut self.verify {
            tracker.close_all();
        }
    }
}

/// dbench's loadfile: the first of `candidates` that is a file, or none and the warning that
/// the built-in load runs instead.
fn dbench_loadfile(candidates: &[&str]) -> (Option<PathBuf>, Option<String>) {
    match candidates.iter().find(|p| Path::new(p).is_file()) {
        Some(found) => (Some(PathBuf::from(found)), None),
        None => (
            None,
            Some(format!(
                "dbench's client.txt is not installed (looked for {}): the built-in load ran instead; install dbench (apt-get install dbench, or scripts/install-deps.sh) to replay the study's load",
                candidates.join(", ")
            )),
        ),
    }
}

/// What the whole load's result says of how it ran: the method and the loadfile.
/// `verify`, after the replay: the cache made cold (a filesystem fsbench made is remounted;
/// elsewhere every cache dropped, or, where that cannot be, each file evicted as it is read),
/// then every client's directory read back (`verify::check_client`).
fn verify_clients(
    clients: &[Client],
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<verify::Verified, WorkloadError> {
    let cold = harness.cold();
    sink.warning(&match &cold {
        Ok(how) => format!(
            "--verify: every file the clients left was read back once the cache was made cold \
             ({how})"
        ),
        Err(why) => format!(
            "--verify: the cache could not be made cold ({why}): each file was evicted on its \
             own (fadvise) before it was read back; a filesystem that keeps files in memory \
             (tmpfs) is checked from there"
        ),
    });
    let mut verified = verify::Verified::default();
    for c in clients {
        let Some(tracker) = &c.verify else { continue };
        match verify::check_client(tracker, &c.dir_path, cold.is_err(), &mut verified) {
            Ok(Ok(())) => {}
            Ok(Err(corruption)) => {
                return Err(WorkloadError::Corrupt(format!(
                    "{corruption} (read back after the replay)"
                )))
            }
            Err(e) => return Err(WorkloadError::io("read back", &c.dir_path, e)),
        }
    }
    sink.status(&format!(
        "{} files ({} bytes) read back as written{}",
        verified.files,
        verified.bytes,
        match verified.excluded {
            0 => String::new(),
            n => format!("; {n} the clients could not follow not checked"),
        }
    ));
    if verified.excluded > 0 {
        sink.warning(&format!(
            "--verify: {} files were not checked: the clients could not follow what they hold \
             (found with data the run did not write, or under a renamed directory)",
            verified.excluded
        ));
    }
    Ok(verified)
}

fn load_attributes(load: &Load, method: Method) -> serde_json::Map<String, serde_json::Value> {
    let mut attributes = serde_json::Map::new();
    attributes.insert("method".into(), method.to_string().into());
    attributes.insert("loadfile".into(), load.name().into());
    attributes
}

/// The message for running out of file descriptors, which no loadfile status expects.
fn too_many(e: &io::Error) -> Option<String> {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE)).then(|| {
        format!("{e}: the clients hold more open files than this process may; raise `ulimit -n` or run fewer clients")
    })
}

fn cstr_path(name: &CStr) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()))
}

fn parent_of(rel: &CStr) -> std::ffi::CString {
    let bytes = rel.to_bytes();
    match bytes.iter().rposition(|&b| b == b'/') {
        Some(i) => std::ffi::CString::new(&bytes[..i]).expect("no NUL"),
        None => std::ffi::CString::new(".").expect("no NUL"),
    }
}

/// Lists up to `max` entries of a directory (getdents64), as FIND_FIRST does.
fn list(base: RawFd, dir: &CStr, max: u32, buf: &mut [u8]) -> io::Result<()> {
    let fd = at::openat(base, dir, libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
    let mut seen = 0u64;
    let result = loop {
        match at::getdents64(fd, buf) {
            Ok(0) => break Ok(()),
            Ok(n) => {
                seen += at::count_entries(buf, n);
                if seen >= max as u64 {
                    break Ok(());
                }
            }
            Err(e) => break Err(e),
        }
    };
    let _ = at::close(fd);
    result
}

impl Workload for ClientsSettings {
    const KIND: &'static str = "clients";
    const ABOUT: &'static str =
        "Client load replay (dbench): N clients replay a loadfile in dbench's format, throughput as dbench counts it";
    const LONG_ABOUT: &'static str = "Client load replay (dbench).\n\nN clients, each a thread \
in its own directory, replay a loadfile in dbench's format (--loadfile dbench: dbench's own \
client.txt where it is installed; a file; or the built-in one) over and over: first for \
--warmup, then for --duration measured. Throughput is counted as dbench counts it: the bytes \
every ReadX and WriteX asked for, over the measured time. Per operation: count, mean and maximum \
latency; per client: throughput. A loadfile line that cannot be read is refused with its line \
number before anything runs. --method tool runs dbench itself on the same loadfile instead and \
reads its throughput and per-operation table.";
    const CATEGORY: Option<fsbench_model::Category> = Some(fsbench_model::Category::Throughput);

    fn check(&self, ctx: &Context) -> Result<(), WorkloadError> {
        self.check_counts(ctx)?;
        // dbench's own file is read when the run starts; a file given is checked now.
        match &self.loadfile {
            Some(LoadFile::Path(_)) => self.load().map(drop),
            _ => Ok(()),
        }
    }

    fn host_notes(&self, _ctx: &Context) -> Vec<String> {
        let mut notes = Vec::new();
        if let (None, Some(warning)) = self.loadfile_path() {
            notes.push(warning.replace("ran instead", "runs instead (each sample says so)"));
        }
        if self.method == Method::Tool && !crate::program::installed("dbench") {
            notes.push(format!(
                "{} (its cases end unsupported here)",
                dbench::NOT_INSTALLED
            ));
        }
        notes
    }

    fn describe(&self, _ctx: &Context) -> Option<serde_json::Value> {
        let (path, _) = self.loadfile_path();
        Some(serde_json::json!({
            "loadfile": path.map_or_else(|| "built-in".to_string(), |p| p.display().to_string()),
            "method": self.method.to_string(),
            "buffer_placement": if self.method == Method::Native {
                crate::placement::Placement::planned(false)
            } else {
                "dbench's own".into()
            },
        }))
    }

    fn estimate_ns(&self, ctx: &Context) -> u64 {
        self.check_counts(ctx).map_or(0, |(d, w)| d + w)
    }

    fn table_columns() -> &'static [&'static str] {
        &[
            THROUGHPUT.name,
            OPS_RATE.name,
            LATENCY_MEAN.name,
            LATENCY_P99.name,
            LATENCY_MAX.name,
        ]
    }

    fn run(
        &self,
        ctx: &Context,
        dir: &Path,
        stop: &StopFlag,
        sink: &mut dyn Sink,
        harness: &mut dyn Harness,
    ) -> End {
        let (duration, warmup) = match self.check_counts(ctx) {
            Ok(t) => t,
            Err(e) => return End::failed(e, None),
        };
        if self.method == Method::Tool && !crate::program::installed("dbench") {
            return End {
                outcome: fsbench_model::Outcome::Unsupported,
                error: Some(WorkloadError::Tool(dbench::NOT_INSTALLED.to_string())),
                seed: None,
                kept: Vec::new(),
            };
        }
        let load = match self.load() {
            Ok(load) => load,
            Err(e) => return End::failed(e, None),
        };
        if let Err(e) = self.preflight(ctx, dir) {
            return End::failed(e, None);
        }
        if let Some(warning) = &load.warning {
            sink.warning(warning);
        }
        // `verify`'s stamps carry a seed of the run's own.
        let seed = self.verify.then(crate::rng::fresh_seed);
        // Everything made goes, whatever happens (a panic included).
        ScratchDir::run(
            dir,
            "fsbench-clients",
            seed,
            sink,
            |top, sink| match &load.script {
                Script::Replay(lines) => replay(
                    self,
                    &load,
                    lines,
                    ctx,
                    top,
                    (duration, warmup),
                    seed,
                    stop,
                    sink,
                    harness,
                ),
                Script::Dbench(copy) => {
                    dbench::run(self, &load, copy, top, duration, warmup, stop, sink)
                }
            },
        )
    }
}

#[allow(clippy::too_many_arguments)]
fn replay(
    settings: &ClientsSettings,
    load: &Load,
    lines: &[Line],
    ctx: &Context,
    top: &Path,
    (duration_ns, warmup_ns): (u64, u64),
    seed: Option<u64>,
    stop: &StopFlag,
    sink: &mut dyn Sink,
    harness: &mut dyn Harness,
) -> Result<bool, WorkloadError> {
    let biggest = lines
        .iter()
        .map(|l| match l.op {
            LoadOp::WriteX { size, .. } | LoadOp::ReadX { size, .. } => size as usize,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
        .max(64 << 10);
    let top_fd = at::open_dir(top).map_err(|e| WorkloadError::io("open", top, e))?;
    // The clients' files together: larger than a core's caches but for the smallest loads.
    let placement = crate::placement::Placement::for_dir(top, false, u64::MAX);
    let clients_dir = top.join("clients");
    std::fs::create_dir(&clients_dir)
        .map_err(|e| WorkloadError::io("create the directory", &clients_dir, e))?;
    // `verify`: the loadfile's paths, once for every client; each client's tracker, made now
    // (its pool filled and checksummed) so the replay allocates nothing for it.
    let paths = seed.map(|_| Arc::new(verify::Paths::new(lines)));
    let mut clients: Vec<Client> = (1..=settings.clients)
        .map(|id| Client {
            id,
            top: top_fd.as_raw_fd(),
            dir: None,
            dir_path: clients_dir.join(format!("client{id}")),
            handles: Vec::with_capacity(256),
            buffer: crate::fileio::AlignedBuf::new(biggest + crate::placement::ROOM),
            at: placement.read,
            counting: false,
            bytes: 0,
            moved: 0,
            unexpected: 0,
            lines: 0,
            loops: 0,
            counts: (0..NAMES.len()).map(|_| Histogram::new()).collect(),
            failure: None,
            reopened: None,
            probe: None,
            verify: seed.zip(paths.as_ref()).map(|(seed, paths)| {
                Box::new(verify::Tracker::new(
                    Arc::clone(paths),
                    seed,
                    id as u32,
                    biggest,
                ))
            }),
        })
        .collect();
    // Each client's own directory, made before its first line (and opened by the client as
    // it starts): a loadfile that begins with a file in it (no Deltree or NTCreateX of the
    // directory first) finds it there, as the clients of a share do, and nothing of a client
    // ever lands beside the others'.
    for c in &clients {
        std::fs::create_dir(&c.dir_path)
            .map_err(|e| WorkloadError::io("create the directory", &c.dir_path, e))?;
    }
    let total_ns = warmup_ns + duration_ns;
    let clock = Clock::get();
    if !harness.phase_start() {
        return Ok(false);
    }
    // The series covers the warm-up too (the results do not): it shows what warming took.
    let label = Dims {
        threads: Some(settings.clients),
        ..Dims::default()
    }
    .label();
    let series = crate::workload::phase_series(ctx, sink, label, "client", clients.len());
    for (i, c) in clients.iter_mut().enumerate() {
        c.probe = series.as_ref().map(|s| s.probe(i));
    }
    let start = crate::together::SharedStart::default();
    let done = run_together(&mut clients, |c| {
        let start = start.get(clock);
        let finished = c.replay(lines, start, warmup_ns, total_ns, stop);
        c.close_all();
        finished
    });
    if let Some(series) = series {
        series.finish();
    }
    let done = done.map_err(|e| WorkloadError::io("start the clients in", top, e))?;
    if done.results.iter().any(|finished| !finished) {
        return Ok(false);
    }
    // `verify` (untimed), unless a client could not go on: every file the clients left read
    // back once nothing of the run is open and the cache is cold.
    let failed = clients.iter().any(|c| c.failure.is_some());
    let verified = match seed {
        Some(_) if !failed => {
            for c in &mut clients {
                c.dir = None;
            }
            drop(top_fd);
            if stop.is_requested() {
                return Ok(false);
            }
            Some(verify_clients(&clients, sink, harness))
        }
        _ => None,
    };
    let seconds = duration_ns as f64 / 1e9;
    let bytes: u64 = clients.iter().map(|c| c.bytes).sum();
    let unexpected: u64 = clients.iter().map(|c| c.unexpected).sum();
    let all_ops: u64 = clients
        .iter()
        .flat_map(|c| c.counts.iter())
        .map(|h| h.count())
        .sum();
    let mut n = 0;
    let mut emit = |record: ResultRecord, sink: &mut dyn Sink| {
        n += 1;
        sink.record(record, n, None);
    };
    emit(
        ResultRecord {
            dims: Dims {
                threads: Some(settings.clients),
                ..Dims::default()
            },
            attributes: {
                let mut attributes = load_attributes(load, Method::Native);
                attributes.insert("read_buffer_offset_bytes".into(), placement.read.into());
                attributes.insert("write_buffer_offset_bytes".into(), placement.write.into());
                if let Some(Ok(v)) = &verified {
                    attributes.insert("verified_files".into(), v.files.into());
                    attributes.insert("verified_bytes".into(), v.bytes.into());
                    attributes.insert("verify_excluded_files".into(), v.excluded.into());
                }
                attributes
            },
            measurements: vec![
                THROUGHPUT.at(bytes as f64 / seconds),
                OPS_RATE.at(all_ops as f64 / seconds),
                OPS.at(all_ops as f64),
                UNEXPECTED.at(unexpected as f64),
                LINES.at(clients.iter().map(|c| c.lines).sum::<u64>() as f64),
                LOOPS.at(clients.iter().map(|c| c.loops).sum::<u64>() as f64),
            ],
            ..ResultRecord::default()
        },
        sink,
    );
    for (kind, name) in NAMES.iter().enumerate() {
        let mut h = Histogram::new();
        for c in &clients {
            h.merge(&c.counts[kind]);
        }
        if h.count() == 0 {
            continue;
        }
        let l = h.summary();
        emit(
            ResultRecord {
                dims: Dims {
                    operation: Some((*name).to_string()),
                    threads: Some(settings.clients),
                    ..Dims::default()
                },
                measurements: vec![
                    OPS_RATE.at(h.count() as f64 / seconds),
                    OPS.at(h.count() as f64),
                    LATENCY_MEAN.at(l.mean_ns),
                    LATENCY_P99.at(l.p99_ns as f64),
                    LATENCY_MAX.at(l.max_ns as f64),
                ],
                latency_bins: h.bins(),
                ..ResultRecord::default()
            },
            sink,
        );
    }
    for c in &clients {
        emit(
            ResultRecord {
                dims: Dims {
                    client: Some(c.id),
                    threads: Some(settings.clients),
                    ..Dims::default()
                },
                measurements: vec![
                    THROUGHPUT.at(c.bytes as f64 / seconds),
                    LINES.at(c.lines as f64),
                    LOOPS.at(c.loops as f64),
                ],
                ..ResultRecord::default()
            },
            sink,
        );
    }
    if let Some((handle, line)) = clients.iter().find_map(|c| c.reopened) {
        sink.warning(&format!(
            "the loadfile opens handle {handle} again at line {line} before closing it: the earlier descriptor was closed there (dbench keeps both and stops when 200 files are open); add the missing Close to the loadfile"
        ));
    }
    // What was measured is kept (above); then what the read-back found, or the first client
    // that could not go on says why.
    if let Some(Err(e)) = verified {
        return Err(e);
    }
    if let Some((id, f)) = clients
        .iter()
        .find_map(|c| c.failure.as_ref().map(|f| (c.id, f)))
    {
        return Err(match f.errno {
            Some(errno) => WorkloadError::io(
                format!("replay the loadfile (client {id}, {}) in", f.message),
                top,
                io::Error::from_raw_os_error(errno),
            ),
            None => WorkloadError::io(
                format!("replay the loadfile (client {id}) in"),
                top,
                io::Error::other(f.message.clone()),
            ),
        });
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Collect;
    use fsbench_model::Outcome;

    #[test]
    fn the_built_in_load_replays_and_is_counted_as_dbench_counts() {
        let dir = tempfile::tempdir().unwrap();
        let settings = ClientsSettings {
            clients: 3,
            duration: TimeSpan::from_ns(300_000_000),
            warmup: TimeSpan::from_ns(50_000_000),
            ..ClientsSettings::default()
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        let overall = &sink.records[0];
        assert_eq!(overall.main().unwrap().metric, "throughput");
        assert!(overall.main().unwrap().value > 0.0);
        assert_eq!(
            overall.measurement("unexpected").unwrap().value,
            0.0,
            "the built-in load runs as written"
        );
        let per_op = |name: &str| {
            sink.records
                .iter()
                .find(|r| r.dims.operation.as_deref() == Some(name))
                .map(|r| r.measurement("ops").unwrap().value)
        };
        // Operations in the proportions of the loadfile (whole replays, plus one partial).
        let in_file = |op: &str| BUILTIN.lines().filter(|l| l.starts_with(op)).count() as f64;
        let (reads, writes) = (per_op("ReadX").unwrap(), per_op("WriteX").unwrap());
        let expected = in_file("ReadX ") / in_file("WriteX ");
        assert!(
            (reads / writes - expected).abs() < 0.1 * expected,
            "{reads} reads, {writes} writes"
        );
        let clients: Vec<u64> = sink.records.iter().filter_map(|r| r.dims.client).collect();
        assert_eq!(clients, [1, 2, 3]);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "left behind"
        );
    }

    #[test]
    fn dbench_s_load_where_it_is_not_installed_is_the_built_in_one_with_a_warning() {
        let settings = ClientsSettings {
            loadfile: Some(LoadFile::Dbench),
            ..ClientsSettings::default()
        };
        let (path, warning) = settings.loadfile_path();
        assert_eq!(path, dbench_loadfile(&DBENCH_LOADFILES).0);
        if path.is_none() {
            assert!(warning.is_some());
        }
        let dir = tempfile::tempdir().unwrap();
        let there = dir.path().join("client.txt");
        std::fs::write(&there, "Close 1 NT_STATUS_OK\n").unwrap();
        let missing = dir.path().join("missing.txt");
        let (missing, there) = (missing.to_str().unwrap(), there.to_str().unwrap());
        assert_eq!(
            dbench_loadfile(&[missing, there]),
            (Some(PathBuf::from(there)), None)
        );
        let (none, warning) = dbench_loadfile(&[missing]);
        assert_eq!(none, None);
        let warning = warning.unwrap();
        assert!(
            warning.contains(missing) && warning.contains("the built-in load ran instead"),
            "{warning}"
        );
        assert_eq!("dbench".parse::<LoadFile>(), Ok(LoadFile::Dbench));
        assert_eq!(
            "/x/client.txt".parse::<LoadFile>(),
            Ok(LoadFile::Path("/x/client.txt".into()))
        );
    }

    /// What docs/workloads/clients.md says of the built-in loadfile.
    #[test]
    fn the_built_in_loadfile_moves_bytes_as_client_txt_does() {
        let lines = parse(BUILTIN, "builtin").unwrap();
        assert_eq!(lines.len(), 72);
        let bytes = |read: bool| -> u64 {
            lines
                .iter()
                .map(|l| match l.op {
                    LoadOp::ReadX { size, .. } if read => size as u64,
                    LoadOp::WriteX { size, .. } if !read => size as u64,
                    _ => 0,
                })
                .sum()
        };
        let share = bytes(true) as f64 / (bytes(true) + bytes(false)) as f64;
        assert!(
            (share - 0.59).abs() < 0.01,
            "reads move {share} of the bytes"
        );
        let kinds: std::collections::BTreeSet<usize> = lines.iter().map(|l| l.op.kind()).collect();
        assert!(
            kinds.len() >= 14,
            "most of client.txt's operation kinds: {kinds:?}"
        );
    }

    /// `verify`'s harness: its `cold` counts the files under `top`, changes the byte at `at`
    /// of the first file longer than that (None: changes nothing), names it, and says
    /// "remounted (test)".
    struct Damaging<'a> {
        top: &'a Path,
        at: Option<u64>,
        damaged: Option<String>,
        files: u64,
    }

    impl Harness for Damaging<'_> {
        fn cold(&mut self) -> Result<String, String> {
            use std::os::unix::fs::FileExt;
            let mut pending = vec![self.top.to_path_buf()];
            let mut found = None;
            while let Some(dir) = pending.pop() {
                let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
                    .unwrap()
                    .map(|e| e.unwrap().path())
                    .collect();
                entries.sort();
                for path in entries {
                    let meta = path.symlink_metadata().unwrap();
                    if meta.is_dir() {
                        pending.push(path);
                        continue;
                    }
                    self.files += 1;
                    if self.at.is_some_and(|at| meta.len() > at) && found.is_none() {
                        found = Some(path);
                    }
                }
            }
            if let (Some(at), Some(path)) = (self.at, found) {
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .unwrap();
                let mut byte = [0u8];
                file.read_exact_at(&mut byte, at).unwrap();
                file.write_all_at(&[!byte[0]], at).unwrap();
                self.damaged = Some(path.display().to_string());
            }
            Ok("remounted (test)".into())
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

    /// A verified run of `settings` in a new directory with `harness`'s damage at `at`: how it
    /// ended, what it said, and the file damaged. The clients stop wherever they are in the
    /// loadfile, most often just after its slowest line, which may be the Deltree that leaves
    /// nothing: a run that left no file (none long enough to damage) runs again.
    fn verified_run(settings: &ClientsSettings, at: Option<u64>) -> (End, Collect, Option<String>) {
        for _ in 0..20 {
            let (end, sink, damaged, files) = verified_run_once(settings, at);
            if files > 0 && (at.is_none() || damaged.is_some()) {
                return (end, sink, damaged);
            }
        }
        panic!("20 runs left no file to check");
    }

    fn verified_run_once(
        settings: &ClientsSettings,
        at: Option<u64>,
    ) -> (End, Collect, Option<String>, u64) {
        let dir = tempfile::tempdir().unwrap();
        let mut harness = Damaging {
            top: dir.path(),
            at,
            damaged: None,
            files: 0,
        };
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut harness,
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "left behind"
        );
        if end.outcome == Outcome::Ok {
            assert_eq!(
                attribute(&sink, "verified_files") + attribute(&sink, "verify_excluded_files"),
                harness.files,
                "every file the clients left is read back or said to be excluded"
            );
        }
        (end, sink, harness.damaged, harness.files)
    }

    fn attribute(sink: &Collect, name: &str) -> u64 {
        sink.records[0].attributes[name].as_u64().unwrap()
    }

    /// The built-in load by several clients, `verify`: every file they left read back after
    /// the "remount" with no false alarm; a byte changed behind their back ends the sample
    /// `corrupt`, naming the file and the block.
    #[test]
    fn verify_reads_back_every_file_the_clients_left_and_finds_a_changed_byte() {
        let settings = ClientsSettings {
            clients: 3,
            duration: TimeSpan::from_ns(300_000_000),
            warmup: TimeSpan::from_ns(50_000_000),
            verify: true,
            ..ClientsSettings::default()
        };
        let (end, sink, _) = verified_run(&settings, None);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert!(end.seed.is_some(), "the stamps' seed is the run's");
        assert!(
            sink.warnings
                .iter()
                .any(|w| w.contains("read back once the cache was made cold (remounted (test))")),
            "{:?}",
            sink.warnings
        );
        assert!(
            attribute(&sink, "verified_files") >= 1,
            "{:?}",
            sink.records[0].attributes
        );
        assert!(attribute(&sink, "verified_bytes") >= 4096);
        assert_eq!(attribute(&sink, "verify_excluded_files"), 0);
        assert_eq!(
            sink.records[0].measurement("unexpected").unwrap().value,
            0.0
        );

        let (end, sink, damaged) = verified_run(&settings, Some(4096 + 100));
        assert_eq!(end.outcome, Outcome::Corrupt, "{:?}", end.error);
        let said = end.error.unwrap().to_string();
        let damaged = damaged.unwrap();
        assert!(
            said.contains(&format!("{damaged}: the block at byte 4096 is not")),
            "{said}"
        );
        assert!(
            said.contains("payload changed") && said.contains("byte 4196"),
            "{said}"
        );
        assert!(!sink.records.is_empty(), "what was measured is kept");

        // No harness: each file evicted on its own, said.
        let dir = tempfile::tempdir().unwrap();
        let mut sink = Collect::default();
        let end = settings.run(
            &Context::default(),
            dir.path(),
            &StopFlag::new(),
            &mut sink,
            &mut crate::harness::Detached,
        );
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert!(
            sink.warnings
                .iter()
                .any(|w| w.contains("could not be made cold")),
            "{:?}",
            sink.warnings
        );
    }

    /// Writes at any offset and length, over each other, past holes; a file truncated through
    /// one handle and written through another; renamed over another; written after it was
    /// unlinked: all followed, read back with no false alarm, a changed byte where a hole
    /// must read zeros found.
    #[test]
    fn verify_follows_unaligned_writes_truncations_renames_and_unlinks() {
        let dir = tempfile::tempdir().unwrap();
        let loadfile = dir.path().join("load.txt");
        std::fs::write(
            &loadfile,
            r#"Deltree "\clients\client1" NT_STATUS_OK
NTCreateX "\clients\client1\a.dat" 0x40 0x2 1 NT_STATUS_OK
WriteX 1 100 5000 5000 NT_STATUS_OK
WriteX 1 9000 300 300 NT_STATUS_OK
WriteX 1 50 100 100 NT_STATUS_OK
WriteX 1 4000 7 7 NT_STATUS_OK
Close 1 NT_STATUS_OK
NTCreateX "\clients\client1\sub" 0x1 0x2 5 NT_STATUS_OK
Close 5 NT_STATUS_OK
NTCreateX "\clients\client1\sub\b.dat" 0x40 0x2 2 NT_STATUS_OK
WriteX 2 0 12288 12288 NT_STATUS_OK
NTCreateX "\clients\client1\sub\b.dat" 0x40 0x5 3 NT_STATUS_OK
WriteX 2 8192 10 10 NT_STATUS_OK
WriteX 3 8000 100 100 NT_STATUS_OK
Close 3 NT_STATUS_OK
Close 2 NT_STATUS_OK
Rename "\clients\client1\a.dat" "\clients\client1\c.dat" NT_STATUS_OK
NTCreateX "\clients\client1\d.dat" 0x40 0x2 4 NT_STATUS_OK
WriteX 4 0 4096 4096 NT_STATUS_OK
Unlink "\clients\client1\d.dat" 0x6 NT_STATUS_OK
WriteX 4 4096 4096 4096 NT_STATUS_OK
Close 4 NT_STATUS_OK
NTCreateX "\clients\client1\c.dat" 0x40 0x1 6 NT_STATUS_OK
WriteX 6 4096 1 1 NT_STATUS_OK
Close 6 NT_STATUS_OK
"#,
        )
        .unwrap();
        let settings = ClientsSettings {
            clients: 2,
            duration: TimeSpan::from_ns(200_000_000),
            warmup: TimeSpan::from_ns(0),
            loadfile: Some(LoadFile::Path(loadfile)),
            verify: true,
            ..ClientsSettings::default()
        };
        let (end, sink, _) = verified_run(&settings, None);
        assert_eq!(end.outcome, Outcome::Ok, "{:?}", end.error);
        assert_eq!(
            sink.records[0].measurement("unexpected").unwrap().value,
            0.0
        );
        // a.dat or c.dat (9300 bytes; both, the loop cut between the create and the rename)
        // and sub/b.dat (8192 + 10 bytes, truncated) in each client.
        let files = attribute(&sink, "verified_files");
        assert!((1..=6).contains(&files), "{files}");
        assert_eq!(attribute(&sink, "verify_excluded_files"), 0);
        // Byte 6000 of a.dat/c.dat (or byte 6000 of b.dat) was never written: it must read zero.
        let (end, _, damaged) = verified_run(&settings, Some(6000));
        assert_eq!(end.outcome, Outcome::Corrupt, "{:?}", end.error);
        let said = end.error.unwrap().to_string();
        assert!(
            said.contains(&format!(
                "{}: the block at byte 4096 is not",
                damaged.unwrap()
            )),
            "{said}"
        );
        assert!(
            said.contains("byte 6000 0x00") && said.contains("byte 6000 0xff"),
            "{said}"
        );
    }

    /// What `verify` cannot check is refused before anything runs, naming verify.
    #[test]
    fn verify_refuses_dbench_itself_and_a_load_that_removes_the_shared_directory() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("load.txt");
        std::fs::write(&file, "Deltree \"\\clients\" NT_STATUS_OK\n").unwrap();
        for settings in [
            ClientsSettings {
                verify: true,
                method: Method::Tool,
                ..ClientsSettings::default()
            },
            ClientsSettings {
                verify: true,
                loadfile: Some(LoadFile::Path(file.clone())),
                ..ClientsSettings::default()
            },
        ] {
            let e = settings.check(&Context::default()).unwrap_err().to_string();
            assert!(e.starts_with("verify"), "{e}");
        }
        let fine = ClientsSettings {
            loadfile: Some(LoadFile::Path(file)),
            ..ClientsSettings::default()
        };
        assert!(fine.check(&Context::default()).is_ok());
    }

    #[test]
    fn a_bad_loadfile_is_refused_before_anything_runs() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("load.txt");
        std::fs::write(&file, "Close 1 NT_STATUS_OK\nReadX 1 NT_STATUS_OK\n").unwrap();
        let settings = ClientsSettings {
            loadfile: Some(LoadFile::Path(file.clone())),
            ..ClientsSettings::default()
        };
        let e = settings.check(&Context::default()).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "loadfile: {}:2: ReadX needs 4 arguments",
                file.display()
            )),
            "{e}"
        );
    }
}
