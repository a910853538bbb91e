//! The built-in profiles: plan files shipped in the repository's `profiles/` directory and
//! compiled into the binary. Nothing about them is special in code: `--profile NAME` runs the
//! text exactly as `--plan profiles/NAME.toml` would.

use crate::plan::{Plan, PlanError};

/// One built-in profile: its name (the file's stem) and its plan text.
#[derive(Debug, Clone, Copy)]
pub struct Profile {
    pub name: &'static str,
    pub text: &'static str,
}

impl Profile {
    /// The profile as a plan (named `(profile NAME)` in errors).
    pub fn plan(&self) -> Result<Plan, PlanError> {
        Plan::parse(self.text, &format!("(profile {})", self.name))
    }
}

macro_rules! profiles {
    ($($name:literal),* $(,)?) => {
        /// Every built-in profile, the default first.
        pub const ALL: &[Profile] = &[$(Profile {
            name: $name,
            text: include_str!(concat!("../../../profiles/", $name, ".toml")),
        }),*];
    };
}

profiles![
    "quick",
    "aged-quick",
    "lourdas-2009",
    "ext4-kernel-build-2008",
    "ffsb-smallfile-2008",
    "linuxmag-2012",
    "gus3-dbench-2012",
    "durability",
];

/// The profile `fsbench run` runs without --plan or --profile.
pub const DEFAULT: &str = "quick";

/// The built-in profile called `name`.
pub fn by_name(name: &str) -> Option<&'static Profile> {
    ALL.iter().find(|p| p.name == name)
}

/// The names of every profile, for messages.
pub fn names() -> String {
    ALL.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_profile_parses_names_itself_and_says_what_it_does() {
        for profile in ALL {
            let plan = profile.plan().unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(
                plan.name, profile.name,
                "a profile's name is its file's stem"
            );
            assert!(
                !plan.description.is_empty() && plan.description.len() <= 200,
                "{}: one line of description",
                profile.name
            );
        }
        assert_eq!(ALL[0].name, DEFAULT);
    }

    /// The configurations of each write-up (docs/studies.md counts them), times its workloads.
    #[test]
    fn each_study_profile_has_the_write_ups_configurations() {
        let count = |name: &str| by_name(name).unwrap().plan().unwrap().cases.len();
        // 10 filesystems x 5 workloads.
        assert_eq!(count("quick"), 50);
        // ext4, xfs, btrfs x fresh and aged x quick's 5 workloads.
        assert_eq!(count("aged-quick"), 30);
        // ext3, ext4, xfs, xfs with bigger logs, jfs, reiserfs x {matrix, task chain}.
        assert_eq!(count("lourdas-2009"), 12);
        // The 17 rows of the two tables: ext3 x 2, xfs, ext4 x 8 + 6, x {the chain, the
        // durability cuts, the power cuts}.
        assert_eq!(count("ext4-kernel-build-2008"), 51);
        // The 13 rows of the FFSB table, the xfs that hung included.
        assert_eq!(count("ffsb-smallfile-2008"), 13);
        // 7 filesystems x 2 platforms (disk, RAM) x {matrix, metadata loops}.
        assert_eq!(count("linuxmag-2012"), 28);
        // 5 filesystems x 4 schedulers x 2 CPU platforms x {5, 20 clients} replayed, the
        // same under the study's 3 elevators by dbench itself, and 5 sweeps.
        assert_eq!(count("gus3-dbench-2012"), 80 + 60 + 5);
        // ext4 x 6 mount sets, xfs, btrfs x 2, zfs x 2 x {fsync, stream, durability, power}.
        assert_eq!(count("durability"), 44);
    }

    /// Every study profile carries its write-up's published figures, each from a line of its
    /// seed and naming only workloads and configurations the profile has (the plan checks
    /// that when it parses them); every value sits on a line of the profile.
    #[test]
    fn each_study_profile_carries_its_published_figures() {
        // quick, aged-quick and durability are fsbench's own, not a study's.
        for profile in ALL
            .iter()
            .filter(|p| !p.name.ends_with("quick") && p.name != "durability")
        {
            let plan = profile.plan().unwrap_or_else(|e| panic!("{e}"));
            let figures = &plan.figures;
            assert!(
                !figures.published.is_empty() || !figures.claims.is_empty(),
                "{}: no published figure",
                profile.name
            );
            let seed = &plan
                .figures
                .published
                .first()
                .map_or_else(|| figures.claims[0].source.clone(), |p| p.source.clone())[..3];
            for source in figures
                .published
                .iter()
                .map(|p| &p.source)
                .chain(figures.claims.iter().map(|c| &c.source))
            {
                assert!(
                    source.starts_with(seed),
                    "{}: {source} is not from its study's seed",
                    profile.name
                );
            }
        }
    }

    /// What each write-up claims in its text is carried, each from its line (issue 36): 003's
    /// IOzone points, its headline ranking and the line that seems to contradict it, its claims
    /// of l.36-39, l.66, l.70 and l.73-75; 004's knee near 70 processes; 001's footnote 3.
    #[test]
    fn the_write_ups_claims_are_carried_each_from_its_line() {
        let sources = |name: &str| -> Vec<String> {
            let plan = by_name(name).unwrap().plan().unwrap();
            let figures = plan.figures;
            figures
                .published
                .iter()
                .map(|p| p.source.clone())
                .chain(figures.claims.iter().map(|c| c.source.clone()))
                .collect()
        };
        let has = |name: &str, seed: &str, lines: &[u32]| {
            let sources = sources(name);
            for line in lines {
                let source = format!("{seed}:{line}");
                assert!(
                    sources.contains(&source),
                    "{name}: no figure or claim from {source}"
                );
            }
        };
        has(
            "linuxmag-2012",
            "003_ed7cf87f864b510b.txt",
            &[36, 37, 39, 51, 53, 66, 70, 73, 75],
        );
        has(
            "gus3-dbench-2012",
            "004_e97b65b7a4f1b0a9.txt",
            &[34, 46, 52],
        );
        has(
            "ext4-kernel-build-2008",
            "001_1675b39e63b65cf7.txt",
            &[41, 125, 129],
        );
        // 003:51 and 003:66 both rank the filesystems overall, and say they conflict.
        let plan = by_name("linuxmag-2012").unwrap().plan().unwrap();
        let rankings: Vec<&str> = plan
            .figures
            .claims
            .iter()
            .filter(|c| {
                !c.ranking.is_empty() && c.points.as_ref().is_some_and(|p| !p.also.is_empty())
            })
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(rankings.len(), 2, "{rankings:?}");
        assert!(
            rankings.iter().all(|t| t.contains("contradict")),
            "{rankings:?}"
        );
    }
}
