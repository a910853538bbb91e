//! File names as a setting, for every workload that makes many files: `random` (fs_mark's
//! names: 40 bytes, the last 24 random), `sequential` (the workload's own numbered names,
//! `f0-17`) or `LENGTH:RANDOM` (fs_mark's `-p LENGTH -r RANDOM`). Names decide rankings: a
//! B-tree directory takes names in order far faster than names in no order (fs_mark on btrfs,
//! issue 36: 86 k creates/s with sequential names, 42 k with random ones), and real
//! applications seldom name files in order (hashes, temporary names, mail, caches).
//!
//! A random name is made from the run's seed and the name's number, so a repetition with the
//! same seed makes the same names, and two numbers never make the same name: the random part
//! begins with the number put through a keyed permutation, written in fs_mark's alphabet. A
//! name is written into a caller's buffer without allocating; [`Table`] holds the names a
//! workload makes before its timed loop.

use crate::WorkloadError;
use std::ffi::CStr;
use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

/// The longest name a directory entry may have (NAME_MAX).
pub const NAME_MAX: usize = 255;

/// fs_mark's default names: 40 bytes, of which the last 24 are random (its `-p 40 -r 24`).
const FS_MARK: NameScheme = NameScheme::Random {
    length: 40,
    random: 24,
};

/// fs_mark's random characters: the upper-case letters and digits (its `setup_file_name`).
const ALPHABET: &[u8; 36] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Random characters that carry the name's number (36^12 < 2^63: one permutation over u64).
const NUMBERED: u32 = 12;

/// How a workload names the files it makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameScheme {
    /// The workload's own short numbered names (`f0-0`, `f0-1`, ...): the best case of a
    /// directory indexed by name, and what study 003's shell loops and FFSB made.
    Sequential,
    /// fs_mark's names: `length` bytes, the first `length - random` of fs_mark's time stamp
    /// (8 hex digits, then `~`), the last `random` upper-case letters and digits.
    Random { length: u8, random: u8 },
}

impl Default for NameScheme {
    fn default() -> NameScheme {
        FS_MARK
    }
}

impl NameScheme {
    /// fs_mark's names (the default).
    pub const FS_MARK: NameScheme = FS_MARK;

    /// How many different names it can make: every number below it has its own name.
    pub fn capacity(self) -> u64 {
        match self {
            NameScheme::Sequential => u64::MAX,
            NameScheme::Random { random, .. } => 36u64.pow(u32::from(random).min(NUMBERED)),
        }
    }

    /// Refuses, naming `field`, a scheme that has fewer names than the `names` a run makes.
    pub fn check(self, field: &'static str, names: u64) -> Result<(), WorkloadError> {
        if names > self.capacity() {
            return Err(WorkloadError::invalid(
                field,
                format!(
                    "{self} has {} random characters, enough for {} different names, and the \
                     run makes up to {names}: give more random characters (e.g. random)",
                    match self {
                        NameScheme::Random { random, .. } => random,
                        NameScheme::Sequential => 0,
                    },
                    self.capacity()
                ),
            ));
        }
        Ok(())
    }

    /// The bytes of one name at most, when the scheme fixes it (None: the workload's own).
    pub fn length(self) -> Option<usize> {
        match self {
            NameScheme::Sequential => None,
            NameScheme::Random { length, .. } => Some(usize::from(length)),
        }
    }
}

impl fmt::Display for NameScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NameScheme::Sequential => f.pad("sequential"),
            s if s == FS_MARK => f.pad("random"),
            NameScheme::Random { length, random } => f.pad(&format!("{length}:{random}")),
        }
    }
}

impl FromStr for NameScheme {
    type Err = String;
    fn from_str(text: &str) -> Result<NameScheme, String> {
        let usage = "use random (fs_mark's names: 40 bytes, the last 24 random), sequential \
                     (numbered: f0-1, f0-2, ...) or LENGTH:RANDOM (e.g. 64:32)";
        match text.trim() {
            "random" => return Ok(FS_MARK),
            "sequential" => return Ok(NameScheme::Sequential),
            _ => {}
        }
        let (length, random) = text
            .trim()
            .split_once(':')
            .ok_or_else(|| format!("unknown names '{text}': {usage}"))?;
        let number = |s: &str| {
            s.trim()
                .parse::<u16>()
                .map_err(|_| format!("'{text}' is not LENGTH:RANDOM: {usage}"))
        };
        let (length, random) = (number(length)?, number(random)?);
        if length == 0 || length as usize > NAME_MAX {
            return Err(format!(
                "names of {length} bytes: a name has 1 to {NAME_MAX} bytes"
            ));
        }
        if random > length {
            return Err(format!(
                "{random} random characters in a name of {length} bytes: at most {length}"
            ));
        }
        Ok(NameScheme::Random {
            length: length as u8,
            random: random as u8,
        })
    }
}

fsbench_model::text_serde!(NameScheme);

/// Makes the names of one run: a scheme and the keys its seed gives.
#[derive(Debug, Clone, Copy)]
pub struct Namer {
    scheme: NameScheme,
    /// fs_mark's time stamp (its start second in hex): here from the seed, so that it repeats.
    stamp: [u8; 8],
    /// The permutation of numbers: its keys and odd multipliers, its domain (36^k) and width.
    keys: [u64; 4],
    multipliers: [u64; 4],
    domain: u64,
    bits: u32,
    /// The random characters after the numbered ones.
    filler: u64,
}

/// splitmix64's finaliser: the keys from the seed, the filler from a name's number.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Namer {
    /// The names of a run with `seed` (the workload's: a repetition with it makes the same).
    pub fn new(scheme: NameScheme, seed: u64) -> Namer {
        // Names have a stream of their own: the same seed gives the data its own.
        let mut state = mix(seed ^ 0x6E61_6D65_7321_0000);
        let mut next = || {
            state = mix(state);
            state
        };
        let mut stamp = [0u8; 8];
        let _ = write!(&mut stamp[..], "{:08x}", next() as u32);
        let keys = [next(), next(), next(), next()];
        let multipliers = [next() | 1, next() | 1, next() | 1, next() | 1];
        let domain = match scheme {
            NameScheme::Random { random, .. } => 36u64.pow(u32::from(random).min(NUMBERED)),
            NameScheme::Sequential => 1,
        };
        Namer {
            scheme,
            stamp,
            keys,
            multipliers,
            domain,
            bits: 64 - (domain - 1).leading_zeros(),
            filler: next(),
        }
    }

    pub fn scheme(&self) -> NameScheme {
        self.scheme
    }

    /// Writes name number `number` to `out`: under `sequential`, the workload's own
    /// `sequential` text; otherwise the scheme's random name for the number (the same for the
    /// same seed and number, another for every other number below the scheme's capacity).
    /// Nothing is allocated.
    pub fn write(
        &self,
        out: &mut impl Write,
        sequential: fmt::Arguments<'_>,
        number: u64,
    ) -> io::Result<()> {
        let NameScheme::Random { length, random } = self.scheme else {
            return out.write_fmt(sequential);
        };
        let (length, random) = (usize::from(length), usize::from(random));
        let mut name = [0u8; NAME_MAX];
        // fs_mark's head: its time stamp's last hex digits, or all 8 and `~` up to the length.
        let head = length - random;
        for (i, byte) in name[..head].iter_mut().enumerate() {
            *byte = if head <= 8 {
                self.stamp[8 - head + i]
            } else if i < 8 {
                self.stamp[i]
            } else {
                b'~'
            };
        }
        // The number, permuted, as the first random characters (most significant first) ...
        let numbered = random.min(NUMBERED as usize);
        let mut value = self.permute(number % self.domain);
        for byte in name[head..head + numbered].iter_mut().rev() {
            *byte = ALPHABET[(value % 36) as usize];
            value /= 36;
        }
        // ... then characters that carry nothing, 12 from each draw.
        let mut draw = mix(self.filler ^ number);
        for (i, byte) in name[head + numbered..length].iter_mut().enumerate() {
            if i > 0 && i % NUMBERED as usize == 0 {
                draw = mix(draw);
            }
            *byte = ALPHABET[(draw % 36) as usize];
            draw /= 36;
        }
        out.write_all(&name[..length])
    }

    /// A keyed permutation of `0..domain`: rounds that are each one-to-one on `bits`-bit
    /// numbers (xor a key, multiply by an odd number, xor the high half into the low), walked
    /// again from a value at or above the domain until it lands inside ("cycle walking").
    fn permute(&self, number: u64) -> u64 {
        if self.domain <= 1 {
            return 0;
        }
        let mask = u64::MAX >> (64 - self.bits);
        let shift = self.bits.div_ceil(2);
        let mut x = number;
        loop {
            for (key, multiplier) in self.keys.iter().zip(self.multipliers) {
                x = ((x ^ key) & mask).wrapping_mul(multiplier) & mask;
                x ^= x >> shift;
            }
            if x < self.domain {
                return x;
            }
        }
    }
}

/// Names made before a timed loop: one buffer for all (each name with its NUL), and where each
/// ends; a name is then a slice of it, looked up without allocating.
#[derive(Debug, Default)]
pub struct Table {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Table {
    /// `count` names: name `i` is `{prefix}{i}` under the sequential scheme, and number
    /// `first + i` of `namer` under another.
    pub fn new(namer: &Namer, count: u64, first: u64, prefix: &str) -> Table {
        let per_name = namer.scheme.length().unwrap_or(prefix.len() + 8) + 1;
        let mut table = Table {
            bytes: Vec::with_capacity(per_name * count as usize),
            ends: Vec::with_capacity(count as usize),
        };
        let mut name = [0u8; NAME_MAX];
        for i in 0..count {
            let mut at = &mut name[..];
            namer
                .write(&mut at, format_args!("{prefix}{i}"), first + i)
                .expect("a name fits in NAME_MAX bytes");
            let length = NAME_MAX - at.len();
            table.bytes.extend_from_slice(&name[..length]);
            table.bytes.push(0);
            table.ends.push(table.bytes.len());
        }
        table
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Name `i`, with its NUL.
    #[inline]
    pub fn get(&self, i: usize) -> &CStr {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        CStr::from_bytes_with_nul(&self.bytes[start..self.ends[i]]).expect("one NUL, at the end")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn name(namer: &Namer, number: u64) -> String {
        let mut out = Vec::new();
        namer
            .write(&mut out, format_args!("f0-{number}"), number)
            .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn schemes_read_and_print_alike() {
        for text in ["random", "sequential", "64:32", "8:0", "255:255"] {
            let scheme: NameScheme = text.parse().unwrap();
            assert_eq!(scheme.to_string(), text);
        }
        assert_eq!(
            "40:24".parse::<NameScheme>().unwrap(),
            NameScheme::default()
        );
        assert_eq!(NameScheme::default().to_string(), "random");
        let bad = |text: &str| text.parse::<NameScheme>().unwrap_err();
        assert!(bad("hashed").starts_with("unknown names 'hashed': use random"));
        assert!(bad("0:0").contains("a name has 1 to 255 bytes"));
        assert!(bad("256:1").contains("a name has 1 to 255 bytes"));
        assert!(bad("8:9").contains("at most 8"));
        assert!(bad("8:x").contains("is not LENGTH:RANDOM"));
    }

    /// fs_mark's format: 8 hex digits of its time stamp, `~` to 16 bytes, then 24 upper-case
    /// letters and digits; the same names for the same seed, others for another.
    #[test]
    fn random_names_are_fs_mark_s_and_follow_the_seed() {
        let namer = Namer::new(NameScheme::default(), 7);
        let first = name(&namer, 0);
        assert_eq!(first.len(), 40, "{first}");
        let (stamp, rest) = first.split_at(8);
        assert!(stamp
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(&rest[..8], "~~~~~~~~");
        assert!(rest[8..]
            .bytes()
            .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()));
        assert_eq!(name(&Namer::new(NameScheme::default(), 7), 0), first);
        assert_ne!(name(&Namer::new(NameScheme::default(), 8), 0), first);
        // Short heads keep the stamp's last digits, as fs_mark keeps its least significant.
        let short = Namer::new("6:4".parse().unwrap(), 7);
        assert_eq!(name(&short, 5)[..2], stamp[6..]);
        // Sequential names are the workload's own.
        let sequential = Namer::new(NameScheme::Sequential, 7);
        assert_eq!(name(&sequential, 12), "f0-12");
    }

    /// Every number below the capacity has a name of its own: all 36^2 names of a scheme with
    /// two random characters, and 200,000 of fs_mark's.
    #[test]
    fn no_two_numbers_share_a_name() {
        for (scheme, count) in [("5:2", 36 * 36), ("3:3", 36 * 36 * 36), ("random", 200_000)] {
            let namer = Namer::new(scheme.parse().unwrap(), 3);
            let names: HashSet<String> = (0..count).map(|n| name(&namer, n)).collect();
            assert_eq!(names.len() as u64, count, "{scheme}");
        }
        // The numbered characters are spread: consecutive numbers differ in most of them.
        let namer = Namer::new(NameScheme::default(), 3);
        let (a, b) = (name(&namer, 1000), name(&namer, 1001));
        let differ = a.bytes().zip(b.bytes()).filter(|(x, y)| x != y).count();
        assert!(differ > 12, "{a} {b}");
    }

    #[test]
    fn a_scheme_with_too_few_names_for_the_run_is_refused() {
        let two: NameScheme = "5:2".parse().unwrap();
        assert!(two.check("names", 1296).is_ok());
        let err = two.check("names", 1297).unwrap_err().to_string();
        assert!(
            err.starts_with("names: 5:2 has 2 random characters, enough for 1296"),
            "{err}"
        );
        assert!(NameScheme::default()
            .check("names", u32::MAX as u64 * 4096)
            .is_ok());
        assert!(NameScheme::Sequential.check("names", u64::MAX).is_ok());
    }

    #[test]
    fn a_table_holds_each_name_with_its_nul() {
        let namer = Namer::new(NameScheme::Sequential, 1);
        let table = Table::new(&namer, 3, 0, "f2-");
        assert_eq!(table.len(), 3);
        assert_eq!(table.get(2), c"f2-2");
        let namer = Namer::new(NameScheme::default(), 1);
        let table = Table::new(&namer, 2, 10, "f2-");
        assert_eq!(table.get(1).to_bytes(), name(&namer, 11).as_bytes());
    }
}
