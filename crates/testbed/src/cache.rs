//! The page-cache state a workload starts from, as an explicit setting: warm (as left), drop
//! (sync + drop_caches, checked in /proc/meminfo), remount (umount + mount), or direct (the
//! workload bypasses the cache with O_DIRECT). What was actually reached is recorded.

use serde::Serialize;

pub use fsbench_model::CachePolicy;

/// Page-cache figures from /proc/meminfo, in bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemInfo {
    pub cached_bytes: u64,
    pub dirty_bytes: u64,
    pub writeback_bytes: u64,
}

pub fn parse_meminfo(text: &str) -> MemInfo {
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kib| kib * 1024)
    };
    MemInfo {
        cached_bytes: field("Cached:"),
        dirty_bytes: field("Dirty:"),
        writeback_bytes: field("Writeback:"),
    }
}

/// What applying the policy achieved.
#[derive(Debug, Clone, Serialize)]
pub struct CacheReached {
    pub policy: CachePolicy,
    /// "warm", "dropped", "remounted", "direct", or "not dropped" with the reason in `note`.
    pub state: String,
    pub before: Option<MemInfo>,
    pub after: Option<MemInfo>,
    pub note: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_in_bytes() {
        let m =
            parse_meminfo("MemTotal: 100 kB\nCached:  2048 kB\nDirty:  4 kB\nWriteback: 0 kB\n");
        assert_eq!(m.cached_bytes, 2048 * 1024);
        assert_eq!(m.dirty_bytes, 4096);
        assert_eq!("cold".parse(), Ok(CachePolicy::Drop));
        assert!("hot".parse::<CachePolicy>().is_err());
    }
}
