//! The plan layer: campaigns. A plan file (TOML, docs/plans.md) or a built-in profile becomes a
//! [`Plan`] (validated, no side effects) whose cases are configurations x workloads with stable
//! keys; the [`runner`] prepares each case's target, runs its workload in a child process under
//! a watchdog, and stores every sample as it finishes.
//!
//! Brief overview:
//! - [`file`]: the plan file as written (TOML with spans for precise errors).
//! - [`plan`]: validation into [`Plan`] and [`Case`]s; estimates.
//! - [`profiles`]: the built-in profiles, plan files from `profiles/` compiled in.
//! - [`workload`]: what a case runs, and how the child turns results into metrics.
//! - [`runner`]: the campaign: interleaved repetitions, timeouts, resume.

pub mod file;
pub mod plan;
pub mod profiles;
pub mod runner;
pub mod workload;

pub use plan::{Case, Plan, PlanError};
pub use runner::{Campaign, CampaignObserver};
