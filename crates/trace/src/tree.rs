//! The tree the application found under the recorded root: names, types, sizes and modes by
//! `lstat` — never the contents. The replay recreates it, untimed, before its first call.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

use serde::{Deserialize, Serialize};

/// One entry under the root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Node {
    /// Root-relative, `/`-separated ([`crate::path`]).
    pub path: String,
    #[serde(flatten)]
    pub kind: NodeKind,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum NodeKind {
    Dir,
    /// A regular file of `size` bytes (recreated with incompressible data).
    File {
        size: u64,
    },
    /// A symbolic link and its contents, as stored (never followed).
    Symlink {
        target: String,
    },
    /// A FIFO, socket or device: recorded so a replay can say what it did not recreate.
    Other,
}

/// What [`walk`] left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Walked {
    pub nodes: Vec<Node>,
    /// Directories on another filesystem (mount points under the root): named, not entered.
    pub mount_points: Vec<String>,
}

/// The tree under `root`, parents before children, names sorted; does not follow symbolic
/// links or cross into other filesystems.
pub fn walk(root: &Path) -> io::Result<Walked> {
    let device = fs::symlink_metadata(root)?.dev();
    let mut walked = Walked::default();
    let mut pending = vec![String::new()];
    while let Some(dir) = pending.pop() {
        let full = if dir.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&dir)
        };
        let mut names: Vec<_> = fs::read_dir(&full)?
            .map(|entry| entry.map(|e| e.file_name()))
            .collect::<io::Result<_>>()?;
        names.sort();
        let mut subdirs = Vec::new();
        for name in names {
            let Some(name) = name.to_str().map(str::to_owned) else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: a name that is not UTF-8 under the root",
                        full.display()
                    ),
                ));
            };
            let rel = if dir.is_empty() {
                name
            } else {
                format!("{dir}/{name}")
            };
            let meta = fs::symlink_metadata(root.join(&rel))?;
            let kind = if meta.file_type().is_symlink() {
                let target = fs::read_link(root.join(&rel))?;
                NodeKind::Symlink {
                    target: target.to_string_lossy().into_owned(),
                }
            } else if meta.is_dir() {
                if meta.dev() != device {
                    walked.mount_points.push(rel);
                    continue;
                }
                subdirs.push(rel.clone());
                NodeKind::Dir
            } else if meta.is_file() {
                NodeKind::File { size: meta.len() }
            } else {
                let ft = meta.file_type();
                debug_assert!(
                    ft.is_fifo() || ft.is_socket() || ft.is_block_device() || ft.is_char_device()
                );
                NodeKind::Other
            };
            walked.nodes.push(Node {
                path: rel,
                kind,
                mode: meta.mode() & 0o7777,
            });
        }
        // Depth-first, in name order: reversed onto the stack.
        pending.extend(subdirs.into_iter().rev());
    }
    Ok(walked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tree_is_walked_parents_first_without_following_links() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("a/b")).unwrap();
        fs::write(root.join("a/b/f"), vec![0u8; 1234]).unwrap();
        fs::write(root.join("z"), b"x").unwrap();
        std::os::unix::fs::symlink("../z", root.join("a/link")).unwrap();
        let walked = walk(root).unwrap();
        let paths: Vec<_> = walked.nodes.iter().map(|n| n.path.as_str()).collect();
        assert_eq!(paths, ["a", "z", "a/b", "a/link", "a/b/f"]);
        let f = walked.nodes.iter().find(|n| n.path == "a/b/f").unwrap();
        assert_eq!(f.kind, NodeKind::File { size: 1234 });
        let link = walked.nodes.iter().find(|n| n.path == "a/link").unwrap();
        assert_eq!(
            link.kind,
            NodeKind::Symlink {
                target: "../z".into()
            }
        );
        for node in &walked.nodes {
            if let Some((parent, _)) = node.path.rsplit_once('/') {
                let at = |p: &str| walked.nodes.iter().position(|n| n.path == p).unwrap();
                assert!(
                    at(parent) < at(&node.path),
                    "{} before its parent",
                    node.path
                );
            }
        }
    }
}
