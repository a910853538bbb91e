//! The trace file (docs/trace-format.md): 8 bytes `FSBTRACE`, the format version as a 32-bit
//! little-endian number, then one gzip stream of JSON lines — the [`Header`], the initial tree's
//! [`Node`]s, the [`Event`]s in the order they began, and the [`End`] with the counts that
//! prove nothing is missing. A file without its end, with a line that does not parse, or whose
//! counts disagree is refused with the reason; so is a newer version.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;
use serde::{Deserialize, Serialize};

use crate::event::Event;
use crate::tree::Node;

/// The first 8 bytes of every trace.
pub const MAGIC: &[u8; 8] = b"FSBTRACE";
/// The version this build writes, and the newest it reads (2: `chown` and `fchown` events;
/// docs/trace-format.md).
pub const FORMAT_VERSION: u32 = 2;
/// The longest line a trace may hold (a header with a very long command line fits): a longer
/// one is refused as corrupt by the reader, before it is held in memory whole (a gzip stream
/// can expand a few KiB into gigabytes), and never written.
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// What was recorded, where and how; written first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The command recorded (`fsbench record -- COMMAND …`), or for `--pid` the process's
    /// command line; `["(anonymised)"]` in an anonymised trace.
    pub command: Vec<String>,
    /// The recorded root, as an absolute path on the recording host ("" when anonymised).
    pub root: String,
    /// When the recording began, in seconds since the Unix epoch.
    pub recorded_at_unix_s: u64,
    /// The recording host's name ("" when anonymised) and kernel release.
    pub host: String,
    pub kernel: String,
    /// How the calls were captured (e.g. "ebpf sys_enter/sys_exit + sched_switch + sched_waking").
    pub mechanism: String,
    /// Names were replaced by keyed hashes (sizes, types and structure kept).
    pub anonymised: bool,
    /// The initial tree's files carry their contents (never unless asked).
    pub contents: bool,
}

/// The counts that close a trace: a reader checks them against what it read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    /// Nodes of the initial tree written.
    pub nodes: u64,
    /// Events written.
    pub events: u64,
    /// From the recording's start to its end, in nanoseconds.
    pub duration_ns: u64,
    /// Calls the recorder saw but could not keep (a full buffer). A trace that lost any is
    /// refused by the recorder; the count is here so that the refusal can be checked.
    pub lost_events: u64,
    /// Calls on paths or descriptors outside the recorded root, left out by design.
    pub outside_events: u64,
    /// Calls recorded but not replayable, by system call name (e.g. `io_uring_enter`).
    pub unsupported: BTreeMap<String, u64>,
}

/// One line of the stream.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    Header(Header),
    Node(Node),
    Event(Event),
    End(End),
}

/// A whole trace in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    pub header: Header,
    /// The tree the application found under the root, parents before children.
    pub tree: Vec<Node>,
    /// Every call, in the order the calls began.
    pub events: Vec<Event>,
    pub end: End,
}

/// Why a trace cannot be read (or written).
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{0}: not an fsbench trace (it does not begin with FSBTRACE); record one with `fsbench record -- COMMAND`")]
    NotATrace(PathBuf),
    #[error("{path}: trace format version {found} is newer than this fsbench reads (up to {FORMAT_VERSION}); use a newer fsbench")]
    NewerVersion { path: PathBuf, found: u32 },
    #[error("{path}: the trace is truncated ({reason}); it was not finished, or was cut short in a copy — record it again")]
    Truncated { path: PathBuf, reason: String },
    #[error("{path}: the trace is corrupt at line {line}: {reason}")]
    Corrupt {
        path: PathBuf,
        line: u64,
        reason: String,
    },
}

impl Trace {
    /// Reads and checks a whole trace.
    pub fn read(path: &Path) -> Result<Trace, TraceError> {
        let io_err = |source| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = BufReader::new(File::open(path).map_err(io_err)?);
        let mut prefix = [0u8; 12];
        if let Err(e) = file.read_exact(&mut prefix) {
            return Err(if e.kind() == io::ErrorKind::UnexpectedEof {
                TraceError::NotATrace(path.to_path_buf())
            } else {
                io_err(e)
            });
        }
        if &prefix[..8] != MAGIC {
            return Err(TraceError::NotATrace(path.to_path_buf()));
        }
        let found = u32::from_le_bytes(prefix[8..12].try_into().expect("4 bytes"));
        if found > FORMAT_VERSION {
            return Err(TraceError::NewerVersion {
                path: path.to_path_buf(),
                found,
            });
        }
        let truncated = |reason: String| TraceError::Truncated {
            path: path.to_path_buf(),
            reason,
        };
        let mut lines = BufReader::with_capacity(1 << 20, MultiGzDecoder::new(file));
        let mut header = None;
        let mut tree = Vec::new();
        let mut events = Vec::new();
        let mut buf = String::new();
        let mut number = 0u64;
        loop {
            buf.clear();
            let limit = MAX_LINE_BYTES as u64 + 1;
            let n = (&mut lines)
                .take(limit)
                .read_line(&mut buf)
                .map_err(|e| match e.kind() {
                    io::ErrorKind::UnexpectedEof => {
                        truncated(format!("the compressed stream ends early: {e}"))
                    }
                    io::ErrorKind::InvalidInput | io::ErrorKind::InvalidData => {
                        TraceError::Corrupt {
                            path: path.to_path_buf(),
                            line: number + 1,
                            reason: e.to_string(),
                        }
                    }
                    _ => io_err(e),
                })?;
            if n == 0 {
                return Err(truncated(format!("no end line after {number} lines")));
            }
            number += 1;
            let corrupt = |reason: String| TraceError::Corrupt {
                path: path.to_path_buf(),
                line: number,
                reason,
            };
            if n > MAX_LINE_BYTES {
                return Err(corrupt(format!(
                    "a line longer than {MAX_LINE_BYTES} bytes"
                )));
            }
            let line: Line =
                serde_json::from_str(buf.trim_end()).map_err(|e| corrupt(e.to_string()))?;
            match (line, header.is_some()) {
                (Line::Header(h), false) => header = Some(h),
                (_, false) => return Err(corrupt("the first line is not the header".into())),
                (Line::Header(_), true) => return Err(corrupt("a second header".into())),
                (Line::Node(node), true) if events.is_empty() => tree.push(node),
                (Line::Node(_), true) => {
                    return Err(corrupt("a node after the events began".into()))
                }
                (Line::Event(event), true) => {
                    if let Some(last) = events.last() {
                        let last: &Event = last;
                        if event.start_ns < last.start_ns {
                            return Err(corrupt(format!(
                                "events out of order ({} ns after {} ns)",
                                event.start_ns, last.start_ns
                            )));
                        }
                    }
                    events.push(event)
                }
                (Line::End(end), true) => {
                    if end.nodes != tree.len() as u64 || end.events != events.len() as u64 {
                        return Err(truncated(format!(
                            "the end line counts {} nodes and {} events, the file holds {} and {}",
                            end.nodes,
                            end.events,
                            tree.len(),
                            events.len()
                        )));
                    }
                    // What follows is read in pieces, never held whole.
                    loop {
                        let rest = lines.fill_buf().map_err(|e| corrupt(e.to_string()))?;
                        if rest.is_empty() {
                            break;
                        }
                        if !rest.iter().all(u8::is_ascii_whitespace) {
                            return Err(corrupt("data after the end line".into()));
                        }
                        let used = rest.len();
                        lines.consume(used);
                    }
                    return Ok(Trace {
                        header: header.expect("checked"),
                        tree,
                        events,
                        end,
                    });
                }
            }
        }
    }

    /// Writes the whole trace to `path` (replaced atomically: a temporary file renamed).
    pub fn write(&self, path: &Path) -> Result<(), TraceError> {
        let mut writer = TraceWriter::create(path, &self.header)?;
        for node in &self.tree {
            writer.node(node)?;
        }
        for event in &self.events {
            writer.event(event)?;
        }
        let mut end = self.end.clone();
        end.nodes = self.tree.len() as u64;
        end.events = self.events.len() as u64;
        writer.finish(end)
    }
}

/// Writes a trace as it is recorded: the header, the nodes, the events, then the end. The file
/// appears under its name only when [`TraceWriter::finish`] succeeds; until then it is a
/// temporary beside it, removed if the writer is dropped.
pub struct TraceWriter {
    path: PathBuf,
    temporary: PathBuf,
    out: Option<GzEncoder<BufWriter<File>>>,
    /// The temporary has been renamed into place (else it is removed when dropped).
    finished: bool,
    nodes: u64,
    events: u64,
    last_start_ns: u64,
    line: Vec<u8>,
}

/// Whether a trace may be written at `path`, which it replaces (a new file renamed over it):
/// nothing may be there but a regular file. A device, pipe or socket would itself be replaced
/// by the trace (as root, `/dev/null`), and so would a symbolic link (`/dev/stdout`): refused.
/// A directory is refused by the writer (EISDIR).
pub fn check_replaceable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(meta) => meta.file_type(),
    };
    if kind.is_file() || kind.is_dir() {
        return Ok(());
    }
    let what = if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_fifo() {
        "a pipe"
    } else if kind.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what}, which the trace (a new file renamed over it) would replace"),
    ))
}

impl TraceWriter {
    pub fn create(path: &Path, header: &Header) -> Result<TraceWriter, TraceError> {
        let refuse = |source: io::Error| TraceError::Io {
            path: path.to_path_buf(),
            source,
        };
        // A directory (or a name ending in `/`) cannot take the trace: refused before anything
        // is written, never a temporary left beside it.
        use std::os::unix::ffi::OsStrExt;
        let name = match path.file_name() {
            Some(name) if !path.as_os_str().as_bytes().ends_with(b"/") && !path.is_dir() => {
                name.to_string_lossy().into_owned()
            }
            _ => return Err(refuse(io::Error::from_raw_os_error(libc::EISDIR))),
        };
        check_replaceable(path).map_err(refuse)?;
        // Created new (O_EXCL): never opened through a link or a file someone planted under
        // the predictable name (fsbench record runs as root). Readable by its owner only, as
        // perf.data is: a trace names every file the application used and the tree it found.
        use std::os::unix::fs::OpenOptionsExt;
        let mut attempt = 0u32;
        let (temporary, file) = loop {
            let temporary =
                path.with_file_name(format!(".{name}.partial-{}-{attempt}", std::process::id()));
            match File::options()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temporary)
            {
                Ok(file) => break (temporary, file),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
                Err(source) => {
                    return Err(TraceError::Io {
                        path: temporary,
                        source,
                    })
                }
            }
        };
        let mut file = BufWriter::with_capacity(1 << 20, file);
        let mut writer = TraceWriter {
            path: path.to_path_buf(),
            temporary,
            out: None,
            finished: false,
            nodes: 0,
            events: 0,
            last_start_ns: 0,
            line: Vec::with_capacity(256),
        };
        let prefix = file
            .write_all(MAGIC)
            .and_then(|()| file.write_all(&FORMAT_VERSION.to_le_bytes()));
        writer.io(prefix)?;
        writer.out = Some(GzEncoder::new(file, flate2::Compression::default()));
        writer.line(&Line::Header(header.clone()))?;
        Ok(writer)
    }

    pub fn node(&mut self, node: &Node) -> Result<(), TraceError> {
        assert_eq!(self.events, 0, "a trace's nodes come before its events");
        self.nodes += 1;
        self.line(&Line::Node(node.clone()))
    }

    pub fn event(&mut self, event: &Event) -> Result<(), TraceError> {
        assert!(
            event.start_ns >= self.last_start_ns,
            "a trace's events are written in the order they began"
        );
        self.last_start_ns = event.start_ns;
        self.events += 1;
        self.line(&Line::Event(event.clone()))
    }

    /// Writes the end (its counts are this writer's), flushes, syncs and renames into place.
    pub fn finish(mut self, mut end: End) -> Result<(), TraceError> {
        end.nodes = self.nodes;
        end.events = self.events;
        self.line(&Line::End(end))?;
        let out = self.out.take().expect("open until finished");
        let done = out
            .finish()
            .and_then(|buf| buf.into_inner().map_err(|e| e.into_error()))
            .and_then(|file| file.sync_all());
        self.io(done)?;
        let renamed = std::fs::rename(&self.temporary, &self.path);
        self.io(renamed)?;
        self.finished = true;
        Ok(())
    }

    fn line(&mut self, line: &Line) -> Result<(), TraceError> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, line).expect("a trace line serialises");
        self.line.push(b'\n');
        if self.line.len() > MAX_LINE_BYTES {
            let too_long = io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "a trace line of {} bytes, longer than the {MAX_LINE_BYTES} a reader takes",
                    self.line.len()
                ),
            );
            return self.io(Err(too_long));
        }
        let out = self.out.as_mut().expect("open until finished");
        let written = out.write_all(&self.line);
        self.io(written)
    }

    fn io<T>(&self, result: io::Result<T>) -> Result<T, TraceError> {
        result.map_err(|source| TraceError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

impl Drop for TraceWriter {
    fn drop(&mut self) {
        // Unfinished, or failed while finishing (a full disk, a rename refused): no partial
        // file is left behind.
        if !self.finished {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}
