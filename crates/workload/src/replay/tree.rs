//! The tree the application found, made again before the replay, untimed: directories, files
//! of their recorded sizes filled with incompressible data, symbolic links with their recorded
//! contents, and the recorded modes. Checked first: every path relative and inside the root,
//! every entry's parent a directory the tree itself makes (so no entry is ever made through a
//! symbolic link), and the whole fitting the free space with a margin.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use fsbench_trace::{path, Node, NodeKind};

use crate::data::{DataKind, DataSource};
use crate::workload::{check_room, Footprint};
use crate::WorkloadError;

/// Files are written in records of this size.
const RECORD: usize = 1 << 20;
/// What each entry takes besides its data (an inode, a directory entry, a block's rounding).
const PER_ENTRY: u64 = 4096;

/// What the tree holds.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TreeSize {
    pub dirs: u64,
    pub files: u64,
    pub links: u64,
    /// FIFOs, sockets and devices: listed in the trace, not made.
    pub others: u64,
    pub bytes: u64,
}

/// Checks the tree's paths and structure; its size.
pub fn check(tree: &[Node]) -> Result<TreeSize, WorkloadError> {
    let mut size = TreeSize::default();
    let mut dirs: HashSet<&str> = HashSet::from(["."]);
    let mut seen: HashSet<&str> = HashSet::new();
    for node in tree {
        let bad = |why: String| {
            WorkloadError::invalid(
                "trace",
                format!("the trace's initial tree: {why}; the trace is damaged — record it again"),
            )
        };
        path::check(&node.path).map_err(|e| bad(e.to_string()))?;
        if node.path == "." {
            continue;
        }
        if !seen.insert(&node.path) {
            return Err(bad(format!("{:?} is listed twice", node.path)));
        }
        if !dirs.contains(path::parent(&node.path)) {
            return Err(bad(format!(
                "{:?} comes before its directory, or its directory is not one",
                node.path
            )));
        }
        match &node.kind {
            NodeKind::Dir => {
                size.dirs += 1;
                dirs.insert(&node.path);
            }
            NodeKind::File { size: bytes } => {
                size.files += 1;
                size.bytes += bytes;
            }
            NodeKind::Symlink { target } => {
                if target.contains('\0') {
                    return Err(bad(format!("{:?} links to a name with a NUL", node.path)));
                }
                size.links += 1;
            }
            NodeKind::Other => size.others += 1,
        }
    }
    Ok(size)
}

/// The room the tree takes in `dir`, with a margin (a tenth, at least 1 MiB), checked against
/// its free space: the error says what it needs and what there is.
pub fn room(size: &TreeSize, dir: &Path) -> Result<(), WorkloadError> {
    let entries = size.dirs + size.files + size.links;
    let data = size.bytes.next_multiple_of(4096) + entries * PER_ENTRY;
    let bytes = data + (data / 10).max(1 << 20);
    check_room(
        &Footprint {
            bytes,
            inodes: entries,
            what: format!(
                "the trace's initial tree ({} in {} files, {} directories, and a margin)",
                fsbench_measure::units::human_bytes(size.bytes),
                size.files,
                size.dirs
            ),
            setting: "trace",
            advice: "replay it on a larger filesystem, or record the application on a smaller tree"
                .into(),
        },
        dir,
    )
}

/// Makes the (checked) tree under `root`; modes last, deepest first, so a read-only
/// directory is filled before it becomes read-only.
pub fn make(tree: &[Node], root: &Path, seed: u64) -> Result<(), WorkloadError> {
    let mut data = DataSource::new(DataKind::Random, seed, RECORD);
    for node in tree.iter().filter(|n| n.path != ".") {
        let at = root.join(&node.path);
        let made = match &node.kind {
            NodeKind::Dir => std::fs::create_dir(&at),
            NodeKind::File { size } => fill(&at, *size, &mut data),
            NodeKind::Symlink { target } => std::os::unix::fs::symlink(target, &at),
            NodeKind::Other => Ok(()),
        };
        made.map_err(|e| WorkloadError::io("make the trace's initial tree at", &at, e))?;
    }
    for node in tree.iter().rev().filter(|n| n.path != ".") {
        if matches!(node.kind, NodeKind::Dir | NodeKind::File { .. }) {
            let at = root.join(&node.path);
            std::fs::set_permissions(&at, std::fs::Permissions::from_mode(node.mode & 0o7777))
                .map_err(|e| WorkloadError::io("set the recorded mode of", &at, e))?;
        }
    }
    Ok(())
}

fn fill(at: &Path, size: u64, data: &mut DataSource) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(at)?;
    let mut left = size;
    while left > 0 {
        let n = left.min(RECORD as u64) as usize;
        file.write_all(data.next(n))?;
        left -= n as u64;
    }
    Ok(())
}
