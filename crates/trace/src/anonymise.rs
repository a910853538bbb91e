//! Names hashed away: every path component (and every symbolic link's target component) is
//! replaced by a keyed hash of it, the same name giving the same hash throughout the trace so
//! the structure (which calls name the same file, which files share a directory) is kept, as
//! are sizes, types, offsets and timing. The key is random and never stored: the names cannot
//! be recovered from the trace, even by guessing them.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use crate::event::Op;
use crate::format::Trace;

/// Replaces the trace's names, command line, root and host name.
pub fn anonymise(trace: &mut Trace) {
    let mut names = Names::default();
    trace.header.command = vec!["(anonymised)".into()];
    trace.header.root = String::new();
    trace.header.host = String::new();
    trace.header.anonymised = true;
    for node in &mut trace.tree {
        node.path = names.path(&node.path);
        if let crate::tree::NodeKind::Symlink { target } = &mut node.kind {
            *target = names.path(target);
        }
    }
    for event in &mut trace.events {
        match &mut event.op {
            Op::Open { path, .. }
            | Op::Truncate { path, .. }
            | Op::Stat { path, .. }
            | Op::Access { path, .. }
            | Op::Mkdir { path, .. }
            | Op::Rmdir { path }
            | Op::Unlink { path }
            | Op::Readlink { path }
            | Op::Chmod { path, .. }
            | Op::Chown { path, .. }
            | Op::Utimes { path } => *path = names.path(path),
            Op::Symlink { target, path } => {
                *target = names.path(target);
                *path = names.path(path);
            }
            Op::Rename { from, to, .. } | Op::Link { from, to } => {
                *from = names.path(from);
                *to = names.path(to);
            }
            _ => {}
        }
    }
}

#[derive(Default)]
struct Names {
    key: std::collections::hash_map::RandomState,
    seen: HashMap<String, String>,
}

impl Names {
    /// `a/b/../c` → `n…/n…/../n…`: `.`, `..` and the separators are kept, names hashed.
    fn path(&mut self, path: &str) -> String {
        let absolute = path.starts_with('/');
        let parts: Vec<String> = path
            .split('/')
            .map(|part| match part {
                "" | "." | ".." => part.to_owned(),
                name => self.name(name),
            })
            .collect();
        let joined = parts.join("/");
        debug_assert_eq!(absolute, joined.starts_with('/'));
        joined
    }

    fn name(&mut self, name: &str) -> String {
        if let Some(hashed) = self.seen.get(name) {
            return hashed.clone();
        }
        let mut hasher = self.key.build_hasher();
        hasher.write(name.as_bytes());
        let hashed = format!("n{:016x}", hasher.finish());
        self.seen.insert(name.to_owned(), hashed.clone());
        hashed
    }
}
