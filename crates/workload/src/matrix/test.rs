//! The matrix's tests (iozone's `-i` numbers) and the phases each one measures.

use serde::{Serialize, Serializer};
use std::fmt;

/// One test of the matrix, numbered as iozone's `-i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MatrixTest {
    Write,
    Read,
    Random,
    Backward,
    RecordRewrite,
    Stride,
    Fwrite,
    Fread,
    RandomMix,
    Pwrite,
    Pread,
}

impl MatrixTest {
    /// Every test, in iozone's order.
    pub const ALL: [MatrixTest; 11] = [
        MatrixTest::Write,
        MatrixTest::Read,
        MatrixTest::Random,
        MatrixTest::Backward,
        MatrixTest::RecordRewrite,
        MatrixTest::Stride,
        MatrixTest::Fwrite,
        MatrixTest::Fread,
        MatrixTest::RandomMix,
        MatrixTest::Pwrite,
        MatrixTest::Pread,
    ];

    /// iozone's `-i` number.
    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn name(self) -> &'static str {
        match self {
            MatrixTest::Write => "write",
            MatrixTest::Read => "read",
            MatrixTest::Random => "random",
            MatrixTest::Backward => "backward",
            MatrixTest::RecordRewrite => "record-rewrite",
            MatrixTest::Stride => "stride",
            MatrixTest::Fwrite => "fwrite",
            MatrixTest::Fread => "fread",
            MatrixTest::RandomMix => "random-mix",
            MatrixTest::Pwrite => "pwrite",
            MatrixTest::Pread => "pread",
        }
    }

    /// The phases this test measures, in order.
    pub fn phases(self) -> &'static [Phase] {
        match self {
            MatrixTest::Write => &[Phase::Write, Phase::Rewrite],
            MatrixTest::Read => &[Phase::Read, Phase::Reread],
            MatrixTest::Random => &[Phase::RandomRead, Phase::RandomWrite],
            MatrixTest::Backward => &[Phase::BackwardRead],
            MatrixTest::RecordRewrite => &[Phase::RecordRewrite],
            MatrixTest::Stride => &[Phase::StrideRead],
            MatrixTest::Fwrite => &[Phase::Fwrite, Phase::Refwrite],
            MatrixTest::Fread => &[Phase::Fread, Phase::Refread],
            MatrixTest::RandomMix => &[Phase::RandomMix],
            MatrixTest::Pwrite => &[Phase::Pwrite, Phase::Repwrite],
            MatrixTest::Pread => &[Phase::Pread, Phase::Repread],
        }
    }

    /// Reads a test by name (`write`), iozone number (`0`), or the name of one of its phases
    /// (`rewrite` selects the write test).
    pub fn parse(text: &str) -> Result<MatrixTest, String> {
        let t = text.trim().to_ascii_lowercase();
        if let Ok(number) = t.parse::<usize>() {
            return MatrixTest::ALL.get(number).copied().ok_or_else(|| {
                format!(
                    "unknown test number {number}: iozone numbers 0 to 10 are supported ({})",
                    Self::valid_list()
                )
            });
        }
        let t = t.replace('_', "-");
        MatrixTest::ALL
            .into_iter()
            .find(|test| test.name() == t || test.phases().iter().any(|p| p.name() == t))
            .ok_or_else(|| format!("unknown test '{text}': use one of {}", Self::valid_list()))
    }

    /// `write (0), read (1), ...` for messages.
    pub fn valid_list() -> String {
        MatrixTest::ALL
            .iter()
            .map(|t| format!("{} ({})", t.name(), t.number()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

// Serialized as its name, the one spelling used everywhere; read by name or iozone number.
fsbench_model::text_serde!(MatrixTest);

impl std::str::FromStr for MatrixTest {
    type Err = String;
    fn from_str(text: &str) -> Result<MatrixTest, String> {
        MatrixTest::parse(text)
    }
}

impl fmt::Display for MatrixTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One measured result kind of the matrix: a test's first or repeated pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Phase {
    Write,
    Rewrite,
    Read,
    Reread,
    RandomRead,
    RandomWrite,
    BackwardRead,
    RecordRewrite,
    StrideRead,
    Fwrite,
    Refwrite,
    Fread,
    Refread,
    RandomMix,
    Pwrite,
    Repwrite,
    Pread,
    Repread,
}

/// Which system calls a phase issues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// read(2) / write(2) at the file position.
    Stream,
    /// pread(2) / pwrite(2) at explicit offsets.
    Positional,
    /// A user-space buffer with stdio semantics (fread / fwrite).
    Stdio,
}

/// The order in which records are visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Sequential,
    Backward,
    /// Every `stride`-th record, wrapping around.
    Stride,
    /// Each record once per pass, in a fresh random order.
    Random,
    /// The same record over and over.
    SameRecord,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Read,
    Write,
    /// Random choice per operation (see the mix read percentage).
    Mixed,
}

impl Phase {
    /// The phase of this name, as [`Phase::name`] spells it.
    pub fn parse(name: &str) -> Option<Phase> {
        MatrixTest::ALL
            .iter()
            .flat_map(|t| t.phases().iter().copied())
            .find(|p| p.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Phase::Write => "write",
            Phase::Rewrite => "rewrite",
            Phase::Read => "read",
            Phase::Reread => "reread",
            Phase::RandomRead => "random-read",
            Phase::RandomWrite => "random-write",
            Phase::BackwardRead => "backward-read",
            Phase::RecordRewrite => "record-rewrite",
            Phase::StrideRead => "stride-read",
            Phase::Fwrite => "fwrite",
            Phase::Refwrite => "re-fwrite",
            Phase::Fread => "fread",
            Phase::Refread => "re-fread",
            Phase::RandomMix => "random-mix",
            Phase::Pwrite => "pwrite",
            Phase::Repwrite => "re-pwrite",
            Phase::Pread => "pread",
            Phase::Repread => "re-pread",
        }
    }

    /// The title of iozone's `-R` report block for this phase.
    pub fn report_title(self) -> &'static str {
        match self {
            Phase::Write => "Writer report",
            Phase::Rewrite => "Re-writer report",
            Phase::Read => "Reader report",
            Phase::Reread => "Re-reader report",
            Phase::RandomRead => "Random read report",
            Phase::RandomWrite => "Random write report",
            Phase::BackwardRead => "Backward read report",
            Phase::RecordRewrite => "Record rewrite report",
            Phase::StrideRead => "Stride read report",
            Phase::Fwrite => "Fwrite report",
            Phase::Refwrite => "Re-fwrite report",
            Phase::Fread => "Fread report",
            Phase::Refread => "Re-fread report",
            Phase::RandomMix => "Mixed workload report",
            Phase::Pwrite => "Pwrite report",
            Phase::Repwrite => "Re-pwrite report",
            Phase::Pread => "Pread report",
            Phase::Repread => "Re-pread report",
        }
    }

    pub fn api(self) -> Api {
        match self {
            Phase::Write | Phase::Rewrite | Phase::Read | Phase::Reread => Api::Stream,
            Phase::Fwrite | Phase::Refwrite | Phase::Fread | Phase::Refread => Api::Stdio,
            _ => Api::Positional,
        }
    }

    pub fn access(self) -> Access {
        match self {
            Phase::RandomRead | Phase::RandomWrite | Phase::RandomMix => Access::Random,
            Phase::BackwardRead => Access::Backward,
            Phase::StrideRead => Access::Stride,
            Phase::RecordRewrite => Access::SameRecord,
            _ => Access::Sequential,
        }
    }

    pub fn direction(self) -> Direction {
        match self {
            Phase::Write
            | Phase::Rewrite
            | Phase::RandomWrite
            | Phase::RecordRewrite
            | Phase::Fwrite
            | Phase::Refwrite
            | Phase::Pwrite
            | Phase::Repwrite => Direction::Write,
            Phase::RandomMix => Direction::Mixed,
            _ => Direction::Read,
        }
    }

    /// True when every pass starts by creating the file anew.
    pub fn creates_file(self) -> bool {
        matches!(self, Phase::Write | Phase::Fwrite | Phase::Pwrite)
    }

    /// True when a pass writes the whole file from start to end (so afterwards it is complete).
    pub fn writes_whole_file(self) -> bool {
        matches!(
            self,
            Phase::Write
                | Phase::Rewrite
                | Phase::Fwrite
                | Phase::Refwrite
                | Phase::Pwrite
                | Phase::Repwrite
        )
    }

    /// True for a test's first read phase, which starts cold when caches are dropped; the
    /// re- phases measure the cache the first one left.
    pub fn may_start_cold(self) -> bool {
        matches!(
            self,
            Phase::Read
                | Phase::RandomRead
                | Phase::BackwardRead
                | Phase::StrideRead
                | Phase::Fread
                | Phase::RandomMix
                | Phase::Pread
        )
    }

    pub fn test(self) -> MatrixTest {
        MatrixTest::ALL
            .into_iter()
            .find(|t| t.phases().contains(&self))
            .expect("every phase belongs to a test")
    }
}

/// Serialized as its name, the one spelling used everywhere.
impl Serialize for Phase {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_numbers_and_phase_names_select_tests() {
        assert_eq!(MatrixTest::parse("write"), Ok(MatrixTest::Write));
        assert_eq!(MatrixTest::parse("0"), Ok(MatrixTest::Write));
        assert_eq!(MatrixTest::parse("8"), Ok(MatrixTest::RandomMix));
        assert_eq!(MatrixTest::parse("10"), Ok(MatrixTest::Pread));
        assert_eq!(MatrixTest::parse("rewrite"), Ok(MatrixTest::Write));
        assert_eq!(
            MatrixTest::parse("Record_Rewrite"),
            Ok(MatrixTest::RecordRewrite)
        );
        let err = MatrixTest::parse("fsync").unwrap_err();
        assert!(
            err.contains("unknown test 'fsync'") && err.contains("pread (10)"),
            "{err}"
        );
        assert!(MatrixTest::parse("11").is_err());
    }

    #[test]
    fn numbers_follow_iozone() {
        let numbers: Vec<u8> = MatrixTest::ALL.iter().map(|t| t.number()).collect();
        assert_eq!(numbers, (0..=10).collect::<Vec<u8>>());
    }

    #[test]
    fn every_phase_belongs_to_exactly_one_test() {
        let mut all: Vec<Phase> = MatrixTest::ALL
            .iter()
            .flat_map(|t| t.phases().iter().copied())
            .collect();
        assert_eq!(all.len(), 18);
        all.sort();
        all.dedup();
        assert_eq!(all.len(), 18);
        for p in all {
            assert!(p.test().phases().contains(&p));
            assert_eq!(serde_json::to_value(p).unwrap(), p.name());
        }
        for t in MatrixTest::ALL {
            assert_eq!(serde_json::to_value(t).unwrap(), t.name());
        }
    }
}
