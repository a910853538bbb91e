//! Crash states from a write log: what a power cut can leave on the device. At each flush,
//! every write before it is on the medium; of the writes since, any subset may be (a volatile
//! cache keeps no order) — all of them when few, a seeded sample within a stated budget when
//! many. The "device ignored the flush" model drops that boundary: any subset of every write.
//! Each state is made from a copy of the image at the log's start plus the writes it holds,
//! advanced flush by flush ([`Builder`]): the image is never rewritten whole per state.

use super::log::{Log, Record};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// One crash state of a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    /// Records `[0, upto)` are applied whole: `upto` is just past a flush (or 0, the start).
    pub upto: usize,
    /// Writes and discards after `upto` applied too, by record index, in log order (before
    /// the next flush; with flushes ignored, any after `upto`).
    pub extra: Vec<usize>,
    /// The workload's last mark before the next flush (with flushes ignored, the log's last):
    /// what was promised in this state. None: no mark yet.
    pub promised: Option<u64>,
    /// "after flush 3", "after flush 3 and 2 of its 5 next writes".
    pub what: String,
}

/// How many states, and which.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Budget {
    /// States made of the writes since one flush (besides the flush's own state): all subsets
    /// when they are at most this many, else this many seeded ones (the whole set among them).
    pub per_flush: usize,
    pub seed: u64,
    /// The device ignored every flush: subsets of all writes, not only those since the last.
    pub ignore_flushes: bool,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            per_flush: 8,
            seed: 1,
            ignore_flushes: false,
        }
    }
}

/// Every state of `records` the budget allows, in the order of their `upto`.
pub fn states(records: &[Record], budget: Budget) -> Vec<State> {
    let mut rng = budget.seed | 1;
    let mut next = move || {
        // xorshift64*: seeded, no dependency.
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    // The last mark in records [0, end).
    let last_mark = |end: usize| {
        records[..end].iter().rev().find_map(|r| match r {
            Record::Mark(n) => Some(*n),
            _ => None,
        })
    };
    // Where each window of writes starts: the log's start, and past each flush.
    let mut starts = vec![0];
    if !budget.ignore_flushes {
        starts.extend(
            records
                .iter()
                .enumerate()
                .filter(|(_, r)| **r == Record::Flush)
                .map(|(i, _)| i + 1),
        );
    }
    let mut out = Vec::new();
    for (w, &start) in starts.iter().enumerate() {
        let end = starts.get(w + 1).map_or(records.len(), |&s| s - 1);
        let promised = last_mark(end);
        let flush = if start == 0 {
            "at the log's start".to_string()
        } else {
            format!("after flush {w}")
        };
        out.push(State {
            upto: start,
            extra: Vec::new(),
            promised,
            what: flush.clone(),
        });
        let pending: Vec<usize> = (start..end).filter(|&i| records[i].changes()).collect();
        let n = pending.len();
        if n == 0 {
            continue;
        }
        let subsets: Vec<Vec<usize>> = if n < 16 && (1usize << n) - 1 <= budget.per_flush {
            (1..1u64 << n)
                .map(|bits| {
                    (0..n)
                        .filter(|k| bits >> k & 1 == 1)
                        .map(|k| pending[k])
                        .collect()
                })
                .collect()
        } else {
            let mut chosen: Vec<Vec<usize>> = vec![pending.clone()];
            let mut tries = 0;
            while chosen.len() < budget.per_flush && tries < budget.per_flush * 8 {
                tries += 1;
                let subset: Vec<usize> = pending
                    .iter()
                    .copied()
                    .filter(|_| next() & 1 == 1)
                    .collect();
                if !subset.is_empty() && !chosen.contains(&subset) {
                    chosen.push(subset);
                }
            }
            chosen
        };
        for extra in subsets {
            let what = format!("{flush} and {} of its {n} next writes", extra.len());
            out.push(State {
                upto: start,
                extra,
                promised,
                what,
            });
        }
    }
    out
}

/// Makes the images of states in order of `upto`: a working image advanced from the log's
/// start, copied (sparse, or by reflink where the filesystem can) for each state and given
/// its extra writes.
pub struct Builder {
    log: Log,
    working: PathBuf,
    image: File,
    applied: usize,
}

impl Builder {
    /// Starts from a copy of `start` (the image when `log` began) at `working`.
    pub fn new(log: Log, start: &Path, working: &Path) -> io::Result<Builder> {
        crate::copy::copy_image(start, working)?;
        let image = open_made(working)?;
        Ok(Builder {
            log,
            working: working.to_path_buf(),
            image,
            applied: 0,
        })
    }

    /// The log the states are made of.
    pub fn log(&self) -> &Log {
        &self.log
    }

    /// `state`'s image at `out` (a new file). States must come in order of `upto`.
    pub fn make(&mut self, state: &State, out: &Path) -> io::Result<()> {
        if state.upto < self.applied {
            return Err(io::Error::other("crash states must be made in log order"));
        }
        for i in self.applied..state.upto {
            self.log.apply(i, &self.image)?;
        }
        self.applied = state.upto;
        crate::copy::copy_image(&self.working, out)?;
        let image = open_made(out)?;
        for &i in &state.extra {
            self.log.apply(i, &image)?;
        }
        image.sync_all()
    }
}

/// The image just made at `path` (by `copy_image`, which refuses what is there), opened to
/// write, never through a symlink put in its place.
fn open_made(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

impl Drop for Builder {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.working);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(offset: u64) -> Record {
        Record::Write {
            offset,
            len: 4096,
            at: 0,
        }
    }

    /// A state at each flush with what was promised before the next one, every subset of a
    /// few writes since, a bounded seeded sample of many (the whole set among them), and with
    /// flushes ignored subsets of every write, promising the last mark.
    #[test]
    fn states_are_made_at_each_flush_and_of_the_writes_since() {
        use Record::*;
        let records = [
            w(0),
            Mark(1),
            w(1),
            Flush,
            Mark(2),
            w(2),
            w(3),
            Flush,
            Mark(3),
        ];
        let all = states(&records, Budget::default());
        let at_flush: Vec<(usize, Option<u64>)> = all
            .iter()
            .filter(|s| s.extra.is_empty())
            .map(|s| (s.upto, s.promised))
            .collect();
        // The start promises mark 1 (set before the first flush): its writes may all be lost
        // only if nothing was promised by then — the oracle decides with the mark's promises.
        assert_eq!(at_flush, [(0, Some(1)), (4, Some(2)), (8, Some(3))]);
        let after_first: Vec<&Vec<usize>> = all
            .iter()
            .filter(|s| s.upto == 4 && !s.extra.is_empty())
            .map(|s| &s.extra)
            .collect();
        assert_eq!(after_first, [&vec![5], &vec![6], &vec![5, 6]]);
        assert_eq!(all.iter().filter(|s| s.upto == 0).count(), 4);

        let many: Vec<Record> = (0..40).map(w).chain([Flush]).collect();
        let budget = Budget {
            per_flush: 10,
            seed: 5,
            ignore_flushes: false,
        };
        let sampled = states(&many, budget);
        let from_start: Vec<&State> = sampled.iter().filter(|s| s.upto == 0).collect();
        assert_eq!(from_start.len(), 11);
        assert!(from_start.iter().any(|s| s.extra.len() == 40));
        assert_eq!(sampled, states(&many, budget), "seeded");
        assert_ne!(
            sampled,
            states(&many, Budget { seed: 6, ..budget }),
            "another seed, other subsets"
        );

        let ignoring = states(
            &records,
            Budget {
                ignore_flushes: true,
                per_flush: 100,
                seed: 1,
            },
        );
        assert!(ignoring
            .iter()
            .all(|s| s.upto == 0 && s.promised == Some(3)));
        assert_eq!(
            ignoring.len(),
            16,
            "the start and the 15 subsets of 4 writes"
        );
    }
}
