//! The write log of a recording device: every write the filesystem sent its device, in order,
//! with its bytes; every flush; every discard; and the marks the workload set between them.
//!
//! Compact: a write's bytes are appended once to a data file and the record points at them; a
//! write of zeros only (mkfs zeroing its tables, a journal's zeroed blocks) keeps no bytes at all.
//! Saved as a versioned file of fixed 32-byte little-endian records (docs/recording-device.md).

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The first 8 bytes of a saved log (the version in its last).
pub const MAGIC: [u8; 8] = *b"fsbLOG\x00\x01";
/// Where a write of zeros only points: no bytes kept.
const ZEROS: u64 = u64::MAX;

/// One thing the device saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record {
    /// `len` bytes at byte `offset` of the device; its bytes at `at` in the data file (or zeros).
    Write { offset: u64, len: u64, at: u64 },
    /// A cache flush: every write before it is durable once it completes.
    Flush,
    /// A discard (trim) of `len` bytes at `offset`: they may read back as zeros, or as before.
    Discard { offset: u64, len: u64 },
    /// The workload's mark `n` ("operation n returned"): no I/O.
    Mark(u64),
}

impl Record {
    /// A write or a discard: something a crash state applies or leaves out.
    pub fn changes(&self) -> bool {
        matches!(self, Record::Write { .. } | Record::Discard { .. })
    }
}

/// What a log holds, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    pub marks: u64,
    /// Bytes the writes wrote.
    pub written: u64,
    /// Bytes the data file keeps (the writes' bytes, zeros left out).
    pub kept: u64,
}

/// A write log: its records, and the data file their bytes are in.
#[derive(Debug)]
pub struct Log {
    pub records: Vec<Record>,
    data: File,
    kept: u64,
}

impl Log {
    /// An empty log whose bytes go to a new file at `data`.
    pub fn create(data: &Path) -> io::Result<Log> {
        let data = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(data)?;
        Ok(Log {
            records: Vec::new(),
            data,
            kept: 0,
        })
    }

    /// `bytes` written at `offset`.
    pub fn write(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let len = bytes.len() as u64;
        let at = if bytes.iter().all(|&b| b == 0) {
            ZEROS
        } else {
            let at = self.kept;
            self.data.write_all_at(bytes, at)?;
            self.kept += len;
            at
        };
        self.records.push(Record::Write { offset, len, at });
        Ok(())
    }

    /// `len` bytes of zeros written at `offset` (a write-zeroes request).
    pub fn zeros(&mut self, offset: u64, len: u64) {
        self.records.push(Record::Write {
            offset,
            len,
            at: ZEROS,
        });
    }

    pub fn flush(&mut self) {
        self.records.push(Record::Flush);
    }

    pub fn discard(&mut self, offset: u64, len: u64) {
        self.records.push(Record::Discard { offset, len });
    }

    pub fn mark(&mut self, n: u64) {
        self.records.push(Record::Mark(n));
    }

    pub fn counts(&self) -> Counts {
        let mut c = Counts {
            kept: self.kept,
            ..Counts::default()
        };
        for r in &self.records {
            match r {
                Record::Write { len, .. } => {
                    c.writes += 1;
                    c.written += len;
                }
                Record::Flush => c.flushes += 1,
                Record::Discard { .. } => c.discards += 1,
                Record::Mark(_) => c.marks += 1,
            }
        }
        c
    }

    /// The bytes record `i` wrote (empty for anything but a write).
    pub fn bytes(&self, i: usize) -> io::Result<Vec<u8>> {
        match self.records[i] {
            Record::Write { len, at, .. } if at == ZEROS => Ok(vec![0; len as usize]),
            Record::Write { len, at, .. } => {
                let mut buf = vec![0u8; len as usize];
                self.data.read_exact_at(&mut buf, at)?;
                Ok(buf)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Applies record `i` to `image` (a write's bytes, a discard as zeros; a flush or mark
    /// changes nothing): the bytes it wrote.
    pub fn apply(&self, i: usize, image: &File) -> io::Result<u64> {
        const CHUNK: usize = 1 << 20;
        let mut buf = Vec::new();
        let (offset, len, at) = match self.records[i] {
            Record::Write { offset, len, at } => (offset, len, at),
            Record::Discard { offset, len } => (offset, len, ZEROS),
            Record::Flush | Record::Mark(_) => return Ok(0),
        };
        let mut done = 0;
        while done < len {
            let n = (len - done).min(CHUNK as u64) as usize;
            buf.resize(n, 0);
            if at == ZEROS {
                buf.fill(0);
            } else {
                self.data.read_exact_at(&mut buf, at + done)?;
            }
            image.write_all_at(&buf, offset + done)?;
            done += n as u64;
        }
        Ok(len)
    }

    /// How many bytes of the data file the writes' bytes take (from its start).
    pub fn kept(&self) -> u64 {
        self.kept
    }

    /// Another handle on the same log: its records, and its data file opened once more.
    pub fn try_clone(&self) -> io::Result<Log> {
        Ok(Log {
            records: self.records.clone(),
            data: self.data.try_clone()?,
            kept: self.kept,
        })
    }

    /// Copies the data file's bytes the records point at (`[0, kept)`) to the start of `to`:
    /// how many.
    pub fn copy_data(&self, to: &File) -> io::Result<u64> {
        const CHUNK: u64 = 1 << 20;
        let mut buf = Vec::new();
        let mut done = 0;
        while done < self.kept {
            let n = (self.kept - done).min(CHUNK) as usize;
            buf.resize(n, 0);
            self.data.read_exact_at(&mut buf, done)?;
            to.write_all_at(&buf, done)?;
            done += n as u64;
        }
        Ok(done)
    }

    /// The records to `path` (the bytes stay in the data file): [`MAGIC`], the count, then 32
    /// bytes a record — kind (1 write, 2 flush, 3 discard, 4 mark), 7 zero bytes, and three
    /// little-endian u64: offset, length and data offset for a write; offset and length for a
    /// discard; the mark's number for a mark.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        File::create(path)?.write_all(&self.encode())
    }

    /// The records as [`Log::save`] writes them.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 32 * self.records.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&(self.records.len() as u64).to_le_bytes());
        for r in &self.records {
            let (kind, a, b, c) = match *r {
                Record::Write { offset, len, at } => (1u8, offset, len, at),
                Record::Flush => (2, 0, 0, 0),
                Record::Discard { offset, len } => (3, offset, len, 0),
                Record::Mark(n) => (4, n, 0, 0),
            };
            out.push(kind);
            out.extend_from_slice(&[0; 7]);
            for v in [a, b, c] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        out
    }

    /// A log saved by [`Log::save`] at `path`, its bytes in the data file at `data`.
    pub fn load(path: &Path, data: &Path) -> io::Result<Log> {
        let mut bytes = Vec::new();
        File::open(path)?.read_to_end(&mut bytes)?;
        Log::decode(path, &bytes, File::open(data)?)
    }

    /// The log whose records [`Log::encode`] made `bytes` (read from `path`, which errors
    /// name), its bytes in `data`.
    pub fn decode(path: &Path, bytes: &[u8], data: File) -> io::Result<Log> {
        let bad = |why: &str| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: not a write log of this fsbench: {why}", path.display()),
            )
        };
        if bytes.len() < 16 || bytes[..8] != MAGIC {
            return Err(bad("its first bytes are not fsbLOG version 1"));
        }
        let n = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
        if n.checked_mul(32).and_then(|b| b.checked_add(16)) != Some(bytes.len() as u64) {
            return Err(bad("its length is not that of its records"));
        }
        let kept = data.metadata()?.len();
        let u = |c: &[u8], i: usize| {
            u64::from_le_bytes(c[8 + 8 * i..16 + 8 * i].try_into().expect("8"))
        };
        let mut records = Vec::with_capacity(n as usize);
        for c in bytes[16..].chunks(32) {
            records.push(match c[0] {
                1 => {
                    let (offset, len, at) = (u(c, 0), u(c, 1), u(c, 2));
                    if at != ZEROS && at.checked_add(len).is_none_or(|end| end > kept) {
                        return Err(bad("a write's bytes are past the end of the data file"));
                    }
                    Record::Write { offset, len, at }
                }
                2 => Record::Flush,
                3 => Record::Discard {
                    offset: u(c, 0),
                    len: u(c, 1),
                },
                4 => Record::Mark(u(c, 0)),
                other => return Err(bad(&format!("a record of kind {other}"))),
            });
        }
        Ok(Log {
            records,
            data,
            kept,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes, flushes, discards and marks kept in order, zeros without bytes; saved and
    /// loaded back the same; applied to an image, the bytes written (and zeros for a discard).
    #[test]
    fn a_log_keeps_what_the_device_saw_and_applies_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Log::create(&dir.path().join("data")).unwrap();
        log.write(4096, &[7u8; 4096]).unwrap();
        log.mark(1);
        log.write(12288, &[0u8; 4096]).unwrap();
        log.flush();
        log.write(8192, &[9u8; 512]).unwrap();
        log.discard(4096, 4096);
        assert_eq!(
            log.counts(),
            Counts {
                writes: 3,
                flushes: 1,
                discards: 1,
                marks: 1,
                written: 4096 + 4096 + 512,
                kept: 4096 + 512,
            }
        );
        log.save(&dir.path().join("log")).unwrap();
        let back = Log::load(&dir.path().join("log"), &dir.path().join("data")).unwrap();
        assert_eq!(back.records, log.records);

        let image = tempfile::tempfile().unwrap();
        image.set_len(16384).unwrap();
        for i in 0..back.records.len() - 1 {
            back.apply(i, &image).unwrap();
        }
        let mut got = vec![0u8; 16384];
        image.read_exact_at(&mut got, 0).unwrap();
        assert!(got[4096..8192].iter().all(|&b| b == 7));
        assert!(got[8192..8704].iter().all(|&b| b == 9));
        back.apply(back.records.len() - 1, &image).unwrap();
        image.read_exact_at(&mut got, 0).unwrap();
        assert!(got[4096..8192].iter().all(|&b| b == 0));
        assert!(got[8192..8704].iter().all(|&b| b == 9));

        std::fs::write(dir.path().join("bad"), b"fsbLOG\x00\x02........").unwrap();
        let err = Log::load(&dir.path().join("bad"), &dir.path().join("data")).unwrap_err();
        assert!(err.to_string().contains("not a write log"), "{err}");
    }
}
