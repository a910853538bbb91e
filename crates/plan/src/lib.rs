//! The plan layer: campaigns and one-case runs. A plan file (TOML, docs/plans.md), a built-in
//! profile or a workload command's flags become a [`Plan`] (validated, no side effects) whose
//! cases are configurations x workloads with stable keys; the [`sample`] runner lives one
//! sample's life (target, workload, check, ranks) for a campaign and a command alike, and the
//! [`runner`] walks a campaign's samples and stores each as it finishes.
//!
//! Brief overview:
//! - [`file`]: the plan file as written (TOML with spans for precise errors).
//! - [`plan`]: validation into [`Plan`] and [`Case`]s (with the command line's
//!   [`plan::Overrides`]), one typed step per section, without side effects; what this host
//!   makes of a plan, asked through `System` ([`Plan::on_host`]); estimates.
//! - [`one_case`]: a workload command as a plan of one case.
//! - [`profiles`]: the built-in profiles, plan files from `profiles/` compiled in.
//! - [`workload`]: what a case runs ([`workload::Job`]), and what is stored of how it ran.
//! - [`sample`]: one sample's life, the same for a campaign and a command.
//! - [`executor`]: how a sample's workload runs: in this process or a child under a watchdog.
//! - [`observe`]: the host monitors around a sample, its phases' series on one time axis, and
//!   what they say of it (steady, saturated, disturbed).
//! - [`protocol`]: the wire between a campaign and its workload's child process.
//! - [`runner`]: the campaign: interleaved repetitions, stability, resume, storing.
//! - [`run`]: a run from its beginning in the store to its end, for a campaign and a command
//!   alike: refusals, the ground's checks, the host's record, the cases, the guard, the end.

pub mod executor;
pub mod file;
pub mod observe;
pub mod one_case;
pub mod plan;
pub mod profiles;
pub mod protocol;
pub mod run;
pub mod runner;
pub mod sample;
pub mod workload;

pub use plan::{Case, Plan, PlanError};
pub use runner::{Campaign, CampaignObserver};
