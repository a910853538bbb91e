//! One module per subcommand; each turns its flags into the layers' types and runs them.

pub mod case_worker;
pub mod cleanup;
pub mod crash_state;
pub mod export;
pub mod profiles;
pub mod record;
pub mod report;
pub mod run;
pub mod runs;
pub mod targets;
pub mod trace;
pub mod workload;
