//! How ranks meet: the few collective operations scale-out needs (agree to start, gather bytes
//! at rank 0), behind a trait so the protocol runs the same over MPI and over threads in tests.

use std::sync::{Arc, Barrier, Mutex};

/// The collective operations of a job of `size` ranks. Every rank must call each operation, in
/// the same order.
pub trait Collective {
    fn rank(&self) -> u32;
    fn size(&self) -> u32;
    /// A barrier that also agrees: true on every rank when every rank passed true.
    fn all_ok(&self, mine: bool) -> bool;
    /// As [`Collective::all_ok`], waiting without taking CPU: where ranks done with a phase
    /// wait for others still measuring it. MPI's blocking collectives spin (Open MPI yields
    /// only when oversubscribed, and even then stays runnable), so this one is polled, first
    /// every few tens of microseconds, then (a longer wait) about every millisecond; a start
    /// barrier, where every rank is idle, stays `all_ok`.
    fn all_ok_idle(&self, mine: bool) -> bool {
        self.all_ok(mine)
    }
    /// Every rank's bytes at rank 0, in rank order; `None` on the other ranks.
    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>>;
    /// Ends every rank of the job with `code`: for a rank that cannot go on while the others
    /// wait for it.
    fn abort(&self, code: i32) -> !;
    /// Tells every other rank that this one is done with the running phase (a first-done
    /// stonewall); not collective, and at once: a message of one byte to each.
    fn announce_done(&self);
    /// How many other ranks' announcements arrived since the last call, without waiting.
    fn heard_done(&self) -> u32;
    /// Waits for `count` more announcements: after a phase, every rank has received one from
    /// each other rank, so none is left for the next phase.
    fn await_done(&self, count: u32);
}

/// Ranks as threads of one process, for tests of the protocol without MPI.
pub struct Threads {
    rank: u32,
    shared: Arc<Shared>,
}

struct Shared {
    size: u32,
    barrier: Barrier,
    slots: Mutex<Vec<Vec<u8>>>,
    ok: Mutex<bool>,
    /// Announcements waiting for each rank.
    done: Mutex<Vec<u32>>,
    arrived: std::sync::Condvar,
}

impl Threads {
    /// `size` ranks, one per returned value (move each into its own thread).
    pub fn job(size: u32) -> Vec<Threads> {
        let shared = Arc::new(Shared {
            size,
            barrier: Barrier::new(size as usize),
            slots: Mutex::new(vec![Vec::new(); size as usize]),
            ok: Mutex::new(true),
            done: Mutex::new(vec![0; size as usize]),
            arrived: std::sync::Condvar::new(),
        });
        (0..size)
            .map(|rank| Threads {
                rank,
                shared: shared.clone(),
            })
            .collect()
    }
}

impl Collective for Threads {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.shared.size
    }

    fn all_ok(&self, mine: bool) -> bool {
        if !mine {
            *self.shared.ok.lock().unwrap() = false;
        }
        self.shared.barrier.wait();
        let all = *self.shared.ok.lock().unwrap();
        // Everyone has read the verdict before rank 0 resets it for the next call.
        if self.shared.barrier.wait().is_leader() {
            *self.shared.ok.lock().unwrap() = true;
        }
        self.shared.barrier.wait();
        all
    }

    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        self.shared.slots.lock().unwrap()[self.rank as usize] = mine.to_vec();
        self.shared.barrier.wait();
        let all = (self.rank == 0).then(|| std::mem::take(&mut *self.shared.slots.lock().unwrap()));
        if let Some(all) = &all {
            *self.shared.slots.lock().unwrap() = vec![Vec::new(); all.len()];
        }
        self.shared.barrier.wait();
        all
    }

    fn abort(&self, code: i32) -> ! {
        panic!("rank {} ended the job with exit code {code}", self.rank)
    }

    fn announce_done(&self) {
        let mut done = self.shared.done.lock().unwrap();
        for (rank, waiting) in done.iter_mut().enumerate() {
            if rank != self.rank as usize {
                *waiting += 1;
            }
        }
        self.shared.arrived.notify_all();
    }

    fn heard_done(&self) -> u32 {
        std::mem::take(&mut self.shared.done.lock().unwrap()[self.rank as usize])
    }

    fn await_done(&self, mut count: u32) {
        let mut done = self.shared.done.lock().unwrap();
        while count > 0 {
            let mine = &mut done[self.rank as usize];
            let taken = (*mine).min(count);
            *mine -= taken;
            count -= taken;
            if count > 0 {
                done = self.shared.arrived.wait(done).unwrap();
            }
        }
    }
}

/// The job mpirun started this process in, over MPI (the `mpi` feature).
#[cfg(feature = "mpi")]
pub struct Mpi {
    // Dropped before the universe, which finalizes MPI.
    world: mpi::topology::SimpleCommunicator,
    _universe: mpi::environment::Universe,
}

#[cfg(feature = "mpi")]
impl Collective for Mpi {
    fn rank(&self) -> u32 {
        use mpi::traits::Communicator;
        self.world.rank() as u32
    }

    fn size(&self) -> u32 {
        use mpi::traits::Communicator;
        self.world.size() as u32
    }

    fn all_ok(&self, mine: bool) -> bool {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let mut all = 0i32;
        self.world
            .all_reduce_into(&(mine as i32), &mut all, SystemOperation::min());
        all == 1
    }

    fn all_ok_idle(&self, mine: bool) -> bool {
        use mpi::collective::SystemOperation;
        use mpi::traits::CommunicatorCollectives;
        let mine = mine as i32;
        let mut all = 0i32;
        mpi::request::scope(|scope| {
            let mut request = self.world.immediate_all_reduce_into(
                scope,
                &mine,
                &mut all,
                SystemOperation::min(),
            );
            // Open MPI moves a collective on only inside an MPI call, one round per call: the
            // naps start short, so ranks that arrive together meet in microseconds, and
            // double up to a millisecond, so a long wait takes next to no CPU.
            let mut nap = IDLE_NAP_FIRST;
            loop {
                match request.test() {
                    Ok(_) => break,
                    Err(pending) => {
                        request = pending;
                        std::thread::sleep(nap);
                        nap = (nap * 2).min(IDLE_NAP_LAST);
                    }
                }
            }
        });
        all == 1
    }

    fn gather(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        use mpi::datatype::PartitionMut;
        use mpi::traits::{Communicator, Root};
        let root = self.world.process_at_rank(0);
        let len = mine.len() as mpi::Count;
        if self.world.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut counts = vec![0 as mpi::Count; self.world.size() as usize];
        root.gather_into_root(&len, &mut counts[..]);
        let displs: Vec<mpi::Count> = counts
            .iter()
            .scan(0, |at, &n| {
                let here = *at;
                *at += n;
                Some(here)
            })
            .collect();
        let mut all = vec![0u8; counts.iter().map(|&n| n as usize).sum()];
        {
            let mut partition = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut partition);
        }
        Some(
            counts
                .iter()
                .zip(&displs)
                .map(|(&n, &at)| all[at as usize..(at + n) as usize].to_vec())
                .collect(),
        )
    }

    fn abort(&self, code: i32) -> ! {
        use mpi::traits::Communicator;
        self.world.abort(code)
    }

    fn announce_done(&self) {
        use mpi::traits::{Communicator, Destination};
        // One byte goes out at once (Open MPI's eager protocol), received or not.
        for rank in (0..self.world.size()).filter(|&r| r != self.world.rank()) {
            self.world
                .process_at_rank(rank)
                .send_with_tag(&0u8, DONE_TAG);
        }
    }

    fn heard_done(&self) -> u32 {
        use mpi::traits::{Communicator, Source};
        let mut heard = 0;
        while self
            .world
            .any_process()
            .immediate_probe_with_tag(DONE_TAG)
            .is_some()
        {
            let _: (u8, _) = self.world.any_process().receive_with_tag(DONE_TAG);
            heard += 1;
        }
        heard
    }

    fn await_done(&self, count: u32) {
        use mpi::traits::{Communicator, Source};
        for _ in 0..count {
            let _: (u8, _) = self.world.any_process().receive_with_tag(DONE_TAG);
        }
    }
}

/// The first and the longest nap between two looks at a polled meeting.
#[cfg(feature = "mpi")]
const IDLE_NAP_FIRST: std::time::Duration = std::time::Duration::from_micros(20);
#[cfg(feature = "mpi")]
const IDLE_NAP_LAST: std::time::Duration = std::time::Duration::from_millis(1);

/// The tag of a first-done announcement (no other point-to-point message is sent).
#[cfg(feature = "mpi")]
const DONE_TAG: mpi::Tag = 77;

/// Whether mpirun (Open MPI or a PMI launcher) started this process, and how many ranks the job
/// has.
pub fn launched_size() -> Option<u32> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// How many ranks of the job mpirun started on this host (Open MPI's and MPICH's word for it),
/// when it says.
pub fn launched_local_size() -> Option<u32> {
    ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse().ok())
}

/// The job this process belongs to: `None` when it was not started by mpirun; an error when it
/// was but this build has no MPI (each rank would otherwise run alone and store a run of its
/// own).
pub fn launcher() -> Result<Option<Box<dyn Collective>>, String> {
    let Some(size) = launched_size() else {
        return Ok(None);
    };
    #[cfg(feature = "mpi")]
    {
        let _ = size;
        let universe = mpi::initialize().ok_or("MPI was initialized twice")?;
        let world = universe.world();
        Ok(Some(Box::new(Mpi {
            world,
            _universe: universe,
        })))
    }
    #[cfg(not(feature = "mpi"))]
    {
        Err(format!(
            "started by mpirun as one of {size} ranks, but this fsbench was built without MPI: \
             build it with `cargo build --release -p fsbench --features mpi` (README, \"Scale-out\"), \
             or run it without mpirun"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A first-done phase on three ranks: rank 2 is done first and says so; the others hear it
    /// without waiting, say so in turn, and after the phase each has one word from every other
    /// rank and none left over for the next phase.
    #[test]
    fn every_rank_hears_each_others_done_once_per_phase() {
        let handles: Vec<_> = Threads::job(3)
            .into_iter()
            .map(|job| {
                std::thread::spawn(move || {
                    let mut heard = 0;
                    if job.rank() == 2 {
                        job.announce_done();
                    }
                    job.all_ok(true);
                    heard += job.heard_done();
                    job.all_ok(true);
                    if job.rank() != 2 {
                        job.announce_done();
                    }
                    job.await_done(job.size() - 1 - heard);
                    job.all_ok(true);
                    (job.rank(), heard, job.heard_done())
                })
            })
            .collect();
        for handle in handles {
            let (rank, heard, left) = handle.join().unwrap();
            assert_eq!(heard, u32::from(rank != 2), "rank {rank}");
            assert_eq!(left, 0, "rank {rank}: nothing left for the next phase");
        }
    }
}
