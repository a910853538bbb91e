//! A user-space buffered stream with the semantics of glibc's stdio, for iozone's fwrite and
//! fread tests.
//!
//! Like glibc (`_IO_new_file_xsputn`, `_IO_file_xsgetn`), the buffer is st_blksize bytes: a
//! write first fills the buffer, flushes it when full, writes any remaining whole buffers
//! directly and keeps the tail; a read is served from the buffer, reads whole buffers directly
//! into the caller's memory when it asks for at least a buffer, and refills otherwise. Using our
//! own stream (rather than libc's `FILE`) keeps the measured path free of locks and lets a
//! failure carry its errno.

use crate::fileio::raw;
use std::io;
use std::os::fd::RawFd;

/// Buffered writer over a file (fwrite semantics).
pub struct StdioWriter {
    buffer: Vec<u8>,
    used: usize,
}

impl StdioWriter {
    /// A writer with a buffer of `capacity` bytes (allocated once; reuse it across passes).
    pub fn new(capacity: usize) -> StdioWriter {
        StdioWriter {
            buffer: vec![0; capacity.max(1)],
            used: 0,
        }
    }

    /// Writes all of `data` through the buffer, like `fwrite(data, 1, len, stream)`.
    #[inline]
    pub fn write(&mut self, fd: RawFd, mut data: &[u8]) -> io::Result<u64> {
        let total = data.len() as u64;
        let capacity = self.buffer.len();
        let room = capacity - self.used;
        let n = room.min(data.len());
        self.buffer[self.used..self.used + n].copy_from_slice(&data[..n]);
        self.used += n;
        data = &data[n..];
        if data.is_empty() {
            return Ok(total);
        }
        self.flush(fd)?;
        let direct = data.len() - data.len() % capacity;
        if direct > 0 {
            raw::write_all(fd, &data[..direct])?;
            data = &data[direct..];
        }
        self.buffer[..data.len()].copy_from_slice(data);
        self.used = data.len();
        Ok(total)
    }

    /// Writes out what the buffer holds, like `fflush`.
    pub fn flush(&mut self, fd: RawFd) -> io::Result<()> {
        if self.used > 0 {
            let used = self.used;
            self.used = 0;
            raw::write_all(fd, &self.buffer[..used])?;
        }
        Ok(())
    }

    /// Forgets buffered bytes without writing them (after an error, before reuse).
    pub fn discard(&mut self) {
        self.used = 0;
    }
}

/// Buffered reader over a file (fread semantics).
pub struct StdioReader {
    buffer: Vec<u8>,
    start: usize,
    end: usize,
}

impl StdioReader {
    pub fn new(capacity: usize) -> StdioReader {
        StdioReader {
            buffer: vec![0; capacity.max(1)],
            start: 0,
            end: 0,
        }
    }

    /// Fills all of `out`, like `fread(out, 1, len, stream)`; a file that ends first is an
    /// `UnexpectedEof` error. Returns the bytes delivered.
    #[inline]
    pub fn read(&mut self, fd: RawFd, out: &mut [u8]) -> io::Result<u64> {
        let capacity = self.buffer.len();
        let mut filled = 0;
        while filled < out.len() {
            if self.start < self.end {
                let n = (self.end - self.start).min(out.len() - filled);
                out[filled..filled + n].copy_from_slice(&self.buffer[self.start..self.start + n]);
                self.start += n;
                filled += n;
                continue;
            }
            let want = out.len() - filled;
            let got = if want >= capacity {
                let direct = want - want % capacity;
                raw::read_some(fd, &mut out[filled..filled + direct])?
            } else {
                let got = raw::read_some(fd, &mut self.buffer)?;
                self.start = 0;
                self.end = got;
                if got > 0 {
                    continue;
                }
                got
            };
            if got == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file ended before the record was read",
                ));
            }
            filled += got;
        }
        Ok(filled as u64)
    }

    /// Empties the buffer (when the stream is reopened or rewound).
    pub fn reset(&mut self) {
        self.start = 0;
        self.end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::io::{Seek, SeekFrom};
    use std::os::fd::AsRawFd;

    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 251) as u8).collect()
    }

    #[test]
    fn writer_round_trips_every_record_size() {
        for record in [1usize, 100, 4096, 5000, 12288, 65536] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("f");
            let file = File::create(&path).unwrap();
            let mut w = StdioWriter::new(4096);
            let data = pattern(record * 10);
            for chunk in data.chunks(record) {
                assert_eq!(
                    w.write(file.as_raw_fd(), chunk).unwrap(),
                    chunk.len() as u64
                );
            }
            w.flush(file.as_raw_fd()).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), data, "record {record}");

            let file = File::open(&path).unwrap();
            let mut r = StdioReader::new(4096);
            let mut back = vec![0u8; data.len()];
            for chunk in back.chunks_mut(record) {
                r.read(file.as_raw_fd(), chunk).unwrap();
            }
            assert_eq!(back, data, "record {record}");
        }
    }

    #[test]
    fn small_writes_stay_in_the_buffer_until_full() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = File::create(&path).unwrap();
        let mut w = StdioWriter::new(4096);
        w.write(file.as_raw_fd(), &[1u8; 1000]).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        w.write(file.as_raw_fd(), &[2u8; 4000]).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 4096);
    }

    #[test]
    fn reading_past_the_end_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, [0u8; 5000]).unwrap();
        let mut file = File::open(&path).unwrap();
        let mut r = StdioReader::new(4096);
        let mut out = vec![0u8; 4096];
        r.read(file.as_raw_fd(), &mut out).unwrap();
        let err = r.read(file.as_raw_fd(), &mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        file.seek(SeekFrom::Start(0)).unwrap();
        r.reset();
        r.read(file.as_raw_fd(), &mut out).unwrap();
    }
}
