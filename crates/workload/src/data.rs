//! What workloads write: incompressible, non-deduplicable data by default.
//!
//! A pool of 256 KiB (plus the largest record) is filled from a seeded generator once per run,
//! so every run writes fresh content. Each record is served from a rotating position in the
//! pool, and the first 16 bytes of every 4 KiB block of it are overwritten with a block counter
//! and the run's seed, so no two blocks written in a run are equal: deduplication gains nothing,
//! and a compressor sees only distinct random bytes in any unit of up to 256 KiB — twice btrfs's
//! 128 KiB unit and ZFS's default recordsize. (A ZFS dataset with a recordsize above 256 KiB and
//! a compressor whose window reaches 256 KiB back, zstd, could find the repeats; zfs-fuse has
//! only lzjb and gzip, whose windows are 1 and 32 KiB.) Stamping costs two stores per 4 KiB, not
//! a generator call per byte.
//!
//! Why 256 KiB: the kernel copies every written record out of the pool, and a pool that does
//! not stay in the core's caches while the page cache streams through them turns each copy
//! into cache misses the filesystem is then blamed for (bench/README.md: a 16 MiB pool cost 8 %
//! of 4 KiB pwrite throughput on tmpfs; on an Intel Xeon with 2 MiB of L2 a bare C loop wrote
//! 5 % slower from a 1 MiB pool than from one buffer, and as fast from 128 or 256 KiB).
//!
//! Compressible data keeps the stamp and the random head of each 4 KiB block and zeroes the
//! rest; zero data is all zeroes, without stamps.

use crate::fileio::{AlignedBuf, BUFFER_ALIGN};
use crate::rng::Rng;
use std::fmt;
use std::str::FromStr;

/// Size of the random pool records are cut from.
pub const POOL_BYTES: usize = 256 << 10;
const BLOCK: usize = 4096;

/// The content written by workloads.
/// Written as text (`random`, `zero`, `compressible:50`) on the command line, in plans and in
/// the stored JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataKind {
    /// Random, incompressible, every 4 KiB block unique (the default).
    Random,
    /// `percent` % of each 4 KiB block is zeroes (like fio's buffer_compress_percentage).
    Compressible { percent: u8 },
    /// All zeroes.
    Zero,
}

impl fmt::Display for DataKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataKind::Random => write!(f, "random"),
            DataKind::Compressible { percent } => write!(f, "compressible:{percent}"),
            DataKind::Zero => write!(f, "zero"),
        }
    }
}

fsbench_model::text_serde!(DataKind);

impl FromStr for DataKind {
    type Err = String;

    fn from_str(s: &str) -> Result<DataKind, String> {
        let err = || {
            format!("'{s}' is not a data kind: use random, zero, or compressible:PERCENT (0-100)")
        };
        match s {
            "random" => Ok(DataKind::Random),
            "zero" | "zeros" | "zeroes" => Ok(DataKind::Zero),
            _ => {
                let pct = s.strip_prefix("compressible:").ok_or_else(err)?;
                let percent: u8 = pct.parse().map_err(|_| err())?;
                if percent > 100 {
                    return Err(err());
                }
                Ok(DataKind::Compressible { percent })
            }
        }
    }
}

/// Serves the bytes of each written record.
pub struct DataSource {
    pool: AlignedBuf,
    position: usize,
    /// Where records start past a page boundary (0: page-aligned, as O_DIRECT needs).
    offset: usize,
    counter: u64,
    seed: u64,
    stamp: bool,
    /// Verified writes (`next_verified`): each pool block's payload checksum at the current
    /// offset, computed when the block is first served; `u64::MAX` for not yet.
    payload_crcs: Vec<u64>,
}

impl DataSource {
    /// A pool able to serve records of up to `max_record` bytes.
    pub fn new(kind: DataKind, seed: u64, max_record: usize) -> DataSource {
        // A page of room past the largest record: records may start that far into a page
        // (`place`).
        let mut pool = AlignedBuf::new(
            POOL_BYTES + max_record.next_multiple_of(BUFFER_ALIGN) + crate::placement::ROOM,
        );
        let mut rng = Rng::new(seed);
        match kind {
            DataKind::Zero => {}
            DataKind::Random => rng.fill(pool.as_mut_slice()),
            DataKind::Compressible { percent } => {
                let random_bytes = BLOCK - BLOCK * percent as usize / 100;
                for block in pool.as_mut_slice().chunks_mut(BLOCK) {
                    let n = random_bytes.min(block.len());
                    rng.fill(&mut block[..n]);
                }
            }
        }
        DataSource {
            pool,
            position: 0,
            offset: 0,
            counter: 0,
            seed,
            stamp: kind != DataKind::Zero,
            payload_crcs: Vec::new(),
        }
    }

    /// The sequence number the next stamped block gets (every block served so far has a
    /// lower one).
    pub fn sequence(&self) -> u64 {
        self.counter
    }

    /// Stamps carry `seed` from now on (the pool keeps its bytes): the threads of one run, each
    /// with a pool of its own, whose verified blocks all say the run's seed.
    pub fn stamp_as(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// The seed the pool and the stamps were made with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The next `len` bytes to write at byte `at`: verified (`next_verified`, file number 0)
    /// when `verify`, else as `next`.
    #[inline(always)]
    pub fn next_at(&mut self, verify: bool, len: usize, at: u64) -> &[u8] {
        if verify {
            self.next_verified(len, 0, at)
        } else {
            self.next(len)
        }
    }

    /// Records start `offset` bytes past a page boundary from now on (buffered writes: where
    /// this CPU copies fastest, `crate::placement`); 0 keeps them page-aligned for O_DIRECT.
    pub fn place(&mut self, offset: usize) {
        assert!(offset < crate::placement::ROOM, "an offset within a page");
        if offset != self.offset {
            // Blocks now start elsewhere in the pool: their payloads are other bytes.
            self.payload_crcs.fill(u64::MAX);
        }
        self.offset = offset;
    }

    /// The next `len` bytes to write at byte `at` of file number `file`, every 4 KiB block
    /// under a verifiable header (`crate::verify`) instead of the plain stamp: its offset in
    /// the file, the file, the seed, a sequence number and its payload's checksum (computed
    /// once per pool block, so a write costs five stores a block more than `next`). `len` and
    /// `at` must be whole blocks. Placed and wrapped as `next`.
    #[inline]
    pub fn next_verified(&mut self, len: usize, file: u32, at: u64) -> &[u8] {
        use crate::verify::{payload_crc, Stamp, BLOCK as VBLOCK};
        debug_assert!(len % VBLOCK == 0 && at % VBLOCK as u64 == 0, "whole blocks");
        if self.payload_crcs.is_empty() {
            self.payload_crcs = vec![u64::MAX; self.pool.as_slice().len() / VBLOCK];
        }
        let start = self.position + self.offset;
        let first = self.position / VBLOCK;
        self.position = (self.position + len.next_multiple_of(BUFFER_ALIGN)) % POOL_BYTES;
        let record = &mut self.pool.as_mut_slice()[start..start + len];
        for (k, block) in record.chunks_exact_mut(VBLOCK).enumerate() {
            let known = &mut self.payload_crcs[first + k];
            if *known == u64::MAX {
                *known = u64::from(payload_crc(block));
            }
            Stamp {
                seed: self.seed,
                sequence: self.counter,
                offset: at + (k * VBLOCK) as u64,
                file,
                payload_crc: *known as u32,
            }
            .write(block);
            self.counter += 1;
        }
        &self.pool.as_slice()[start..start + len]
    }

    /// The next `len` bytes to write (page-aligned, or as `place` says; valid until the next
    /// call). `len` must not exceed the `max_record` given to `new` (a longer record panics).
    #[inline]
    pub fn next(&mut self, len: usize) -> &[u8] {
        let start = self.position + self.offset;
        // Advance by whole pages (O_DIRECT needs aligned buffers), wrapping within the pool: a
        // record may be longer than the pool, so wrap by remainder, not by one subtraction.
        // `position` stays below POOL_BYTES, and the pool has room for the largest record and
        // a page past it.
        self.position = (self.position + len.next_multiple_of(BUFFER_ALIGN)) % POOL_BYTES;
        let record = &mut self.pool.as_mut_slice()[start..start + len];
        if self.stamp {
            stamp_blocks(record, &mut self.counter, self.seed);
        }
        &self.pool.as_slice()[start..start + len]
    }

    /// Makes a buffer the caller owns unique again before it is written once more: the next
    /// block counters and the seed over the first 16 bytes of each of its 4 KiB blocks, as
    /// [`DataSource::next`] stamps the pool. For writers whose buffers the kernel holds across
    /// calls (io_uring's in-flight and registered buffers), filled once from [`DataSource::next`]
    /// and stamped before each write. Zero data is left as it is.
    #[inline]
    pub fn stamp(&mut self, record: &mut [u8]) {
        if self.stamp {
            stamp_blocks(record, &mut self.counter, self.seed);
        }
    }

    /// As [`DataSource::stamp`], verifiably: a buffer the caller owns, filled once (from
    /// [`DataSource::next`]) and written again and again, gets the header
    /// [`DataSource::next_verified`] would give it — `at`, its offset in file number `file`,
    /// the next sequence numbers — over each 4 KiB block before each write. Its payloads do
    /// not change, so their checksums are the caller's, computed once when it was filled
    /// (`payload_crcs`, a block's each: `crate::verify::payload_crc`). `record` and `at` must
    /// be whole blocks. Stamps zero data too.
    #[inline]
    pub fn stamp_verified(&mut self, record: &mut [u8], payload_crcs: &[u32], file: u32, at: u64) {
        use crate::verify::{Stamp, BLOCK as VBLOCK};
        debug_assert!(
            record.len() == payload_crcs.len() * VBLOCK,
            "a checksum a block"
        );
        for (k, (block, &payload_crc)) in record
            .chunks_exact_mut(VBLOCK)
            .zip(payload_crcs)
            .enumerate()
        {
            Stamp {
                seed: self.seed,
                sequence: self.counter,
                offset: at + (k * VBLOCK) as u64,
                file,
                payload_crc,
            }
            .write(block);
            self.counter += 1;
        }
    }
}

/// The counter (advanced per block) and the seed over the first 16 bytes of every 4 KiB block.
#[inline(always)]
fn stamp_blocks(record: &mut [u8], counter: &mut u64, seed: u64) {
    let mut at = 0;
    while at + 16 <= record.len() {
        record[at..at + 8].copy_from_slice(&counter.to_le_bytes());
        record[at + 8..at + 16].copy_from_slice(&seed.to_le_bytes());
        *counter += 1;
        at += BLOCK;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn random_blocks_are_all_distinct_and_aligned() {
        let mut src = DataSource::new(DataKind::Random, 42, 1 << 20);
        let mut seen = HashSet::new();
        // 64 MiB of 64 KiB records: more than the pool, so positions wrap.
        for _ in 0..1024 {
            let rec = src.next(64 << 10).to_vec();
            for block in rec.chunks(BLOCK) {
                assert!(seen.insert(block.to_vec()), "a 4 KiB block repeated");
            }
        }
        assert_eq!(src.next(4096).as_ptr() as usize % BUFFER_ALIGN, 0);
    }

    /// Checks one call against the data source's contract: the record has the asked length,
    /// starts page-aligned where the previous one ended (wrapping within the pool), and every
    /// 4 KiB block in it carries the next counter value and the seed.
    fn check_next(src: &mut DataSource, len: usize, seed: u64) {
        let position = src.position;
        let counter = src.counter;
        let pool_start = src.pool.as_slice().as_ptr() as usize;
        let record = src.next(len);
        assert_eq!(record.len(), len);
        let start = record.as_ptr() as usize - pool_start;
        assert_eq!(
            start, position,
            "a record starts where the previous one ended"
        );
        assert_eq!(record.as_ptr() as usize % BUFFER_ALIGN, 0, "page-aligned");
        let mut expected = counter;
        for block in record.chunks(BLOCK).filter(|b| b.len() >= 16) {
            assert_eq!(block[..8], expected.to_le_bytes(), "block counter");
            assert_eq!(block[8..16], seed.to_le_bytes(), "seed stamp");
            expected += 1;
        }
        assert_eq!(src.counter, expected);
        assert_eq!(
            src.position,
            (position + len.next_multiple_of(BUFFER_ALIGN)) % POOL_BYTES
        );
        assert!(src.position < POOL_BYTES);
    }

    #[test]
    fn every_record_size_up_to_the_largest_wraps_and_stamps() {
        // Every power of two from 4 KiB to the largest record the matrix allows, each called
        // until the pool has wrapped several times (records above 1 MiB used to panic).
        let mut size = 4 << 10;
        while size <= crate::matrix::MAX_RECORD_BYTES as usize {
            let seed = size as u64;
            let mut src = DataSource::new(DataKind::Random, seed, size);
            let calls = (4 * POOL_BYTES / size).max(6);
            for _ in 0..calls {
                check_next(&mut src, size, seed);
            }
            size *= 2;
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

        /// Any sequence of lengths up to the pool's maximum record, aligned or not.
        #[test]
        fn any_sequence_of_lengths_is_served(
            max_record in 1usize..(4 << 20),
            fractions in proptest::collection::vec(0.0f64..=1.0, 1..64),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let mut src = DataSource::new(DataKind::Random, seed, max_record);
            for f in fractions {
                let len = ((max_record as f64 * f) as usize).clamp(1, max_record);
                check_next(&mut src, len, seed);
            }
        }
    }

    #[test]
    fn random_data_does_not_compress_by_byte_statistics() {
        let mut src = DataSource::new(DataKind::Random, 1, 1 << 20);
        let rec = src.next(1 << 20);
        let mut counts = [0u32; 256];
        rec.iter().for_each(|&b| counts[b as usize] += 1);
        // Shannon entropy per byte; 8.0 is the maximum.
        let n = rec.len() as f64;
        let entropy: f64 = counts
            .iter()
            .filter(|&&c| c > 0)
            .map(|&c| {
                let p = c as f64 / n;
                -p * p.log2()
            })
            .sum();
        assert!(entropy > 7.99, "entropy {entropy}");
    }

    /// A caller's buffer, filled once from the pool, stamped again before each write: no two
    /// of its writes are alike, and the stamps continue the pool's counter.
    #[test]
    fn a_callers_buffer_is_stamped_anew_before_each_write() {
        let mut src = DataSource::new(DataKind::Random, 9, 8192);
        let mut buf = src.next(8192).to_vec();
        let first = buf.clone();
        src.stamp(&mut buf);
        assert_ne!(buf, first);
        assert_eq!(
            buf[..8],
            2u64.to_le_bytes(),
            "the counter goes on from the pool's"
        );
        assert_eq!(buf[4096..4104], 3u64.to_le_bytes());
        assert_eq!(buf[8..16], 9u64.to_le_bytes());
        assert_eq!(buf[16..4096], first[16..4096], "only the stamp changes");
        let mut zero = DataSource::new(DataKind::Zero, 9, 4096);
        let mut zeros = vec![0u8; 4096];
        zero.stamp(&mut zeros);
        assert!(zeros.iter().all(|&b| b == 0));
    }

    /// A caller's buffer stamped verifiably reads back as what `next_verified` would have
    /// written there: its offset, file and sequence, its payload's checksum intact.
    #[test]
    fn a_callers_buffer_is_stamped_verifiably() {
        use crate::verify::{payload_crc, Stamp};
        for kind in [DataKind::Random, DataKind::Zero] {
            let mut src = DataSource::new(kind, 9, 8192);
            src.next(4096);
            let mut buf = src.next(8192).to_vec();
            let crcs: Vec<u32> = buf.chunks(4096).map(payload_crc).collect();
            let first = src.sequence();
            src.stamp_verified(&mut buf, &crcs, 3, 1 << 20);
            for (k, block) in buf.chunks(4096).enumerate() {
                let stamp = Stamp::read(block).unwrap();
                assert_eq!(
                    (stamp.seed, stamp.sequence, stamp.offset, stamp.file),
                    (9, first + k as u64, (1 << 20) + 4096 * k as u64, 3)
                );
                assert_eq!(stamp.payload_crc, payload_crc(block));
            }
            assert_eq!(src.sequence(), first + 2);
        }
    }

    #[test]
    fn compressible_and_zero_kinds() {
        let mut half = DataSource::new(DataKind::Compressible { percent: 50 }, 1, 8192);
        let rec = half.next(8192);
        let zeros = rec.iter().filter(|&&b| b == 0).count();
        assert!((4000..4300).contains(&zeros), "{zeros} zero bytes of 8192");
        let mut zero = DataSource::new(DataKind::Zero, 1, 8192);
        assert!(zero.next(8192).iter().all(|&b| b == 0));
    }

    #[test]
    fn data_kinds_parse() {
        assert_eq!("random".parse(), Ok(DataKind::Random));
        assert_eq!("zero".parse(), Ok(DataKind::Zero));
        assert_eq!(
            "compressible:30".parse(),
            Ok(DataKind::Compressible { percent: 30 })
        );
        assert!("compressible:101".parse::<DataKind>().is_err());
        assert!("lots".parse::<DataKind>().is_err());
        assert_eq!(
            DataKind::Compressible { percent: 30 }.to_string(),
            "compressible:30"
        );
    }
}
