//! The source tree the tasks extract, build, read and remove: modelled on a real tree (counts of
//! files, directories and symlinks, total bytes, depth, file sizes; docs/workloads/task.md says
//! where each figure comes from), generated from a seed, byte for byte the same for the same
//! seed, and packed as tar (optionally gzip, bzip2 or xz) with the `tar` crate. Its root holds a
//! small C project (a Makefile, a header and `build_units` translation units) so the tree can
//! be built as study 001 built its kernel. A user's tree (`--source DIR`) is packed here too,
//! never across a mount.

use super::project;
use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::{self, Read, Write};
use std::path::Path;
use std::str::FromStr;

/// The top directory of every generated tree (as a kernel tarball holds `linux-x.y/`).
pub const TOP: &str = "linux";

/// A real tree's figures, which the generated one reproduces at scale 1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Model {
    pub name: &'static str,
    pub files: u64,
    /// Directories below the top one.
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
    /// Deepest directory below the top one.
    pub max_depth: u32,
    /// File sizes: log-normal with these parameters (of ln bytes), capped at `max_file`.
    pub size_mu: f64,
    pub size_sigma: f64,
    pub max_file: u64,
}

/// Counted from Debian's linux-source-6.1 (6.1.192) with `os.walk` (docs/workloads/task.md).
pub const LINUX_6_1: Model = Model {
    name: "linux-6.1",
    files: 78_579,
    dirs: 5_095,
    symlinks: 56,
    bytes: 1_298_681_992,
    max_depth: 9,
    size_mu: 8.225,
    size_sigma: 1.618,
    max_file: 23_944_620,
};

/// The tree study 000 removed with `rm -rf`: 30,786 files and 1,657 directories (Qt 4.6.0's
/// source); the study gives no byte count, so the sizes follow linux-6.1's distribution.
pub const QT_4_6_0: Model = Model {
    name: "qt-4.6.0",
    files: 30_786,
    dirs: 1_657,
    symlinks: 0,
    bytes: 30_786 * (LINUX_6_1.bytes / LINUX_6_1.files),
    max_depth: 9,
    ..LINUX_6_1
};

pub const MODELS: [Model; 2] = [LINUX_6_1, QT_4_6_0];

/// A model by name, as settings name it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeModel(pub Model);

impl Default for TreeModel {
    fn default() -> TreeModel {
        TreeModel(LINUX_6_1)
    }
}

impl fmt::Display for TreeModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name)
    }
}

impl FromStr for TreeModel {
    type Err = String;
    fn from_str(s: &str) -> Result<TreeModel, String> {
        MODELS
            .iter()
            .find(|m| m.name == s)
            .map(|m| TreeModel(*m))
            .ok_or_else(|| {
                let names: Vec<_> = MODELS.iter().map(|m| m.name).collect();
                format!("unknown tree model '{s}': use {}", names.join(" or "))
            })
    }
}

fsbench_model::text_serde!(TreeModel);

/// What kind an entry of the tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Dir,
    /// A file of text modelled on source code.
    Text,
    /// A file of the C project, by its index in [`project::Project`].
    Project(usize),
    /// A symbolic link to a file (its target relative to the link).
    Symlink,
}

/// One entry, in archive order (every directory before what it holds).
#[derive(Debug, Clone)]
pub struct Entry {
    pub kind: Kind,
    /// Relative to the directory the tree is extracted in, starting with [`TOP`].
    pub path: String,
    pub size: u64,
    /// For a symlink: its target.
    pub link: String,
    /// The seed of a text file's content.
    pub seed: u64,
}

/// A generated tree: its entries and totals.
#[derive(Debug, Clone)]
pub struct Tree {
    pub entries: Vec<Entry>,
    pub project: project::Project,
    pub totals: Totals,
}

/// What a tree holds, counted as the tests and results count it: regular files (with their
/// bytes), directories including the top one, symlinks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub files: u64,
    pub dirs: u64,
    pub symlinks: u64,
    pub bytes: u64,
}

impl Totals {
    /// Room the tree needs on a filesystem with 4 KiB blocks: every file rounded up to a block,
    /// a block per directory; and the inodes.
    pub fn room_bytes(&self, entries: &[Entry]) -> u64 {
        let data: u64 = entries
            .iter()
            .filter(|e| matches!(e.kind, Kind::Text | Kind::Project(_)))
            .map(|e| e.size.div_ceil(4096) * 4096)
            .sum();
        data + self.dirs * 4096
    }

    pub fn inodes(&self) -> u64 {
        self.files + self.dirs + self.symlinks
    }
}

/// A model's counts at `scale` (at least one file and the project's directories).
pub fn scaled(model: &Model, scale: f64) -> Model {
    let n = |v: u64| (v as f64 * scale).round() as u64;
    Model {
        files: n(model.files).max(1),
        dirs: n(model.dirs),
        symlinks: n(model.symlinks),
        bytes: n(model.bytes),
        ..*model
    }
}

/// A short name from the generator: letters, then the index (unique among siblings).
fn name(rng: &mut Rng, index: u64, ext: &str) -> String {
    const SYLLABLES: [&str; 16] = [
        "dev", "net", "io", "fs", "mm", "irq", "pci", "usb", "clk", "cpu", "mem", "dma", "gpio",
        "sys", "bus", "core",
    ];
    let a = SYLLABLES[(rng.next_u64() % 16) as usize];
    let b = SYLLABLES[(rng.next_u64() % 16) as usize];
    format!("{a}{b}{index:x}{ext}")
}

/// A log-normal draw by Box-Muller.
fn log_normal(rng: &mut Rng, mu: f64, sigma: f64) -> f64 {
    let u1 = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let u2 = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
    (mu + sigma * z).exp()
}

/// Generates the tree of `model` (already scaled) with `units` translation units, from `seed`.
/// Directories: each picks a parent among the earlier ones, the shallower the likelier (depth
/// at most `max_depth`). Files: spread over directories by a heavy-tailed weight (a few hold
/// thousands, most a handful, as in a kernel tree). Sizes: log-normal, then scaled so the
/// text files and the project add up to `model.bytes` exactly (when the project alone is not
/// bigger).
pub fn generate(model: &Model, units: u64, seed: u64) -> Tree {
    let mut rng = Rng::new(seed ^ 0x7472_6565);
    // Directories: index 0 is the top.
    let dir_count = model.dirs as usize + 1;
    let mut parent = vec![0usize; dir_count];
    let mut depth = vec![0u32; dir_count];
    let mut dir_path = vec![TOP.to_string()];
    for i in 1..dir_count {
        let mut p;
        loop {
            // u^3 favours early (shallow) directories.
            let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            p = ((i as f64) * u * u * u) as usize;
            if depth[p] < model.max_depth {
                break;
            }
        }
        parent[i] = p;
        depth[i] = depth[p] + 1;
        let n = name(&mut rng, i as u64, "");
        dir_path.push(format!("{}/{n}", dir_path[p]));
    }
    let project = project::Project::new(units.min(model.files.saturating_sub(3)), dir_count)
        .with_makefile(|d| {
            dir_path[d]
                .strip_prefix(TOP)
                .unwrap_or("")
                .trim_start_matches('/')
                .to_string()
        });
    let text_files = model.files - project.files.len() as u64;
    // Files per directory: weights from a Pareto draw (alpha 1.1).
    let weights: Vec<f64> = (0..dir_count)
        .map(|_| {
            let u = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
            u.powf(-1.0 / 1.1)
        })
        .collect();
    let total_weight: f64 = weights.iter().sum();
    let mut per_dir: Vec<u64> = weights
        .iter()
        .map(|w| (text_files as f64 * w / total_weight).floor() as u64)
        .collect();
    let assigned: u64 = per_dir.iter().sum();
    for k in 0..(text_files - assigned) {
        per_dir[(rng.next_u64() % dir_count as u64) as usize] += 1;
        let _ = k;
    }
    // Sizes.
    let mut sizes: Vec<f64> = (0..text_files)
        .map(|_| log_normal(&mut rng, model.size_mu, model.size_sigma).min(model.max_file as f64))
        .collect();
    let project_bytes: u64 = project.files.iter().map(|f| f.content.len() as u64).sum();
    let text_bytes = model.bytes.saturating_sub(project_bytes);
    let raw: f64 = sizes.iter().sum();
    if raw > 0.0 {
        let factor = text_bytes as f64 / raw;
        for s in &mut sizes {
            *s *= factor;
        }
    }
    let mut int_sizes: Vec<u64> = sizes.iter().map(|s| s.floor() as u64).collect();
    let short = text_bytes.saturating_sub(int_sizes.iter().sum());
    if let Some(last) = int_sizes.last_mut() {
        *last += short;
    }
    // Entries in archive order: each directory, then its files.
    let mut entries = Vec::with_capacity(dir_count + model.files as usize);
    let mut file_paths = Vec::with_capacity(text_files as usize);
    let mut next_size = int_sizes.into_iter();
    let mut file_index = 0u64;
    for d in 0..dir_count {
        entries.push(Entry {
            kind: Kind::Dir,
            path: dir_path[d].clone(),
            size: 0,
            link: String::new(),
            seed: 0,
        });
        for (i, file) in project.files.iter().enumerate() {
            if file.dir == d {
                entries.push(Entry {
                    kind: Kind::Project(i),
                    path: format!("{}/{}", dir_path[d], file.name),
                    size: file.content.len() as u64,
                    link: String::new(),
                    seed: 0,
                });
            }
        }
        for _ in 0..per_dir[d] {
            let ext = [".c", ".h", ".c", ".txt", ".S", ".rst"][(rng.next_u64() % 6) as usize];
            let path = format!("{}/{}", dir_path[d], name(&mut rng, file_index, ext));
            file_paths.push((d, path.clone()));
            entries.push(Entry {
                kind: Kind::Text,
                path,
                size: next_size.next().unwrap_or(0),
                link: String::new(),
                seed: seed ^ file_index.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            });
            file_index += 1;
        }
    }
    // Symlinks: in a random directory, to a random text file, by a relative path.
    for k in 0..model.symlinks {
        if file_paths.is_empty() {
            break;
        }
        let d = (rng.next_u64() % dir_count as u64) as usize;
        let (_, target) = &file_paths[(rng.next_u64() % file_paths.len() as u64) as usize];
        let ups = "../".repeat(depth[d] as usize + 1);
        entries.push(Entry {
            kind: Kind::Symlink,
            path: format!("{}/{}", dir_path[d], name(&mut rng, k, ".lnk")),
            size: 0,
            link: format!("{ups}{target}"),
            seed: 0,
        });
    }
    let mut totals = Totals {
        dirs: dir_count as u64,
        ..Totals::default()
    };
    for e in &entries {
        match e.kind {
            Kind::Text | Kind::Project(_) => {
                totals.files += 1;
                totals.bytes += e.size;
            }
            Kind::Symlink => totals.symlinks += 1,
            Kind::Dir => {}
        }
    }
    Tree {
        entries,
        project,
        totals,
    }
}

/// Text modelled on C source: indented lines of identifiers, keywords and punctuation drawn
/// from a small vocabulary, so it compresses as source code does (bzip2 about 5:1) rather
/// than not at all. A `Read` that yields exactly `len` bytes.
pub struct TextContent {
    rng: Rng,
    left: u64,
    line: Vec<u8>,
    at: usize,
}

const WORDS: [&str; 48] = [
    "static",
    "int",
    "struct",
    "return",
    "if",
    "else",
    "for",
    "unsigned",
    "long",
    "const",
    "void",
    "char",
    "u32",
    "u64",
    "size_t",
    "NULL",
    "sizeof",
    "goto",
    "err",
    "out",
    "dev",
    "ret",
    "flags",
    "len",
    "buf",
    "priv",
    "data",
    "lock",
    "spin_lock",
    "mutex",
    "kfree",
    "kmalloc",
    "GFP_KERNEL",
    "EINVAL",
    "ENOMEM",
    "list",
    "node",
    "page",
    "inode",
    "file",
    "i",
    "j",
    "count",
    "offset",
    "state",
    "entry",
    "ops",
    "irq",
];
const PUNCT: [&str; 12] = [
    " = ", "(", ")", "; ", " + ", "->", ", ", " == ", " & ", "[", "]", " ",
];

impl TextContent {
    pub fn new(seed: u64, len: u64) -> TextContent {
        TextContent {
            rng: Rng::new(seed),
            left: len,
            line: Vec::with_capacity(160),
            at: 0,
        }
    }

    fn next_line(&mut self) {
        self.line.clear();
        self.at = 0;
        let r = self.rng.next_u64();
        let indent = (r % 4) as usize;
        self.line.extend(std::iter::repeat_n(b'\t', indent));
        let words = 2 + (r >> 8) % 9;
        let mut bits = self.rng.next_u64();
        for w in 0..words {
            if w % 8 == 7 {
                bits = self.rng.next_u64();
            }
            self.line
                .extend_from_slice(WORDS[(bits % 48) as usize].as_bytes());
            bits >>= 6;
            self.line
                .extend_from_slice(PUNCT[(bits % 12) as usize].as_bytes());
            bits >>= 2;
        }
        self.line.push(b'\n');
    }
}

impl Read for TextContent {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < out.len() && self.left > 0 {
            if self.at == self.line.len() {
                self.next_line();
            }
            let take = (self.line.len() - self.at)
                .min(out.len() - n)
                .min(self.left as usize);
            out[n..n + take].copy_from_slice(&self.line[self.at..self.at + take]);
            self.at += take;
            n += take;
            self.left -= take as u64;
        }
        Ok(n)
    }
}

/// How the tarball is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Compression {
    None,
    Gzip,
    /// As studies 000 and 001 (`tar xjf`).
    #[default]
    Bzip2,
    Xz,
}

impl Compression {
    pub const ALL: [Compression; 4] = [
        Compression::None,
        Compression::Gzip,
        Compression::Bzip2,
        Compression::Xz,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
            Compression::Xz => "xz",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Compression::None => "tar",
            Compression::Gzip => "tar.gz",
            Compression::Bzip2 => "tar.bz2",
            Compression::Xz => "tar.xz",
        }
    }

    /// GNU tar's flag for it (as the studies typed it).
    pub fn tar_flag(self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            Compression::Gzip => Some("-z"),
            Compression::Bzip2 => Some("-j"),
            Compression::Xz => Some("-J"),
        }
    }

    /// The program GNU tar runs for it.
    pub fn program(self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            Compression::Gzip => Some("gzip"),
            Compression::Bzip2 => Some("bzip2"),
            Compression::Xz => Some("xz"),
        }
    }

    /// By the file's first bytes (what GNU tar does too).
    pub fn sniff(head: &[u8]) -> Option<Compression> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Compression::Gzip)
        } else if head.starts_with(b"BZh") {
            Some(Compression::Bzip2)
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Some(Compression::Xz)
        } else if head.len() >= 262 && &head[257..262] == b"ustar" {
            Some(Compression::None)
        } else {
            None
        }
    }

    /// A reader that decompresses `inner`.
    pub fn reader<'a>(self, inner: impl Read + 'a) -> Box<dyn Read + 'a> {
        match self {
            Compression::None => Box::new(inner),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(inner)),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(inner)),
            Compression::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(inner)),
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Compression {
    type Err = String;
    fn from_str(s: &str) -> Result<Compression, String> {
        Compression::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("unknown compression '{s}': use none, gzip, bzip2 or xz"))
    }
}

fsbench_model::text_serde!(Compression);

/// Writes the tree as a tar archive (GNU format, owner root, mtime fixed, so the bytes depend
/// on the seed alone), compressed as asked, to `out`.
pub fn pack(tree: &Tree, compression: Compression, out: impl Write) -> io::Result<()> {
    encode(compression, out, |w| pack_into(tree, w).map(drop))
}

/// Writes what `fill` writes to `out`, compressed as asked: gzip -6, bzip2 -9 (what `bzip2`
/// and `tar cjf` make) or xz -3, by the `flate2`, `bzip2` and `liblzma` crates.
pub fn encode<W: Write>(
    compression: Compression,
    mut out: W,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    match compression {
        Compression::None => {
            fill(&mut out)?;
            out.flush()
        }
        Compression::Gzip => {
            let mut e = flate2::write::GzEncoder::new(out, flate2::Compression::new(6));
            fill(&mut e)?;
            e.finish()?.flush()
        }
        Compression::Bzip2 => {
            let mut e = bzip2::write::BzEncoder::new(out, bzip2::Compression::new(9));
            fill(&mut e)?;
            e.finish()?.flush()
        }
        Compression::Xz => {
            let mut e = liblzma::write::XzEncoder::new(out, 3);
            fill(&mut e)?;
            e.finish()?.flush()
        }
    }
}

/// 2020-01-01: every entry's mtime.
const MTIME: u64 = 1_577_836_800;

fn pack_into<W: Write>(tree: &Tree, out: W) -> io::Result<W> {
    let mut builder = tar::Builder::new(out);
    for e in &tree.entries {
        let mut header = tar::Header::new_gnu();
        header.set_mtime(MTIME);
        header.set_uid(0);
        header.set_gid(0);
        match e.kind {
            Kind::Dir => {
                header.set_entry_type(tar::EntryType::Directory);
                header.set_mode(0o755);
                header.set_size(0);
                builder.append_data(&mut header, format!("{}/", e.path), io::empty())?;
            }
            Kind::Symlink => {
                header.set_entry_type(tar::EntryType::Symlink);
                header.set_mode(0o777);
                header.set_size(0);
                builder.append_link(&mut header, &e.path, &e.link)?;
            }
            Kind::Text => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o644);
                header.set_size(e.size);
                builder.append_data(&mut header, &e.path, TextContent::new(e.seed, e.size))?;
            }
            Kind::Project(i) => {
                header.set_entry_type(tar::EntryType::Regular);
                header.set_mode(0o644);
                let content = tree.project.files[i].content.as_bytes();
                header.set_size(content.len() as u64);
                builder.append_data(&mut header, &e.path, content)?;
            }
        }
    }
    builder.into_inner()
}

/// Why a user's tree could not be packed.
#[derive(Debug)]
pub enum PackError {
    /// A mount point inside it (another filesystem, or a bind mount): not packed across.
    Mount(std::path::PathBuf),
    Io(io::Error),
}

impl From<io::Error> for PackError {
    fn from(e: io::Error) -> PackError {
        PackError::Io(e)
    }
}

/// Packs the user's directory `source` into an uncompressed tar on `out`, as `top/...`,
/// symlinks kept as symlinks (never followed), devices and FIFOs as such. It never crosses a
/// mount: each name is opened from its parent's descriptor (`fsbench_measure::walk`), and a
/// mount point inside — another filesystem, or a bind mount, of the data directory the
/// archive is written to, say, which would be packed into itself — ends it, named.
pub fn pack_dir<W: Write>(source: &Path, top: &str, out: W) -> Result<W, PackError> {
    let mut builder = tar::Builder::new(out);
    // A symlink given as the source is followed, as the user named it.
    let dir = std::fs::File::open(source)?;
    let meta = dir.metadata()?;
    if !meta.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::ENOTDIR).into());
    }
    let top = Path::new(top);
    append_meta(&mut builder, &meta, top)?;
    pack_level(&mut builder, &dir, source, top)?;
    Ok(builder.into_inner()?)
}

fn pack_level<W: Write>(
    builder: &mut tar::Builder<W>,
    dir: &std::fs::File,
    path: &Path,
    dest: &Path,
) -> Result<(), PackError> {
    use fsbench_measure::walk::{entries, open_entry, Entry};
    use std::os::fd::AsFd;
    use std::os::unix::ffi::OsStrExt;
    for (name, _) in entries(dir.as_fd())? {
        let os = std::ffi::OsStr::from_bytes(name.to_bytes());
        let (here, to) = (path.join(os), dest.join(os));
        let open = |flags| match open_entry(dir.as_fd(), &name, flags)? {
            Entry::Open(fd) => Ok(Some(std::fs::File::from(fd))),
            Entry::Mount => Err(PackError::Mount(here.clone())),
            Entry::Gone => Ok(None),
        };
        // What the name is, without following it or entering a mount.
        let Some(entry) = open(libc::O_PATH)? else {
            continue;
        };
        let meta = entry.metadata()?;
        let kind = meta.file_type();
        if kind.is_dir() {
            let Some(sub) = open(libc::O_RDONLY | libc::O_DIRECTORY)? else {
                continue;
            };
            append_meta(builder, &meta, &to)?;
            pack_level(builder, &sub, &here, &to)?;
        } else if kind.is_file() {
            // O_NONBLOCK: a FIFO put in its place since is not waited on (and is refused).
            let Some(mut file) = open(libc::O_RDONLY | libc::O_NONBLOCK)? else {
                continue;
            };
            if !file.metadata()?.is_file() {
                return Err(io::Error::other(format!(
                    "{} was replaced while it was packed",
                    here.display()
                ))
                .into());
            }
            builder.append_file(&to, &mut file)?;
        } else if kind.is_symlink() {
            let mut buf = vec![0u8; libc::PATH_MAX as usize + 1];
            let target = crate::fileio::at::readlinkat(
                std::os::fd::AsRawFd::as_raw_fd(dir),
                &name,
                &mut buf,
            )?;
            let mut header = tar::Header::new_gnu();
            header.set_metadata_in_mode(&meta, tar::HeaderMode::Complete);
            header.set_size(0);
            builder.append_link(&mut header, &to, std::ffi::OsStr::from_bytes(target))?;
        } else {
            append_meta(builder, &meta, &to)?;
        }
    }
    Ok(())
}

/// Appends an entry without contents (a directory, a device, a FIFO) with `meta`'s type,
/// mode, owner and times; a socket cannot be archived, as the `tar` crate says.
fn append_meta<W: Write>(
    builder: &mut tar::Builder<W>,
    meta: &std::fs::Metadata,
    to: &Path,
) -> io::Result<()> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let kind = meta.file_type();
    if kind.is_socket() {
        return Err(io::Error::other(format!(
            "{}: socket can not be archived",
            to.display()
        )));
    }
    let mut header = tar::Header::new_gnu();
    header.set_metadata_in_mode(meta, tar::HeaderMode::Complete);
    header.set_size(0);
    if kind.is_block_device() || kind.is_char_device() {
        let rdev = meta.rdev();
        header.set_device_major(libc::major(rdev))?;
        header.set_device_minor(libc::minor(rdev))?;
    }
    builder.append_data(&mut header, to, io::empty())
}

/// Makes `path` unless it is there already ([`crate::fileio::create_once`]).
pub fn pack_to_file(tree: &Tree, compression: Compression, path: &Path) -> io::Result<()> {
    crate::fileio::create_once(path, |file| {
        pack(
            tree,
            compression,
            io::BufWriter::with_capacity(1 << 20, file),
        )
    })
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Model {
        scaled(&LINUX_6_1, 0.005)
    }

    #[test]
    fn the_tree_has_the_modelled_counts_and_bytes() {
        let model = small();
        let tree = generate(&model, 20, 7);
        assert_eq!(tree.totals.files, model.files);
        assert_eq!(tree.totals.dirs, model.dirs + 1);
        assert_eq!(tree.totals.symlinks, model.symlinks);
        assert_eq!(tree.totals.bytes, model.bytes);
        let depth = tree
            .entries
            .iter()
            .map(|e| e.path.matches('/').count())
            .max()
            .unwrap();
        assert!(depth <= model.max_depth as usize + 1, "{depth}");
        // Unique paths.
        let mut paths: Vec<_> = tree.entries.iter().map(|e| &e.path).collect();
        paths.sort();
        paths.dedup();
        assert_eq!(paths.len(), tree.entries.len());
    }

    #[test]
    fn the_full_model_matches_the_counted_kernel_tree() {
        let tree = generate(&LINUX_6_1, 400, 1);
        assert_eq!(tree.totals.files, 78_579);
        assert_eq!(tree.totals.dirs, 5_096);
        assert_eq!(tree.totals.symlinks, 56);
        assert_eq!(tree.totals.bytes, 1_298_681_992);
        let mut sizes: Vec<u64> = tree
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Text)
            .map(|e| e.size)
            .collect();
        sizes.sort();
        let median = sizes[sizes.len() / 2];
        // The kernel's median file is 3,874 bytes; the rescaling to the exact total moves it.
        assert!((2_500..8_000).contains(&median), "median {median}");
        let depths: Vec<usize> = tree
            .entries
            .iter()
            .filter(|e| e.kind == Kind::Dir)
            .map(|e| e.path.matches('/').count())
            .collect();
        let mut d = depths.clone();
        d.sort();
        assert!(
            (2..=5).contains(&d[d.len() / 2]),
            "median depth {}",
            d[d.len() / 2]
        );
    }

    #[test]
    fn packing_is_byte_identical_for_a_seed_and_differs_for_another() {
        let model = scaled(&LINUX_6_1, 0.001);
        for compression in Compression::ALL {
            let bytes = |seed| {
                let mut out = Vec::new();
                pack(&generate(&model, 10, seed), compression, &mut out).unwrap();
                out
            };
            let a = bytes(1);
            assert_eq!(a, bytes(1), "{compression}");
            assert_ne!(a, bytes(2), "{compression}");
            assert_eq!(Compression::sniff(&a), Some(compression));
        }
    }

    #[test]
    fn text_compresses_like_source_code() {
        let mut text = Vec::new();
        TextContent::new(3, 1 << 20).read_to_end(&mut text).unwrap();
        assert_eq!(text.len(), 1 << 20);
        let mut packed = Vec::new();
        let mut enc = bzip2::write::BzEncoder::new(&mut packed, bzip2::Compression::new(9));
        enc.write_all(&text).unwrap();
        enc.finish().unwrap();
        let ratio = text.len() as f64 / packed.len() as f64;
        assert!((2.5..8.0).contains(&ratio), "bzip2 ratio {ratio}");
    }

    /// The entries of an uncompressed tar: (path, type, size, link target).
    fn listed(tar: &[u8]) -> Vec<(String, tar::EntryType, u64, String)> {
        let mut archive = tar::Archive::new(tar);
        let mut listed: Vec<_> = archive
            .entries()
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                let link = e
                    .link_name()
                    .unwrap()
                    .map(|l| l.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (
                    e.path().unwrap().to_string_lossy().into_owned(),
                    e.header().entry_type(),
                    e.size(),
                    link,
                )
            })
            .collect();
        listed.sort_by(|a, b| a.0.cmp(&b.0));
        listed
    }

    /// A user's tree is packed whole under its top name: directories, files with their bytes,
    /// symlinks as symlinks (one pointing out of the tree is not followed).
    #[test]
    fn a_users_tree_is_packed_with_its_symlinks_as_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        std::fs::create_dir_all(src.join("sub/deeper")).unwrap();
        std::fs::write(src.join("a.c"), "int a;\n").unwrap();
        std::fs::write(src.join("sub/deeper/b.h"), vec![7u8; 10_000]).unwrap();
        std::os::unix::fs::symlink("a.c", src.join("link")).unwrap();
        std::os::unix::fs::symlink(dir.path(), src.join("out")).unwrap();
        let tar = pack_dir(&src, "project", Vec::new()).unwrap();
        let names: Vec<(String, tar::EntryType, u64, String)> = listed(&tar)
            .into_iter()
            .map(|(p, t, s, l)| (p.trim_end_matches('/').to_string(), t, s, l))
            .collect();
        let dir_ = tar::EntryType::Directory;
        let file = tar::EntryType::Regular;
        let link = tar::EntryType::Symlink;
        let out = dir.path().to_string_lossy().into_owned();
        assert_eq!(
            names,
            [
                ("project".into(), dir_, 0, String::new()),
                ("project/a.c".into(), file, 7, String::new()),
                ("project/link".into(), link, 0, "a.c".into()),
                ("project/out".into(), link, 0, out),
                ("project/sub".into(), dir_, 0, String::new()),
                ("project/sub/deeper".into(), dir_, 0, String::new()),
                ("project/sub/deeper/b.h".into(), file, 10_000, String::new()),
            ]
        );
    }

    /// Issue 35: a bind mount of the data directory inside `--source` packed the archive being
    /// written into itself. A mount point inside the tree (a tmpfs here) ends the packing,
    /// named, before anything of it is packed.
    #[test]
    #[allow(clippy::print_stderr)] // the test's own note that it was skipped
    fn a_mount_inside_a_users_tree_is_not_packed_across() {
        if !fsbench_measure::trust::as_root() {
            assert!(std::env::var_os("CI").is_none(), "CI must run this as root");
            eprintln!("skipped: needs root (mount)");
            return;
        }
        let dir = tempfile::Builder::new()
            .prefix("fsbench-test-pack-")
            .tempdir_in("/var/tmp")
            .unwrap();
        let src = dir.path().join("src");
        let point = src.join("sub/mnt");
        std::fs::create_dir_all(&point).unwrap();
        std::fs::write(src.join("a.c"), "int a;\n").unwrap();
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "fsbench-test"])
            .arg(&point)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "mount a tmpfs");
        std::fs::write(point.join("elsewhere"), "x").unwrap();
        let packed = pack_dir(&src, "src", Vec::new());
        let _ = std::process::Command::new("umount").arg(&point).status();
        match packed {
            Err(PackError::Mount(at)) => assert_eq!(at, point),
            Err(PackError::Io(e)) => panic!("{e}"),
            Ok(tar) => panic!("packed across the mount: {:?}", listed(&tar)),
        }
    }
}
