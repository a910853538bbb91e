//! How a filesystem is aged and what aging did: the spec a plan's `[aging.NAME]` table or
//! `--age` gives ([`AgingSpec`], with its file [`Sizes`]), what aging did and measured
//! ([`Aged`]: its rounds, the fill and fragmentation after them; a target's read-back carries
//! it, `crate::target::AgedTarget`). Plain data, stored as JSON and read back by the reports;
//! the aging itself is `fsbench-testbed`'s.

use crate::units::{human_bytes, parse_size};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How a filesystem is aged: a plan's `[aging.NAME]` table, or `--age` on a workload command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgingSpec {
    /// The share of the filesystem in use once aged, in percent (as `statfs` counts it: size
    /// minus free blocks, over size).
    pub fill_percent: f64,
    /// The file sizes: the default distribution of real filesystems, or sizes given with
    /// weights.
    pub sizes: Sizes,
    /// Directory levels below the tree's top.
    pub depth: u32,
    /// Subdirectories of each directory above the last level.
    pub fanout: u32,
    /// Churn rounds after the fill; with a fragmentation target, the most rounds.
    pub churn: u32,
    /// Churn until the sampled files have this many extents on average (at least 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fragmentation: Option<f64>,
    pub seed: u64,
}

impl Default for AgingSpec {
    fn default() -> AgingSpec {
        AgingSpec {
            fill_percent: 70.0,
            sizes: Sizes::Measured,
            depth: 3,
            fanout: 8,
            churn: 3,
            fragmentation: None,
            seed: 1,
        }
    }
}

/// The keys of an aging spec, as a plan's table and `--age` name them.
pub const KEYS: &[&str] = &[
    "fill",
    "sizes",
    "depth",
    "fanout",
    "churn",
    "fragmentation",
    "seed",
];

impl AgingSpec {
    /// Sets one key from its text (a plan's value, or `--age`'s `KEY=VALUE`); the error says
    /// what the key takes.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let value = value.trim();
        let number = |max: u64| -> Result<u64, String> {
            value
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= max)
                .ok_or_else(|| format!("'{value}' is not a whole number from 0 to {max}"))
        };
        match key {
            "fill" => {
                let percent: f64 = value
                    .trim_end_matches('%')
                    .trim()
                    .parse()
                    .map_err(|_| format!("'{value}' is not a percentage (e.g. 70)"))?;
                if !(1.0..=95.0).contains(&percent) {
                    return Err(format!(
                        "{percent} %: a fill level is 1 to 95 % of the filesystem"
                    ));
                }
                self.fill_percent = percent;
            }
            "sizes" => self.sizes = value.parse()?,
            "depth" => {
                self.depth = number(8)? as u32;
                if self.depth == 0 {
                    return Err("at least 1 directory level".into());
                }
            }
            "fanout" => {
                self.fanout = number(256)? as u32;
                if self.fanout == 0 {
                    return Err("at least 1 subdirectory".into());
                }
            }
            "churn" => self.churn = number(1000)? as u32,
            "fragmentation" => {
                let target: f64 = value
                    .parse()
                    .map_err(|_| format!("'{value}' is not a number of extents per file"))?;
                if !(1.0..=1000.0).contains(&target) {
                    return Err(format!(
                        "{target}: a fragmentation target is 1 to 1000 extents per file"
                    ));
                }
                self.fragmentation = Some(target);
            }
            "seed" => {
                self.seed = value
                    .parse()
                    .map_err(|_| format!("'{value}' is not a seed (a whole number)"))?
            }
            _ => {
                return Err(format!(
                    "unknown aging key '{key}'; the keys are {}",
                    KEYS.join(", ")
                ))
            }
        }
        if dir_count(self.depth, self.fanout) > MAX_DIRS {
            return Err(format!(
                "depth {} with fanout {} makes more than {MAX_DIRS} directories: lower one",
                self.depth, self.fanout
            ));
        }
        Ok(())
    }
}

/// `fill=70,sizes=measured,depth=3,fanout=8,churn=3,seed=1` (and `fragmentation=` when set):
/// `--age` reads it back.
impl fmt::Display for AgingSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "fill={},sizes={},depth={},fanout={},churn={}",
            self.fill_percent, self.sizes, self.depth, self.fanout, self.churn
        )?;
        if let Some(target) = self.fragmentation {
            write!(f, ",fragmentation={target}")?;
        }
        write!(f, ",seed={}", self.seed)
    }
}

/// `--age`'s text: `KEY=VALUE` pairs separated by commas, every key not given at its default
/// (`fill=60,churn=5`); a bare number is the fill level (`--age 70`).
impl std::str::FromStr for AgingSpec {
    type Err = String;
    fn from_str(text: &str) -> Result<AgingSpec, String> {
        let mut spec = AgingSpec::default();
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match pair.split_once('=') {
                Some((key, value)) => spec.set(key.trim(), value)?,
                None if pair.trim_end_matches('%').parse::<f64>().is_ok() => {
                    spec.set("fill", pair)?
                }
                None => {
                    return Err(format!(
                        "'{pair}' is not KEY=VALUE; the keys are {}",
                        KEYS.join(", ")
                    ))
                }
            }
        }
        Ok(spec)
    }
}

/// The file sizes of an aged tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "String", try_from = "String")]
pub enum Sizes {
    /// The distribution measured on real filesystems (drawn by `fsbench_testbed::aging`).
    Measured,
    /// Sizes with weights (`4k:50/64k:30/1m:20`).
    Given(Vec<(u64, u32)>),
}

impl fmt::Display for Sizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sizes::Measured => f.write_str("measured"),
            Sizes::Given(list) => {
                let parts: Vec<String> = list
                    .iter()
                    .map(|(size, weight)| format!("{}:{weight}", crate::units::Size(*size)))
                    .collect();
                f.write_str(&parts.join("/"))
            }
        }
    }
}

impl std::str::FromStr for Sizes {
    type Err = String;
    fn from_str(text: &str) -> Result<Sizes, String> {
        let text = text.trim();
        if text == "measured" {
            return Ok(Sizes::Measured);
        }
        let mut list = Vec::new();
        for entry in text.split('/').map(str::trim) {
            let (size, weight) = entry.split_once(':').ok_or_else(|| {
                format!(
                    "'{entry}' is not SIZE:WEIGHT; give \"measured\" or sizes with weights such as \"4k:50/64k:30/1m:20\""
                )
            })?;
            let size = parse_size(size).map_err(|e| e.to_string())?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("'{weight}' is not a weight (a whole number)"))?;
            if size > MAX_FILE_BYTES {
                return Err(format!(
                    "{}: a file of an aged tree is at most {}",
                    human_bytes(size),
                    human_bytes(MAX_FILE_BYTES)
                ));
            }
            list.push((size, weight));
        }
        if list.iter().all(|(_, w)| *w == 0) {
            return Err("every weight is 0".into());
        }
        Ok(Sizes::Given(list))
    }
}

impl From<Sizes> for String {
    fn from(sizes: Sizes) -> String {
        sizes.to_string()
    }
}

impl TryFrom<String> for Sizes {
    type Error = String;
    fn try_from(text: String) -> Result<Sizes, String> {
        text.parse()
    }
}

/// The largest file a size list may name (the measured distribution is capped lower, by the
/// room there is: `fsbench_testbed::aging`).
const MAX_FILE_BYTES: u64 = 64 << 30;
/// The most directories a tree may have.
const MAX_DIRS: u64 = 100_000;

/// Directories of a tree `depth` levels deep with `fanout` subdirectories each.
fn dir_count(depth: u32, fanout: u32) -> u64 {
    (1..=depth).fold(0u64, |sum, level| {
        sum.saturating_add(u64::from(fanout).saturating_pow(level))
    })
}

/// What aging did, stored with the aged image and every sample that starts from it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Aged {
    pub spec: AgingSpec,
    /// Threads that wrote the tree.
    pub threads: u32,
    pub elapsed_ns: u64,
    /// The first fill, to the level.
    pub fill_elapsed_ns: u64,
    /// Each churn round: what it did and how fragmented the sampled files were after it.
    pub rounds: Vec<Round>,
    /// Files created and bytes written, over the fill and every round.
    pub files_written: u64,
    pub bytes_written: u64,
    /// The filesystem once aged.
    pub after: Fragmentation,
}

/// One churn round.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Round {
    pub elapsed_ns: u64,
    pub deleted: u64,
    pub appended: u64,
    pub truncated: u64,
    pub created: u64,
    /// Mean extents per sampled file after the round (measured only for a fragmentation
    /// target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extents_per_file: Option<f64>,
}

/// How full and how fragmented a filesystem is.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Fragmentation {
    /// Size minus free, over size, as `statfs` says (`df`'s Used over Size), in percent.
    pub fill_percent: f64,
    pub size_bytes: u64,
    pub used_bytes: u64,
    /// Free for an unprivileged user (what a workload may write).
    pub available_bytes: u64,
    /// The aged tree: files, directories and the files' bytes.
    pub files: u64,
    pub dirs: u64,
    pub file_bytes: u64,
    /// Extents per file of a sample of the files (FIEMAP); None where the filesystem does not
    /// map extents (FUSE).
    pub extents: Option<ExtentSample>,
    /// The free space's fragments, by the filesystem's own tool (set by `fsbench_testbed::images`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free_space: Option<FreeSpace>,
}

/// Extents per file over a sample of files.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtentSample {
    /// Files sampled (every n-th of the tree, in the order they were made).
    pub files: u64,
    pub extents: u64,
    pub mean: f64,
    pub max: u64,
    /// Sampled files in more than one extent, in percent.
    pub fragmented_percent: f64,
}

/// The free space in fragments, as a filesystem's tool reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FreeSpace {
    /// The command that reported it.
    pub command: String,
    pub free_extents: Option<u64>,
    pub free_bytes: Option<u64>,
    pub largest_bytes: Option<u64>,
    /// What the reader must know (a report it could not read, bitmaps it does not count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl FreeSpace {
    /// The mean free extent, when both figures are known.
    pub fn mean_bytes(&self) -> Option<f64> {
        match (self.free_bytes, self.free_extents) {
            (Some(bytes), Some(n)) if n > 0 => Some(bytes as f64 / n as f64),
            _ => None,
        }
    }
}
