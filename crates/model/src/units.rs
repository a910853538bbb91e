//! Sizes and durations as people type them (`4k`, `64m`, `1g`, `50ms`) and as reports print them.
//!
//! Size suffixes are binary, as in iozone and fio: `k` = 1024 bytes, `m` = 1024 k, `g` = 1024 m,
//! `t` = 1024 g; an optional trailing `b` or `ib` is accepted (`4KiB`, `4kb`). A bare number is
//! bytes.

use std::fmt;
use thiserror::Error;

/// A size or duration that could not be read; the message says what is accepted.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    #[error("'{0}' is not a size: write a whole number with an optional k, m, g or t suffix (binary: 4k = 4096 bytes)")]
    Size(String),
    #[error(
        "'{0}' is not a duration: write a number with ns, us, ms, s, m or h (e.g. 50ms, 2s, 10m)"
    )]
    Duration(String),
    #[error("'{0}' is too long: a duration is at most 100 years")]
    TooLong(String),
    #[error("'{0}' is not a size range: write FROM..TO (e.g. 4k..64m) or a comma-separated list (e.g. 1m,8m)")]
    Range(String),
}

/// Parses `4k`, `64M`, `1g`, `4KiB`, `4096` into bytes.
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    let t = text.trim();
    let lower = t.to_ascii_lowercase();
    let without_b = lower
        .strip_suffix("ib")
        .or_else(|| lower.strip_suffix('b'))
        .unwrap_or(&lower);
    let (digits, shift) = match without_b.chars().last() {
        Some('k') => (&without_b[..without_b.len() - 1], 10),
        Some('m') => (&without_b[..without_b.len() - 1], 20),
        Some('g') => (&without_b[..without_b.len() - 1], 30),
        Some('t') => (&without_b[..without_b.len() - 1], 40),
        _ => (without_b, 0),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(UnitError::Size(text.to_string()));
    }
    let n: u64 = digits
        .parse()
        .map_err(|_| UnitError::Size(text.to_string()))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| UnitError::Size(text.to_string()))
}

/// How a list of sizes was written: an inclusive power-of-two range, or explicit values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeSpec {
    /// `FROM..TO`: every power of two from FROM to TO.
    Range { from: u64, to: u64 },
    /// `A,B,C`: exactly these sizes.
    List(Vec<u64>),
}

impl SizeSpec {
    /// Parses `4k..64m` or `1m,8m` (a single size is a one-element list).
    pub fn parse(text: &str) -> Result<SizeSpec, UnitError> {
        if let Some((from, to)) = text.split_once("..") {
            let (from, to) = (parse_size(from)?, parse_size(to)?);
            return Ok(SizeSpec::Range { from, to });
        }
        let items: Result<Vec<u64>, UnitError> = text
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(parse_size)
            .collect();
        let items = items?;
        if items.is_empty() {
            return Err(UnitError::Range(text.to_string()));
        }
        Ok(SizeSpec::List(items))
    }
}

impl std::str::FromStr for SizeSpec {
    type Err = UnitError;
    fn from_str(text: &str) -> Result<SizeSpec, UnitError> {
        SizeSpec::parse(text)
    }
}

/// Written back as it parses: `4k..64m`, `1m,8m`.
impl fmt::Display for SizeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeSpec::Range { from, to } => write!(f, "{}..{}", size_label(*from), size_label(*to)),
            SizeSpec::List(items) => {
                let items: Vec<String> = items.iter().map(|&s| size_label(s)).collect();
                f.write_str(&items.join(","))
            }
        }
    }
}

/// A size as a setting: `64m`, written back the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Size(pub u64);

impl std::str::FromStr for Size {
    type Err = UnitError;
    fn from_str(text: &str) -> Result<Size, UnitError> {
        parse_size(text).map(Size)
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&size_label(self.0))
    }
}

/// A duration as a setting: `20ms`, `1.5s`; written back in the largest unit that keeps it
/// exact (`20ms`, `1500ms`, `0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct TimeSpan {
    pub ns: u64,
}

impl TimeSpan {
    pub const fn from_ns(ns: u64) -> TimeSpan {
        TimeSpan { ns }
    }
}

impl std::str::FromStr for TimeSpan {
    type Err = UnitError;
    fn from_str(text: &str) -> Result<TimeSpan, UnitError> {
        parse_duration_ns(text).map(TimeSpan::from_ns)
    }
}

impl fmt::Display for TimeSpan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 5] = [
            (3_600_000_000_000, "h"),
            (1_000_000_000, "s"),
            (1_000_000, "ms"),
            (1_000, "us"),
            (1, "ns"),
        ];
        if self.ns == 0 {
            return f.write_str("0");
        }
        let (unit, suffix) = UNITS
            .into_iter()
            .find(|(unit, _)| self.ns % unit == 0)
            .unwrap_or((1, "ns"));
        write!(f, "{}{suffix}", self.ns / unit)
    }
}

crate::text_serde!(SizeSpec, Size, TimeSpan);

/// Parses `50ms`, `2s`, `1.5s`, `500us`, `1m`, `2h`, `100ns` into nanoseconds. A bare number is
/// seconds.
pub fn parse_duration_ns(text: &str) -> Result<u64, UnitError> {
    let t = text.trim().to_ascii_lowercase();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" | "" => 1e9,
        "m" | "min" => 60e9,
        "h" => 3600e9,
        _ => return Err(UnitError::Duration(text.to_string())),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| UnitError::Duration(text.to_string()))?;
    if !value.is_finite() || value < 0.0 {
        return Err(UnitError::Duration(text.to_string()));
    }
    let ns = (value * scale).round();
    if ns > MAX_DURATION_NS as f64 {
        return Err(UnitError::TooLong(text.to_string()));
    }
    Ok(ns as u64)
}

/// The longest duration a setting may take: 100 years. Longer ones would not fit the
/// nanosecond arithmetic of deadlines and intervals (a u64 of nanoseconds ends at 584 years,
/// and was silently cut there), and mean nothing for a benchmark.
pub const MAX_DURATION_NS: u64 = 100 * 31_557_600 * 1_000_000_000;

pub use crate::size_label;

/// Human size with a binary unit: `1.5 GiB`, `4 KiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Human duration: `850 ns`, `12.3 µs`, `4.56 ms`, `1.23 s`, `2 min 3 s`.
pub fn human_duration(ns: u64) -> String {
    let v = ns as f64;
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", v / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", v / 1e6)
    } else if ns < 120_000_000_000 {
        format!("{:.2} s", v / 1e9)
    } else {
        format!(
            "{} min {} s",
            ns / 60_000_000_000,
            ns % 60_000_000_000 / 1_000_000_000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_with_binary_suffixes() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("0"), Ok(0));
        for bad in ["", "k", "4x", "-4k", "4.5k", "99999999999t"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ranges_and_lists() {
        assert_eq!(
            SizeSpec::parse("4k..64m"),
            Ok(SizeSpec::Range {
                from: 4096,
                to: 64 << 20
            })
        );
        assert_eq!(
            SizeSpec::parse("1m,8m"),
            Ok(SizeSpec::List(vec![1 << 20, 8 << 20]))
        );
        assert_eq!(SizeSpec::parse("16k"), Ok(SizeSpec::List(vec![16384])));
        assert!(SizeSpec::parse(",").is_err());
        assert!(SizeSpec::parse("4k..x").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("50ms"), Ok(50_000_000));
        assert_eq!(parse_duration_ns("2s"), Ok(2_000_000_000));
        assert_eq!(parse_duration_ns("1.5s"), Ok(1_500_000_000));
        assert_eq!(parse_duration_ns("500us"), Ok(500_000));
        assert_eq!(parse_duration_ns("0"), Ok(0));
        assert_eq!(parse_duration_ns("1m"), Ok(60_000_000_000));
        assert_eq!(parse_duration_ns("2h"), Ok(7_200_000_000_000));
        assert!(parse_duration_ns("fast").is_err());
        assert!(parse_duration_ns("-1s").is_err());
        // Past what nanoseconds hold: refused, not cut to 2^64 ns.
        assert!(matches!(
            parse_duration_ns("1000000000h"),
            Err(UnitError::TooLong(_))
        ));
        assert!(parse_duration_ns("876000h").is_ok());
    }

    #[test]
    fn settings_are_written_back_as_they_parse() {
        for text in ["4k..64m", "1m,8m", "16k"] {
            assert_eq!(text.parse::<SizeSpec>().unwrap().to_string(), text);
        }
        for text in ["20ms", "0", "1500ms", "3s", "2h", "500us", "7ns"] {
            assert_eq!(text.parse::<TimeSpan>().unwrap().to_string(), text);
        }
        assert_eq!("1.5s".parse::<TimeSpan>().unwrap().to_string(), "1500ms");
        assert_eq!("2m".parse::<Size>().unwrap().to_string(), "2m");
        let json = serde_json::to_string(&TimeSpan::from_ns(20_000_000)).unwrap();
        assert_eq!(json, "\"20ms\"");
        let back: TimeSpan = serde_json::from_str(&json).unwrap();
        assert_eq!(back.ns, 20_000_000);
        let e = serde_json::from_str::<SizeSpec>("\"lots\"")
            .unwrap_err()
            .to_string();
        assert!(e.contains("'lots' is not a size"), "{e}");
    }

    #[test]
    fn labels() {
        assert_eq!(size_label(4096), "4k");
        assert_eq!(size_label(64 << 20), "64m");
        assert_eq!(size_label(1 << 30), "1g");
        assert_eq!(size_label(1000), "1000");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(human_bytes(4096), "4 KiB");
        assert_eq!(human_duration(1_230_000_000), "1.23 s");
    }
}
