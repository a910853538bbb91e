//! The dependency rule (after ROOT, Weiss et al., SOSP'13; docs/workloads/replay.md): each call
//! touches resources — the name it uses, the file that name (or its descriptor) stands for,
//! and, for calls that add, remove or list names, the directory's listing — and waits until
//! the latest earlier call (by recorded start) of another thread on any of them has completed
//! in the replay. Resolved once, untimed; a file keeps its identity across renames and links,
//! so a descriptor opened before a rename and a name opened after it are the same file.

use std::collections::{BTreeMap, HashMap};

/// A call of a thread: its `seq`-th call. Waiting for it is waiting until the thread has
/// completed `seq + 1` calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dep {
    pub thread: u32,
    pub seq: u32,
}

const NONE: u32 = u32::MAX;

/// Every resource seen so far and the latest call on each.
#[derive(Default)]
pub struct Resources {
    names: HashMap<String, u32>,
    listings: HashMap<String, u32>,
    /// The file each name stands for now (files are resources too).
    files: BTreeMap<String, u32>,
    last: Vec<u32>,
    pending: Vec<u32>,
    changes: Vec<Change>,
}

/// How a successful call changes which file a name stands for (applied after its resources).
enum Change {
    Unlinked(String),
    Renamed(String, String),
    Linked(String, String),
}

/// The resources one call touches, gathered before [`Touched::finish`].
pub struct Touched<'a>(&'a mut Resources);

impl Resources {
    pub fn begin(&mut self) -> Touched<'_> {
        self.pending.clear();
        self.changes.clear();
        Touched(self)
    }

    fn new_resource(&mut self) -> u32 {
        self.last.push(NONE);
        (self.last.len() - 1) as u32
    }

    fn file(&mut self, path: &str) -> u32 {
        if let Some(&f) = self.files.get(path) {
            return f;
        }
        let f = self.new_resource();
        self.files.insert(path.to_owned(), f);
        f
    }

    /// `path` and every name under it, as (name, file), removed from the map.
    fn take_tree(&mut self, path: &str) -> Vec<(String, u32)> {
        let mut taken = Vec::new();
        if let Some(f) = self.files.remove(path) {
            taken.push((path.to_owned(), f));
        }
        let prefix = format!("{path}/");
        let under: Vec<String> = self
            .files
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .map(|(k, _)| k.clone())
            .collect();
        for k in under {
            let f = self.files.remove(&k).expect("listed");
            taken.push((k, f));
        }
        taken
    }
}

impl Touched<'_> {
    /// A call naming `path`: the name, and the file it stands for.
    pub fn name(&mut self, path: &str) {
        let r = &mut *self.0;
        let n = match r.names.get(path) {
            Some(&n) => n,
            None => {
                let n = r.new_resource();
                r.names.insert(path.to_owned(), n);
                n
            }
        };
        let f = r.file(path);
        r.pending.push(n);
        r.pending.push(f);
    }

    /// The file `path` stands for now (what a descriptor opened on it will stand for).
    pub fn file_of(&mut self, path: &str) -> u32 {
        self.0.file(path)
    }

    /// A call on a descriptor: the file it was opened on.
    pub fn file(&mut self, file: u32) {
        self.0.pending.push(file);
    }

    /// A call that adds or removes a name in `dir`, or lists it: the directory's listing.
    pub fn dir(&mut self, dir: &str) {
        let r = &mut *self.0;
        let d = match r.listings.get(dir) {
            Some(&d) => d,
            None => {
                let d = r.new_resource();
                r.listings.insert(dir.to_owned(), d);
                d
            }
        };
        r.pending.push(d);
    }

    pub fn unlinked(&mut self, path: &str) {
        self.0.changes.push(Change::Unlinked(path.to_owned()));
    }

    pub fn renamed(&mut self, from: &str, to: &str) {
        self.0
            .changes
            .push(Change::Renamed(from.to_owned(), to.to_owned()));
    }

    pub fn linked(&mut self, from: &str, to: &str) {
        self.0
            .changes
            .push(Change::Linked(from.to_owned(), to.to_owned()));
    }

    /// Ends the call `call`: the latest earlier call on each of its resources (each once), and
    /// the call made the latest on them; then the names it changed.
    pub fn finish(self, call: u32) -> Vec<u32> {
        let r = self.0;
        let mut before = Vec::with_capacity(r.pending.len());
        for &res in &r.pending {
            let last = std::mem::replace(&mut r.last[res as usize], call);
            if last != NONE && last != call && !before.contains(&last) {
                before.push(last);
            }
        }
        for change in std::mem::take(&mut r.changes) {
            match change {
                Change::Unlinked(path) => {
                    r.files.remove(&path);
                }
                Change::Renamed(from, to) => {
                    r.take_tree(&to);
                    for (name, f) in r.take_tree(&from) {
                        let moved = format!("{to}{}", &name[from.len()..]);
                        r.files.insert(moved, f);
                    }
                }
                Change::Linked(from, to) => {
                    let f = r.file(&from);
                    r.files.insert(to, f);
                }
            }
        }
        before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name's file follows it through a rename: the old descriptor's file and the new name
    /// are one resource; an unlinked name's next file is another.
    #[test]
    fn files_keep_their_identity_across_renames_and_links() {
        let mut r = Resources::default();
        let mut t = r.begin();
        let a = t.file_of("d/a");
        t.name("d/a");
        assert!(t.finish(0).is_empty());
        let mut t = r.begin();
        t.renamed("d", "e");
        t.name("d");
        t.finish(1);
        let mut t = r.begin();
        assert_eq!(t.file_of("e/a"), a, "moved with its directory");
        t.linked("e/a", "b");
        t.finish(2);
        let mut t = r.begin();
        assert_eq!(t.file_of("b"), a, "a link names the same file");
        t.unlinked("b");
        t.finish(3);
        let mut t = r.begin();
        assert_ne!(t.file_of("b"), a, "a new file under an unlinked name");
        t.file(a);
        assert_eq!(t.finish(4), vec![0], "the latest call on the file");
    }
}
