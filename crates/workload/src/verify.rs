//! Verified data: a header on every 4 KiB block a workload writes, and the check that reads a
//! file back and names the first block that is not what was written.
//!
//! The header is fio's idea (`verify=crc32c`: magic, offset, seed, a write sequence number and
//! a checksum per block), laid out for fsbench: the payload's checksum is computed once per
//! block of the data pool, not per write (a 4 KiB checksum per operation would cost a quarter
//! of a 4 KiB write to tmpfs), so stamping costs five stores per block. The rest of the block is
//! the pool's incompressible bytes, as unverified data is.
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | magic `fsbV` |
//! | 4..8 | CRC-32 of bytes 40..4096 (the payload) |
//! | 8..16 | the run's seed |
//! | 16..24 | the write's sequence number (per data source, from 0) |
//! | 24..32 | the block's offset in its file |
//! | 32..36 | the file's number in the workload |
//! | 36..40 | CRC-32C of bytes 0..36 |
//!
//! All little-endian. A block found elsewhere than it was written (another offset, another
//! file) is as wrong as a changed one: the check says which.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// The verified unit: every stamped block is this long and starts at a multiple of it.
pub const BLOCK: usize = 4096;
/// Bytes of the header at the start of each block.
pub const HEADER: usize = 40;
const MAGIC: [u8; 4] = *b"fsbV";

/// What a block's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub seed: u64,
    pub sequence: u64,
    pub offset: u64,
    pub file: u32,
    /// CRC-32 of the payload (bytes [`HEADER`]..[`BLOCK`]).
    pub payload_crc: u32,
}

impl Stamp {
    /// Writes the header over the first [`HEADER`] bytes of `block`.
    #[inline]
    pub fn write(&self, block: &mut [u8]) {
        let header = &mut block[..HEADER];
        header[0..4].copy_from_slice(&MAGIC);
        header[4..8].copy_from_slice(&self.payload_crc.to_le_bytes());
        header[8..16].copy_from_slice(&self.seed.to_le_bytes());
        header[16..24].copy_from_slice(&self.sequence.to_le_bytes());
        header[24..32].copy_from_slice(&self.offset.to_le_bytes());
        header[32..36].copy_from_slice(&self.file.to_le_bytes());
        let crc = header_crc(header[..36].try_into().expect("36 bytes"));
        header[36..40].copy_from_slice(&crc.to_le_bytes());
    }

    /// The payload checksum the header of `block` carries, unchecked: for a writer that has
    /// just stamped the block and keeps the checksum to stamp it again.
    #[inline]
    pub fn payload_crc_of(block: &[u8]) -> u32 {
        u32::from_le_bytes(block[4..8].try_into().expect("a header"))
    }

    /// The header of `block`, or why it has none (no magic, a header checksum that fails).
    pub fn read(block: &[u8]) -> Result<Stamp, String> {
        if block.len() < HEADER {
            return Err(format!("a block of {} bytes", block.len()));
        }
        let u32_at = |at: usize| u32::from_le_bytes(block[at..at + 4].try_into().unwrap());
        let u64_at = |at: usize| u64::from_le_bytes(block[at..at + 8].try_into().unwrap());
        if block[0..4] != MAGIC {
            return Err(format!("no stamp (it begins {})", hex(&block[..16])));
        }
        if header_crc(block[..36].try_into().expect("36 bytes")) != u32_at(36) {
            return Err(format!(
                "a stamp whose own checksum fails ({})",
                hex(&block[..HEADER])
            ));
        }
        Ok(Stamp {
            payload_crc: u32_at(4),
            seed: u64_at(8),
            sequence: u64_at(16),
            offset: u64_at(24),
            file: u32_at(32),
        })
    }
}

/// CRC-32C (Castagnoli) of a header's first 36 bytes: the SSE 4.2 `crc32` instruction where the
/// CPU has it (five instructions: the header's check costs a few nanoseconds a block, not the
/// tens a table-driven CRC-32 takes), the same CRC computed in software elsewhere, so a file
/// stamped on one host verifies on any other.
#[inline]
pub fn header_crc(header: &[u8; 36]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("sse4.2") {
        // SAFETY: the CPU has SSE 4.2 (checked above).
        return unsafe { header_crc_sse42(header) };
    }
    header_crc_soft(header)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse4.2")]
unsafe fn header_crc_sse42(header: &[u8; 36]) -> u32 {
    use std::arch::x86_64::{_mm_crc32_u32, _mm_crc32_u64};
    let word = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap());
    let mut crc = u64::from(u32::MAX);
    for at in [0, 8, 16, 24] {
        crc = _mm_crc32_u64(crc, word(at));
    }
    let last = u32::from_le_bytes(header[32..36].try_into().unwrap());
    !_mm_crc32_u32(crc as u32, last)
}

/// CRC-32C bit by bit (reflected polynomial 0x82F63B78): the reference the instruction matches.
fn header_crc_soft(header: &[u8; 36]) -> u32 {
    let mut crc = u32::MAX;
    for &byte in header {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0x82F6_3B78 & 0u32.wrapping_sub(crc & 1));
        }
    }
    !crc
}

/// The payload checksum a stamp carries: CRC-32 of a block's bytes past the header.
pub fn payload_crc(block: &[u8]) -> u32 {
    crc32fast::hash(&block[HEADER..])
}

/// The first block of a file that is not what was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corruption {
    pub path: PathBuf,
    /// Byte offset of the block in the file.
    pub offset: u64,
    pub expected: String,
    pub found: String,
}

impl fmt::Display for Corruption {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: the block at byte {} is not what was written: expected {}, found {}",
            self.path.display(),
            self.offset,
            self.expected,
            self.found
        )
    }
}

/// What a check read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checked {
    pub blocks: u64,
    /// The highest sequence number found (the last write that reached the file).
    pub last_sequence: Option<u64>,
}

/// What the blocks of a file should say: written by this run (`seed`), for file number `file`,
/// and — when every block was written again since write `fresh_from` — no older than that (an
/// older one is a write that did not reach the file: its block as before).
#[derive(Debug, Clone, Copy)]
pub struct Expect {
    pub file: u32,
    pub seed: u64,
    pub fresh_from: Option<u64>,
}

/// Reads `len` bytes of `reader` (the file at `path`, which names it in messages; opened by the
/// caller, never through a symlink: `fileio::open`) from byte `from`, whole blocks, and checks
/// each block's stamp against `expect`, its offset and its payload. `Ok(Err(_))` names the
/// first block that is not what was written; `Err` is an I/O error reading.
pub fn check(
    reader: &std::fs::File,
    path: &Path,
    expect: Expect,
    from: u64,
    len: u64,
) -> io::Result<Result<Checked, Corruption>> {
    check_each(reader, path, from, len, |_| Some(expect))
}

/// As [`check`], with what each block should say given by `expect` from the block's offset:
/// None passes over a block that holds nothing of the run's (never written: a hole, or a
/// device's earlier bytes); it is read, not checked nor counted.
pub fn check_each(
    reader: &std::fs::File,
    path: &Path,
    from: u64,
    len: u64,
    mut expect: impl FnMut(u64) -> Option<Expect>,
) -> io::Result<Result<Checked, Corruption>> {
    use std::os::unix::fs::FileExt;
    let mut chunk = vec![0u8; 256 * BLOCK];
    let mut at = from;
    let mut checked = Checked {
        blocks: 0,
        last_sequence: None,
    };
    let blocks = len / BLOCK as u64;
    // Blocks read so far (checked or passed over).
    let mut read = 0;
    let corrupt = |offset: u64, expected: String, found: String| Corruption {
        path: path.to_path_buf(),
        offset,
        expected,
        found,
    };
    while read < blocks {
        let want = ((blocks - read) as usize * BLOCK).min(chunk.len());
        let mut got = 0;
        while got < want {
            match reader.read_at(&mut chunk[got..want], at + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        // The whole blocks read are checked before a short file is said.
        let whole = got - got % BLOCK;
        for block in chunk[..whole].chunks(BLOCK) {
            read += 1;
            let Some(Expect {
                file,
                seed,
                fresh_from,
            }) = expect(at)
            else {
                at += BLOCK as u64;
                continue;
            };
            let expected = || format!("a block of file {file} at byte {at} (seed {seed:#x})");
            let stamp = match Stamp::read(block) {
                Ok(stamp) => stamp,
                Err(found) => return Ok(Err(corrupt(at, expected(), found))),
            };
            let mismatch = if stamp.seed != seed {
                Some(format!("a block of another run (seed {:#x})", stamp.seed))
            } else if stamp.file != file || stamp.offset != at {
                Some(format!(
                    "a block of file {} at byte {} (write {})",
                    stamp.file, stamp.offset, stamp.sequence
                ))
            } else if let Some(first) = fresh_from.filter(|&first| stamp.sequence < first) {
                Some(format!(
                    "the block of an earlier write (write {}, where the block was written \
                     again from write {first} on): the later write did not reach the file",
                    stamp.sequence
                ))
            } else {
                let crc = payload_crc(block);
                (crc != stamp.payload_crc).then(|| {
                    format!(
                        "its payload changed (checksum {crc:#010x}, stamped {:#010x}; write {})",
                        stamp.payload_crc, stamp.sequence
                    )
                })
            };
            if let Some(found) = mismatch {
                return Ok(Err(corrupt(at, expected(), found)));
            }
            checked.blocks += 1;
            checked.last_sequence = checked.last_sequence.max(Some(stamp.sequence));
            at += BLOCK as u64;
        }
        if got < want {
            return Ok(Err(corrupt(
                at,
                format!("{len} bytes from byte {from}"),
                format!("the file ends at byte {}", at + (got - whole) as u64),
            )));
        }
    }
    Ok(Ok(checked))
}

/// Bytes as hex, for a message.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{DataKind, DataSource};
    use std::os::unix::fs::FileExt;

    /// The check of the first `len` bytes of the file at `path`.
    fn checked(path: &Path, expect: Expect, len: u64) -> Result<Checked, Corruption> {
        let reader = crate::fileio::open(path, crate::fileio::OpenMode::Read, false).unwrap();
        check(&reader, path, expect, 0, len).unwrap()
    }

    /// A file of `records` records of `record` bytes written from a verified data source.
    fn written(dir: &Path, record: usize, records: u64, seed: u64, place: usize) -> PathBuf {
        let path = dir.join("f");
        let file = std::fs::File::create(&path).unwrap();
        let mut data = DataSource::new(DataKind::Random, seed, record);
        data.place(place);
        for r in 0..records {
            let at = r * record as u64;
            file.write_all_at(data.next_verified(record, 7, at), at)
                .unwrap();
        }
        path
    }

    #[test]
    fn what_was_written_verifies_at_every_record_size_and_placement() {
        let dir = tempfile::tempdir().unwrap();
        for (record, place) in [(4096, 0), (4096, 16), (65536, 4000), (1 << 20, 0)] {
            // More than the pool, so blocks come round again with new stamps.
            let records = (3 << 20) / record as u64;
            let path = written(dir.path(), record, records, 42, place);
            let expect = Expect {
                file: 7,
                seed: 42,
                fresh_from: Some(0),
            };
            let checked = checked(&path, expect, records * record as u64).unwrap();
            assert_eq!(checked.blocks, records * record as u64 / BLOCK as u64);
            assert_eq!(checked.last_sequence, Some(checked.blocks - 1));
        }
    }

    /// Every kind of wrong block is named at its offset: a changed payload byte, a changed
    /// header, a block of another offset, another file, another run, a short file.
    #[test]
    fn the_first_wrong_block_is_named_with_what_was_expected_and_found() {
        let dir = tempfile::tempdir().unwrap();
        let len = 64 * BLOCK as u64;
        let fresh = || written(dir.path(), BLOCK, 64, 9, 0);
        let file = |path: &Path| std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let found = |path: &Path, file: u32, seed: u64| {
            let expect = Expect {
                file,
                seed,
                fresh_from: None,
            };
            checked(path, expect, len).unwrap_err()
        };

        let path = fresh();
        file(&path).write_all_at(&[0xff], 5 * 4096 + 1000).unwrap();
        let bad = found(&path, 7, 9);
        assert_eq!(bad.offset, 5 * 4096);
        assert!(bad.found.contains("payload changed"), "{bad}");
        assert!(bad.to_string().contains("the block at byte 20480"), "{bad}");

        let path = fresh();
        file(&path).write_all_at(&[0; 8], 3 * 4096 + 24).unwrap();
        assert!(found(&path, 7, 9).found.contains("own checksum fails"));

        // Block 2 copied over block 6: right data, wrong place.
        let path = fresh();
        let mut two = vec![0u8; BLOCK];
        std::fs::File::open(&path)
            .unwrap()
            .read_exact_at(&mut two, 2 * 4096)
            .unwrap();
        file(&path).write_all_at(&two, 6 * 4096).unwrap();
        let bad = found(&path, 7, 9);
        assert_eq!(bad.offset, 6 * 4096);
        assert!(bad.found.contains("file 7 at byte 8192"), "{bad}");

        let path = fresh();
        assert!(found(&path, 8, 9).found.contains("a block of file 7"));
        assert!(found(&path, 7, 10).found.contains("another run"));

        file(&path).set_len(10 * 4096 + 100).unwrap();
        let bad = found(&path, 7, 9);
        assert_eq!(bad.offset, 10 * 4096);
        assert!(bad.found.contains("ends at byte 41060"), "{bad}");

        file(&path).write_all_at(&[0; 4096], 0).unwrap();
        let bad = found(&path, 7, 9);
        assert_eq!(bad.offset, 0);
        assert!(bad.found.starts_with("no stamp"), "{bad}");
    }

    /// `check_each` passes over the blocks it is told hold nothing of the run's (a hole here),
    /// counts only those it checked, and checks the others each against its own expectation.
    #[test]
    fn blocks_told_to_be_unwritten_are_passed_over_and_the_others_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = written(dir.path(), BLOCK, 8, 9, 0);
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.write_all_at(&[0; BLOCK], 2 * 4096).unwrap();
        let reader = crate::fileio::open(&path, crate::fileio::OpenMode::Read, false).unwrap();
        let expect = |fresh_from| Expect {
            file: 7,
            seed: 9,
            fresh_from,
        };
        let hole = |at: u64| (at != 2 * 4096).then_some(expect(None));
        let checked = check_each(&reader, &path, 0, 8 * 4096, hole)
            .unwrap()
            .unwrap();
        assert_eq!(checked.blocks, 7);
        let all = check_each(&reader, &path, 0, 8 * 4096, |_| Some(expect(None))).unwrap();
        assert_eq!(all.unwrap_err().offset, 2 * 4096);
        // Block 5 must be write 6 or later: it is write 5, an earlier one.
        let fresh = |at: u64| (at != 2 * 4096).then_some(expect((at == 5 * 4096).then_some(6)));
        let bad = check_each(&reader, &path, 0, 8 * 4096, fresh)
            .unwrap()
            .unwrap_err();
        assert_eq!(bad.offset, 5 * 4096);
        assert!(bad.found.contains("did not reach the file"), "{bad}");
    }

    /// Verified blocks stay incompressible and unique: no two of a run's blocks are equal.
    #[test]
    fn verified_blocks_are_distinct() {
        let mut data = DataSource::new(DataKind::Random, 3, BLOCK);
        let mut seen = std::collections::HashSet::new();
        for r in 0..2048u64 {
            assert!(seen.insert(data.next_verified(BLOCK, 0, r * BLOCK as u64).to_vec()));
        }
    }

    /// The instruction and the software agree (the known CRC-32C of "123456789" and random
    /// headers), so a stamp made on one host checks on another.
    #[test]
    fn the_header_check_is_crc32c_on_every_cpu() {
        let mut check = [0u8; 36];
        check[..9].copy_from_slice(b"123456789");
        let nine = |h: &[u8]| {
            let mut crc = u32::MAX;
            for &byte in h {
                crc ^= u32::from(byte);
                for _ in 0..8 {
                    crc = (crc >> 1) ^ (0x82F6_3B78 & 0u32.wrapping_sub(crc & 1));
                }
            }
            !crc
        };
        assert_eq!(nine(b"123456789"), 0xE306_9283);
        let mut rng = crate::rng::Rng::new(5);
        for _ in 0..1000 {
            let mut h = [0u8; 36];
            rng.fill(&mut h);
            assert_eq!(header_crc(&h), header_crc_soft(&h));
        }
        assert_eq!(header_crc(&check), header_crc_soft(&check));
    }
}
